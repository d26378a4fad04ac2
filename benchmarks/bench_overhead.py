"""Benchmark: what an audit costs beyond its models' forward passes.

One cold audit of ``--model`` (default ``minilm-l6``) at the default settings, in this process,
as ``normtest audit --no-cache`` runs it: load the model, run every claim (the text claim loads
SmolLM2-135M for the sentences' surprisal), write report.json, report.md and report.html. Every
forward pass of every model is recorded on its way into the model (a forward pre-hook on each
loaded transformers model: the exact input ids, masks and positions). Afterwards the recorded
passes run again, straight through the same models, with nothing around them: that is the bare
cost of the forward passes of exactly the audit's inputs (words, prefixes, sentences and the
surprisal tokens).

Reported: the whole audit's wall time, its stages (loading, measuring, rendering), the bare
forward passes, and the overhead ratio whole / bare (issue 20's target: at most 1.2 cold).

Usage: ``python benchmarks/bench_overhead.py --out bench.json [--model minilm-l6]
[--repeats 1] [--threads 1]``.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from _common import arguments, set_threads, write


class Recorder:
    """Forward pre-hooks that keep each top-level call's module and arguments."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, dict[str, Any]]] = []
        self._depth = 0
        self._handles: list[Any] = []
        self._seen: set[int] = set()

    def watch(self, module: Any) -> None:
        if id(module) in self._seen:
            return
        self._seen.add(id(module))

        def before(mod: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            if self._depth == 0:  # a causal LM's body called by the LM is one pass, not two
                self.calls.append((mod, {**kwargs, **dict(enumerate(args))}))
            self._depth += 1

        def after(mod: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
            self._depth -= 1

        self._handles.append(module.register_forward_pre_hook(before, with_kwargs=True))
        self._handles.append(module.register_forward_hook(after, with_kwargs=True))

    def close(self) -> None:
        for handle in self._handles:
            handle.remove()


def _models(adapter: Any) -> list[Any]:
    """The torch modules an adapter runs (its model, and a decoder's body)."""
    inner = getattr(adapter, "adapter", adapter)
    found = []
    model = getattr(inner, "_model", None)
    if model is not None and hasattr(model, "register_forward_pre_hook"):
        found.append(model)
        body = getattr(model, "model", None)
        if body is not None and hasattr(body, "register_forward_pre_hook"):
            found.append(body)
    return found


def replay(calls: Sequence[tuple[Any, dict[str, Any]]]) -> float:
    """Seconds to run the recorded passes again, bare."""
    import torch

    start = time.perf_counter()
    with torch.inference_mode():
        for module, kwargs in calls:
            positional = [kwargs[i] for i in sorted(k for k in kwargs if isinstance(k, int))]
            named = {k: v for k, v in kwargs.items() if isinstance(k, str)}
            module(*positional, **named)
    return time.perf_counter() - start


def one_audit(model: str) -> dict[str, Any]:
    """A cold audit with every forward pass recorded, then the passes replayed bare."""
    import normtest.vectors as vectors
    from normtest.audit import run_audit
    from normtest.models import load
    from normtest.render import write_renderings
    from normtest.settings import AuditSettings

    cached = vectors._loaded_surprisal_model
    cached.cache_clear()
    recorder = Recorder()
    original = cached.__wrapped__

    def watched_surprisal_model(name: str, cache_dir: str) -> Any:
        lm = original(name, cache_dir)
        lm.model  # noqa: B018 — load the weights, then watch them
        for module in _models(lm):
            recorder.watch(module)
        return lm

    vectors._loaded_surprisal_model = watched_surprisal_model  # type: ignore[assignment]
    try:
        t0 = time.perf_counter()
        adapter = load(model, cache=False, progress=False)
        getattr(adapter, "model", None)  # the weights, as the first batch would read them
        for module in _models(adapter):
            recorder.watch(module)
        t1 = time.perf_counter()
        report = run_audit(adapter, settings=AuditSettings())
        t2 = time.perf_counter()
        with tempfile.TemporaryDirectory() as folder:
            write_renderings(report, folder)
        t3 = time.perf_counter()
    finally:
        vectors._loaded_surprisal_model = cached  # type: ignore[assignment]
        recorder.close()
    bare = replay(recorder.calls)
    whole = t3 - t0
    return {"whole_s": whole, "load_s": t1 - t0, "measure_s": t2 - t1, "render_s": t3 - t2,
            "forward_passes": len(recorder.calls), "bare_forward_s": bare,
            "overhead_ratio": whole / bare, "rows": len(report.results)}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = arguments(__doc__)
    parser.add_argument("--model", default="minilm-l6")
    parser.set_defaults(repeats=1)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    figures: dict[str, Any] = {"threads": set_threads(args.threads), "model": args.model,
                               "runs": [one_audit(args.model) for _ in range(args.repeats)]}
    best = min(figures["runs"], key=lambda r: r["overhead_ratio"])
    figures.update(overhead_ratio=best["overhead_ratio"], target=1.2)
    write(args.out, figures)
    return figures


if __name__ == "__main__":
    main()
