"""Benchmark: what an audit costs beyond its models' forward passes.

Cold audits of ``--model`` (default ``minilm-l6``) at the default settings, in this process, as
``normtest audit --no-cache`` runs them: load the model, run every claim, write report.json,
report.md and report.html. Every forward pass of every model is recorded on its way into the
model (forward pre-hooks on each transformers model as its weights are read: the exact input
ids, masks and positions). Afterwards the recorded passes run again, straight through the same
models, with nothing around them: the bare cost of the forward passes of exactly the audit's
inputs (words, prefixes, sentences, and the surprisal tokens when the audit scored them).

Two audits, in turn:

* **first**: the sentences' surprisal store is empty (a fresh folder), so the text claim scores
  the sentences with SmolLM2-135M and stores them: the first audit on a machine;
* **later**: the same store, now filled: every later audit of any model (the embedding cache is
  still off, so every vector of the audited model is computed).

Reported for each: the whole audit's wall time, its stages (loading, measuring, rendering), the
seconds spent in the bootstraps (every call of ``bootstrap.replicates`` and
``bootstrap.unit_measurement``, timed from outside), the bare forward passes, the overhead
ratio whole / bare (issue 20's target: at most 1.2) and the bootstrap share (bootstrap seconds
over the bare forward seconds). The report of the later audit is then rendered again figure by
figure (``bench_render.render_figures``).

Usage: ``python benchmarks/bench_overhead.py --out bench.json [--model minilm-l6]
[--profile standard] [--threads 1] [--device cuda] [--kind encoder] [--workers N]
[--schedule rows|claims]`` (``benchmarks/accelerator.sh`` runs it on a GPU machine
over models, workers and schedules).
"""

from __future__ import annotations

import importlib
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest.mock import patch

from _common import arguments, set_threads, write

#: Issue 20's targets: the whole cold audit over its bare forward passes (at most), the
#: bootstraps' seconds over the forward passes' (a fraction: at most a fifth), and the seconds
#: to render the report ("about a second").
TARGET_RATIO = 1.2
TARGET_BOOTSTRAP_SHARE = 0.2
TARGET_RENDER_S = 1.0


class Recorder:
    """Forward pre-hooks that keep each top-level call's module and arguments."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, dict[str, Any]]] = []
        self._depth = 0
        self._handles: list[Any] = []
        self._seen: set[int] = set()

    def watch(self, module: Any) -> None:
        if id(module) in self._seen or not hasattr(module, "register_forward_pre_hook"):
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

    def watch_model(self, model: Any) -> None:
        """A transformers model and its body (``model.model``, what decoders run directly)."""
        self.watch(model)
        body = getattr(model, "model", None)
        if body is not None:
            self.watch(body)

    def close(self) -> None:
        for handle in self._handles:
            handle.remove()


class Stopwatch:
    """Seconds spent inside the wrapped functions (outermost calls only)."""

    def __init__(self) -> None:
        self.seconds, self.calls, self._depth = 0.0, 0, 0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._depth += 1
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self.seconds += time.perf_counter() - start
                    self.calls += 1

        return timed


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


def one_audit(model: str, store: Path, profile: str,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Any], Any]:
    """A cold audit with every forward pass recorded, then the passes replayed bare."""
    import normtest.stats.bootstrap as bootstrap
    from normtest.adapters.transformers_base import _LazyModel
    from normtest.audit.run import run_audit
    from normtest.models.registry import load
    from normtest.render.formats import write_renderings
    surprisal = importlib.import_module("normtest.data.information.surprisal")
    recorder, stopwatch = Recorder(), Stopwatch()
    read = _LazyModel.get

    def watched_get(self: Any) -> Any:
        value = read(self)
        recorder.watch_model(value)
        return value

    try:
        with patch.object(_LazyModel, "get", watched_get), \
                patch.object(surprisal, "store_dir", lambda: store), \
                patch.object(bootstrap, "replicates", stopwatch.wrap(bootstrap.replicates)), \
                patch.object(bootstrap, "unit_measurement",
                        stopwatch.wrap(bootstrap.unit_measurement)):
            t0 = time.perf_counter()
            chosen = dict(options or {})
            loading = {k: chosen.pop(k) for k in ("device", "kind") if chosen.get(k)}
            adapter = load(model, cache=False, progress=False, **loading)
            getattr(adapter, "model", None)  # the weights, as the first batch would read them
            t1 = time.perf_counter()
            report = run_audit(adapter, settings=replace(settings(profile), **{
                k: v for k, v in chosen.items() if v is not None}))
            t2 = time.perf_counter()
            with tempfile.TemporaryDirectory() as folder:
                write_renderings(report, folder)
            t3 = time.perf_counter()
    finally:
        recorder.close()
    bare = replay(recorder.calls)
    whole = t3 - t0
    return {"whole_s": whole, "load_s": t1 - t0, "measure_s": t2 - t1, "render_s": t3 - t2,
            "bootstrap_s": stopwatch.seconds, "bootstrap_calls": stopwatch.calls,
            "forward_passes": len(recorder.calls), "bare_forward_s": bare,
            "overhead_ratio": whole / bare, "bootstrap_share": stopwatch.seconds / bare,
            "beyond_passes_s": whole - bare, "rows": len(report.results)}, report


def settings(profile: str) -> Any:
    """The audit settings of a profile (``standard``: the defaults)."""
    from normtest.base.settings import PROFILES, AuditSettings

    return AuditSettings(profile=profile, **PROFILES[profile])


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = arguments(__doc__, repeats=False)
    parser.add_argument("--model", default="minilm-l6")
    parser.add_argument("--profile", default="standard",
                        help="sample sizes (standard: the defaults; quick: a pull request's)")
    parser.add_argument("--device", default=None, help="where the model runs (cuda, cpu)")
    parser.add_argument("--kind", default=None, help="encoder or decoder, for a model folder")
    parser.add_argument("--workers", type=int, default=None, help="the audit's workers")
    parser.add_argument("--schedule", default=None, choices=("auto", "rows", "claims"))
    args = parser.parse_args(argv)
    options = {"device": args.device, "kind": args.kind, "workers": args.workers,
               "schedule": args.schedule}
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    figures: dict[str, Any] = {"threads": set_threads(args.threads), "model": args.model,
                               "profile": args.profile, "target": TARGET_RATIO,
                               "bootstrap_target": TARGET_BOOTSTRAP_SHARE,
                               "render_target_s": TARGET_RENDER_S}
    figures.update({k: v for k, v in options.items() if v is not None})
    with tempfile.TemporaryDirectory() as store:
        figures["first"], _ = one_audit(args.model, Path(store), args.profile, options)
        figures["later"], report = one_audit(args.model, Path(store), args.profile, options)
    try:
        from bench_render import render_figures
    except ImportError:  # pragma: no cover - the rendering benchmark ships beside this one
        render_figures = None
    if render_figures is not None:
        figures["render"] = render_figures(report)
    figures.update(overhead_ratio=figures["later"]["overhead_ratio"],
                   overhead_ratio_first=figures["first"]["overhead_ratio"],
                   bootstrap_share=figures["later"]["bootstrap_share"])
    write(args.out, figures)
    return figures


if __name__ == "__main__":
    main()
