"""The composition line decided by contrasts, on synthetic subword models with known truth, and
one row per distinct measurement (rows of identical inputs are one row with every name)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from normtest.audit.report import Report
from normtest.audit.run import AuditSettings, run_audit, variants
from normtest.audit.selection import Selector
from normtest.claims.catalogue import get
from normtest.data.information.frequency import WordfreqSource
from normtest.data.information.samples import default_word_sample
from normtest.errors import NormtestError
from normtest.gate.regression import compare
from normtest.models.synthetic import SubwordModel
from normtest.testing.api import check_model
from normtest.verdict.result import Result, Verdict

WORDS = 600
#: The criterion on known truth, the line decided by its rows: without controls (at 600 words
#: the composition line's positive control lacks the power 0.8 at its margin, which makes it
#: invalid; tests/test_controls.py holds the controls to that)
SETTINGS = AuditSettings(words=WORDS, resamples=300, controls=False)
CONTRAST = "word.norm_ic.contrast"


@pytest.fixture(scope="module")
def information() -> dict[str, float]:
    """The default sample's words and their wordfreq IC (what the audit itself computes)."""
    words = default_word_sample(size=WORDS, seed=0)
    ic = WordfreqSource().information_content(words)
    return dict(zip(ic.words, (float(v) for v in ic.values), strict=True))


def audit(model: SubwordModel, information: dict[str, float], *claims: str,
          settings: AuditSettings | None = None) -> Report:
    return run_audit(model, claim_ids=list(claims), words=list(information),
                     settings=settings or SETTINGS)


def confirmatory(report: Report, claim: str = CONTRAST) -> list[Result]:
    return [r for r in report.results if r.claim == claim and r.confirmatory]


@pytest.mark.slow
def test_contrast_passes_where_the_composition_is_faithful(
        information: dict[str, float]) -> None:
    """sqrt_n's ‖·‖² is IC + noise by construction and the mean's is that over n(w), n drawn
    independently of IC: every suitable-versus-mean contrast is positive, well past 0.1."""
    model = SubwordModel(information, faithful="sqrt_n", seed=0)
    report = audit(model, information, CONTRAST)
    rows = confirmatory(report)
    assert {(r.variant["composition"], r.variant["population"]) for r in rows} == {
        ("sqrt_n", "all"), ("sqrt_n", "multitoken"), ("f_ind", "all"), ("f_ind", "multitoken")}
    assert all(r.verdict is Verdict.PASS for r in rows), [(r.id, r.reason) for r in rows]
    line = next(line for line in report.scorecard if line.key == "composition")
    assert line.status == "replicated" and line.basis == "reconstructed"
    # the estimate is the difference of the two compositions' ρ, both kept as components
    for r in rows:
        assert r.measurement is not None
        first, second = r.measurement.components["first"], r.measurement.components["second"]
        assert r.estimate == pytest.approx(first.estimate - second.estimate)
        assert first.estimate > 0.9 > second.estimate
    multitoken = next(r for r in rows if r.variant["population"] == "multitoken")
    assert multitoken.n == int((model.token_counts >= 2).sum())


@pytest.mark.slow
def test_contrast_fails_where_the_mean_is_as_faithful(information: dict[str, float]) -> None:
    """Where the mean is the faithful composition, sqrt_n and f_ind are it scaled by n(w)^½
    and n(w): the contrasts are negative and the composition line is contradicted."""
    report = audit(SubwordModel(information, faithful="mean", seed=0), information, CONTRAST)
    rows = confirmatory(report)
    assert len(rows) == 4 and all(r.verdict is Verdict.FAIL for r in rows)
    assert all(r.estimate < 0 for r in rows)
    line = next(line for line in report.scorecard if line.key == "composition")
    assert line.status == "contradicted"


def test_the_multitoken_rows_no_longer_decide_the_line(information: dict[str, float]) -> None:
    claim = get("word.norm_ic.multitoken")
    assert claim.expected == ()
    assert all(claim.role("encoder", v) == "exploratory"
               for v in variants(claim, "encoder", scope="standard"))


@pytest.mark.slow
def test_rows_of_identical_inputs_are_one_row_with_every_name(
        information: dict[str, float]) -> None:
    """Every word one token: all nine compositions of a word are its token, so word.norm_ic
    measures one thing per transform: one row that stands for nine variants, counted once by
    Holm, found under each name; a contrast of two coinciding compositions is not estimable."""
    model = SubwordModel(information, faithful="sqrt_n", multitoken_share=0.0, seed=0)
    # read by default, the exploratory variants are another reading (analytic) of the same
    # data than the confirmatory ones (bootstrapped): raw's confirmatory sqrt_n and f_ind are
    # one row and its seven exploratory names another; every row read alike is merged
    mixed = [r for r in audit(model, information, "word.norm_ic").results]
    assert sorted(len(r.variants) for r in mixed) == [2, 7, 9, 9]
    assert {r.measurement.interval_kind for r in mixed if r.confirmatory} == {"bootstrap"}
    report = audit(model, information, "word.norm_ic", CONTRAST,
                   settings=replace(SETTINGS, exploratory_intervals="bootstrap"))
    rows = [r for r in report.results if r.claim == "word.norm_ic"]
    transforms = {r.variant["transform"] for r in rows}
    assert len(rows) == len(transforms) == 3
    for r in rows:
        assert len(r.variants) == 9 and len(set(r.ids)) == 9
        assert "|" in r.label and r.id in r.ids
    raw = next(r for r in rows if r.variant["transform"] == "raw")
    assert raw.confirmatory  # it stands for the confirmatory sqrt_n and f_ind rows
    # found under each name, by a selector, the gate and a planned check
    for composition in ("mean", "sqrt_n", "f_ind"):
        selector = Selector.parse(f"word.norm_ic[composition={composition},transform=raw]")
        assert selector.matches_result(raw)
    holm = report.provenance["multiplicity"]["confirmatory"]["rows"]
    assert holm == sum(r.confirmatory and r.p_adjusted is not None for r in report.results)
    contrasts = [r for r in report.results if r.claim == CONTRAST]
    assert all(r.verdict is Verdict.INCONCLUSIVE for r in contrasts)
    assert any("one measurement" in r.reason for r in contrasts)
    assert any("only 0 points" in r.reason for r in contrasts)
    comparisons, skipped = compare(report, report)
    compared = {c.id for c in comparisons}
    assert raw.id in compared and not skipped
    # Holm counts the one measurement once, not once per confirmatory name
    assert sum(r.confirmatory for r in rows) == 1
    # a planned check of each variant (what pytest items and check_model run) finds the row
    checked = check_model(model, ["word.norm_ic[transform=raw]"],
                          settings=replace(SETTINGS, exploratory_intervals="bootstrap"),
                          words=list(information), exploratory=True)
    assert len(checked.outcomes) == 9
    assert {o.result.id for o in checked.outcomes} == {raw.id}


@pytest.mark.slow
def test_a_report_keeps_the_names_a_row_stands_for(information: dict[str, float]) -> None:
    model = SubwordModel(information, faithful="sqrt_n", multitoken_share=0.0, seed=1)
    report = audit(model, information, "word.norm_ic")
    again = Report.from_json(report.to_json())
    assert [r.ids for r in again.results] == [r.ids for r in report.results]


def test_the_subword_model_is_built_as_declared(information: dict[str, float]) -> None:
    model = SubwordModel(information, faithful="sqrt_n", seed=3)
    words = list(information)[:20]
    batch = model.token_vectors(words, words=True)
    assert list(batch.lengths) == list(model.word_token_counts(words))
    for i, word in enumerate(words):
        tokens = batch[i]
        composed = tokens.sum(axis=0) / np.sqrt(len(tokens))
        target = model.target_squared_norms[list(information).index(word)]
        assert float(composed @ composed) == pytest.approx(target, rel=1e-9)
    with pytest.raises(NormtestError, match="faithful must be one of"):
        SubwordModel(information, faithful="cls")
    with pytest.raises(NormtestError, match="no tokens for"):
        model.word_tokens("not-a-sample-word")
    with pytest.raises(NormtestError, match="at least one word"):
        SubwordModel({})
