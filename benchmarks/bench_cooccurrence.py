"""Benchmark: vectorised ±h window co-occurrence counting against a plain-Python ``Counter``.

Both count the same thing over the same tokens (the bundled Wikipedia sample, tokenised once with
``wordfreq.tokenize`` before any timing): for every ordered pair of positions 1..h apart inside a
document, one count for (x, y) and one for (y, x). The vectorised side is
``CorpusStatistics.from_token_lists`` (token → id mapping, unigram counts, window pairs summed with
scipy.sparse, symmetrised). That both give identical counts is checked once, outside the timings.

Usage: ``python benchmarks/bench_cooccurrence.py --out bench.json [--repeats 5] [--window 5]``.
The two are timed alternately (wall clock and process CPU time); the JSON holds every run, the
medians and their ratio ("speedup": Counter median / vectorised median, wall clock).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy

from normtest.data.information.corpus import CorpusStatistics, tokenize
from normtest.data.information.texts import package_version, wiki_articles


def counter_cooccurrence(docs: Sequence[Sequence[str]], window: int) -> Counter[tuple[str, str]]:
    """The plain-Python reference: one Counter update per ordered co-occurring token pair."""
    counts: Counter[tuple[str, str]] = Counter()
    for doc in docs:
        n = len(doc)
        for i, x in enumerate(doc):
            for j in range(i + 1, min(i + window + 1, n)):
                y = doc[j]
                counts[(x, y)] += 1
                counts[(y, x)] += 1
    return counts


def vectorised_cooccurrence(docs: Sequence[Sequence[str]], window: int) -> CorpusStatistics:
    """normtest's counting over the same token lists."""
    return CorpusStatistics.from_token_lists(docs, window, keep_tokens=False)


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    elapsed = time.perf_counter() - wall, time.process_time() - cpu
    del result  # freeing the result is not part of the timing
    return elapsed


def interleaved(
    first: Callable[[], object], second: Callable[[], object], repeats: int
) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """Time two functions alternately, so that machine load falls on both alike."""
    a, b = [], []
    for _ in range(repeats):
        a.append(timed(first))
        b.append(timed(second))
    return a, b


def same_counts(stats: CorpusStatistics, reference: Counter[tuple[str, str]]) -> bool:
    """Whether the sparse counts equal the Counter's, pair for pair."""
    c = stats.cooccurrence.tocoo()
    if c.nnz != len(reference) or int(c.data.sum()) != sum(reference.values()):
        return False
    voc = stats.vocabulary
    return all(
        reference[(voc[r], voc[k])] == n
        for r, k, n in zip(c.row.tolist(), c.col.tolist(), c.data.tolist(), strict=True)
    )


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and write the JSON figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="where to write the JSON figures")
    parser.add_argument("--repeats", type=int, default=7, help="timed runs of each (>= 5)")
    parser.add_argument("--window", type=int, default=5, help="co-occurrence window ±h")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be positive")

    t0 = time.perf_counter()
    articles = wiki_articles()
    parse_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    docs = [tokenize(a.text) for a in articles]
    tokenize_s = time.perf_counter() - t0

    stats = vectorised_cooccurrence(docs, args.window)
    reference = counter_cooccurrence(docs, args.window)
    agree = same_counts(stats, reference)
    del reference

    vec, ref = interleaved(
        lambda: vectorised_cooccurrence(docs, args.window),
        lambda: counter_cooccurrence(docs, args.window),
        args.repeats,
    )
    vec_wall, vec_cpu = ([t[i] for t in vec] for i in (0, 1))
    ref_wall, ref_cpu = ([t[i] for t in ref] for i in (0, 1))
    figures: dict[str, Any] = {
        "corpus": "gensim Wikipedia sample (enwiki ... shortened.bz2)",
        "window": args.window,
        "n_documents": len(docs),
        "n_tokens": stats.n_tokens,
        "n_types": len(stats.vocabulary),
        "n_pairs": stats.n_pairs,
        "nnz": int(stats.cooccurrence.nnz),
        "counts_agree": agree,
        "repeats": args.repeats,
        "vectorised_wall_s": vec_wall,
        "counter_wall_s": ref_wall,
        "vectorised_median_s": statistics.median(vec_wall),
        "counter_median_s": statistics.median(ref_wall),
        "speedup": statistics.median(ref_wall) / statistics.median(vec_wall),
        "vectorised_cpu_median_s": statistics.median(vec_cpu),
        "counter_cpu_median_s": statistics.median(ref_cpu),
        "speedup_cpu": statistics.median(ref_cpu) / statistics.median(vec_cpu),
        "untimed_parse_s": parse_s,
        "untimed_tokenize_s": tokenize_s,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "wordfreq": package_version("wordfreq"),
        "gensim": package_version("gensim"),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2))
    return figures


if __name__ == "__main__":
    main()
