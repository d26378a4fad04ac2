"""Benchmark: the project's Spearman bootstrap against ``scipy.stats.bootstrap`` on 50,000 points.

Both resample the same (x, y) pairs B times and read a 90% percentile interval (the two one-sided
95% bounds a verdict uses). normtest's side is ``normtest.stats.correlation.correlation(x, y,
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
the two sides' replicates are checked identical (the memo changes no bit).

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

    from normtest.stats.correlation import correlation

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
    from normtest.stats import bootstrap
    from normtest.stats.correlation import measure_correlation

    x, labels, ys = claim_variants(words, variants)
    runs: dict[str, list[list[np.ndarray]]] = {"shared": [], "scratch": []}

    def batch(name: str, units: np.ndarray | None) -> None:
        runs[name].append([measure_correlation(x, y, units=units, n_resamples=resamples)
                           .sampling.replicates for y in ys])

    def shared() -> None:
        batch("shared", labels)

    def scratch() -> None:
        with bootstrap.memo_limit(0):
            batch("scratch", labels)

    a, b = side_by_side(shared, scratch, repeats, before=bootstrap.clear_memo)
    figures: dict[str, Any] = {
        "benchmark": f"{variants} variants of a Spearman bootstrap over {words} words: shared "
                     "draws and ranks (units=) against each variant from scratch (memo off)",
        "words": words, "variants": variants, "resamples": resamples,
        **summary(a, b, "shared", "scratch"),
        "identical_to_scratch": all(np.array_equal(p, q) for run in runs["shared"] + runs["scratch"]
                                    for p, q in zip(run, runs["scratch"][0], strict=True)),
    }
    return figures


if __name__ == "__main__":
    main()
