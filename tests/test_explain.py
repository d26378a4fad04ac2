"""`normtest explain`: every scorecard line says what it rests on, and what backs it exists."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from normtest.audit.explain import explain
from normtest.claims.catalogue import claims_of_line, declared_lines, get
from normtest.cli.common import EXIT_OK, EXIT_USAGE
from normtest.cli.main import main

TESTS = Path(__file__).parent


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def _deciding(key: str) -> list[str]:
    """The claims whose confirmatory rows count towards line ``key``."""
    out = []
    for claim_id in claims_of_line(key):
        claim = get(claim_id)
        if any((e.hypothesis or claim.hypothesis) == key for e in claim.expected):
            out.append(claim_id)
    return out


@pytest.mark.parametrize("key", [h.key for h in declared_lines()])
def test_every_scorecard_line_has_an_operationalisation(key: str) -> None:
    line = next(h for h in declared_lines() if h.key == key)
    assert line.words and line.short and line.source, f"{key} does not say what it rests on"
    deciding = _deciding(key)
    assert deciding, f"no claim decides {key}"
    text = explain(key)
    assert line.words in " ".join(text.split()) or line.words[:40] in text
    for claim_id in deciding:
        claim = get(claim_id)
        assert claim.rationale, f"{claim_id} does not say why its margin is where it is"
        assert claim.backed_by, f"{claim_id} names no known-truth test"
        assert claim_id in text and "confirmatory:" in text and "backed by:" in text


def test_every_known_truth_test_named_exists() -> None:
    """A claim's ``backed_by`` names test files, or test functions in them, that exist."""
    from normtest.claims.catalogue import claims

    for claim in claims():
        for node in claim.backed_by:
            file, _, function = node.partition("::")
            path = TESTS.parent / file
            assert path.is_file(), f"{claim.id}: {file} does not exist"
            if function:
                name = function.split("[")[0]
                assert name in _test_functions(path), f"{claim.id}: {node} does not exist"


def test_explain_composition_and_c1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "composition"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "certain subword composition functions are applied" in out
    assert "word.norm_ic.contrast" in out and "> 0.1" in out
    assert "versus=mean" in out and "population=multitoken" in out
    assert "reconstructed by normtest" in out
    assert "word.norm_ic.multitoken" in out.split("explored:")[1]  # exploratory, named
    assert main(["explain", "cond.inner_pmi"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "decides the line 'conditions'" in out
    assert "one-token" in out and "split-half reliability" in out
    assert "after centring" in out


def test_explain_a_line_with_two_readings() -> None:
    text = explain("conditions")
    assert "decided in raw geometry" in text and "after centring" in text


def test_explain_an_unknown_name_says_what_there_is(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "compositon"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "did you mean 'composition'" in err and "lines:" in err
