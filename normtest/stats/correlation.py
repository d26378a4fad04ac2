"""Correlations measured with honest intervals, and judged against a minimum effect
(docs/theory.md §8).

Pearson without clusters uses Fisher's z interval; Spearman, Kendall and anything clustered use a
percentile bootstrap (clusters, when given, are the resampling unit: words that appear in many
pairs, documents that contribute many prefixes).

Rows are put in a canonical order before resampling, so a verdict depends only on the multiset of
rows, never on the order the caller supplied them in. ``units=`` names the unit each row is (the
words of a word claim): its bootstrap weight is then drawn for the unit, so the same unit gets
the same multiplicity in every measurement over the same units with the same seed and size (the
variants of one claim are paired), and the part of a Spearman bootstrap that depends only on x
and the draws is computed once for all of them (:mod:`normtest.stats._spearman`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from normtest.errors import NormtestError
from normtest.stats import bootstrap
from normtest.stats._inputs import (
    MIN_GROUPS,
    MIN_POINTS,
    as_matrix,
    as_vector,
    check_resamples,
    group_codes,
    pair_codes,
    same_length,
)
from normtest.stats._spearman import Spearman, residualise
from normtest.verdict.result import Criterion, Measurement, Result
from normtest.verdict.sampling import Sampling

Method = Literal["spearman", "pearson", "kendall"]
#: How an interval is read: a bootstrap, or where it holds an analytic one (docs/statistics.md)
Interval = Literal["bootstrap", "analytic"]
Alternative = Literal["greater", "less"]

_STATISTIC = {"spearman": "spearman_rho", "pearson": "pearson_r", "kendall": "kendall_tau"}
DEFAULT_RESAMPLES = 2000


def measure_correlation(
    x: ArrayLike,
    y: ArrayLike,
    method: Method = "spearman",
    *,
    clusters: ArrayLike | None = None,
    units: ArrayLike | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    alpha: float = 0.05,
    interval: Interval = "bootstrap",
) -> Measurement:
    """corr(x, y) with its sampling distribution and (1 − 2α) interval; no verdict.

    Pearson without clusters: Fisher's z. Otherwise a percentile bootstrap over rows, or over
    ``clusters`` when given: one label per row (a document), or two per row, an (n, 2) array,
    for rows that are pairs of units (two words): each unit is drawn, and a pair weighs the
    product of its two units' draws (two-way clustering, the pigeonhole bootstrap). ``units``
    (one distinct label per row, e.g. the words) draws each row's weight for its unit rather
    than for its position: measurements over the same units
    with the same ``seed`` and ``n_resamples`` then resample alike (paired), whatever their y.
    ``interval="analytic"`` reads a Spearman ρ without clusters by Fisher's z with the
    Bonett–Wright standard error √((1 + ρ²/2)/(n − 3)) instead of a bootstrap (no draws: it
    pairs with nothing); with clusters, or for Kendall's τ, the bootstrap stays.
    Too few points or a constant variable give a not-estimable measurement with the reason (a
    criterion judges it INCONCLUSIVE).
    """
    return _correlation_measurement(x, y, None, method, clusters, n_resamples, seed, alpha,
                                    units, interval)


def measure_partial_correlation(
    x: ArrayLike,
    y: ArrayLike,
    covariates: ArrayLike,
    method: Literal["spearman", "pearson"] = "spearman",
    *,
    clusters: ArrayLike | None = None,
    units: ArrayLike | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    alpha: float = 0.05,
    interval: Interval = "bootstrap",
) -> Measurement:
    """:func:`measure_correlation` with ``covariates`` (n or n×k) partialled out.

    Spearman: x, y and each covariate are ranked, the covariate ranks regressed out of the ranks
    of x and y (OLS with intercept), and the residuals correlated. Covariate columns that are
    constant are dropped (partialling out a constant changes nothing). ``interval`` as in
    :func:`measure_correlation` (the analytic standard error uses n − 3 − k).
    """
    if method not in ("spearman", "pearson"):
        raise NormtestError(
            f"partial_correlation supports method='spearman' or 'pearson', got {method!r}"
        )
    if covariates is None:
        raise NormtestError("partial_correlation needs covariates; use correlation() without them")
    return _correlation_measurement(x, y, covariates, method, clusters, n_resamples, seed, alpha,
                                    units, interval)


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
    units: ArrayLike | None = None,
) -> Result:
    """Judge whether corr(x, y) exceeds ``min_effect`` in the claimed direction.

    PASS when the one-sided (1 − α) bound clears the threshold (+min_effect for ``greater``,
    −min_effect for ``less``), FAIL when the opposite bound falls short of it, INCONCLUSIVE
    otherwise. ``.p_value`` tests H0: the correlation does not clear the threshold. A
    convenience: :func:`measure_correlation`, then the criterion.
    """
    criterion = Criterion.minimum_effect(min_effect, alternative, alpha)
    return Result.judged(measure_correlation(x, y, method, clusters=clusters, units=units,
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
    units: ArrayLike | None = None,
) -> Result:
    """The same contract as :func:`correlation`, with ``covariates`` partialled out
    (:func:`measure_partial_correlation`, then the criterion)."""
    criterion = Criterion.minimum_effect(min_effect, alternative, alpha)
    return Result.judged(measure_partial_correlation(x, y, covariates, method,
                                                     clusters=clusters, units=units,
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
    units_in: ArrayLike | None = None,
    interval: str = "bootstrap",
) -> Measurement:
    if method not in _STATISTIC:
        raise NormtestError(f"method must be 'spearman', 'pearson' or 'kendall', got {method!r}")
    if interval not in ("bootstrap", "analytic"):
        raise NormtestError(f"interval must be 'bootstrap' or 'analytic', got {interval!r}")
    n_resamples = check_resamples(n_resamples)
    x = as_vector("x", x_in)
    y = as_vector("y", y_in)
    n = same_length(x=x, y=y)
    cov = None if cov_in is None else as_matrix("covariates", cov_in, n)
    codes = None if clusters_in is None else (
        pair_codes("clusters", clusters_in, n) if np.ndim(clusters_in) == 2
        else group_codes("clusters", clusters_in, n))
    units = None if units_in is None else _unit_codes(units_in, n, codes is not None)

    partial = cov is not None
    statistic = ("partial_" if partial else "") + _STATISTIC[method]
    label = f"{'partial ' if partial else ''}{method}"

    # canonical row order: the verdict depends on the rows, not on their order.
    # - units: rows in the order of their unit labels, so each unit draws its own weight
    #   whatever its x and y (the same multiplicity in every measurement over these units);
    # - no clusters: each position draws its own bootstrap weight, so the order fixes the
    #   replicates; x comes first, then y, then the covariates;
    # - clusters: a row's weight is its cluster's wherever the row stands; cluster, then x, then
    #   the covariates, then y, so that the x side (cluster codes, x, covariates, in row order)
    #   is the same array in every measurement that shares it, whatever its y.
    cov_keys = [] if cov is None else [cov[:, j] for j in range(cov.shape[1])][::-1]
    if units is not None:
        order = np.argsort(units, kind="stable")
    elif codes is None:
        order = np.lexsort([*cov_keys, y, x])
    elif codes.ndim == 2:
        order = np.lexsort([y, *cov_keys, x, codes[:, 1], codes[:, 0]])
    else:
        order = np.lexsort([y, *cov_keys, x, codes])
    x, y = x[order], y[order]
    if cov is not None:
        cov = cov[order]
        cov = cov[:, np.ptp(cov, axis=0) > 0] if n else cov[:, :0]
    if codes is not None:
        codes = codes[order]
    k = 0 if cov is None else cov.shape[1]
    n_groups = None if codes is None else int(codes.max()) + 1

    settings: dict[str, object] = {
        "method": method, "n_resamples": n_resamples, "clusters": n_groups, "covariates": k,
        "units": None if units is None else n,
    }
    # what was resampled alike: the same unit (or cluster) labels, B and seed draw the same
    # weights for every unit, whatever the rest of the data; rows drawn by position after a
    # sort by value are not (their draws depend on y)
    # (a seed that is not a number draws afresh: nothing to pair with, nothing to remember)
    analytic = codes is None and (method == "pearson" or (interval == "analytic"
                                                          and method == "spearman"))
    drawn = units_in if units is not None else clusters_in
    seeded = isinstance(seed, int | np.integer) and not isinstance(seed, bool)
    draws = None if drawn is None or not seeded or analytic else (
        bootstrap.draws_digest("units" if units is not None else "clusters",
                               bootstrap.labels_digest(drawn), n_resamples, seed))
    inputs = None if not seeded else bootstrap.digest(
        x, y, cov, codes, np.array([n_resamples, seed]), np.array([alpha]),
        np.array([ord(c) for c in statistic + ("/analytic" if analytic else "")]),
        None if draws is None else np.frombuffer(draws.encode(), np.uint8))
    return bootstrap.remembered(inputs, lambda: _measured(
        x, y, cov, codes, method, statistic, label, settings, n_resamples, seed, alpha, units,
        inputs, draws, analytic))


def _measured(x: np.ndarray, y: np.ndarray, cov: np.ndarray | None, codes: np.ndarray | None,
              method: str, statistic: str, label: str, settings: dict[str, object],
              n_resamples: int, seed: int, alpha: float, units: np.ndarray | None,
              inputs: str | None, draws: str | None, analytic: bool = False) -> Measurement:
    """The measurement of rows already in canonical order (see the caller)."""
    n = x.size
    k = 0 if cov is None else cov.shape[1]
    n_groups = None if codes is None else int(codes.max()) + 1

    def not_estimable(reason: str) -> Measurement:
        return Measurement.not_estimable(statistic, n, label, reason, seed=seed,
                                         settings=settings, inputs=inputs, draws=draws)

    if n < MIN_POINTS + k:
        return not_estimable(f"only {n} points; at least {MIN_POINTS + k} are needed")
    if n_groups is not None and n_groups < MIN_GROUPS:
        return not_estimable(f"only {n_groups} clusters; at least {MIN_GROUPS} are needed")
    for name, arr in (("x", x), ("y", y)):
        if np.ptp(arr) == 0:
            return not_estimable(f"{name} is constant, so its correlation is undefined")

    stat = _weighted_statistic(x, y, cov, method)
    point = stat.explicit if isinstance(stat, Spearman) else stat
    estimate = float(point(np.ones((1, n)))[0])
    if not math.isfinite(estimate):
        return not_estimable("the correlation is undefined on these data (zero variance)")

    if analytic:
        r = min(max(estimate, -1 + 1e-12), 1 - 1e-12)
        # Bonett & Wright (2000): Spearman's z has variance (1 + ρ²/2)/(n − 3)
        spread = 1.0 if method == "pearson" else 1.0 + r * r / 2.0
        sampling = Sampling("fisher_z", center=math.atanh(r),
                            scale=math.sqrt(spread / (n - 3 - k)))
        how = f"{label}, Fisher z interval" + (
            "" if method == "pearson" else " with the Bonett–Wright standard error")
    else:
        reps = bootstrap.replicates(stat, n, n_resamples, seed, codes)
        # one-way clusters: few independent units, read with the small-sample widening
        sampling = Sampling.bootstrap(reps, estimate, units=n_groups if codes is not None
                                      and codes.ndim == 1 else None)
        unit = ("rows drawn by unit" if units is not None else "rows" if codes is None
                else f"{n_groups} clusters" if codes.ndim == 1 else
                f"{n_groups} units, each pair weighted by both its units' draws (two-way)")
        how = f"{label}, percentile bootstrap over {unit} (B={n_resamples})"
    return Measurement(
        statistic=statistic, estimate=estimate, n=n, method=how, sampling=sampling,
        confidence=1 - 2 * alpha, seed=seed, settings=settings, inputs=inputs,
        draws=draws if sampling.kind == "bootstrap" else None,
    )


def _unit_codes(units: ArrayLike, n: int, clustered: bool) -> np.ndarray:
    """Codes 0..n−1 of one distinct unit label per row (sorted label order)."""
    if clustered:
        raise NormtestError(
            "give clusters or units, not both: with clusters the cluster is the resampling unit"
        )
    codes = group_codes("units", units, n)
    if n and int(codes.max()) + 1 != n:
        repeated = n - (int(codes.max()) + 1)
        raise NormtestError(
            f"units must name each row once, but {repeated} row(s) repeat a label; rows that "
            "belong together are clusters (clusters=)"
        )
    return codes


def _weighted_statistic(
    x: np.ndarray, y: np.ndarray, cov: np.ndarray | None, method: str
) -> Callable[[np.ndarray], np.ndarray]:
    """The correlation as a function of (b, n) resampling weights (Spearman: a
    :class:`~normtest.stats._spearman.Spearman`, whose ``explicit`` gives the point estimate)."""
    if method == "kendall":
        return _kendall(x, y)
    if method == "spearman":
        return Spearman(x, y, cov)

    # centred first: the weighted moments are then free of large cancellations
    xc, yc = x - x.mean(), y - y.mean()
    covc = None if cov is None else cov - cov.mean(axis=0)

    def pearson(w: np.ndarray) -> np.ndarray:
        a, b = np.broadcast_to(xc, w.shape), np.broadcast_to(yc, w.shape)
        if covc is not None:
            z = np.broadcast_to(covc, (*w.shape, covc.shape[1]))
            a, b = residualise(a, b, z, w)
        return bootstrap.weighted_pearson(a, b, w)

    return pearson


def _kendall(x: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Kendall's tau-b per resample (scipy's O(n log n) algorithm, one call per resample)."""
    from scipy import stats as sps  # 1 s to import: only where Kendall's τ is asked for

    rows = np.arange(x.size)

    def kendall(w: np.ndarray) -> np.ndarray:
        out = np.empty(w.shape[0])
        for i, counts in enumerate(w):
            idx = np.repeat(rows, counts.astype(np.intp))
            out[i] = sps.kendalltau(x[idx], y[idx]).statistic
        return out

    return kendall
