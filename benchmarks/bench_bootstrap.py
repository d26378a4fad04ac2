"""Benchmark: the project's Spearman bootstrap against ``scipy.stats.bootstrap`` on 50,000 points.

Both resample the same (x, y) pairs B times and read a 90% percentile interval (the two one-sided
95% bounds a verdict uses). normtest's side is ``normtest.stats.correlation(x, y,
method="spearman", n_resamples=B)``, the call the audit makes: each resample is a row of
multiplicities, and the ranks of every resample come from one sort of the data by cumulative
sums, with no sort per resample. scipy's side is ``scipy.stats.bootstrap((x, y), rho,
paired=True, vectorized=True, method="percentile", batch=...)`` with ``rho`` ranking each
resample along the last axis (``scipy.stats.rankdata``) and correlating the ranks, vectorised.

Agreement, checked on the timed runs: each percentile end of normtest's replicates lies within
four Monte-Carlo standard errors of scipy's (the standard error of a bootstrap quantile,
sqrt(q(1-q)/B)/φ(z_q) · se, for each side, combined); the verdict's own interval is
bias-corrected, and its distance from the plain percentile interval is reported in units of se.

Shared draws (``variants``): the variants of one claim — ``--variants`` Spearman correlations of
one x (an information content with ties, as wordfreq's) with a different y each, over
``--words`` words, B = ``--resamples`` — measured the old way, each from scratch (the memo of
draws off: every measurement draws its resamples and ranks x again), against the new, the
words passed as ``units=`` (the same word drawn as often in every variant: the draws are kept
and x's ranks computed once per chunk of draws). The memo is emptied before each timed batch, so
the new side pays for its draws and shared ranks once per batch. Both medians and their ratio;
the two sides' replicates are checked identical (the memo changes no bit). For context, the same
batch as the previous release computed it (its unit_weights, Ranker and weighted_pearson,
reproduced below, rows drawn by position) is timed against the new side, and its replicates are
checked identical to the new code's without units (the draws and sums are exact: no bit moved).

Usage: ``python benchmarks/bench_bootstrap.py --out bootstrap.json [--repeats 5] [--n 50000]
[--resamples 1000] [--words 2000] [--variants 10] [--threads 1]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from _common import arguments, machine, set_threads, side_by_side, summary, write
from scipy import special
from scipy import stats as sps


def spearman_rows(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's ρ of every resample along ``axis`` (rank, centre, correlate), vectorised."""
    rx, ry = sps.rankdata(x, axis=axis), sps.rankdata(y, axis=axis)
    rx -= rx.mean(axis=axis, keepdims=True)
    ry -= ry.mean(axis=axis, keepdims=True)
    return np.sum(rx * ry, axis=axis) / np.sqrt(np.sum(rx**2, axis=axis)
                                                 * np.sum(ry**2, axis=axis))


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and write the JSON figures."""
    parser = arguments(__doc__)
    parser.add_argument("--n", type=int, default=50_000, help="points")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples B")
    parser.add_argument("--batch", type=int, default=100,
                        help="scipy's resamples per vectorised call (bounds its memory)")
    parser.add_argument("--words", type=int, default=2000, help="words of the shared-draws part")
    parser.add_argument("--variants", type=int, default=10,
                        help="variants (y's) of one claim in the shared-draws part")
    args = parser.parse_args(argv)
    threads = set_threads(args.threads)

    from normtest.stats import correlation

    rng = np.random.default_rng(0)
    x = rng.normal(size=args.n)
    y = 0.3 * x + rng.normal(size=args.n)
    results: dict[str, list[Any]] = {"ours": [], "scipy": []}

    def ours() -> None:
        seed = len(results["ours"])
        results["ours"].append(correlation(x, y, method="spearman", n_resamples=args.resamples,
                                           seed=seed))

    def theirs() -> None:
        seed = 1000 + len(results["scipy"])
        results["scipy"].append(sps.bootstrap(
            (x, y), spearman_rows, paired=True, vectorized=True, n_resamples=args.resamples,
            confidence_level=0.90, method="percentile", batch=args.batch,
            rng=np.random.default_rng(seed)))

    a, b = side_by_side(ours, theirs, args.repeats)
    q = 0.05
    figures: dict[str, Any] = {
        "benchmark": "Spearman bootstrap: normtest against scipy.stats.bootstrap",
        "n": args.n, "resamples": args.resamples, "scipy_batch": args.batch,
        "interval": "90% percentile (one-sided 95% bounds)",
        **summary(a, b, "normtest", "scipy"),
    }
    rows = []
    for mine, scipys in zip(results["ours"], results["scipy"], strict=True):
        reps = mine.measurement.sampling.replicates
        se = float(np.std(reps, ddof=1))
        mc = math.sqrt(q * (1 - q) / args.resamples) / float(
            np.exp(-special.ndtri(q) ** 2 / 2) / math.sqrt(2 * math.pi)) * se
        tolerance = 4 * math.sqrt(2) * mc
        percentile = np.quantile(reps, [q, 1 - q])
        theirs_ci = (float(scipys.confidence_interval.low),
                     float(scipys.confidence_interval.high))
        gap = float(np.max(np.abs(percentile - np.asarray(theirs_ci))))
        rows.append({
            "estimate": mine.estimate, "scipy_spearmanr": float(sps.spearmanr(x, y).statistic),
            "normtest_percentile": percentile.tolist(), "scipy_percentile": list(theirs_ci),
            "normtest_bc_interval": list(mine.ci),
            "normtest_se": se, "scipy_se": float(scipys.standard_error),
            "max_end_gap": gap, "tolerance": tolerance, "agree": gap <= tolerance,
            "bc_shift_in_se": float(np.max(np.abs(np.asarray(mine.ci) - percentile)) / se),
        })
    figures["runs"] = rows
    figures["intervals_agree"] = all(r["agree"] for r in rows)
    figures["estimate_equals_scipy"] = all(abs(r["estimate"] - r["scipy_spearmanr"]) < 1e-12
                                           for r in rows)
    figures["variants"] = shared_draws(args.words, args.variants, args.resamples, args.repeats)
    figures["machine"] = {**machine(), **threads}
    write(args.out, figures)
    return figures


def claim_variants(words: int, variants: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """One claim's data: an information content with ties (wordfreq's are quantised), the
    words, and one y per variant (a squared norm tracking it more or less)."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.uniform(8.0, 20.0, words), 1)
    labels = np.array([f"w{i:06d}" for i in rng.permutation(words)])
    ys = np.stack([rng.uniform(0.0, 1.0) * x + rng.normal(0.0, 3.0, words)
                   for _ in range(variants)])
    return x, labels, ys


def shared_draws(words: int, variants: int, resamples: int, repeats: int) -> dict[str, Any]:
    """The variants of one claim: each from scratch (memo off) against shared draws and ranks."""
    from normtest.stats import bootstrap, measure_correlation

    x, labels, ys = claim_variants(words, variants)
    runs: dict[str, list[list[np.ndarray]]] = {"shared": [], "scratch": [], "previous": [],
                                               "rows": []}

    def batch(name: str, units: np.ndarray | None) -> None:
        runs[name].append([measure_correlation(x, y, units=units, n_resamples=resamples)
                           .sampling.replicates for y in ys])

    def shared() -> None:
        batch("shared", labels)

    def scratch() -> None:
        with bootstrap.memo_limit(0):
            batch("scratch", labels)

    def previous() -> None:
        runs["previous"].append([previous_release(x, y, resamples) for y in ys])

    a, b = side_by_side(shared, scratch, repeats, before=bootstrap.clear_memo)
    c, d = side_by_side(shared, previous, repeats, before=bootstrap.clear_memo)
    batch("rows", None)  # the new code without units: the previous release's rows and draws
    figures: dict[str, Any] = {
        "benchmark": f"{variants} variants of a Spearman bootstrap over {words} words: shared "
                     "draws and ranks (units=) against each variant from scratch (memo off)",
        "words": words, "variants": variants, "resamples": resamples,
        **summary(a, b, "shared", "scratch"),
        "identical_to_scratch": all(np.array_equal(p, q) for run in runs["shared"] + runs["scratch"]
                                    for p, q in zip(run, runs["scratch"][0], strict=True)),
    }
    vs_previous = summary(c, d, "shared", "previous_release")
    figures["against_previous_release"] = {
        "what": "the same batch as the previous release computed it (rows drawn by position, "
                "every variant from scratch, its arithmetic)",
        "previous_release_median_s": vs_previous["previous_release_median_s"],
        "previous_release_wall_s": vs_previous["previous_release_wall_s"],
        "shared_median_s": vs_previous["shared_median_s"],
        "speedup": vs_previous["speedup"], "speedup_cpu": vs_previous["speedup_cpu"],
        "rows_identical_to_previous_release": all(
            np.array_equal(p, q) for p, q in zip(runs["rows"][0], runs["previous"][0],
                                                 strict=True)),
    }
    return figures


def previous_release(x: np.ndarray, y: np.ndarray, resamples: int, seed: int = 0) -> np.ndarray:
    """The replicates of ``correlation(x, y, n_resamples=resamples, seed=seed)`` as the previous
    release computed them: rows in (x, y) order, fresh draws, both variables ranked per chunk."""
    order = np.lexsort([y, x])
    x, y = x[order], y[order]
    rank_x, rank_y = _PreviousRanker(x), _PreviousRanker(y)
    rng = np.random.default_rng(seed)
    parts = []
    for w in _previous_weights(x.size, resamples, rng):
        parts.append(_previous_pearson(rank_x.ranks(w), rank_y.ranks(w), w))
    return np.concatenate(parts)


def _previous_weights(n: int, resamples: int, rng: np.random.Generator) -> Any:
    chunk = max(1, min(resamples, 4_000_000 // max(n, 1)))
    done = 0
    while done < resamples:
        b = min(chunk, resamples - done)
        draws = rng.integers(0, n, size=(b, n), dtype=np.int64)
        offsets = (np.arange(b, dtype=np.int64) * n)[:, None]
        counts = np.bincount((draws + offsets).ravel(), minlength=b * n)
        yield counts.reshape(b, n).astype(np.float64)
        done += b


class _PreviousRanker:
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
        shift = weights.sum(axis=1, keepdims=True) / 2.0
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


def _previous_pearson(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
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


if __name__ == "__main__":
    main()
