"""The claim catalogue: every claim of docs/theory.md §7 declared once, valid, and described."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from normtest.adapters.protocol import Capability
from normtest.claims import catalogue
from normtest.claims.catalogue import Claim, Expectation, claims, describe, get, register
from normtest.cli.common import EXIT_OK, EXIT_USAGE
from normtest.cli.main import main
from normtest.errors import NormtestError
from normtest.verdict.result import Criterion, Verdict

THEORY = Path(__file__).resolve().parents[1] / "docs" / "theory.md"
PAPER_IDS = {
    "word.norm_ic", "word.norm_ic.multitoken", "word.norm_ic.partial", "cond.inner_pmi",
    "cond.self_pmi", "cond.centered", "word.norm_kl", "text.norm_surprisal", "cer.monotone",
    "cer.linear", "cer.fixed_point", "word.norm_ic.contrast",
}


def test_every_claim_of_the_paper_is_declared_once() -> None:
    assert {c.id for c in claims()} >= PAPER_IDS
    # the catalogue table of docs/theory.md §7 names exactly the paper's claims
    rows = re.findall(r"^\| `([a-z_]+\.[a-z_.]+)` \|", THEORY.read_text(encoding="utf-8"),
                      flags=re.M)
    assert set(rows) == PAPER_IDS


def test_suites_partition_the_catalogue() -> None:
    by_suite = {s: {c.id for c in claims(s)} for s in catalogue.SUITES}
    assert set().union(*by_suite.values()) == {c.id for c in claims("all")}
    assert by_suite["cer"] == {"cer.monotone", "cer.linear", "cer.fixed_point"}
    with pytest.raises(NormtestError, match="suite must be one of"):
        claims("nonsense")


def test_expectations_follow_the_paper() -> None:
    linear = get("cer.linear")
    assert linear.expectation("encoder", {"composition": "cls"}) is Verdict.FAIL
    assert linear.expectation("decoder", {"composition": "eos"}) is Verdict.FAIL
    assert linear.expectation("decoder", {"composition": "sqrt_n"}) is Verdict.PASS
    assert linear.expectation("encoder", {"composition": "f_joint"}) is None
    fixed = get("cer.fixed_point")
    assert fixed.expectation("encoder", {"composition": "cls"}) is Verdict.PASS
    assert fixed.expectation("static", {"composition": "cls"}) is None
    word = get("word.norm_ic")
    assert word.expectation("static", {"transform": "whiten_zipf"}) is Verdict.PASS


def test_unknown_claim_gets_did_you_mean() -> None:
    with pytest.raises(NormtestError, match=r"did you mean 'cer\.linear'"):
        get("cer.liner")


def test_a_user_declares_a_claim_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalogue, "_REGISTRY", dict(catalogue._REGISTRY))
    mine = register(Claim(
        id="mine.norm_length", statement="‖e(w)‖² increases with word length",
        source="our lab notes", suite="word", quantities=("squared_norm", "characters"),
        unit="characters", sample="the default word sample", statistic="spearman_rho",
        criterion=Criterion.minimum_effect(0.2), axes={"transform": ("raw",)},
        needs=((Capability.WORD_VECTORS,),),
        expected=(Expectation(Verdict.FAIL, "static"),),
    ))
    assert get("mine.norm_length") is mine
    assert "mine.norm_length" in [c.id for c in claims("word")]
    with pytest.raises(NormtestError, match="declared twice"):
        register(Claim(**{**mine.__dict__, "statement": "something else"}))


def test_declarations_are_validated() -> None:
    base = get("word.norm_ic").__dict__
    with pytest.raises(NormtestError, match="suite"):
        Claim(**{**base, "suite": "poetry"})
    with pytest.raises(NormtestError, match="unknown variant axes"):
        Claim(**{**base, "axes": {"colour": ("red",)}})
    with pytest.raises(NormtestError, match="outside the claim's axes"):
        Claim(**{**base, "expected": (Expectation(Verdict.PASS, None, {"composition": "cls"}),)})


def test_list_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == EXIT_OK
    out = capsys.readouterr().out
    assert all(i in out for i in PAPER_IDS) and "12 claims" in out
    assert main(["show", "cer.linear"]) == EXIT_OK
    shown = capsys.readouterr().out
    assert "curvature inside [-0.2, 0.2]" in shown and "FAIL for decoder" in shown
    assert main(["show", "nope"]) == EXIT_USAGE
    for claim in claims():
        assert claim.statement in describe(claim)
