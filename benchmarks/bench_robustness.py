"""Benchmark: the time robustness and controls add to the audit they extend.

The default audit of ``minilm-l6`` (every suite, default sizes, embedding cache warm — the cost of
the statistics, not of the forward passes) runs in four forms, interleaved in one process after an
untimed warm-up: plain (``robustness=False, controls=False``), with robustness only, with
controls only, and with both (the default). The adapter's prefix memo and the bootstrap's memo of
draws are cleared before each run (as in a fresh process: a run must not find the draws of the
one before it).
Reported: every run, the medians, and each addition as a share of the plain audit
(``robustness_added``: the target is at most 0.5, "at most half the time of the audit it
extends").

In-process runs share what a process loads once (corpora, frequency lists), which the plain audit
needs too; the robustness also reads a second frequency list and the corpus's halves. So the
benchmark also times whole ``normtest audit`` commands in fresh processes (``--processes``
pairs, plain and default alternately), the cost a user sees on the command line.

Checked: the four forms agree on every row (robustness and controls never change a verdict).

Usage: ``python benchmarks/bench_robustness.py --out robustness.json [--repeats 5]
[--processes 2] [--threads 1]``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from _common import arguments, machine, set_threads, timed, write

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

FORMS = {"plain": (False, False), "robustness": (True, False), "controls": (False, True),
         "both": (True, True)}


def fingerprint(report: Any) -> list[tuple[Any, ...]]:
    """Every row's verdict and numbers (what the additions must not change)."""
    return [(r.claim, tuple(sorted((r.variant or {}).items())), r.verdict.value, r.estimate,
             r.ci) for r in report.results]


def fresh_processes(pairs: int, threads: int) -> dict[str, Any]:
    """Whole ``normtest audit`` commands, plain and default alternately, in fresh processes."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
           "OPENBLAS_NUM_THREADS": str(threads)}
    base = [sys.executable, "-m", "normtest", "audit", "--model", "minilm-l6", "--quiet"]
    times: dict[str, list[float]] = {"plain": [], "both": []}
    with tempfile.TemporaryDirectory(prefix="normtest-bench-robustness-") as out:
        for _ in range(pairs):
            for form, extra in (("plain", ["--no-robustness", "--no-controls"]), ("both", [])):
                start = time.perf_counter()
                subprocess.run([*base, *extra, "--out", out], env=env, check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                times[form].append(time.perf_counter() - start)
    plain, both = statistics.median(times["plain"]), statistics.median(times["both"])
    return {"pairs": pairs, "plain_wall_s": times["plain"], "both_wall_s": times["both"],
            "plain_median_s": plain, "both_median_s": both, "added": (both - plain) / plain}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and write the JSON figures."""
    parser = arguments(__doc__)
    parser.add_argument("--processes", type=int, default=2,
                        help="pairs of fresh-process audits (0: none)")
    args = parser.parse_args(argv)
    threads = set_threads(args.threads)

    from normtest.adapters.encoder import EncoderAdapter
    from normtest.audit.run import AuditSettings, run_audit
    from normtest.base.paths import default_cache_dir
    from normtest.models.cache.adapter import CachedAdapter
    from normtest.models.cache.embeddings import EmbeddingCache
    from normtest.stats.bootstrap import clear_memo

    adapter = EncoderAdapter.minilm_l6(progress=False)
    cache = EmbeddingCache(default_cache_dir())
    model = CachedAdapter(adapter, cache)
    reports: dict[str, Any] = {}

    def audit(form: str) -> Any:
        robustness, controls = FORMS[form]
        adapter.clear_prefix_memo()
        clear_memo()
        report = run_audit(model, settings=AuditSettings(robustness=robustness,
                                                         controls=controls))
        reports[form] = report
        return report

    try:
        audit("both")  # warm-up: fills the embedding cache, loads corpora and lists
        runs: dict[str, list[tuple[float, float]]] = {form: [] for form in FORMS}
        for _ in range(args.repeats):
            for form in FORMS:
                runs[form].append(timed(lambda form=form: audit(form)))
    finally:
        cache.close()

    medians = {form: statistics.median(t[0] for t in runs[form]) for form in FORMS}
    plain = medians["plain"]
    same = len({repr(fingerprint(r)) for r in reports.values()}) == 1
    both = reports["both"]
    figures: dict[str, Any] = {
        "benchmark": "the time robustness and controls add to the default audit",
        "model": "minilm-l6", "suite": "all", "settings": "defaults, embedding cache warm",
        "repeats": args.repeats,
        **{f"{form}_wall_s": [round(t[0], 2) for t in runs[form]] for form in FORMS},
        **{f"{form}_median_s": round(medians[form], 2) for form in FORMS},
        "robustness_added": round((medians["robustness"] - plain) / plain, 3),
        "controls_added": round((medians["controls"] - plain) / plain, 3),
        "both_added": round((medians["both"] - plain) / plain, 3),
        "robustness_seconds_by_line": {x.line: x.seconds for x in both.robustness},
        "controls_seconds_by_line": {x.line: x.seconds for x in both.controls},
        "specifications": sum(len(x.specifications) for x in both.robustness),
        "verdicts_unchanged": same,
    }
    if args.processes > 0:
        figures["fresh_processes"] = fresh_processes(args.processes, args.threads)
    figures["machine"] = {**machine(), **threads}
    write(args.out, figures)
    return figures


if __name__ == "__main__":
    main()
