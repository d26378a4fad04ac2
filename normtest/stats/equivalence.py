"""Equivalence ("≈") claims: PASS when the whole interval sits inside a margin (TOST)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from normtest.stats import bootstrap
from normtest.stats._inputs import (
    MIN_GROUPS,
    MIN_POINTS,
    as_vector,
    check_resamples,
    group_codes,
)
from normtest.verdict.result import Criterion, Measurement, Result
from normtest.verdict.sampling import Sampling


def measure_mean(
    data: ArrayLike,
    *,
    clusters: ArrayLike | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
) -> Measurement:
    """The mean of a sample with a percentile-bootstrap (1 − 2α) interval over rows or
    ``clusters``; no verdict."""
    n_resamples = check_resamples(n_resamples)
    values = as_vector("data", data)
    n = values.size
    codes = None if clusters is None else group_codes("clusters", clusters, n)
    values = np.sort(values) if codes is None else values[np.lexsort((values, codes))]
    if codes is not None:
        codes = np.sort(codes)
    n_groups = None if codes is None else int(codes.max()) + 1
    problem = None
    if n < MIN_POINTS:
        problem = f"only {n} points; at least {MIN_POINTS} are needed"
    elif n_groups is not None and n_groups < MIN_GROUPS:
        problem = f"only {n_groups} clusters; at least {MIN_GROUPS} are needed"
    settings = {"n_resamples": n_resamples, "clusters": n_groups}
    if problem:
        return Measurement.not_estimable("mean", n, "mean", problem, seed=seed,
                                         settings=settings)

    def mean(w: np.ndarray) -> np.ndarray:
        return (w @ values) / w.sum(axis=1)

    reps = bootstrap.replicates(mean, n, n_resamples, seed, codes)
    unit = "rows" if codes is None else f"{n_groups} clusters"
    estimate = float(values.mean())
    return Measurement(
        statistic="mean", estimate=estimate, n=n,
        method=f"mean, percentile bootstrap over {unit} (B={n_resamples})",
        sampling=Sampling.bootstrap(reps, estimate), confidence=1 - 2 * alpha, seed=seed,
        settings=settings,
    )


def equivalence(
    data: Measurement | ArrayLike,
    low: float,
    high: float,
    alpha: float = 0.05,
    clusters: ArrayLike | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Result:
    """Judge whether a quantity lies inside [low, high] (two one-sided tests at level α).

    ``data`` is either a :class:`Measurement` (any estimate with a sampling distribution, such as
    a slope ratio) or a sample whose mean is the quantity (:func:`measure_mean`). PASS when the
    (1 − 2α) interval lies inside the margin, FAIL when it lies entirely outside, INCONCLUSIVE
    otherwise.
    """
    criterion = Criterion("within", margin=(low, high), alpha=alpha)
    if isinstance(data, Measurement):
        return Result.judged(data, criterion)
    return Result.judged(measure_mean(data, clusters=clusters, n_resamples=n_resamples,
                                      seed=seed, alpha=alpha), criterion)
