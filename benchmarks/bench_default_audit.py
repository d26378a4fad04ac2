"""Benchmark: this tree's default audit against the default audit of an earlier commit.

``normtest audit --model minilm-l6`` as a user runs it (the whole command: start-up, the model,
the self-sized sample, robustness, controls, the three renderings), with the embedding cache
warm, this tree's against the same command at ``--baseline`` (default b356b68: 5,000 words and
240 sentences, before the audit sized itself), each in its own process, alternated (baseline,
this, baseline, this, …) so that machine load falls on both alike; the ratio is this tree's
median over the baseline's (target ≤ 1.0). One untimed run of each comes first (it fills the
embedding cache for its sample). The baseline is checked out with ``git worktree`` into a
temporary folder and run from there with this environment's Python (its ``checks/`` and
``theorems/`` linked in as ``normtest.checks`` and ``normtest.theorems``, as an install maps them).

What the design alone decides (the sizing and the controls) is kept in the cache for the next
audit of the same design (``normtest.audit.design_store``), so a warm audit reads it;
``--fresh-design`` empties that store, the kept simulations (``normtest.base.kept``) and the
kept file digests before each timed run of this tree, timing an audit that sizes itself and runs
its controls from scratch (the first audit of a model; its vectors still come from the cache).

Usage: ``python benchmarks/bench_default_audit.py --out default_audit.json [--baseline b356b68]
[--model minilm-l6] [--repeats 3] [--fresh-design]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import machine, write

ROOT = Path(__file__).resolve().parent.parent


def _run(tree: Path, model: str, out: Path) -> float:
    """Seconds of one whole ``normtest audit`` from ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"}
    begun = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "normtest", "audit", "--model", model,
                           "--out", str(out)], cwd=tree, env=env, capture_output=True,
                          text=True, check=False)
    seconds = time.perf_counter() - begun
    if done.returncode != 0:
        raise SystemExit(f"the audit from {tree} failed ({done.returncode}):\n{done.stderr}")
    return seconds


def _sample(out: Path) -> dict[str, Any]:
    import json

    prov = json.loads((out / "report.json").read_text(encoding="utf-8"))["provenance"]
    return {k: prov.get("sample", {}).get(k) for k in ("words", "sentences", "documents")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--baseline", default="b356b68")
    parser.add_argument("--model", default="minilm-l6")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fresh-design", action="store_true",
                        help="empty the design store before each timed run of this tree")
    args = parser.parse_args()
    from normtest.audit.design_store import FOLDER
    from normtest.base.fingerprint import DIGESTS_FILE
    from normtest.base.kept import FOLDER as KEPT
    from normtest.base.paths import default_cache_dir

    kept = default_cache_dir() / FOLDER
    with tempfile.TemporaryDirectory(prefix="normtest-bench-") as folder:
        base = Path(folder) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", str(base), args.baseline],
                       cwd=ROOT, check=True, capture_output=True)
        for part in ("checks", "theorems"):  # installed as normtest.checks, normtest.theorems
            (base / "normtest" / part).symlink_to(base / part)
        try:
            trees = {"baseline": base, "this": ROOT}
            outs = {name: Path(folder) / f"out-{name}" for name in trees}
            for name, tree in trees.items():  # untimed: the cache filled for each sample
                _run(tree, args.model, outs[name])
            times: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(args.repeats):
                for name, tree in trees.items():
                    if args.fresh_design and name == "this":
                        shutil.rmtree(kept, ignore_errors=True)
                        shutil.rmtree(kept.parent / KEPT, ignore_errors=True)
                        (kept.parent / DIGESTS_FILE).unlink(missing_ok=True)
                    times[name].append(round(_run(tree, args.model, outs[name]), 2))
            samples = {name: _sample(outs[name]) for name in trees}
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT,
                           check=False, capture_output=True)
    medians = {name: statistics.median(t) for name, t in times.items()}
    figures = {"benchmark": "default_audit", "model": args.model, "baseline": args.baseline,
               "runs": times, "medians": medians, "samples": samples,
               "ratio": round(medians["this"] / medians["baseline"], 3), "target": 1.0,
               "design": "computed" if args.fresh_design else "kept",
               "machine": machine()}
    write(args.out, figures)
    print(f"{args.model}: this tree {medians['this']:.1f} s ({samples['this']}) against "
          f"{args.baseline} {medians['baseline']:.1f} s ({samples['baseline']}): "
          f"{figures['ratio']:.2f}× (target ≤ 1.0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
