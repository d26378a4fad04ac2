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


def test_show_explain_and_claims_take_the_same_ids_and_give_the_same_hint(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A line, a claim, a claim's rows or a suite: ``show`` and ``explain`` take each, and a
    misspelt one gets the one message every command gives (``--claims`` before any model
    loads)."""
    assert main(["show", "composition"]) == EXIT_OK
    shown = capsys.readouterr().out
    assert shown.startswith("composition: ") and "word.norm_ic.contrast  [word]" in shown
    assert main(["show", "word.norm_ic[composition=sqrt_n]"]) == EXIT_OK
    assert capsys.readouterr().out.startswith("word.norm_ic  [word]")
    messages = []
    for args in (["show", "word_leve"], ["explain", "word_leve"],
                 ["audit", "--model", "no-such-model", "--claims", "word_leve"]):
        assert main(args) == EXIT_USAGE
        messages.append(capsys.readouterr().err.strip().splitlines()[-1])
    assert len(set(messages)) == 1, messages
    assert "did you mean 'word_level'?" in messages[0] and "lines: word_level" in messages[0]


def test_list_lists_the_lines_and_their_claims(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("The scorecard's lines")
    for line in declared_lines():
        shown = next(x for x in out.splitlines() if x.split()[:1] in ([line.key],
                                                                      [line.key + "*"]))
        assert all(c in shown for c in claims_of_line(line.key))


@pytest.fixture(scope="module")
def glove_report_file(glove: object, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real audit of GloVe at a small size, stored as a report.json."""
    from normtest.audit.run import AuditSettings, run_audit

    report = run_audit(glove, settings=AuditSettings(words=600, resamples=200))
    return report.write(tmp_path_factory.mktemp("explained") / "report.json")


@pytest.mark.slow
def test_explain_with_a_report_says_why_this_line_came_out_so(
        glove_report_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``normtest explain LINE --report R`` names the rows that decided the line with their
    numbers, its controls with what each came out as, its robustness and what a larger sample
    would (not) change; the folder of the report will do, and a claim lists its rows."""
    from normtest.audit.report import Report
    from normtest.verdict.formatting import number

    report = Report.read(glove_report_file)
    line = next(x for x in report.scorecard if x.key == "word_level")
    assert main(["explain", "word_level", "--report", str(glove_report_file.parent)]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith(f"word_level: {line.status.upper()} in the audit of glove-6b-50d")
    flat = " ".join(out.split())  # wrapped at 100 columns
    for r in line.rows:
        assert r.id in flat and f"{number(r.estimate)} [" in flat
    controls = report.controls_of("word_level")
    assert controls is not None and "its controls" in flat
    for c in controls.ran:
        assert f"{c.kind} (built to be {c.expected}" in flat and c.came_out in flat
    assert "robustness:" in flat
    assert main(["explain", "cond.inner_pmi", "--report", str(glove_report_file)]) == EXIT_OK
    rows = [r for r in report.results if r.claim == "cond.inner_pmi"]
    flat = " ".join(capsys.readouterr().out.split())
    assert rows and all(r.id in flat for r in rows), flat
    # a line the audit could not test says why
    assert main(["explain", "text_level", "--report", str(glove_report_file)]) == EXIT_OK
    assert capsys.readouterr().out.startswith("text_level: NOT TESTED")
