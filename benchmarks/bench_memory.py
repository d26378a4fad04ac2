"""Benchmark: peak memory of a 20,000-word audit of ``glove-6b-50d``.

The audit runs in a child process (``--child``), so that its peak resident set is its own: the
parent reads it from ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`` once the child exits. The
child also reports its resident set after loading the model (GloVe is memory-mapped: 80 MB of
vectors paged in as used), the peak of Python-tracked allocations during ``run_audit``
(``tracemalloc``, numpy arrays included) and the audit's wall time.

The words are the default stratified sample at 20,000 words (wordfreq ranks up to 100,000);
words without a GloVe vector or a frequency are dropped and counted in the figures. GloVe is a
static model, so the word and condition suites run and the CER and text claims are skipped.

Usage: ``python benchmarks/bench_memory.py --out memory.json [--words 20000] [--resamples 1000]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import arguments, machine, set_threads, write


def rss_mib() -> float:
    """This process's resident set now (MiB), from /proc/self/status."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def child(words: int, resamples: int, threads: int) -> dict[str, Any]:
    """The audit itself (runs in the child process)."""
    set_threads(threads, torch=False)
    import normtest
    from normtest.audit.run import AuditSettings, run_audit

    start_rss = rss_mib()
    adapter = normtest.load("glove-6b-50d", cache=False)
    loaded_rss = rss_mib()
    settings = AuditSettings(words=words, resamples=resamples)
    tracemalloc.start()
    t0 = time.perf_counter()
    report = run_audit(adapter, settings=settings)
    elapsed = time.perf_counter() - t0
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "words_asked": words,
        "words_audited": report.provenance.get("words"),
        "dropped_words": report.provenance.get("dropped_words"),
        "n_resamples": resamples,
        "result_rows": len(report.results),
        "summary": report.summary,
        "audit_wall_s": elapsed,
        "rss_after_imports_mib": start_rss,
        "rss_after_loading_glove_mib": loaded_rss,
        "tracemalloc_peak_during_audit_mib": traced_peak / 2**20,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the audit in a child process and write the JSON figures."""
    parser = arguments(__doc__, repeats=False)
    parser.add_argument("--words", type=int, default=20_000, help="audit word sample size")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.words, args.resamples, args.threads)))
        return {}

    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run(
        [sys.executable, __file__, "--child", "--words", str(args.words), "--resamples",
         str(args.resamples), "--threads", str(args.threads)],
        check=True, capture_output=True, text=True,
    )
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    inside = json.loads(done.stdout.strip().splitlines()[-1])
    figures: dict[str, Any] = {
        "benchmark": "peak memory of a 20,000-word audit of glove-6b-50d",
        **inside,
        "peak_rss_mib": peak_kib / 1024,
        "peak_rss_note": ("ru_maxrss of the child process (whole process: interpreter, numpy, "
                          "scipy, the memory-mapped GloVe pages it touched, the audit)"),
        "earlier_children_peak_kib": before,
        "machine": {**machine(), "threads": args.threads},
    }
    write(args.out, figures)
    return figures


if __name__ == "__main__":
    main()
