"""Benchmark: word extraction on Ray — its overhead against the local path, and two workers
against one — plus the per-token throughput that docs/scale.md's estimate starts from.

Each run extracts the vectors of the same words (the default stratified sample) through a fresh,
empty embedding cache, as a cold audit does: ``token_vectors(words, words=True)`` of
``minilm-l6``, computed in this process (local) or by Ray Data actors (``executor = "ray"``), on
a local Ray cluster started here with two CPUs. Ray's side includes starting its actors and
loading the model in each, as every audit on Ray pays. The three sides run alternately.

Also measured (once, not a ratio): tokens per second of ``smollm2-135m``'s prefix states (one
forward pass per document, mean pooling, 128-token documents) on one CPU thread, from which
docs/scale.md extrapolates to a 7B decoder.

Usage: ``python benchmarks/bench_ray.py --out ray.json [--repeats 5] [--words 20000]``.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from _common import arguments, machine, set_threads, timed, write


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and write the JSON figures."""
    parser = arguments(__doc__)
    parser.add_argument("--words", type=int, default=20000,
                        help="words extracted per run (the thorough profile's sample)")
    args = parser.parse_args(argv)
    threads = set_threads(args.threads)

    import ray

    import normtest
    from normtest.data.information.samples import default_word_sample
    from normtest.models.ray import RayExtraction, connect

    connect(workers=2)  # a local cluster of two CPUs, Ray's logs quiet
    words = default_word_sample(args.words)

    def extract(workers: int | None) -> None:
        with tempfile.TemporaryDirectory() as cache:
            model = normtest.load("minilm-l6", cache_dir=cache, progress=False)
            if workers is not None:
                model.remote = RayExtraction(model.recipe, workers=workers)
            model.token_vectors(words, words=True)

    extract(None)  # warm-up: the weights and tokenizer read once from disk
    sides: dict[str, list[float]] = {"local": [], "ray_1": [], "ray_2": []}
    for _ in range(args.repeats):
        sides["local"].append(timed(lambda: extract(None))[0])
        sides["ray_1"].append(timed(lambda: extract(1))[0])
        sides["ray_2"].append(timed(lambda: extract(2))[0])
    ray.shutdown()
    medians = {k: statistics.median(v) for k, v in sides.items()}
    figures: dict[str, Any] = {
        "words": len(words),
        "wall_s": sides,
        "median_s": medians,
        "ray_overhead": medians["ray_1"] / medians["local"],
        "ray_two_vs_one": medians["ray_1"] / medians["ray_2"],
        "throughput": decoder_throughput(),
        "threads": threads,
        "machine": machine(),
    }
    write(args.out, figures, show={k: figures[k] for k in ("median_s", "ray_overhead",
                                                          "ray_two_vs_one", "throughput")})
    return figures


def decoder_throughput(documents: int = 8, length: int = 128) -> dict[str, Any]:
    """Tokens per second of smollm2-135m's prefix states (one forward pass per document)."""
    import normtest
    from normtest.data.information.documents import default_documents, plan_prefixes

    model = normtest.load("smollm2-135m", cache=False, progress=False)
    docs = default_documents(documents)
    plans = plan_prefixes(model, docs, 16, length)
    texts, grids = [p.document.text for p in plans], [p.lengths for p in plans]
    model.prefix_vectors_many(texts[:1], grids[:1], "mean")  # weights read once
    model.clear_prefix_memo()
    start = time.perf_counter()
    model.prefix_vectors_many(texts, grids, "mean")
    seconds = time.perf_counter() - start
    tokens = sum(int(g[-1]) for g in grids)
    return {"model": "smollm2-135m", "parameters": 134_515_008, "tokens": tokens,
            "seconds": seconds, "tokens_per_s": tokens / seconds}


if __name__ == "__main__":
    main()
