"""A vectorised bootstrap expressed as resampling *weights*.

A bootstrap resample of n units is a vector of multiplicities m (how often each unit was drawn).
Every statistic here is written as a function of those weights, so B resamples are one (B, n)
array operation instead of B Python calls. Ranks of a resample are obtained from the original
order with cumulative sums (no sort per resample), which makes a Spearman bootstrap O(B·n).

Clustered data resample clusters: each row inherits the multiplicity of its cluster.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np

from normtest.result import Measurement
from normtest.sampling import Sampling

#: Elements per (chunk × units) block: bounds memory at a few hundred MB whatever n is.
_BLOCK_ELEMENTS = 4_000_000


def unit_weights(
    n_units: int, n_resamples: int, rng: np.random.Generator
) -> Iterator[np.ndarray]:
    """Yield (b, n_units) float arrays of bootstrap multiplicities, b rows at a time."""
    chunk = max(1, min(n_resamples, _BLOCK_ELEMENTS // max(n_units, 1)))
    done = 0
    while done < n_resamples:
        b = min(chunk, n_resamples - done)
        draws = rng.integers(0, n_units, size=(b, n_units), dtype=np.int64)
        offsets = (np.arange(b, dtype=np.int64) * n_units)[:, None]
        counts = np.bincount((draws + offsets).ravel(), minlength=b * n_units)
        yield counts.reshape(b, n_units).astype(np.float64)
        done += b


def row_weights(
    n: int, n_resamples: int, rng: np.random.Generator, clusters: np.ndarray | None = None
) -> Iterator[np.ndarray]:
    """Yield (b, n) row multiplicities; with ``clusters`` (codes 0..G−1) draw whole clusters."""
    if clusters is None:
        yield from unit_weights(n, n_resamples, rng)
        return
    n_clusters = int(clusters.max()) + 1
    for w in unit_weights(n_clusters, n_resamples, rng):
        yield w[:, clusters]


def unit_measurement(
    statistic: str, compute: Callable[[np.ndarray], np.ndarray], n_units: int, n: int,
    method: str, n_resamples: int, seed: int, alpha: float = 0.05,
    settings: dict[str, object] | None = None,
) -> Measurement:
    """A statistic of (b, n_units) unit weights: its estimate at unit weights and a bootstrap.

    Not estimable (with the reason) when the statistic is undefined on the data themselves.
    """
    estimate = float(compute(np.ones((1, n_units)))[0])
    if not math.isfinite(estimate):
        return Measurement.not_estimable(statistic, n, method,
                                         f"{statistic} is undefined on these data", seed=seed)
    rng = np.random.default_rng(seed)
    reps = np.concatenate([compute(w) for w in unit_weights(n_units, n_resamples, rng)])
    return Measurement(
        statistic=statistic, estimate=estimate, n=n, method=method,
        sampling=Sampling.bootstrap(reps, estimate), confidence=1 - 2 * alpha, seed=seed,
        settings={"n_resamples": n_resamples, **(settings or {})},
    )


def replicates(
    statistic: Callable[[np.ndarray], np.ndarray],
    n: int,
    n_resamples: int,
    seed: int,
    clusters: np.ndarray | None = None,
) -> np.ndarray:
    """Bootstrap replicates of ``statistic(weights) -> (b,)`` over rows (or clusters)."""
    rng = np.random.default_rng(seed)
    parts = [statistic(w) for w in row_weights(n, n_resamples, rng, clusters)]
    return np.concatenate(parts)


class Ranker:
    """Average ranks of one variable within any weighted resample, from a single sort."""

    def __init__(self, values: np.ndarray) -> None:
        self.order = np.argsort(values, kind="stable")
        self.inverse = np.empty_like(self.order)
        self.inverse[self.order] = np.arange(values.size)
        self.identity = bool((self.order == np.arange(values.size)).all())
        ordered = values[self.order]
        new_group = np.empty(ordered.size, dtype=bool)
        new_group[:1] = True
        new_group[1:] = ordered[1:] != ordered[:-1]
        self.tied = not bool(new_group.all())
        self.starts = np.flatnonzero(new_group)
        self.group_of = (np.cumsum(new_group) - 1)[self.inverse]

    def ranks(self, weights: np.ndarray) -> np.ndarray:
        """(b, n) centred average rank of each original row within each resample.

        The rank (mid-rank for ties) minus the resample's mean rank (W + 1)/2, W the resample
        size. A row of weight 0 gets the rank it would have if drawn; callers weight it by 0.
        """
        # rank = cumulative weight − (own weight − 1)/2, centred by (W + 1)/2: computed in place
        shift = weights.sum(axis=1, keepdims=True) / 2.0  # (W + 1)/2 − 1/2
        if self.tied:
            per_group = np.add.reduceat(np.take(weights, self.order, axis=1), self.starts, axis=1)
            group_rank = np.cumsum(per_group, axis=1)
            per_group *= 0.5
            group_rank -= per_group
            group_rank -= shift
            return np.take(group_rank, self.group_of, axis=1)
        ordered = np.array(weights) if self.identity else np.take(weights, self.order, axis=1)
        rank = np.cumsum(ordered, axis=1)
        ordered *= 0.5
        rank -= ordered
        rank -= shift
        return rank if self.identity else np.take(rank, self.inverse, axis=1)


def weighted_pearson(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Row-wise weighted Pearson correlation of (r, n) arrays; NaN where a variance is 0.

    Uses raw weighted moments: centre the inputs roughly first (ranks come centred) to keep the
    cancellation small.
    """
    total = w.sum(axis=1)
    wa, wb = w * a, w * b
    sa, sb = wa.sum(axis=1), wb.sum(axis=1)
    saa, sbb = np.einsum("ij,ij->i", wa, a), np.einsum("ij,ij->i", wb, b)
    cov = np.einsum("ij,ij->i", wa, b) - sa * sb / total
    var_a = saa - sa * sa / total
    var_b = sbb - sb * sb / total
    degenerate = (var_a <= 1e-12 * saa) | (var_b <= 1e-12 * sbb)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cov / np.sqrt(np.where(degenerate, 1.0, var_a * var_b))
    return np.clip(np.where(degenerate, np.nan, r), -1.0, 1.0)


def weighted_lower_median(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Row-wise lower weighted median of 1-D ``values`` under (b, n) weights ``w``.

    The smallest value whose cumulative weight reaches half the total; with unit weights and an
    even count this is the lower of the two middle values. NaN values are ignored.
    """
    keep = ~np.isnan(values)
    values, w = values[keep], w[:, keep]
    if values.size == 0:
        return np.full(w.shape[0], np.nan)
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(w[:, order], axis=1)
    half = cum[:, -1:] / 2.0
    idx = np.argmax(cum >= half, axis=1)
    out = values[order][idx]
    return np.where(cum[:, -1] > 0, out, np.nan)
