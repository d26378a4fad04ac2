"""The result model: verdict logic, re-judging, multiplicity and the JSON round trip."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from normtest.audit.report import SCHEMA, Report
from normtest.errors import NormtestError
from normtest.stats.correlation import correlation
from normtest.stats.equivalence import equivalence
from normtest.stats.growth import fixed_point, linear_growth
from normtest.stats.multiplicity import adjust
from normtest.verdict.result import Criterion, Measurement, Result, Verdict, judge
from normtest.verdict.sampling import Sampling


def _normal(center: float, scale: float = 0.05, statistic: str = "rho") -> Measurement:
    return Measurement(statistic, center, 100, "test", Sampling("normal", center, scale))


@pytest.mark.parametrize(
    ("center", "expected"),
    [(0.5, Verdict.PASS), (0.1, Verdict.FAIL), (0.3, Verdict.INCONCLUSIVE)],
)
def test_minimum_effect_three_ways(center: float, expected: Verdict) -> None:
    j = judge(_normal(center), Criterion.minimum_effect(0.3))
    assert j.verdict is expected, j.reason


def test_less_direction_mirrors_greater() -> None:
    crit = Criterion.minimum_effect(0.3, "less")
    assert crit.threshold == -0.3
    assert judge(_normal(-0.5), crit).verdict is Verdict.PASS
    assert judge(_normal(-0.1), crit).verdict is Verdict.FAIL


@pytest.mark.parametrize(
    ("center", "expected"),
    [(1.0, Verdict.PASS), (3.0, Verdict.FAIL), (0.1, Verdict.FAIL), (1.95, Verdict.INCONCLUSIVE)],
)
def test_equivalence_three_ways(center: float, expected: Verdict) -> None:
    j = judge(_normal(center, 0.1), Criterion("within", margin=(0.5, 2.0)))
    assert j.verdict is expected, j.reason


def test_components_follow_intersection_union() -> None:
    head = _normal(1.0, 0.05, "ratio")
    ok, bad, unsure = _normal(0.0, 0.01), _normal(0.9, 0.01), _normal(0.2, 0.2)
    crit = Criterion("within", margin=(0.5, 2.0),
                     components={"curv": Criterion("within", margin=(-0.2, 0.2))})
    from dataclasses import replace

    assert judge(replace(head, components={"curv": ok}), crit).verdict is Verdict.PASS
    failing = judge(replace(head, components={"curv": bad}), crit)
    assert failing.verdict is Verdict.FAIL and "curv" in failing.reason
    assert judge(replace(head, components={"curv": unsure}), crit).verdict is Verdict.INCONCLUSIVE
    with pytest.raises(NormtestError, match="component 'curv'"):
        judge(head, crit)


def test_not_estimable_is_inconclusive_with_reason() -> None:
    m = Measurement.not_estimable("rho", 4, "spearman", "only 4 points")
    r = Result.judged(m, Criterion.minimum_effect(0.3))
    assert r.verdict is Verdict.INCONCLUSIVE and "only 4 points" in r.reason
    assert math.isnan(r.estimate)


def test_criterion_validation() -> None:
    with pytest.raises(NormtestError):
        Criterion("sideways", threshold=0.3)  # type: ignore[arg-type]
    with pytest.raises(NormtestError):
        Criterion("within", margin=(2.0, 1.0))
    with pytest.raises(NormtestError):
        Criterion("greater")
    with pytest.raises(NormtestError):
        Criterion.minimum_effect(-0.3)
    with pytest.raises(NormtestError):
        Criterion.minimum_effect(0.3, alpha=0.7)


def test_rejudge_needs_no_raw_data() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=300)
    y = 0.45 * x + rng.normal(size=300)
    r = correlation(x, y, n_resamples=500)
    strict = r.rejudge(Criterion.minimum_effect(0.6))
    lenient = r.rejudge(Criterion.minimum_effect(0.1))
    assert strict.verdict is Verdict.FAIL
    assert lenient.verdict is Verdict.PASS
    assert strict.estimate == lenient.estimate == r.estimate


def test_result_id_names_the_variant() -> None:
    r = Result(Verdict.SKIPPED, "no adapter capability", claim="cer.linear",
               variant={"composition": "sqrt_n"})
    assert r.id == "cer.linear[composition=sqrt_n]"


def _demo_results() -> list[Result]:
    rng = np.random.default_rng(7)
    x = rng.normal(size=200)
    y = 0.6 * x + rng.normal(size=200)
    lengths = np.tile(np.arange(1, 21, dtype=float), 5)
    docs = np.repeat(np.arange(5), 20)
    values = lengths * rng.uniform(0.9, 1.1, 100)
    vectors = rng.normal(size=(100, 4))
    return [
        correlation(x, y, n_resamples=300),
        correlation(x, y, method="pearson"),
        correlation(x[:5], y[:5]),
        equivalence(rng.normal(1.0, 0.2, 50), 0.5, 1.5, n_resamples=300),
        linear_growth(lengths, values, docs, n_resamples=300),
        fixed_point(lengths, values, docs, vectors, n_resamples=300),
        Result(Verdict.SKIPPED, "needs token log-probabilities", claim="text.norm_surprisal"),
    ]


def test_report_round_trips_through_json() -> None:
    report = Report(results=_demo_results(), model={"name": "m"}, provenance={"seed": 0})
    text = report.to_json()
    data = json.loads(text)
    assert data["schema"] == SCHEMA == "normtest.report/1"
    assert set(data) == {"schema", "model", "provenance", "scorecard", "results", "summary",
                         "digest"}
    assert data["digest"].startswith("sha256:") and len(data["digest"]) == len("sha256:") + 64
    row = data["results"][0]
    for key in ("claim", "variant", "verdict", "estimate", "ci", "threshold", "p_value",
                "p_adjusted", "n", "expected", "reason", "details"):
        assert key in row
    back = Report.from_json(text)
    assert back.to_json() == text
    for a, b in zip(report.results, back.results, strict=True):
        assert a.verdict is b.verdict
        assert a.id == b.id
        assert a.ci == pytest.approx(b.ci, nan_ok=True)
        if a.measurement is not None and a.criterion is not None:
            # a stored result re-judges exactly as the original would
            c = Criterion.minimum_effect(0.2) if a.criterion.direction == "greater" else a.criterion
            if not a.criterion.components:
                assert a.rejudge(c).verdict is b.rejudge(c).verdict


def test_report_refuses_other_schema() -> None:
    with pytest.raises(NormtestError, match="schema"):
        Report.from_json(json.dumps({"schema": "other/9", "results": []}))
    with pytest.raises(NormtestError, match="valid JSON"):
        Report.from_json("{not json")


def test_summary_counts_every_verdict() -> None:
    report = Report(results=_demo_results())
    summary = report.summary
    assert set(summary) == {v.value for v in Verdict}
    assert sum(summary.values()) == len(report.results)
    assert summary["SKIPPED"] == 1 and summary["INCONCLUSIVE"] >= 1


def test_holm_adjustment_turns_marginal_passes_inconclusive() -> None:
    # five variants each with p_pass ≈ 0.03: each passes alone, none survives Holm at 0.05
    crit = Criterion.minimum_effect(0.3)
    center = 0.3 + 1.88 * 0.05  # one-sided p ≈ 0.03
    family = [Result.judged(_normal(center), crit) for _ in range(5)]
    assert all(r.verdict is Verdict.PASS for r in family)
    adjusted = adjust(family, "holm")
    assert all(r.verdict is Verdict.INCONCLUSIVE for r in adjusted)
    assert all(r.p_adjusted == pytest.approx(min(1, 5 * family[0].p_value)) for r in adjusted)
    assert "adjustment" in adjusted[0].reason


def test_adjustment_keeps_strong_results_and_fails() -> None:
    crit = Criterion.minimum_effect(0.3)
    family = [Result.judged(_normal(c), crit) for c in (0.6, 0.0, 0.3)]
    family.append(Result(Verdict.SKIPPED, "not applicable"))
    out = adjust(family, "bh")
    assert [r.verdict for r in out] == [Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE,
                                        Verdict.SKIPPED]
    with pytest.raises(NormtestError):
        adjust(family, "bonferroni")  # type: ignore[arg-type]


# -- a sampling distribution that cannot be read --------------------------------------------------
def _boot(estimate: float, replicates: np.ndarray, name: str = "late_early_ratio") -> Measurement:
    return Measurement(name, estimate, 24, "bootstrap",
                       sampling=Sampling.bootstrap(replicates, estimate))


@pytest.mark.parametrize(("estimate", "replicates", "words"), [
    # the SmolLM2 row: estimate 341, replicates from −80 to 132, interval [132, 132]
    (341.0, np.r_[np.linspace(-80.0, 132.0, 999), 132.0], "outside every bootstrap replicate"),
    # inside the replicates, but the bias correction puts the interval above the estimate
    (4.9, np.r_[np.linspace(0.0, 1.0, 990), np.full(10, 5.0)], "outside its own 90% interval"),
    # replicates that vary, yet an interval of one point
    (1.0, np.r_[np.ones(995), np.zeros(5)], "collapsed to the single point 1"),
    # every resample the same
    (0.8, np.full(500, 0.8), "every bootstrap replicate equals 0.8"),
])
def test_an_unreadable_bootstrap_is_inconclusive_and_not_tested(
        estimate: float, replicates: np.ndarray, words: str) -> None:
    measured = _boot(estimate, replicates)
    result = Result.judged(measured, Criterion("within", margin=(0.5, 2.0)))
    assert result.verdict is Verdict.INCONCLUSIVE and words in result.reason
    assert math.isnan(result.p_value)
    # it does not count towards a family: the other row is adjusted as if it were alone
    fine = Result.judged(_boot(1.0, np.random.default_rng(0).normal(1.0, 0.1, 500)),
                         Criterion("within", margin=(0.5, 2.0)))
    adjusted = adjust([result, fine], "holm")
    assert adjusted[0].p_adjusted is None and adjusted[1].p_adjusted == pytest.approx(
        fine.p_value)


def test_an_unreadable_component_makes_the_row_inconclusive() -> None:
    head = _boot(1.0, np.random.default_rng(1).normal(1.0, 0.05, 500))
    curvature = _boot(0.0, np.zeros(500), "curvature")
    measured = replace(head, components={"curvature": curvature})
    criterion = Criterion("within", margin=(0.5, 2.0),
                          components={"curvature": Criterion("within", margin=(-0.2, 0.2))})
    result = Result.judged(measured, criterion)
    assert result.verdict is Verdict.INCONCLUSIVE and "curvature: every bootstrap" in result.reason
    # a component that is only reported, not judged, does not block the verdict
    assert Result.judged(measured, Criterion("within", margin=(0.5, 2.0))).verdict is Verdict.PASS


def test_report_json_writes_lists_of_numbers_compactly_and_strictly() -> None:
    """Every list of plain numbers stands on one line (a default report holds about a million
    numbers); non-finite floats become null; strings never pass for a placeholder."""
    import json
    import re

    from normtest.audit.report import _dumps

    value = {"numbers": [1.0, float("nan"), 2, -3.5], "pair": (1, 2), "flags": [True, False],
             "nested": [[1, 2], [float("inf"), 4]], "one": [7], "empty": [],
             "text": "0123456789abcdef:0", "mixed": [1, "a"], "scalar": float("-inf")}
    text = _dumps(value, 1)
    assert json.loads(text) == {
        "numbers": [1.0, None, 2, -3.5], "pair": [1, 2], "flags": [True, False],
        "nested": [[1, 2], [None, 4]], "one": [7], "empty": [], "text": "0123456789abcdef:0",
        "mixed": [1, "a"], "scalar": None}
    assert '"numbers": [1.0,null,2,-3.5]' in text and '"pair": [1,2]' in text
    assert re.search(r'"flags": \[\n', text)  # booleans are not numbers here
    assert json.loads(_dumps(value, None)) == json.loads(text)


def test_a_string_shaped_like_a_placeholder_stays_a_string(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The placeholders carry a fresh random nonce: a report string can only collide with one
    by guessing it. With the nonce known (fixed here), such a string would be replaced; the
    JSON of a drawn nonce keeps it."""
    import json
    import secrets

    from normtest.audit.report import _dumps

    sneaky = {"a": [1, 2], "b": "feedfacefeedface:0"}
    assert json.loads(_dumps(sneaky, 1)) == sneaky
    monkeypatch.setattr(secrets, "token_hex", lambda n: "feedfacefeedface")
    assert json.loads(_dumps(sneaky, 1))["b"] == [1, 2]  # what the nonce protects against


@pytest.mark.parametrize("field", ["hypothesis", "claim"])
@pytest.mark.parametrize("value", [[], {"a": 1}, 3])
def test_a_stored_text_field_of_another_type_is_a_damaged_report(field: str, value: object) -> None:
    """Found by the report fuzzer: a list where a hypothesis key belongs reached the scorecard
    (unhashable) instead of being refused when the report was read."""
    row = Result(Verdict.PASS, "fine", claim="word.norm_ic", hypothesis="word_level").to_dict()
    assert Result.from_dict(row).hypothesis == "word_level"
    row[field] = value
    with pytest.raises(NormtestError, match=f"'{field}' is"):
        Result.from_dict(row)
