"""Benchmark: what a layer profile (``--layers all``) costs over a last-layer audit.

Extraction, per model (``minilm-l6``: 8 representations; ``smollm2-135m``: 32), uncached
adapters, the same inputs each way — ``--words`` words, the prefixes of ``--documents``
documents on the word grid (every pooling the CER claims ask for) and ``--sentences`` sentences:

- ``last``: the vectors of the last layer only (what an audit without a profile extracts);
- ``profile``: the vectors of every hidden layer, with the adapter keeping each forward pass's
  layers (``keep_layers``), as ``--layers all`` does;
- ``per_layer``: the same vectors with nothing kept (one forward pass per layer and batch).

Reported: the ratios profile/last (the extra cost of a profile's extraction: one forward pass
per batch, then per layer the rows copied out and the prefixes pooled) and per_layer/profile
(what keeping the layers saves), the forward passes counted by the adapter, and that every
vector is identical.

The whole audit: ``normtest audit --model minilm-l6`` on word.norm_ic, cer.linear,
cer.fixed_point and text.norm_surprisal at ``--profile quick`` with ``--no-cache``, with and
without ``--layers all`` (each in its own process), to show where the rest of a profile's cost
goes (the statistics of eight times the rows, and the report).

Usage: ``python benchmarks/bench_layers.py --out bench.json [--words 1000] [--documents 12]
[--sentences 40] [--repeats 3] [--no-audit] [--threads 1]``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from _common import arguments, set_threads, side_by_side, summary, write

MODELS = ("minilm-l6", "smollm2-135m")
POOLINGS = ("sqrt_n", "mean", "sum", "f_ind")
CLAIMS = ("word.norm_ic", "cer.linear", "cer.fixed_point", "text.norm_surprisal")


def _inputs(words: int, documents: int, sentences: int, adapter: Any) -> dict[str, Any]:
    from normtest.base.settings import AuditSettings
    from normtest.data.common import documents_for
    from normtest.data.information.documents import (
        document_sentences,
        on_token_grid,
        plan_word_prefixes,
    )
    from normtest.data.information.samples import default_word_sample

    settings = AuditSettings()
    sample = [getattr(w, "word", w) for w in default_word_sample(size=words, seed=0)]
    docs = documents_for(settings, documents)
    plans = [p for p in on_token_grid(adapter, plan_word_prefixes(docs, 16, 128))
             if p.lengths.size >= 2]
    texts = [t for _, t in document_sentences(documents_for(settings, 24), sentences)]
    states = [s for s in adapter.states if s in ("cls", "eos")]
    return {"words": sample, "docs": [p.document.text for p in plans],
            "grids": [p.tokens for p in plans], "sentences": texts,
            "poolings": (*POOLINGS, *states)}


def _extract(adapter: Any, inputs: dict[str, Any], layers: Sequence[Any]) -> list[np.ndarray]:
    out = []
    for layer in layers:
        out.append(adapter.token_vectors(inputs["words"], layer=layer, words=True).vectors)
        out.append(adapter.token_vectors(inputs["sentences"], layer=layer).vectors)
        adapter.clear_prefix_memo()
        for pooling in inputs["poolings"]:
            out.extend(adapter.prefix_vectors_many(inputs["docs"], inputs["grids"], pooling,
                                                   layer=layer))
    return out


def extraction(name: str, words: int, documents: int, sentences: int,
               repeats: int) -> dict[str, Any]:
    from normtest.models.registry import load

    adapter = load(name, cache=False, progress=False)
    inputs = _inputs(words, documents, sentences, adapter)
    n = int(adapter.n_layers)
    layers: list[Any] = [*range(n), "last"]
    stash = adapter.layer_stash

    def profile() -> list[np.ndarray]:
        adapter.keep_layers([*range(n), "last"])
        try:
            return _extract(adapter, inputs, layers)
        finally:
            adapter.keep_layers(())

    _extract(adapter, inputs, ["last"])  # warm-up: weights read, kernels ready
    kept, last = side_by_side(profile, lambda: _extract(adapter, inputs, ["last"]), repeats)
    before = stash.passes
    start = time.perf_counter()
    plain = _extract(adapter, inputs, layers)  # once: timed, and the reference vectors
    per_layer_s = time.perf_counter() - start
    passes_per_layer = stash.passes - before
    before, served = stash.passes, stash.served
    same = all(np.array_equal(a, b) for a, b in zip(profile(), plain, strict=True))
    passes_profile = stash.passes - before
    result = summary(last, kept, "last", "profile")
    result.update(
        representations=len(layers) + 1, words=len(inputs["words"]),
        documents=len(inputs["docs"]), sentences=len(inputs["sentences"]),
        profile_over_last=result["speedup"],
        per_layer_s=per_layer_s,
        per_layer_over_profile=per_layer_s / result["profile_median_s"],
        forward_passes_profile=passes_profile, forward_passes_per_layer=passes_per_layer,
        served_from_stash=stash.served - served, identical=same)
    del result["speedup"], result["speedup_cpu"]
    return result


def audit(repeats: int) -> dict[str, Any]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

    def run(extra: Sequence[str]) -> None:
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([sys.executable, "-m", "normtest", "audit", "--model", "minilm-l6",
                            "--claims", *CLAIMS, "--profile", "quick", "--no-cache", "-q",
                            "--out", out, *extra], check=True, env=env,
                           stdout=subprocess.DEVNULL)

    last, profile = side_by_side(lambda: run([]), lambda: run(["--layers", "all"]), repeats)
    result = summary(last, profile, "last", "profile")
    result["profile_over_last"] = result.pop("speedup")
    del result["speedup_cpu"]
    return result


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = arguments(__doc__)
    parser.add_argument("--words", type=int, default=1000)
    parser.add_argument("--documents", type=int, default=12)
    parser.add_argument("--sentences", type=int, default=40)
    parser.add_argument("--no-audit", action="store_true")
    parser.set_defaults(repeats=3)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    figures: dict[str, Any] = {"threads": set_threads(args.threads)}
    t0 = time.perf_counter()
    for name in MODELS:
        figures[name] = extraction(name, args.words, args.documents, args.sentences,
                                   args.repeats)
    if not args.no_audit:
        figures["audit_minilm_quick"] = audit(max(1, args.repeats - 2))
    figures["seconds"] = round(time.perf_counter() - t0, 1)
    write(args.out, figures)
    return figures


if __name__ == "__main__":
    main()
