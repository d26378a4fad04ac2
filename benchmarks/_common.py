"""Helpers the benchmarks share: side-by-side timing, medians, and where the figures came from.

Every benchmark times a fast path and its baseline alternately in one process (A, B, A, B, …),
so that machine load falls on both alike, and reports the ratio of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

Timing = tuple[float, float]  # wall-clock and process CPU seconds


def timed(fn: Callable[[], object]) -> Timing:
    """Wall-clock and CPU seconds of one call (freeing the result is not timed)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    elapsed = time.perf_counter() - wall, time.process_time() - cpu
    del result
    return elapsed


def side_by_side(
    fast: Callable[[], object], baseline: Callable[[], object], repeats: int,
    before: Callable[[], object] | None = None,
) -> tuple[list[Timing], list[Timing]]:
    """Time ``fast`` and ``baseline`` alternately ``repeats`` times (``before`` runs untimed)."""
    a, b = [], []
    for _ in range(repeats):
        if before is not None:
            before()
        a.append(timed(fast))
        if before is not None:
            before()
        b.append(timed(baseline))
    return a, b


def summary(fast: Sequence[Timing], baseline: Sequence[Timing], fast_name: str,
            baseline_name: str) -> dict[str, Any]:
    """Every run, both medians and their ratio (baseline median / fast median, wall clock)."""
    fw, bw = [t[0] for t in fast], [t[0] for t in baseline]
    fc, bc = [t[1] for t in fast], [t[1] for t in baseline]
    return {
        "repeats": len(fw),
        f"{fast_name}_wall_s": fw,
        f"{baseline_name}_wall_s": bw,
        f"{fast_name}_median_s": statistics.median(fw),
        f"{baseline_name}_median_s": statistics.median(bw),
        "speedup": statistics.median(bw) / statistics.median(fw),
        "speedup_cpu": statistics.median(bc) / max(statistics.median(fc), 1e-12),
    }


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (else platform.processor())."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the platform has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def machine() -> dict[str, Any]:
    """Where the figures came from: CPU, cores, thread settings, library versions."""
    info: dict[str, Any] = {
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "load_average": load_average(),
    }
    try:
        import numpy
        import scipy

        info.update(numpy=numpy.__version__, scipy=scipy.__version__)
    except ImportError:  # pragma: no cover
        pass
    if "torch" in sys.modules:  # only where the benchmark used it
        import torch
        import transformers

        info.update(torch=torch.__version__, transformers=transformers.__version__,
                    torch_threads=torch.get_num_threads())
    return info


def arguments(doc: str, repeats: bool = True) -> argparse.ArgumentParser:
    """A benchmark's command line with the options every benchmark takes: ``--out`` (the JSON
    figures), ``--repeats`` (timed runs of each side, at least 5) and ``--threads``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="where to write the JSON figures")
    if repeats:
        parser.add_argument("--repeats", type=int, default=5, help="timed runs of each (>= 5)")
    parser.add_argument("--threads", type=int, default=1,
                        help="CPU threads (torch, OpenMP, BLAS; default 1)")
    return parser


def set_threads(threads: int, torch: bool = True) -> dict[str, Any]:
    """Run torch, OpenMP and BLAS on ``threads`` CPU threads; returns what was set.

    The benchmarks default to 1: on a machine shared with other jobs, threads that wait for a
    descheduled sibling made a 2-thread SmolLM2 forward pass up to 10 times slower than a
    1-thread one, and numpy's SVDs likewise. Ratios measured single-threaded are stable.
    ``torch=False`` leaves torch unimported (a benchmark that does not need it).
    """
    done: dict[str, Any] = {"threads": threads}
    if torch and _importable("torch"):
        import torch as torch_module

        torch_module.set_num_threads(threads)
        done["torch_threads"] = torch_module.get_num_threads()
    try:
        from threadpoolctl import threadpool_limits

        _LIMITS.append(threadpool_limits(limits=threads))
        done["threadpoolctl"] = True
    except ImportError:  # without it, OMP_NUM_THREADS / OPENBLAS_NUM_THREADS decide
        done["threadpoolctl"] = False
    return done


_LIMITS: list[Any] = []  # keeps the thread limits alive for the whole run


def _importable(name: str) -> bool:
    from importlib.util import find_spec

    return find_spec(name) is not None


def write(out: Path | None, figures: dict[str, Any], show: Any = None) -> None:
    """Write the figures as JSON to ``out`` (when given) and print them (or ``show``)."""
    text = json.dumps(figures, indent=2) + "\n"
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    print(text if show is None else json.dumps(show, indent=2) + "\n", end="")
