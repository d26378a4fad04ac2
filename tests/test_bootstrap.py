"""The weight-based bootstrap equals the explicit resample it stands for."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from normtest.stats import bootstrap
from normtest.stats.correlation import correlation, partial_correlation
from normtest.verdict.sampling import few_units_widening


def _explicit(seed: int, n: int, ties: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 4, n).astype(float) if ties else rng.normal(size=n)
    idx = rng.integers(0, n, n)
    weights = np.bincount(idx, minlength=n).astype(float)[None, :]
    return values, idx, weights


@pytest.mark.slow
@given(seed=st.integers(0, 10_000), n=st.integers(2, 60), ties=st.booleans())
def test_weighted_ranks_equal_ranks_of_the_resample(seed: int, n: int, ties: bool) -> None:
    values, idx, weights = _explicit(seed, n, ties)
    ranks = bootstrap.Ranker(values).ranks(weights)[0] + (n + 1) / 2
    expected = sps.rankdata(values[idx])
    np.testing.assert_allclose(ranks[idx], expected)


@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")
@given(seed=st.integers(0, 10_000), n=st.integers(3, 60))
def test_weighted_spearman_equals_scipy_on_the_resample(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, 6, n).astype(float), rng.normal(size=n)
    idx = rng.integers(0, n, n)
    w = np.bincount(idx, minlength=n).astype(float)[None, :]
    got = bootstrap.weighted_pearson(
        bootstrap.Ranker(x).ranks(w), bootstrap.Ranker(y).ranks(w), w
    )[0]
    expected = sps.spearmanr(x[idx], y[idx]).statistic
    if np.isnan(expected):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-10)


def test_cluster_weights_draw_whole_clusters() -> None:
    clusters = np.repeat(np.arange(6), 4)
    rng = np.random.default_rng(0)
    for w in bootstrap.row_weights(clusters.size, 50, rng, clusters):
        per_cluster = w.reshape(w.shape[0], 6, 4)
        assert (per_cluster == per_cluster[:, :, :1]).all()  # same multiplicity within a cluster
        assert (per_cluster[:, :, 0].sum(axis=1) == 6).all()  # six clusters drawn per resample


def test_chunking_does_not_change_the_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    def draws() -> np.ndarray:
        return np.concatenate(list(bootstrap.unit_weights(50, 300, np.random.default_rng(4))))

    whole = draws()
    monkeypatch.setattr(bootstrap, "_BLOCK_ELEMENTS", 50 * 7)
    np.testing.assert_array_equal(draws(), whole)


def test_weighted_lower_median() -> None:
    values = np.array([3.0, 1.0, np.nan, 2.0])
    w = np.array([[1, 1, 1, 1], [0, 3, 0, 1], [2, 0, 0, 0]], dtype=float)
    np.testing.assert_array_equal(bootstrap.weighted_lower_median(values, w), [2.0, 1.0, 3.0])


def test_point_estimates_equal_scipy() -> None:
    rng = np.random.default_rng(11)
    x = rng.normal(size=120)
    y = x + rng.normal(size=120)
    z = rng.normal(size=120)
    for method, ref in (("spearman", sps.spearmanr), ("kendall", sps.kendalltau),
                        ("pearson", sps.pearsonr)):
        r = correlation(x, y, method=method, n_resamples=200)  # type: ignore[arg-type]
        assert r.estimate == pytest.approx(ref(x, y).statistic, abs=1e-12)
    # partial Pearson equals the correlation of OLS residuals
    resid = [v - np.polyval(np.polyfit(z, v, 1), z) for v in (x, y)]
    partial = partial_correlation(x, y, z, method="pearson")
    assert partial.estimate == pytest.approx(sps.pearsonr(*resid).statistic, abs=1e-10)


@given(seed=st.integers(0, 10_000), n=st.integers(2, 40), ties=st.booleans())
def test_ranks_of_sorted_values_and_weights_left_untouched(seed: int, n: int,
                                                           ties: bool) -> None:
    values, idx, weights = _explicit(seed, n, ties)
    values = np.sort(values)  # the ranker's no-permutation path when there are no ties
    before = weights.copy()
    ranks = bootstrap.Ranker(values).ranks(weights)[0] + (n + 1) / 2
    np.testing.assert_allclose(ranks[idx], sps.rankdata(values[idx]))
    np.testing.assert_array_equal(weights, before)  # ranks are computed in place, not in w


@pytest.mark.parametrize("ties", [False, True])
def test_cluster_bootstrap_replicates_equal_explicit_cluster_resamples(ties: bool) -> None:
    """Each replicate is Spearman's ρ of the rows of the clusters drawn, whatever the row order
    the correlation sorts its input into, spread about the estimate by the few-units widening
    (:func:`normtest.verdict.sampling.few_units_widening`, at the number of clusters)."""
    rng = np.random.default_rng(7)
    n, groups, b, seed = 90, 12, 120, 5
    clusters = rng.integers(0, groups, n)
    x = rng.integers(0, 5, n).astype(float) if ties else rng.normal(size=n)
    y = 0.4 * x + rng.normal(size=n)
    result = correlation(x, y, clusters=clusters, n_resamples=b, seed=seed)
    assert result.measurement is not None
    replicates = result.measurement.sampling.replicates
    draws = np.random.default_rng(seed).integers(0, groups, size=(b, groups))
    labels = np.unique(clusters)  # codes follow the sorted labels
    for r in range(b):
        rows = np.concatenate([np.flatnonzero(clusters == labels[g]) for g in draws[r]])
        drawn = sps.spearmanr(x[rows], y[rows]).statistic
        expected = result.estimate + (drawn - result.estimate) * few_units_widening(groups)
        assert replicates[r] == pytest.approx(expected, abs=1e-10)
