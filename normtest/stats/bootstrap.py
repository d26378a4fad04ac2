"""A vectorised bootstrap expressed as resampling *weights*.

A bootstrap resample of n units is a vector of multiplicities m (how often each unit was drawn).
Every statistic here is written as a function of those weights, so B resamples are one (B, n)
array operation instead of B Python calls. Ranks of a resample are obtained from the original
order with cumulative sums (no sort per resample), which makes a Spearman bootstrap O(B·n).

Clustered data resample clusters: each row inherits the multiplicity of its cluster.

The draws of (n units, B resamples, seed) are deterministic: :func:`replicates` and
:func:`unit_measurement` draw them once and keep them, read-only, in a bounded memo
(:mod:`normtest.stats._draws`, 1 GiB, least recently used out), so every later measurement with
the same n, B and seed (every variant of a claim, and every claim over the same sample) reuses
them; :func:`derived` keeps what a statistic computes from a chunk of draws alone. The results
are bit-identical with the memo off (:func:`memo_limit` ``(0)``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import TypeVar

import numpy as np

from normtest.stats import _draws as _memo
from normtest.verdict.result import Measurement
from normtest.verdict.sampling import Sampling

#: Elements per (chunk × units) block: bounds memory at a few hundred MB whatever n is.
_BLOCK_ELEMENTS = 4_000_000

T = TypeVar("T")

#: Run with the memo's budget set to a number of bytes (0: off); a context manager.
memo_limit = _memo.limit
#: Forget every kept draw and derived array.
clear_memo = _memo.clear
#: Entries, bytes, budget, hits and misses of the memo.
memo_stats = _memo.stats


def derived(weights: np.ndarray, tag: Hashable, make: Callable[[], T], chunk: bool = False) -> T:
    """``make()``, computed once per chunk of kept draws and ``tag`` (a statistic's shared part).

    ``tag`` must name everything ``make`` reads besides ``weights``, e.g. ``("ranks",
    digest(values))`` (:func:`digest`); weights that are not a kept chunk (an array of the
    caller's, or any array with the memo off) are never keyed: ``make()`` is called. With
    ``chunk=True`` the result (row weights made from unit weights) is a kept chunk itself.
    """
    return _memo.derived(weights, tag, make, chunk)


#: A content digest of arrays, for the tags of :func:`derived`.
digest = _memo.digest


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


def seeded_weights(n_units: int, n_resamples: int, seed: int) -> Iterable[np.ndarray]:
    """The chunks of ``unit_weights(n_units, n_resamples, np.random.default_rng(seed))``.

    Kept read-only in the memo when they fit its budget (then every later call with the same
    n, B and seed returns the same arrays), else drawn afresh and yielded one chunk at a time.
    """
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        return unit_weights(n_units, n_resamples, np.random.default_rng(seed))
    key = ("draws", int(n_units), int(n_resamples), int(seed), _BLOCK_ELEMENTS)
    kept = _memo.lookup(key)
    if kept is not None:
        return kept
    if not _memo.fits(8 * max(n_units, 1) * n_resamples):
        return unit_weights(n_units, n_resamples, np.random.default_rng(seed))
    chunks = tuple(_memo.register(w) for w in
                   unit_weights(n_units, n_resamples, np.random.default_rng(seed)))
    _memo.store(key, chunks)
    return chunks


def seeded_row_weights(
    n: int, n_resamples: int, seed: int, clusters: np.ndarray | None = None
) -> Iterator[np.ndarray]:
    """:func:`row_weights` of ``np.random.default_rng(seed)``, from the kept draws; the row
    weights of clusters are kept too (per chunk and digest of the cluster codes). Two-way
    clusters ((n, 2) codes: each row a pair of units) weigh a row by the product of its two
    units' draws (the pigeonhole bootstrap, Owen 2007)."""
    if clusters is None:
        yield from seeded_weights(n, n_resamples, seed)
        return
    codes = np.asarray(clusters, dtype=np.intp)
    if codes.min() < 0:
        raise ValueError("cluster codes must be 0..G−1")
    tag = ("rows", digest(codes))

    def rows(w: np.ndarray) -> Callable[[], np.ndarray]:
        # codes 0..G−1 are in range: mode="clip" skips numpy's bounds checks
        if codes.ndim == 2:  # two-way: a pair drawn as often as both its units together
            return lambda: (np.take(w, codes[:, 0], axis=1, mode="clip")
                            * np.take(w, codes[:, 1], axis=1, mode="clip"))
        return lambda: np.take(w, codes, axis=1, mode="clip")

    for w in seeded_weights(int(codes.max()) + 1, n_resamples, seed):
        yield _memo.derived(w, tag, rows(w), chunk=True)


def draws_digest(kind: str, units: str, n_resamples: int, seed: int) -> str:
    """The fingerprint of a bootstrap's draws (:attr:`Measurement.draws`): what is resampled
    (``kind``: units, clusters, positions), a digest of which units (:func:`labels_digest`, or
    their number), B and the seed."""
    text = f"{kind};{units};{int(n_resamples)};{int(seed)};{_BLOCK_ELEMENTS}"
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def labels_digest(labels: object) -> str:
    """A digest of the distinct labels of a sample (the units or clusters it resamples), in
    sorted order: the same set of labels, in any order, gives the same digest."""
    array = np.asarray(labels)
    # the digest of the distinct labels is kept by the labels' own bytes (every variant of a
    # claim passes the same words): a sort of thousands of strings per measurement otherwise;
    # an object array's bytes are pointers, not contents, so it is always digested afresh
    key = None if array.dtype.hasobject else ("labels", digest(array))
    kept = None if key is None else _memo.lookup(key)
    if kept is not None:
        return kept
    h = hashlib.blake2b(digest_size=16)
    for label in np.unique(array).tolist():
        h.update(repr(label).encode("utf-8") + b"\0")
    value = h.hexdigest()
    if key is not None:
        _memo.keep(key, value, 64)
    return value


#: Measurements kept by their inputs' digest (a measurement holds B replicates): every variant
#: of a claim whose inputs are identical to an earlier one's gets the earlier measurement.
_MEASURED_ENTRIES = 4096


def remembered(inputs: str | None, measure: Callable[[], Measurement]) -> Measurement:
    """The measurement of these ``inputs`` (a digest of everything it is computed from):
    ``measure()`` the first time, the same object again for identical inputs while the memo
    keeps it (it is deterministic: the result is the same either way). None: not kept."""
    if inputs is None or not _memo.fits(1):
        return measure()
    key = ("measurement", inputs)
    kept = _memo.lookup(key)
    if kept is not None:
        return kept
    value = measure()
    size = 0 if value.sampling is None else value.sampling.replicates.nbytes
    _memo.keep(key, value, max(size, _memo.DEFAULT_BUDGET // _MEASURED_ENTRIES))
    return value


def unit_measurement(
    statistic: str, compute: Callable[[np.ndarray], np.ndarray], n_units: int, n: int,
    method: str, n_resamples: int, seed: int, alpha: float = 0.05,
    settings: dict[str, object] | None = None, inputs: tuple[object, ...] | None = None,
    widen: bool = True,
) -> Measurement:
    """A statistic of (b, n_units) unit weights: its estimate at unit weights and a bootstrap,
    read with the few-units widening at ``n_units`` where the units are few independent groups
    (documents, clusters: ``widen``; rows drawn alone are read as they are, as
    :func:`~normtest.stats.correlation.measure_correlation` reads them;
    :func:`normtest.verdict.sampling.few_units_widening`).

    Not estimable (with the reason) when the statistic is undefined on the data themselves.
    The weights are read-only (kept draws, shared with other measurements). The units are drawn
    by position: two measurements over the same units *in the same order*, with the same B and
    seed, are paired (their ``draws`` agree). ``inputs`` (arrays or numbers: everything
    ``compute`` reads) records the measurement's :attr:`~Measurement.inputs` digest, and a
    second measurement of identical inputs returns the first.
    """
    seeded = isinstance(seed, int | np.integer) and not isinstance(seed, bool)
    draws = draws_digest("positions", str(int(n_units)), n_resamples, seed) if seeded else None
    digest_of = None if inputs is None or not seeded else digest(
        *(a if isinstance(a, np.ndarray) or a is None else np.asarray(a) for a in inputs),
        np.frombuffer(f"{statistic};{method};{alpha};{draws}".encode(), np.uint8))

    def measure() -> Measurement:
        estimate = float(compute(np.ones((1, n_units)))[0])
        if not math.isfinite(estimate):
            return Measurement.not_estimable(statistic, n, method,
                                             f"{statistic} is undefined on these data",
                                             seed=seed, inputs=digest_of, draws=draws)
        reps = np.concatenate([compute(w) for w in seeded_weights(n_units, n_resamples, seed)])
        return Measurement(
            statistic=statistic, estimate=estimate, n=n, method=method,
            # few independent units (documents): read with the small-sample widening
            sampling=Sampling.bootstrap(reps, estimate, units=n_units if widen else None),
            confidence=1 - 2 * alpha, seed=seed,
            settings={"n_resamples": n_resamples, **(settings or {})}, inputs=digest_of,
            draws=draws,
        )

    return remembered(digest_of, measure)


def replicates(
    statistic: Callable[[np.ndarray], np.ndarray],
    n: int,
    n_resamples: int,
    seed: int,
    clusters: np.ndarray | None = None,
) -> np.ndarray:
    """Bootstrap replicates of ``statistic(weights) -> (b,)`` over rows (or clusters).

    The weights are read-only (kept draws, shared with other measurements with the same n, B
    and seed); the same as :func:`row_weights` of ``np.random.default_rng(seed)``.
    """
    parts = [statistic(w) for w in seeded_row_weights(n, n_resamples, seed, clusters)]
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
        ``weights`` are read, never written.
        """
        # rank = cumulative weight − (own weight − 1)/2, centred by (W + 1)/2: computed in place
        # (the permutations are valid by construction: mode="clip" skips numpy's bounds checks)
        shift = weights.sum(axis=1, keepdims=True) / 2.0  # (W + 1)/2 − 1/2
        ordered = (np.array(weights) if self.identity
                   else np.take(weights, self.order, axis=1, mode="clip"))
        if self.tied:
            per_group = np.add.reduceat(ordered, self.starts, axis=1)
            group_rank = np.cumsum(per_group, axis=1)
            per_group *= 0.5
            group_rank -= per_group
            group_rank -= shift
            return np.take(group_rank, self.group_of, axis=1, mode="clip", out=ordered)
        rank = np.cumsum(ordered, axis=1)
        ordered *= 0.5
        rank -= ordered
        rank -= shift
        return rank if self.identity else np.take(rank, self.inverse, axis=1, mode="clip",
                                                  out=ordered)


def weighted_pearson(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Row-wise weighted Pearson correlation of (r, n) arrays; NaN where a variance is 0.

    Uses raw weighted moments: centre the inputs roughly first (ranks come centred) to keep the
    cancellation small.
    """
    total = w.sum(axis=1)
    wa, wb = w * a, w * b
    sa, sb = wa.sum(axis=1), wb.sum(axis=1)
    saa, sbb = np.einsum("ij,ij->i", wa, a), np.einsum("ij,ij->i", wb, b)
    return pearson_of_moments(total, sa, sb, saa, sbb, np.einsum("ij,ij->i", wa, b))


def pearson_of_moments(total: np.ndarray, sa: np.ndarray, sb: np.ndarray, saa: np.ndarray,
                       sbb: np.ndarray, sab: np.ndarray) -> np.ndarray:
    """The weighted Pearson correlation from raw weighted moments (Σw, Σwa, Σwb, Σwa², Σwb²,
    Σwab per row); NaN where a variance is 0 (at most 1e-12 of its raw moment)."""
    cov = sab - sa * sb / total
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
