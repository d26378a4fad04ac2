"""Correlations measured with honest intervals, and judged against a minimum effect
(docs/theory.md §8).

Pearson without clusters uses Fisher's z interval; Spearman, Kendall and anything clustered use a
percentile bootstrap (clusters, when given, are the resampling unit: words that appear in many
pairs, documents that contribute many prefixes).

Rows are put in a canonical order (cluster, x, y, covariates) before resampling, so a verdict
depends only on the multiset of rows, never on the order the caller supplied them in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as sps

from normtest.errors import NormtestError
from normtest.result import Criterion, Measurement, Result
from normtest.sampling import Sampling
from normtest.stats import bootstrap
from normtest.stats._inputs import (
    MIN_GROUPS,
    MIN_POINTS,
    as_matrix,
    as_vector,
    check_resamples,
    group_codes,
    same_length,
)

Method = Literal["spearman", "pearson", "kendall"]
Alternative = Literal["greater", "less"]

_STATISTIC = {"spearman": "spearman_rho", "pearson": "pearson_r", "kendall": "kendall_tau"}
DEFAULT_RESAMPLES = 2000


def measure_correlation(
    x: ArrayLike,
    y: ArrayLike,
    method: Method = "spearman",
    *,
    clusters: ArrayLike | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    alpha: float = 0.05,
) -> Measurement:
    """corr(x, y) with its sampling distribution and (1 − 2α) interval; no verdict.

    Pearson without clusters: Fisher's z. Otherwise a percentile bootstrap over rows, or over
    ``clusters`` when given. Too few points or a constant variable give a not-estimable
    measurement with the reason (a criterion judges it INCONCLUSIVE).
    """
    return _correlation_measurement(x, y, None, method, clusters, n_resamples, seed, alpha)


def measure_partial_correlation(
    x: ArrayLike,
    y: ArrayLike,
    covariates: ArrayLike,
    method: Literal["spearman", "pearson"] = "spearman",
    *,
    clusters: ArrayLike | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    alpha: float = 0.05,
) -> Measurement:
    """:func:`measure_correlation` with ``covariates`` (n or n×k) partialled out.

    Spearman: x, y and each covariate are ranked, the covariate ranks regressed out of the ranks
    of x and y (OLS with intercept), and the residuals correlated. Covariate columns that are
    constant are dropped (partialling out a constant changes nothing).
    """
    if method not in ("spearman", "pearson"):
        raise NormtestError(
            f"partial_correlation supports method='spearman' or 'pearson', got {method!r}"
        )
    if covariates is None:
        raise NormtestError("partial_correlation needs covariates; use correlation() without them")
    return _correlation_measurement(x, y, covariates, method, clusters, n_resamples, seed, alpha)


def correlation(
    x: ArrayLike,
    y: ArrayLike,
    method: Method = "spearman",
    min_effect: float = 0.3,
    alternative: Alternative = "greater",
    alpha: float = 0.05,
    clusters: ArrayLike | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Result:
    """Judge whether corr(x, y) exceeds ``min_effect`` in the claimed direction.

    PASS when the one-sided (1 − α) bound clears the threshold (+min_effect for ``greater``,
    −min_effect for ``less``), FAIL when the opposite bound falls short of it, INCONCLUSIVE
    otherwise. ``.p_value`` tests H0: the correlation does not clear the threshold. A
    convenience: :func:`measure_correlation`, then the criterion.
    """
    criterion = Criterion.minimum_effect(min_effect, alternative, alpha)
    return Result.judged(measure_correlation(x, y, method, clusters=clusters,
                                             n_resamples=n_resamples, seed=seed, alpha=alpha),
                         criterion)


def partial_correlation(
    x: ArrayLike,
    y: ArrayLike,
    covariates: ArrayLike,
    method: Literal["spearman", "pearson"] = "spearman",
    min_effect: float = 0.3,
    alternative: Alternative = "greater",
    alpha: float = 0.05,
    clusters: ArrayLike | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Result:
    """The same contract as :func:`correlation`, with ``covariates`` partialled out
    (:func:`measure_partial_correlation`, then the criterion)."""
    criterion = Criterion.minimum_effect(min_effect, alternative, alpha)
    return Result.judged(measure_partial_correlation(x, y, covariates, method,
                                                     clusters=clusters,
                                                     n_resamples=n_resamples, seed=seed,
                                                     alpha=alpha),
                         criterion)


def _correlation_measurement(
    x_in: ArrayLike,
    y_in: ArrayLike,
    cov_in: ArrayLike | None,
    method: str,
    clusters_in: ArrayLike | None,
    n_resamples: int,
    seed: int,
    alpha: float,
) -> Measurement:
    if method not in _STATISTIC:
        raise NormtestError(f"method must be 'spearman', 'pearson' or 'kendall', got {method!r}")
    n_resamples = check_resamples(n_resamples)
    x = as_vector("x", x_in)
    y = as_vector("y", y_in)
    n = same_length(x=x, y=y)
    cov = None if cov_in is None else as_matrix("covariates", cov_in, n)
    codes = None if clusters_in is None else group_codes("clusters", clusters_in, n)

    partial = cov is not None
    statistic = ("partial_" if partial else "") + _STATISTIC[method]
    label = f"{'partial ' if partial else ''}{method}"

    # canonical row order: the verdict depends on the rows, not on their order. Without clusters
    # each position draws its own bootstrap weight, so the order fixes the replicates; x comes
    # first. With clusters a row's weight is its cluster's wherever the row stands, so any order
    # gives the same replicates; y comes first (in the audit y is the untied, model-side
    # variable, and a variable already in order is ranked without a permutation).
    keys: list[np.ndarray] = [] if cov is None else [cov[:, j] for j in range(cov.shape[1])][::-1]
    keys += [y, x] if codes is None else [codes, x, y]
    order = np.lexsort(keys)
    x, y = x[order], y[order]
    if cov is not None:
        cov = cov[order]
        cov = cov[:, np.ptp(cov, axis=0) > 0]
    if codes is not None:
        codes = codes[order]
    k = 0 if cov is None else cov.shape[1]
    n_groups = None if codes is None else int(codes.max()) + 1

    settings: dict[str, object] = {
        "method": method, "n_resamples": n_resamples, "clusters": n_groups, "covariates": k,
    }

    def not_estimable(reason: str) -> Measurement:
        return Measurement.not_estimable(statistic, n, label, reason, seed=seed,
                                         settings=settings)

    if n < MIN_POINTS + k:
        return not_estimable(f"only {n} points; at least {MIN_POINTS + k} are needed")
    if n_groups is not None and n_groups < MIN_GROUPS:
        return not_estimable(f"only {n_groups} clusters; at least {MIN_GROUPS} are needed")
    for name, arr in (("x", x), ("y", y)):
        if np.ptp(arr) == 0:
            return not_estimable(f"{name} is constant, so its correlation is undefined")

    stat = _weighted_statistic(x, y, cov, method)
    estimate = float(stat(np.ones((1, n)))[0])
    if not math.isfinite(estimate):
        return not_estimable("the correlation is undefined on these data (zero variance)")

    if method == "pearson" and codes is None:
        r = min(max(estimate, -1 + 1e-12), 1 - 1e-12)
        sampling = Sampling("fisher_z", center=math.atanh(r), scale=1 / math.sqrt(n - 3 - k))
        how = f"{label}, Fisher z interval"
    else:
        reps = bootstrap.replicates(stat, n, n_resamples, seed, codes)
        sampling = Sampling.bootstrap(reps, estimate)
        unit = "rows" if codes is None else f"{n_groups} clusters"
        how = f"{label}, percentile bootstrap over {unit} (B={n_resamples})"
    return Measurement(
        statistic=statistic, estimate=estimate, n=n, method=how, sampling=sampling,
        confidence=1 - 2 * alpha, seed=seed, settings=settings,
    )


def _weighted_statistic(
    x: np.ndarray, y: np.ndarray, cov: np.ndarray | None, method: str
) -> Callable[[np.ndarray], np.ndarray]:
    """The correlation as a function of (b, n) resampling weights."""
    if method == "kendall":
        return _kendall(x, y)
    if method == "spearman":
        rank_x, rank_y = bootstrap.Ranker(x), bootstrap.Ranker(y)
        rank_cov = [] if cov is None else [bootstrap.Ranker(c) for c in cov.T]

        def spearman(w: np.ndarray) -> np.ndarray:
            a, b = rank_x.ranks(w), rank_y.ranks(w)
            if rank_cov:
                z = np.stack([r.ranks(w) for r in rank_cov], axis=2)
                a, b = _residualise(a, b, z, w)
            return bootstrap.weighted_pearson(a, b, w)

        return spearman

    # centred first: the weighted moments are then free of large cancellations
    xc, yc = x - x.mean(), y - y.mean()
    covc = None if cov is None else cov - cov.mean(axis=0)

    def pearson(w: np.ndarray) -> np.ndarray:
        a, b = np.broadcast_to(xc, w.shape), np.broadcast_to(yc, w.shape)
        if covc is not None:
            z = np.broadcast_to(covc, (*w.shape, covc.shape[1]))
            a, b = _residualise(a, b, z, w)
        return bootstrap.weighted_pearson(a, b, w)

    return pearson


#: Residual variance below this share of the variance before partialling means the covariates
#: explain the variable (up to rounding): its partial correlation is undefined, not noise.
_EXPLAINED = 1e-10


def _residualise(
    a: np.ndarray, b: np.ndarray, z: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted OLS residuals of (r, n) a and b on (r, n, k) covariates plus an intercept.

    The covariates are centred and made orthonormal under each row's weights (modified
    Gram–Schmidt; a covariate the earlier ones explain is dropped), then projected out: the same
    residuals as the normal equations, in a few element-wise passes instead of batched matrix
    algebra. A row whose residual variance is a vanishing share of its variance (the covariates
    explain the variable exactly) is set to NaN, so the correlation of rounding noise is never
    reported.
    """
    total = w.sum(axis=1, keepdims=True)

    def centred(v: np.ndarray) -> np.ndarray:
        return v - np.einsum("rn,rn->r", w, v)[:, None] / total

    def inner(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.einsum("rn,rn->r", w * u, v)[:, None]

    basis: list[np.ndarray] = []
    for j in range(z.shape[2]):
        q = centred(z[:, :, j])
        size = inner(q, q)
        for e in basis:
            q = q - inner(q, e) * e
        left = inner(q, q)
        with np.errstate(invalid="ignore", divide="ignore"):
            basis.append(np.where(left > _EXPLAINED * size, q / np.sqrt(left), 0.0))
    out = []
    for target in (a, b):
        resid = centred(target)
        before = inner(resid, resid)[:, 0]
        for e in basis:
            resid = resid - inner(resid, e) * e
        explained = inner(resid, resid)[:, 0] <= _EXPLAINED * before
        out.append(np.where(explained[:, None], np.nan, resid))
    return out[0], out[1]


def _kendall(x: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Kendall's tau-b per resample (scipy's O(n log n) algorithm, one call per resample)."""
    rows = np.arange(x.size)

    def kendall(w: np.ndarray) -> np.ndarray:
        out = np.empty(w.shape[0])
        for i, counts in enumerate(w):
            idx = np.repeat(rows, counts.astype(np.intp))
            out[i] = sps.kendalltau(x[idx], y[idx]).statistic
        return out

    return kendall
