"""Edge cases found in review: each test failed before its fix."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from normtest.stats._inputs import MIN_GROUPS
from normtest.stats.correlation import correlation, partial_correlation
from normtest.stats.growth import fixed_point, linear_growth
from normtest.stats.multiplicity import adjust
from normtest.verdict.result import Criterion, Measurement, Result, Verdict, judge
from normtest.verdict.sampling import Sampling


def _normal(center: float, scale: float, name: str = "part") -> Measurement:
    return Measurement(name, center, 100, "test", Sampling("normal", center, scale))


def test_rise_then_fall_is_not_a_fixed_point() -> None:
    lengths = np.tile(np.arange(1, 21, dtype=float), 12)
    docs = np.repeat(np.arange(12), 20)
    rng = np.random.default_rng(0)
    values = np.where(lengths <= 10, 10 * lengths, 200 - 10 * lengths)
    values = values + rng.normal(0, 0.1, lengths.size)
    result = fixed_point(lengths, values, docs, n_resamples=300)
    assert result.estimate < -0.9
    assert result.verdict is Verdict.FAIL, result.reason


def test_fail_side_is_bonferroni_over_judged_parts() -> None:
    """Three parts exactly at their thresholds: FAIL at most α of the time (was 3α)."""
    rng = np.random.default_rng(1)
    crit = Criterion("greater", threshold=0.0,
                     components={"b": Criterion("greater", threshold=0.0),
                                 "c": Criterion("greater", threshold=0.0)})
    fails = 0
    trials = 4000
    for _ in range(trials):
        a, b, c = rng.standard_normal(3) * 0.1
        m = Measurement("a", a, 100, "t", Sampling("normal", a, 0.1),
                        components={"b": _normal(b, 0.1), "c": _normal(c, 0.1)})
        fails += judge(m, crit).verdict is Verdict.FAIL
    rate = fails / trials
    assert sps.binomtest(fails, trials, 0.05, alternative="greater").pvalue > 0.01, rate


def test_a_missing_part_blocks_pass_but_not_fail() -> None:
    crit = Criterion("greater", threshold=0.3, components={"other": Criterion("greater",
                                                                              threshold=0.0)})
    missing = Measurement.not_estimable("other", 3, "t", "only 3 points")
    failing = Measurement("rho", 0.0, 100, "t", Sampling("normal", 0.0, 0.01),
                          components={"other": missing})
    passing = Measurement("rho", 0.9, 100, "t", Sampling("normal", 0.9, 0.01),
                          components={"other": missing})
    assert judge(failing, crit).verdict is Verdict.FAIL
    j = judge(passing, crit)
    assert j.verdict is Verdict.INCONCLUSIVE and "only 3 points" in j.reason
    assert j.p_pass == 1.0


def test_unmeasurable_member_does_not_spoil_the_family() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=300)
    strong = [correlation(x, x + rng.normal(0, 0.5, 300), n_resamples=300, seed=i)
              for i in range(3)]
    tiny = correlation(x[:5], x[:5], n_resamples=300)
    for method in ("holm", "bh"):
        out = adjust([*strong, tiny], method)  # type: ignore[arg-type]
        assert [r.verdict for r in out] == [Verdict.PASS] * 3 + [Verdict.INCONCLUSIVE]
        assert all(r.p_adjusted is not None and np.isfinite(r.p_adjusted) for r in out[:3])
        assert out[3].p_adjusted is None


def test_adjusted_reason_does_not_contradict_the_interval() -> None:
    crit = Criterion.minimum_effect(0.3)
    family = [Result.judged(_normal(0.3 + 1.88 * 0.05, 0.05), crit) for _ in range(5)]
    out = adjust(family)
    assert out[0].verdict is Verdict.INCONCLUSIVE
    assert "straddle" not in out[0].reason and "multiplicity adjustment" in out[0].reason
    assert out[0].p_fail_adjusted is not None


def test_single_length_documents_do_not_count() -> None:
    rng = np.random.default_rng(3)
    real = MIN_GROUPS - 1
    lengths = np.concatenate([np.tile(np.arange(1.0, 11.0), real), np.full(20, 5.0)])
    docs = np.concatenate([np.repeat(np.arange(real), 10), np.arange(real, real + 20)])
    values = lengths + rng.normal(0, 0.1, lengths.size)
    result = linear_growth(lengths, values, docs, n_resamples=200)
    assert result.verdict is Verdict.INCONCLUSIVE
    assert f"only {real} documents with two or more lengths (20 more" in result.reason


def test_fully_explained_variable_has_no_partial_correlation() -> None:
    rng = np.random.default_rng(4)
    z = rng.normal(size=200)
    y = z + rng.normal(size=200)
    for method in ("pearson", "spearman"):
        r = partial_correlation(z, y, 3 * z + 1, method=method, n_resamples=200)  # type: ignore[arg-type]
        assert r.verdict is Verdict.INCONCLUSIVE, (method, r.reason)


@pytest.mark.slow
@given(seed=st.integers(0, 10_000), size=st.integers(20, 300),
       alpha=st.sampled_from([0.01, 0.025, 0.05, 0.1]), threshold=st.floats(-2, 2),
       shift=st.floats(-1, 1))
def test_bias_corrected_bounds_agree_with_p_values(
    seed: int, size: int, alpha: float, threshold: float, shift: float
) -> None:
    reps = np.round(np.random.default_rng(seed).normal(size=size), 2)
    s = Sampling.bootstrap(reps, float(np.median(reps)) + shift)
    assert (s.lower(alpha) > threshold) == (s.p_greater(threshold) < alpha)
    assert (s.upper(alpha) < threshold) == (s.p_less(threshold) < alpha)
    back = Sampling.from_dict(s.to_dict())
    assert back.bias == s.bias and back.lower(alpha) == s.lower(alpha)


def test_few_clusters_are_not_judged() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=90)
    few = np.repeat(np.arange(MIN_GROUPS - 1), 10)
    r = correlation(x, x + rng.normal(size=90), clusters=few, n_resamples=200)
    assert r.verdict is Verdict.INCONCLUSIVE and f"only {MIN_GROUPS - 1} clusters" in r.reason
    with pytest.raises(AssertionError):  # the same data with enough clusters are judged
        assert "only" in correlation(x, x, clusters=np.arange(90) % MIN_GROUPS,
                                     n_resamples=200).reason


def test_a_resample_without_late_points_reads_nan_quietly() -> None:
    """The late change of a resample whose weights leave out every late point is NaN, with no
    RuntimeWarning (pytest makes normtest's RuntimeWarnings errors; a user saw 'invalid value
    encountered in divide' during normtest compare)."""
    import warnings

    import numpy as np

    from normtest.stats.growth import _Curves

    documents = 40
    lengths = np.tile(np.arange(1.0, 9.0), documents)
    values = lengths * 2 + np.repeat(np.arange(float(documents)), 8)
    curves = _Curves(lengths, values, np.repeat(np.arange(documents), 8))
    assert curves.problem is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = curves.late_change(np.zeros((1, documents)))
    assert np.isnan(out).all()
