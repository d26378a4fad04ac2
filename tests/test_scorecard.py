"""Confirmatory and exploratory rows, their adjustment, and the scorecard they decide."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from normtest.adapters.protocol import family_of
from normtest.audit.report import Report
from normtest.audit.run import AuditSettings, run_audit, variants
from normtest.claims.catalogue import REFERENCE, claims, declared_lines, get
from normtest.cli.main import main
from normtest.errors import NormtestError
from normtest.gate.config import GateConfig
from normtest.gate.run import evaluate
from normtest.render.gate import gate_markdown
from normtest.scorecard.lines import STATUSES, build
from normtest.stats.multiplicity import adjust_audit, benjamini_hochberg, holm
from normtest.verdict.result import Criterion, Measurement, Result, Verdict
from normtest.verdict.sampling import Sampling

# 1,500 words: enough for the word line's positive control to have power 0.8 at its margin
# (its KL rows hold only the words frequent in the corpus)
FAST = AuditSettings(words=1500, resamples=200)
ALPHA = 0.05
AT_LEAST = Criterion.minimum_effect(0.3)

#: The paper's hypotheses per model family (docs/statistics.md): the confirmatory rows of the
#: built-in catalogue in the standard scope, by claim.
CENTRED = "center_zipf"
CONFIRMATORY = {
    "static": {
        "word.norm_ic": [{"transform": "whiten_zipf"}],
        "word.norm_kl": [{"transform": "whiten_zipf"}],
        "cond.inner_pmi": [{"transform": "raw"}, {"transform": CENTRED}],
        "cond.self_pmi": [{"transform": "raw"}, {"transform": CENTRED}],
    },
    "encoder": {
        "word.norm_ic": [{"composition": k, "representation": "last", "transform": "raw"}
                         for k in ("sqrt_n", "f_ind")],
        # composition decided by contrasts with the plain mean, over all words and multi-token
        "word.norm_ic.contrast": [{"composition": k, "versus": "mean", "population": p,
                                   "representation": "last", "transform": "raw"}
                                  for k in ("sqrt_n", "f_ind") for p in ("all", "multitoken")],
        # C1 over one-token words: no composition axis; raw geometry and its centred reading
        "cond.inner_pmi": [{"representation": "last", "transform": t} for t in ("raw", CENTRED)],
        "cond.self_pmi": [{"composition": k, "representation": "last", "transform": t}
                          for k in ("sqrt_n", "f_ind") for t in ("raw", CENTRED)],
        "text.norm_surprisal": [{"composition": k, "representation": "last"}
                                for k in ("sqrt_n", "f_ind")],
        # f_ind and f_inf cannot fall in a causal model: explored, not confirmatory
        "cer.monotone": [{"composition": "sqrt_n", "representation": "last"}],
        "cer.linear": [{"composition": k, "representation": "last"}
                       for k in ("sum", "mean", "sqrt_n", "f_ind", "cls")],
        "cer.fixed_point": [{"composition": "cls", "representation": "last"}],
    },
}


@pytest.mark.parametrize("family", sorted(CONFIRMATORY))
def test_the_confirmatory_rows_are_the_papers_hypotheses(family: str) -> None:
    states = ("cls",) if family == "encoder" else ()
    found = {}
    for claim in claims():
        rows = [v for v in variants(claim, family, states, scope="standard")
                if claim.role(family, v) == "confirmatory"]
        if rows:
            found[claim.id] = rows
    assert found == CONFIRMATORY[family]


def test_an_expectation_speaks_only_at_the_reference_representation_and_transform() -> None:
    claim = get("word.norm_ic")
    base = {"composition": "sqrt_n", "representation": "last", "transform": "raw"}
    assert claim.role("encoder", base) == "confirmatory"
    for axis, other in (("transform", "whiten_zipf"), ("representation", "input"),
                        ("composition", "mean")):
        assert claim.role("encoder", {**base, axis: other}) == "exploratory"
    assert REFERENCE == {"representation": "last", "transform": "raw"}
    # every confirmatory row names a scorecard line that is declared
    keys = {h.key for h in declared_lines()}
    for c in claims():
        for family in ("static", "encoder", "decoder"):
            for v in variants(c, family, ("cls", "eos")):
                if c.role(family, v) == "confirmatory":
                    assert c.hypothesis_of(family, v) in keys, (c.id, v)


# -- the adjustment --------------------------------------------------------------------------------
def _row(estimate: float, scale: float, role: str, claim: str = "c",
         expected: Verdict | None = Verdict.PASS, hypothesis: str | None = "h") -> Result:
    """A judged result whose sampling distribution is N(estimate, scale)."""
    m = Measurement("rho", estimate, 100, "normal",
                    sampling=Sampling("normal", center=estimate, scale=scale))
    judged = Result.judged(m, AT_LEAST)
    return Result(judged.verdict, judged.reason, m, AT_LEAST, claim=claim, p_value=judged.p_value,
                  role=role, expected=expected if role == "confirmatory" else None,
                  hypothesis=hypothesis)


def test_each_line_is_its_own_decision_and_bh_runs_over_the_exploratory_rows() -> None:
    """Confirmatory rows: PASS p-values as they are (replicated needs every row of a line: an
    intersection–union test), FAIL p-values by Holm within each line (and reading), never
    across lines; exploratory rows: Benjamini–Hochberg on both sides."""
    rng = np.random.default_rng(3)
    lines = ["a", "b"] * 6
    roles = ["confirmatory"] * 8 + ["exploratory"] * 4
    rows = [_row(0.3 + float(d), 0.05, role, hypothesis=line)
            for d, role, line in zip(rng.normal(0.0, 0.08, 12), roles, lines, strict=True)]
    adjusted = adjust_audit(rows)
    for line in ("a", "b"):
        index = [i for i, r in enumerate(rows) if r.role == "confirmatory" and r.hypothesis == line]
        assert [adjusted[i].p_adjusted for i in index] == pytest.approx(
            [rows[i].p_value for i in index])
        expected = holm([rows[i].p_fail for i in index])
        assert [adjusted[i].p_fail_adjusted for i in index] == pytest.approx(list(expected))
    index = [i for i, r in enumerate(rows) if r.role == "exploratory"]
    assert [adjusted[i].p_adjusted for i in index] == pytest.approx(
        list(benjamini_hochberg([rows[i].p_value for i in index])))
    # a line's verdicts do not depend on which other lines ran
    alone = adjust_audit([r for r in rows if r.hypothesis == "a" and r.role == "confirmatory"])
    both = [r for r in adjusted if r.hypothesis == "a" and r.role == "confirmatory"]
    assert [r.verdict for r in alone] == [r.verdict for r in both]


def test_a_stated_hypothesis_does_not_pay_for_the_variants_explored_around_it() -> None:
    # the case: one confirmatory row with p = 0.042 among ten variants of its claim
    primary = _row(0.3 + 0.05 * 1.7279, 0.05, "confirmatory")  # p_pass ≈ 0.042
    assert primary.verdict is Verdict.PASS and 0.04 < primary.p_value < 0.045
    explored = [_row(0.3 + 0.05 * z, 0.05, "exploratory") for z in np.linspace(-1, 1, 9)]
    together = adjust_audit([primary, *explored])
    assert together[0].verdict is Verdict.PASS and together[0].p_adjusted == pytest.approx(
        primary.p_value)
    # the old rule — Holm over the claim's ten variants — left it undecided
    old = holm([r.p_value for r in [primary, *explored]])[0]
    assert old > ALPHA


def _line_status(rows: list[Result]) -> str:
    return next(x for x in build(adjust_audit(rows)) if x.key == "h").status


def _lines_at_threshold(k: int, runs: int, rng: np.random.Generator, status: str,
                        verdict: Verdict, scale: float = 0.05) -> tuple[float, float]:
    """Lines of ``k`` independent rows whose true effects sit exactly at the threshold: the
    share of runs in which the line took ``status``, and in which some row was ``verdict``."""
    hits = some = 0
    for _ in range(runs):
        rows = [_row(0.3 + float(e), scale, "confirmatory") for e in rng.normal(0, scale, k)]
        hits += _line_status(rows) == status
        some += any(r.verdict is verdict for r in rows)
    return hits / runs, some / runs


@pytest.mark.slow
def test_a_line_is_replicated_at_most_alpha_of_the_time_at_the_margin() -> None:
    """Calibration of the per-line rule (docs/statistics.md, "Each line its own decision"):
    four rows whose true effects sit exactly at the threshold (every PASS is false) replicate
    the line at most α of the time — about α when the rows move together, far less when they
    are independent — although one of the four passes far more often (what the line does not
    claim); with every effect 4.5 standard errors beyond the threshold the line is replicated
    in at least 95% of the runs (each row's power 0.998, the line's 0.99)."""
    rng = np.random.default_rng(7)
    k, runs, scale = 4, 4000, 0.05
    rate, any_pass = _lines_at_threshold(k, runs, rng, "replicated", Verdict.PASS)
    error = 3 * math.sqrt(ALPHA * (1 - ALPHA) / runs)
    # the worst case: rows that move together (one draw for all four) replicate at α itself
    together = sum(_line_status([_row(0.3 + e, scale, "confirmatory")] * k) == "replicated"
                   for e in rng.normal(0, scale, runs).tolist()) / runs
    print(f"false replication over {k} rows at the margin: {rate:.4f} independent, "
          f"{together:.4f} moving together (some row passes: {any_pass:.3f})")
    assert rate <= ALPHA + error and together <= ALPHA + error and any_pass > 0.15
    assert together > ALPHA - error  # the rule spends its whole level, no more
    powered = sum(_line_status([_row(0.3 + 4.5 * scale + float(e), scale, "confirmatory")
                                for e in rng.normal(0, scale, k)]) == "replicated"
                  for _ in range(1000))
    print(f"replication with every effect 4.5 SE beyond the margin: {powered / 1000:.3f}")
    assert powered / 1000 >= 0.95


@pytest.mark.slow
def test_a_line_is_contradicted_at_most_alpha_of_the_time_at_the_margin() -> None:
    """Twelve rows exactly at the threshold (every FAIL is false): after Holm within the line
    the line is contradicted at most α of the time; unadjusted it would be most of the time."""
    k, runs = 12, 2000
    rng = np.random.default_rng(11)
    rate, naive = _lines_at_threshold(k, runs, rng, "contradicted", Verdict.FAIL)
    error = 3 * math.sqrt(ALPHA * (1 - ALPHA) / runs)
    print(f"false contradiction over {k} rows: per-line Holm {rate:.3f}, unadjusted {naive:.3f}")
    assert rate <= ALPHA + error and naive > 0.3
    # power: one row of the twelve 4.5 standard errors below the threshold contradicts the line
    scale = 0.05
    found = sum(_line_status([_row(0.3 - 4.5 * scale + float(e[0]), scale, "confirmatory"),
                              *(_row(0.3 + 4.5 * scale + float(x), scale, "confirmatory")
                                for x in e[1:])]) == "contradicted"
                for e in rng.normal(0, scale, (1000, k)))
    print(f"contradiction with one row 4.5 SE below the margin: {found / 1000:.3f}")
    assert found / 1000 >= 0.9


def test_a_lines_sensitivity_names_its_nearest_deciding_bound() -> None:
    """The margin's effect on a line, reported apart from its robustness: the deciding bound
    nearest its threshold — a PASS row's lower bound, an undecided row's nearer one."""
    from normtest.scorecard.lines import sensitivity

    passing = _row(0.6, 0.05, "confirmatory")  # 90% interval [0.518, 0.682]
    assert passing.verdict is Verdict.PASS
    text = sensitivity([passing])
    assert "0.518" in text and "0.218 away" in text
    undecided = _row(0.31, 0.05, "confirmatory")  # [0.228, 0.392]: 0.072 below the threshold
    text = sensitivity([passing, undecided])
    assert "0.228" in text and "0.0722 away" in text
    assert sensitivity([]) == ""


# -- the scorecard ---------------------------------------------------------------------------------
def _at(verdict: Verdict, expected: Verdict, hypothesis: str = "h") -> Result:
    estimate = {Verdict.PASS: 0.6, Verdict.FAIL: 0.0, Verdict.INCONCLUSIVE: 0.3}[verdict]
    row = _row(estimate, 0.05, "confirmatory", expected=expected, hypothesis=hypothesis)
    assert row.verdict is verdict
    return row


def test_each_status_of_a_line() -> None:
    lines = [("h", "a hypothesis", "")]
    replicated = build([_at(Verdict.PASS, Verdict.PASS), _at(Verdict.FAIL, Verdict.FAIL)], lines)
    assert replicated[0].status == "replicated" and "all 2 rows" in replicated[0].reason
    contradicted = build([_at(Verdict.PASS, Verdict.PASS), _at(Verdict.PASS, Verdict.FAIL),
                          _at(Verdict.INCONCLUSIVE, Verdict.PASS)], lines)
    assert contradicted[0].status == "contradicted"
    assert "where the paper expects FAIL" in contradicted[0].reason
    # an undecided row is never a disagreement
    undecided = build([_at(Verdict.PASS, Verdict.PASS), _at(Verdict.INCONCLUSIVE, Verdict.FAIL)],
                      lines)
    assert undecided[0].status == "undecided" and "1 of 2 rows undecided" in undecided[0].reason
    # exploratory rows never move a line
    explored = _row(0.0, 0.05, "exploratory", hypothesis="h")
    assert build([explored], lines)[0].status == "not tested"
    assert build([], lines)[0].status == "not tested"
    skipped = Result(Verdict.SKIPPED, "no prefixes", claim="cer.linear", hypothesis="h")
    assert "cer.linear was skipped: no prefixes" in build([skipped], lines)[0].reason
    assert set(STATUSES) == {"replicated", "contradicted", "undecided", "invalid", "not tested"}


def _reading(row: Result, reading: str | None, reconstructed: bool = True) -> Result:
    details = {"reconstructed": reconstructed, **({"reading": reading} if reading else {})}
    return replace(row, details=details)


def test_a_line_with_two_readings_says_which_decided_it() -> None:
    """The status is the reference reading's; the other reading's status is reported beside
    it where the two disagree, never folded into one word."""
    lines = [("h", "a hypothesis", "", "H", "in raw geometry")]
    raw_fails = _reading(_at(Verdict.FAIL, Verdict.PASS), None)
    centred_passes = _reading(_at(Verdict.PASS, Verdict.PASS), "after centring")
    line = build([raw_fails, centred_passes], lines)[0]
    assert line.status == "contradicted"
    assert line.verdict == "contradicted in raw geometry; replicated after centring"
    assert [(r.name, r.status) for r in line.readings] == [("after centring",
                                                            "replicated")]
    assert "after centring: replicated" in line.reason
    stored = line.to_dict()
    assert stored["verdict"] == line.verdict and stored["readings"][0]["status"] == "replicated"
    # readings that agree: the bare status
    both = build([_reading(_at(Verdict.PASS, Verdict.PASS), None), centred_passes], lines)[0]
    assert both.status == both.verdict == "replicated"
    # an undecided other reading is said too, and never counts as a disagreement
    open_ = _reading(_at(Verdict.INCONCLUSIVE, Verdict.PASS), "after centring")
    line = build([_reading(_at(Verdict.PASS, Verdict.PASS), None), open_], lines)[0]
    assert line.verdict == "replicated in raw geometry; undecided after centring"


def test_a_line_says_whether_its_criterion_is_stated_or_reconstructed() -> None:
    lines = [("h", "a hypothesis", "")]
    stated = build([_reading(_at(Verdict.PASS, Verdict.PASS), None, False)], lines)[0]
    assert stated.basis == "stated"
    mixed = build([_reading(_at(Verdict.PASS, Verdict.PASS), None, False),
                   _reading(_at(Verdict.PASS, Verdict.PASS), None, True)], lines)[0]
    assert mixed.basis == "reconstructed"
    assert "> 0.3" in mixed.rests_on and "n " in mixed.rests_on
    assert build([], lines)[0].basis == ""


@pytest.fixture(scope="module")
def glove_report(glove: Any) -> Report:
    return run_audit(glove, settings=FAST)


@pytest.mark.slow
def test_an_audit_reports_roles_and_its_scorecard(glove_report: Report, glove: Any) -> None:
    assert family_of(glove) == "static"
    rows = {r.id: r for r in glove_report.results}
    assert rows["word.norm_ic[transform=whiten_zipf]"].role == "confirmatory"
    assert rows["word.norm_ic[transform=raw]"].role == "exploratory"
    card = {line.key: line for line in glove_report.scorecard}
    assert list(card) == [h.key for h in declared_lines()][:len(card)]
    assert card["word_level"].status == "replicated"
    assert card["cer_growth"].status == "not tested"  # static vectors have no prefixes
    prov = glove_report.provenance["multiplicity"]
    assert prov["confirmatory"]["method"] == "line" and prov["exploratory"]["method"] == "bh"
    assert prov["confirmatory"]["rows"] == sum(r.role == "confirmatory" and r.measurement
                                               is not None for r in glove_report.results)
    # report.json carries the roles and the scorecard, and reads back to the same scorecard
    data = json.loads(glove_report.to_json())
    assert [line["key"] for line in data["scorecard"]] == list(card)
    assert {r["role"] for r in data["results"] if r["verdict"] != "SKIPPED"} == \
        {"confirmatory", "exploratory"}
    again = Report.from_json(glove_report.to_json())
    assert [(x.key, x.status, x.reason) for x in again.scorecard] == \
        [(x.key, x.status, x.reason) for x in glove_report.scorecard]


@pytest.mark.slow
def test_the_scorecard_heads_every_rendering(glove_report: Report, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from normtest.render.formats import render

    markdown = render(glove_report, "md")
    assert markdown.index("Does the model behave as the paper says?") < markdown.index("| claim")
    html = render(glove_report, "html")
    assert html.index('id="scorecard"') < html.index('id="summary"')
    code = main(["audit", "--model", "glove-6b-50d", "--words", "1500", "--resamples", "200",
                 "--suite", "word"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.index("Does the model behave as the paper says?") < out.index("claim ")
    assert "REPLICATED" in out and "scorecard: " in out


def test_the_gate_can_require_scorecard_lines(glove_report: Report) -> None:
    passed = evaluate(glove_report, GateConfig(replicated=("word_level",)))
    assert passed.passed and "### Scorecard" in gate_markdown(passed)
    failed = evaluate(glove_report, GateConfig(replicated=("all",)))
    tested = [line.key for line in glove_report.scorecard if line.status != "not tested"]
    assert [r.key for r in failed.lines] == tested
    # GloVe's raw geometry does not meet C2 (cond.self_pmi FAILs): "all" does not hold
    assert [r.key for r in failed.failed_lines] == ["conditions"] and not failed.passed
    assert "| ❌ | **contradicted** |" in gate_markdown(failed)
    with pytest.raises(NormtestError, match="no scorecard line 'nope'"):
        evaluate(glove_report, GateConfig(replicated=("nope",)))
    with pytest.raises(NormtestError, match="replicated"):
        GateConfig.from_mapping({"replicated": 3})
    with pytest.raises(NormtestError, match="true or false"):
        GateConfig.from_mapping({"exploratory": "yes"})
