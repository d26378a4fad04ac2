"""Benchmark: word-vector throughput against sentence-transformers' ``encode`` (``minilm-l6``).

The same words (the default stratified word sample), the same weights, both on the CPU, no
cache. normtest's side is what the audit calls for a word's vector: ``token_vectors(words,
words=True)`` (one tokenizer call, batches of one token length, numpy gathers) then
``compose_batch(..., "mean")``. sentence-transformers' side is
``SentenceTransformer(folder).encode(words, batch_size=B)`` (its own tokenisation, padding to the
longest word of each batch, mean pooling and normalisation), at its default B = 32 and at a large
B (``--st-batch``), so that the comparison is with sentence-transformers at its best. Also timed:
normtest's per-word reference path (``fast=False``).

Checked once, outside the timings: normtest's token states with the special tokens, mean-pooled
and normalised, equal sentence-transformers' vectors (max |Δ|), so both compute the same model.

Usage: ``python benchmarks/bench_words.py --out words.json [--repeats 5] [--words 2000]
[--st-batch 1024] [--threads 1]``.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from _common import arguments, machine, set_threads, side_by_side, summary, timed, write


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and write the JSON figures."""
    parser = arguments(__doc__)
    parser.add_argument("--words", type=int, default=2000, help="words in the sample")
    parser.add_argument("--st-batch", type=int, default=1024,
                        help="the large sentence-transformers batch size")
    args = parser.parse_args(argv)
    threads = set_threads(args.threads)

    import sentence_transformers

    from normtest.adapters.embedded import minilm_folder
    from normtest.adapters.encoder import EncoderAdapter
    from normtest.data.information.samples import default_word_sample
    from normtest.geometry.compose import compose_batch

    words = default_word_sample(args.words)
    adapter = EncoderAdapter.minilm_l6(progress=False)
    simple = adapter.variant(fast=False)
    st = sentence_transformers.SentenceTransformer(str(minilm_folder()), device="cpu")

    def ours(a: Any = adapter) -> np.ndarray:
        batch = a.token_vectors(words, words=True)
        return compose_batch(np.asarray(batch.vectors, dtype=np.float64), batch.offsets, "mean")

    def theirs(batch_size: int) -> np.ndarray:
        return np.asarray(st.encode(words, batch_size=batch_size, convert_to_numpy=True,
                                    show_progress_bar=False))

    # the same computation on both sides: [CLS] w [SEP] states, mean, L2-normalised
    full = adapter.token_vectors(words, words=True, special_tokens=True)
    mean = compose_batch(np.asarray(full.vectors, dtype=np.float64), full.offsets, "mean")
    mean /= np.linalg.norm(mean, axis=1, keepdims=True)
    st_gap = float(np.abs(mean - theirs(32)).max())
    fast_gap = float(np.abs(ours() - ours(simple)).max())

    figures: dict[str, Any] = {
        "benchmark": "word vectors: normtest against sentence-transformers encode",
        "model": "minilm-l6", "words": len(words),
        "tokens": int(full.lengths.sum() - 2 * len(words)),
        "sentence_transformers": sentence_transformers.__version__,
        "max_abs_diff_vs_sentence_transformers": st_gap,
        "max_abs_diff_fast_vs_per_word": fast_gap,
    }
    best: tuple[float, int] | None = None
    for batch_size in (32, args.st_batch):
        a, b = side_by_side(ours, lambda bs=batch_size: theirs(bs), args.repeats)
        part = summary(a, b, "normtest", "sentence_transformers")
        part["normtest_words_per_s"] = len(words) / part["normtest_median_s"]
        part["sentence_transformers_words_per_s"] = len(words) / part[
            "sentence_transformers_median_s"]
        figures[f"st_batch_{batch_size}"] = part
        if best is None or part["sentence_transformers_median_s"] < best[0]:
            best = (part["sentence_transformers_median_s"], batch_size)
    assert best is not None
    head = figures[f"st_batch_{best[1]}"]
    figures["st_best_batch_size"] = best[1]
    figures["speedup_vs_st_best"] = head["speedup"]
    per_word = [timed(lambda: ours(simple)) for _ in range(args.repeats)]
    figures["per_word_reference_median_s"] = statistics.median(t[0] for t in per_word)
    figures["speedup_vs_per_word"] = (figures["per_word_reference_median_s"]
                                      / head["normtest_median_s"])
    figures["machine"] = {**machine(), **threads}
    write(args.out, figures)
    return figures


if __name__ == "__main__":
    main()
