"""Benchmark: prefix vectors of 200-token documents, one forward pass against one per prefix.

Decoder (``smollm2-135m``): the fast path runs each document once, ``start t_1 … t_200`` followed
by one end token per prefix length under a block attention mask (``eos``), and pools the text
tokens' states with cumulative sums (``last``, ``mean``, ``sqrt_n``, ``sum``). The baseline is
the same adapter with ``fast=False``: one forward pass per prefix. Timed per pooling (``eos``,
``mean``) and, with ``--five``, for the five poolings an audit asks for in turn (the fast path
keeps a document's states, so its four later poolings run no model; the memo is cleared before
every timed run).

Encoder (``minilm-l6``, attends both ways, so one pass per prefix): the prefixes of all documents
batched by length (``prefix_vectors_many``) against one pass per prefix.

Equality, on the final states: ``eos`` and ``mean`` as timed (fast against ``fast=False``), and
``last``, ``mean``, ``sqrt_n``, ``sum`` against one forward pass per prefix written out here; max
|Δ| ≤ 1e-4 for all but ``sum``, which grows with the prefix and is held to float32's resolution
at its size (relative 1e-6).

Usage: ``python benchmarks/bench_prefixes.py --out prefixes.json [--repeats 5] [--documents 2]
[--tokens 200] [--step 16] [--five] [--threads 1]``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from _common import arguments, machine, set_threads, side_by_side, summary, write

POOLINGS = ("eos", "last", "mean", "sqrt_n", "sum")


def documents(adapter: Any, n: int, tokens: int) -> list[str]:
    """The first ``n`` default documents with at least ``tokens`` model tokens."""
    from normtest.data.information.documents import default_documents

    found = [d.text for d in default_documents(4 * n, min_words=tokens)
             if len(adapter.tokenize(d.text)) >= tokens]
    if len(found) < n:
        raise SystemExit(f"only {len(found)} documents have {tokens} tokens")
    return found[:n]


def gap(fast: np.ndarray, simple: np.ndarray) -> dict[str, float]:
    """Largest absolute and relative (to the row's largest |value|) difference."""
    diff = np.abs(fast - simple)
    return {"max_abs_diff": float(diff.max()),
            "max_rel_diff": float((diff.max(axis=1) / np.abs(simple).max(axis=1)).max())}


def separate_passes(adapter: Any, text: str, grid: list[int]) -> dict[str, np.ndarray]:
    """``last``, ``mean``, ``sqrt_n``, ``sum`` from one forward pass per prefix, spelled out."""
    import torch

    ids = list(adapter.tokenize(text).ids)
    out: dict[str, list[np.ndarray]] = {p: [] for p in ("last", "mean", "sqrt_n", "sum")}
    for n in grid:
        with torch.inference_mode():
            hidden = adapter.model.base_model(
                input_ids=torch.tensor([[adapter.start_token_id, *ids[:n]]])).last_hidden_state
        states = hidden[0, 1:].double().numpy()
        total = states.sum(axis=0)
        out["last"].append(states[-1])
        out["mean"].append(total / n)
        out["sqrt_n"].append(total / np.sqrt(n))
        out["sum"].append(total)
    return {p: np.stack(rows).astype(np.float32) for p, rows in out.items()}


def decoder_figures(docs: Sequence[str], grid: list[int], repeats: int,
                    five: bool) -> dict[str, Any]:
    from normtest.adapters.decoder import DecoderAdapter

    fast = DecoderAdapter.smollm2_135m(progress=False)
    simple = fast.variant(fast=False)
    outputs: dict[tuple[str, str], list[np.ndarray]] = {}

    def run(adapter: Any, poolings: Sequence[str], side: str) -> None:
        for pooling in poolings:
            outputs[side, pooling] = [adapter.prefix_vectors(doc, grid, pooling)
                                      for doc in docs]

    fast.prefix_vectors(docs[0], grid[:1], "eos")  # warm-up and the one-pass probe, untimed
    simple.prefix_vectors(docs[0], grid[:1], "eos")
    figures: dict[str, Any] = {"model": "smollm2-135m", "one_pass_supported":
                               fast._one_pass_supported()}
    timed_sets = [("eos", ["eos"]), ("mean", ["mean"])]
    if five:
        timed_sets.append(("five_poolings", list(POOLINGS)))
    for name, poolings in timed_sets:
        a, b = side_by_side(lambda p=poolings: run(fast, p, "fast"),
                            lambda p=poolings: run(simple, p, "simple"),
                            repeats, before=fast.clear_prefix_memo)
        figures[name] = summary(a, b, "one_pass", "per_prefix")
    # equality: eos and mean as timed (fast=False is one pass per prefix); the other poolings
    # against one forward pass per prefix written out here
    equality = {p: gap(np.concatenate(outputs["fast", p]), np.concatenate(outputs["simple", p]))
                for p in ("eos", "mean")}
    reference = [separate_passes(fast, doc, grid) for doc in docs]
    for pooling in ("last", "mean", "sqrt_n", "sum"):
        fast_rows = np.concatenate([fast.prefix_vectors(doc, grid, pooling) for doc in docs])
        ref_rows = np.concatenate([r[pooling] for r in reference])
        key = pooling if pooling != "mean" else "mean_vs_written_out"
        equality[key] = gap(fast_rows, ref_rows)
    figures["equality"] = equality
    # sum grows with the prefix (|sum| ~ 2000 here, where float32's spacing is 1.2e-4): it is
    # held to float32 resolution, relative 1e-6; every other pooling to |Δ| <= 1e-4
    figures["equal_within_1e-4"] = all(g["max_abs_diff"] <= 1e-4 for k, g in equality.items()
                                       if k != "sum")
    figures["sum_within_relative_1e-6"] = equality["sum"]["max_rel_diff"] <= 1e-6
    return figures


def encoder_figures(texts: Sequence[str], tokens: int, step: int,
                    repeats: int) -> dict[str, Any]:
    from normtest.adapters.encoder import EncoderAdapter
    from normtest.data.information.documents import prefix_grid

    fast = EncoderAdapter.minilm_l6(progress=False)
    simple = fast.variant(fast=False)
    grids = [prefix_grid(min(len(fast.tokenize(t)), tokens), step, tokens).tolist()
             for t in texts]

    def batched() -> None:
        fast.prefix_vectors_many(texts, grids, "mean")

    def one_by_one() -> None:
        for t, g in zip(texts, grids, strict=True):
            simple.prefix_vectors(t, g, "mean")

    batched()
    one_by_one()
    a, b = side_by_side(batched, one_by_one, repeats, before=fast.clear_prefix_memo)
    fast.clear_prefix_memo()
    gap = max(float(np.abs(x - simple.prefix_vectors(t, g, "mean")).max())
              for t, g, x in zip(texts, grids, fast.prefix_vectors_many(texts, grids, "mean"),
                                 strict=True))
    return {"model": "minilm-l6", "pooling": "mean",
            **summary(a, b, "batched_by_length", "per_prefix"), "max_abs_diff": gap}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and write the JSON figures."""
    parser = arguments(__doc__)
    parser.add_argument("--documents", type=int, default=2, help="documents")
    parser.add_argument("--tokens", type=int, default=200, help="tokens per document")
    parser.add_argument("--step", type=int, default=16, help="prefix grid step (tokens)")
    parser.add_argument("--no-encoder", action="store_true", help="skip the MiniLM part")
    parser.add_argument("--five", action="store_true",
                        help="also time the five poolings of an audit together (slow)")
    args = parser.parse_args(argv)
    threads = set_threads(args.threads)

    from normtest.adapters.decoder import DecoderAdapter
    from normtest.data.information.documents import prefix_grid

    probe = DecoderAdapter.smollm2_135m(progress=False)
    texts = documents(probe, args.documents, args.tokens)
    del probe
    grid = prefix_grid(args.tokens, args.step, args.tokens).tolist()
    if grid[-1] != args.tokens:  # the whole 200-token document is the longest prefix
        grid.append(args.tokens)
    figures: dict[str, Any] = {
        "benchmark": "prefix vectors: one forward pass against one per prefix",
        "documents": len(texts), "tokens_per_document": args.tokens,
        "prefix_lengths": grid,
        "decoder": decoder_figures(texts, grid, args.repeats, args.five),
    }
    if not args.no_encoder:
        figures["encoder"] = encoder_figures(texts, args.tokens, args.step, args.repeats)
    figures["machine"] = {**machine(), **threads}
    write(args.out, figures)
    return figures


if __name__ == "__main__":
    main()
