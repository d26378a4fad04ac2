"""Sampling distributions: bounds and p-values agree, and match scipy where scipy has an answer."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from normtest.errors import NormtestError
from normtest.stats.correlation import correlation
from normtest.verdict.sampling import Sampling


@given(
    seed=st.integers(0, 10_000),
    size=st.integers(1, 400),
    alpha=st.sampled_from([0.005, 0.01, 0.025, 0.05, 0.1, 0.2]),
    threshold=st.floats(-3, 3),
    nan_share=st.sampled_from([0.0, 0.0, 0.05]),
)
def test_bootstrap_bounds_agree_with_p_values(
    seed: int, size: int, alpha: float, threshold: float, nan_share: float
) -> None:
    rng = np.random.default_rng(seed)
    reps = np.round(rng.normal(size=size), 1)  # rounding makes ties with the threshold likely
    reps[rng.random(size) < nan_share] = np.nan
    s = Sampling("bootstrap", replicates=reps)
    assert (s.lower(alpha) > threshold) == (s.p_greater(threshold) < alpha)
    assert (s.upper(alpha) < threshold) == (s.p_less(threshold) < alpha)


@given(center=st.floats(-0.99, 0.99), n=st.integers(10, 5000), alpha=st.floats(0.001, 0.4),
       threshold=st.floats(-0.95, 0.95))
def test_fisher_bounds_agree_with_p_values(
    center: float, n: int, alpha: float, threshold: float
) -> None:
    s = Sampling("fisher_z", center=math.atanh(center), scale=1 / math.sqrt(n - 3))
    lower = s.lower(alpha)
    if not math.isclose(lower, threshold, abs_tol=1e-9):
        assert (lower > threshold) == (s.p_greater(threshold) < alpha)


def test_pearson_interval_matches_scipy() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=80)
    y = 0.5 * x + rng.normal(size=80)
    r = correlation(x, y, method="pearson", alpha=0.025)
    ref = sps.pearsonr(x, y).confidence_interval(0.95)
    assert r.ci == pytest.approx((ref.low, ref.high), abs=1e-9)
    assert r.estimate == pytest.approx(sps.pearsonr(x, y).statistic)


def test_nan_replicates_count_against_every_conclusion() -> None:
    s = Sampling("bootstrap", replicates=np.array([1.0] * 90 + [np.nan] * 10))
    assert s.p_greater(0.0) == pytest.approx(0.1)
    assert s.p_less(2.0) == pytest.approx(0.1)
    assert s.lower(0.05) == -math.inf and s.upper(0.05) == math.inf


def test_round_trip_and_validation() -> None:
    for s in (Sampling("normal", 0.2, 0.1), Sampling("t", 1.0, 0.5, df=4),
              Sampling("fisher_z", 0.3, 0.1),
              Sampling("bootstrap", replicates=np.array([0.1, np.nan, 0.3]))):
        back = Sampling.from_dict(s.to_dict())
        assert back.lower(0.05) == s.lower(0.05) and back.upper(0.1) == s.upper(0.1)
    with pytest.raises(NormtestError):
        Sampling("bootstrap", replicates=np.empty(0))
    with pytest.raises(NormtestError):
        Sampling("normal", math.nan, 1.0)
    with pytest.raises(NormtestError):
        Sampling("t", 0.0, 1.0)
    with pytest.raises(NormtestError):
        Sampling("normal", 0.0, 1.0).lower(0.7)
