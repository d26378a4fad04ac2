"""Benchmark: the default audit on 1 worker and on more, side by side, with no forward pass.

The audit of ``bench_stages.py`` (its synthetic encoder: MiniLM's real tokenizer and adapter,
seeded synthetic states; every suite, robustness and controls on, default sizes) at one
dimension (``--dim``, 1024), once per worker count in ``--workers`` (default ``1,2``; each a
fresh process, after one untimed warm-up that scores the sentences' surprisal into a temporary
store). With more than one worker the audit makes every planned variant's vectors and the first
row of each claim in its own process, then spreads the other rows, the robustness analyses'
measurements and the controls' lines over forked processes (``normtest.base.parallel``).

Reported per worker count: the whole audit's seconds (the audit and its rendering), each
stage's (inclusive), the speed-up over one worker, and a check that every run gave the same
verdict counts. From the first two counts, Amdahl's law gives the share of the work that the
processes split (``p``, from ``T(1) = s + p`` and ``T(w) = s + p/w``), and the curve it projects
for 4, 8 and 16 workers: an upper bound, as the processes' shares are never quite even. On a
machine with the cores, give them (``--workers 1,2,4,8``) and the curve is measured.

Usage: ``python benchmarks/bench_workers.py --out workers.json [--dim 1024] [--workers 1,2]
[--profile standard]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import machine, write
from bench_stages import STAGE_NAMES, STAGES, run_child, stage_totals


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    parser.add_argument("--profile", default="standard")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    counts = [int(w) for w in args.workers.split(",") if w.strip()]
    # what bench_stages' run_child reads of its command line
    child_args = argparse.Namespace(profile=args.profile, seed=args.seed, threads=1, top=25,
                                    workers=counts[0], max_rss_gib=16.0, min_free_gib=1.0,
                                    max_seconds=1800.0)
    runs: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="normtest-bench-workers-store-") as store:
        print(f"warm-up: {args.dim}-d, scoring the sentences' surprisal", file=sys.stderr)
        run_child(args.dim, child_args, Path(store))
        for count in counts:
            child_args.workers = count
            print(f"timed: {count} worker(s)", file=sys.stderr)
            got = run_child(args.dim, child_args, Path(store))
            if "stopped" in got:
                raise SystemExit(f"{count} workers: stopped ({got['stopped']})")
            runs[count] = got
            print(f"  {count} worker(s): whole {got['whole_s']:.1f} s", file=sys.stderr)
    one = runs[counts[0]]["whole_s"]
    rows = {count: {"whole_s": run["whole_s"], "speed_up": one / run["whole_s"],
                    "stages_s": stage_totals(run), "verdicts": run["verdicts"]}
            for count, run in runs.items()}
    figures: dict[str, Any] = {
        "benchmark": "the default audit on 1 worker and on more (no forward pass)",
        "dim": args.dim, "profile": args.profile, "seed": args.seed, "workers": rows,
        "same_verdicts": len({str(r["verdicts"]) for r in rows.values()}) == 1,
        "machine": machine(),
    }
    if len(counts) >= 2 and counts[0] == 1:
        w = counts[1]
        split = (one - runs[w]["whole_s"]) * w / (w - 1)
        serial = one - split
        figures["amdahl"] = {
            "split_share": split / one, "serial_s": serial, "split_s": split,
            "projected": {n: {"whole_s": serial + split / n, "speed_up": one / (serial + split / n)}
                          for n in (2, 4, 8, 16)}}
    lines = ["| workers | whole audit | speed-up | " + " | ".join(
        STAGE_NAMES[s] for s in STAGES) + " |", "|---" * (3 + len(STAGES)) + "|"]
    for count, r in rows.items():
        lines.append(f"| {count} | {r['whole_s']:.1f} s | {r['speed_up']:.2f}× | " + " | ".join(
            f"{r['stages_s'][s]:.1f} s" for s in STAGES) + " |")
    if "amdahl" in figures:
        a = figures["amdahl"]
        lines.append("")
        lines.append(f"Amdahl from 1 and {counts[1]} workers: {a['split_share']:.0%} of the "
                     f"work is split ({a['split_s']:.1f} s), {a['serial_s']:.1f} s is not; "
                     "projected: " + ", ".join(
                         f"{n} workers {p['whole_s']:.1f} s ({p['speed_up']:.1f}×)"
                         for n, p in a["projected"].items()))
    figures["table_markdown"] = "\n".join(lines)
    write(args.out, figures, show={"table": figures["table_markdown"].splitlines(),
                                   "same_verdicts": figures["same_verdicts"]})
    return figures


if __name__ == "__main__":
    main()
