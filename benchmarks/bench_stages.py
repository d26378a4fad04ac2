"""Benchmark: where an audit's work goes, by dimension, with no forward pass at all.

The default audit (every suite, robustness and controls on, ``--profile standard`` sizes:
5,000 words, 150 documents, 240 sentences, B = 1000) of a synthetic encoder of 384, 1024 and
4096 dimensions (``--dims``): MiniLM's real tokenizer and encoder adapter, whose forward pass
is replaced by a cheap deterministic one (``benchmarks/_synthetic_encoder.py``: a seeded row
per token id plus a running-mean context term, through a nonlinearity unless ``--states
linear``). What is left is the accelerator's view of the
audit: everything but the model. Each dimension runs in a fresh process (one BLAS thread, as
``run_audit`` sets), after one untimed warm-up audit at the first dimension in its own process,
which scores the sentences' surprisal with SmolLM2-135M into a fresh surprisal store (a
temporary folder); the timed audits read it from there (checked: none scores a sentence).
Each timed process runs ``normtest.audit.run.run_audit`` and then writes report.json, report.md
and report.html with the CLI's writer (``normtest.render.formats.write_renderings``) into a
temporary folder.

The time is the audit's own stage timer: every phase of an audit is a progress task
(``normtest.base.progress.task``), and while ``progress.timings()`` is active each task's wall
time is recorded under its description, with no display and nothing patched. The stages, in
the order they run, never overlapping:

* **sizing the audit** (its task; only where the settings autosize, which the Python API's
  ``AuditSettings`` here does not: the row is left out when no run sized);
* **measuring claims** (its task: the data, made as the claims first read them, and every
  claim's rows);
* **robustness**, planned, measured and decided: the sum of the report's robustness lines'
  own ``seconds`` (the audit's clock for the whole assessment; its task covers only the
  measurements, listed below);
* **controls** (its task: every line's controls);
* **the rest of the audit**: ``run_audit`` less the above (the adjustment and power
  annotation, the provenance, the report's plot data, the lines built for the controls);
* **rendering** (``write_renderings``, timed here around the call).

Within the stages, every other task the audit ran (robustness's measurements, the reference
corpus counted for PMI and KL, PMI's split-half reliability, the surprisal model loaded, …) is
listed by its description (inclusive seconds; its own seconds less the tasks nested in it and
its calls are in the JSON; the audited model's name is written ``<model>``). The synthetic
encoder's forward passes are timed by the encoder itself (``synthetic_states_s``): a
transformers adapter's batches are a task only while a progress display is on. Nothing here
says which kind of work (transforms, bootstraps, compositions …) a stage's time went to;
``--cprofile`` does, by function. One kind of work is counted apart, since it is most of a
4096-d audit: every whitening fit (``Transform.fit``), timed, with the solver it took (the Gram
matrix or the SVD) and, for a Gram fit, the bound on its error that admitted it
(``whitening_fits`` in the JSON; their counts and seconds in the table) — the fits made in the
audit's own process: with ``--workers`` above 1, those of forked processes are not counted.

Also per dimension: the whole audit's seconds (the audit plus the rendering), the process's
peak RSS (``ru_maxrss``), the rows' verdict counts, and a check that the reports are of the
same kind at every dimension (the same rows, lines of robustness and controls; verdicts may
differ). ``--cprofile`` runs each dimension once more under cProfile (a separate process; its
times are inflated by the profiler, so the stage table never comes from it) and keeps the top
functions by own time, with their callers. With ``--workers`` above 1 the robustness and
controls lines run in forked processes: their tasks there are not recorded, only the stage's
wall time in the audit's process.

A dimension's process is stopped (and reported as such, with the tasks it was in) when it
holds more than ``--max-rss-gib`` (16), leaves the machine under ``--min-free-gib`` (1) or runs
past ``--max-seconds`` (1800).

Usage: ``python benchmarks/bench_stages.py --out stages.json [--dims 384,1024,4096]
[--quick | --profile standard] [--seed 0] [--states nonlinear|linear] [--cprofile] [--top 25]
[--max-rss-gib 16] [--threads 1] [--workers 1]``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from _common import arguments, machine, set_threads, write

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

HERE = Path(__file__).resolve().parent
STAGES = ("sizing", "claims", "robustness", "controls", "outside", "rendering")
STAGE_NAMES = {"sizing": "sizing the audit", "claims": "measuring claims",
               "robustness": "robustness (planned, measured, decided)", "controls": "controls",
               "outside": "the rest of the audit", "rendering": "rendering"}
#: The audit's top-level progress task of each stage timed by one (robustness is timed by its
#: lines' own seconds, the rest of the audit by difference, the rendering around its call).
STAGE_TASKS = {"sizing": "sizing the audit", "claims": "measuring claims",
               "controls": "controls"}
#: How the table names a task within the stages (else by its description).
TASK_LABELS = {"robustness": "robustness: its measurements"}


# -- one dimension, in its own process ------------------------------------------------------------
def settings(profile: str, seed: int) -> Any:
    """The audit settings of a profile (``standard``: the defaults)."""
    from normtest.base.settings import PROFILES, AuditSettings

    sizes: dict[str, Any] = dict(PROFILES[profile])
    return AuditSettings(profile=profile, seed=seed, **sizes)


def rss_mib() -> float:
    """Peak resident set size of this process so far (MiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def describe(report: Any) -> dict[str, Any]:
    """What kind of report it is: rows by verdict, the rows' keys, robustness and controls."""
    from normtest.verdict.result import variant_key

    keys = sorted(f"{r.claim}[{variant_key(r.variant or {})}]" for r in report.results)
    return {
        "rows": len(report.results),
        "verdicts": dict(sorted(Counter(r.verdict.value for r in report.results).items())),
        "row_keys": keys,
        "robustness_lines": sorted(x.line for x in report.robustness),
        "robustness_specifications": sum(len(x.specifications) for x in report.robustness),
        "controls_lines": sorted(x.line for x in report.controls),
        "controls_seconds_by_line": {x.line: round(x.seconds, 3) for x in report.controls},
        "robustness_seconds_by_line": {x.line: round(x.seconds, 3) for x in report.robustness},
    }


def source_state() -> dict[str, Any]:
    """The commit checked out and a digest of uncommitted changes to the audit's code (others
    may change the tree while a benchmark runs: a run whose code changed under it says so)."""
    import hashlib

    def git(*command: str) -> str:
        try:
            return subprocess.run(["git", *command], cwd=HERE.parent, capture_output=True,
                                  text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return ""

    changes = git("diff", "HEAD", "--", "normtest", "checks")
    return {"commit": git("rev-parse", "--short", "HEAD").strip() or None,
            "uncommitted": hashlib.sha256(changes.encode()).hexdigest()[:12] if changes else None}


def recorded_tasks(recorded: Any, model: str) -> dict[str, dict[str, float]]:
    """Every task the audit ran, by description (the model's name written ``<model>``): its
    inclusive and own seconds and its calls."""
    out: dict[str, dict[str, float]] = {}
    for description, seconds in recorded.seconds.items():
        name = description.replace(model, "<model>")
        row = out.setdefault(name, {"seconds": 0.0, "own_seconds": 0.0, "calls": 0})
        row["seconds"] += seconds
        row["own_seconds"] += recorded.own[description]
        row["calls"] += recorded.calls[description]
    return dict(sorted(out.items(), key=lambda kv: -kv[1]["seconds"]))


def watch(recorded: Any, progress: Path, start: float) -> None:
    """Every 5 s, write the tasks running now and the seconds recorded so far to ``progress``
    (what a stopped run reports)."""
    import threading

    def loop() -> None:
        while True:
            time.sleep(5)
            try:
                state = {"elapsed_s": round(time.perf_counter() - start, 1),
                         "running": [[d, round(s, 1)] for d, s in recorded.running()],
                         "peak_rss_mib": round(rss_mib()),
                         "seconds": {d: round(s, 2) for d, s in dict(recorded.seconds).items()}}
                progress.write_text(json.dumps(state), encoding="utf-8")
            except (RuntimeError, OSError):  # a dict changed while read: next time
                pass

    threading.Thread(target=loop, daemon=True).start()


def child(dim: int, profile: str, seed: int, store: Path, result: Path, threads: int,
          cprofile: bool, top: int, workers: int = 1, states: str = "nonlinear") -> None:
    """One audit of the synthetic encoder of ``dim`` dimensions; figures to ``result``."""
    threads_set = set_threads(threads)
    source = source_state()
    import importlib

    from _synthetic_encoder import SyntheticEncoder

    surprisal: Any = importlib.import_module("normtest.data.information.surprisal")
    surprisal.store_dir = lambda: store  # the benchmark's own store (see the module doc)
    scored: list[int] = []
    compute = surprisal.surprisal

    def counted(adapter: Any, texts: Any, *args: Any, **kwargs: Any) -> Any:
        scored.append(len(texts))
        return compute(adapter, texts, *args, **kwargs)

    surprisal.surprisal = counted  # counts the sentences scored (none, after the warm-up)
    from normtest.geometry.transforms import Transform

    fits: list[dict[str, Any]] = []
    fit = Transform.fit

    def timed_fit(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        fitted = fit(self, *args, **kwargs)
        if self.whiten:
            fits.append({"solver": self.solver_, "error_bound": self.error_bound_,
                         "seconds": time.perf_counter() - start})
        return fitted

    Transform.fit = timed_fit  # type: ignore[method-assign]  # each whitening fit: its solver
    import normtest.audit.run as audit
    import normtest.render.formats as render
    from normtest.base import progress
    from normtest.stats.bootstrap import clear_memo

    clear_memo()
    made = time.perf_counter()
    adapter = SyntheticEncoder(dim, seed=seed, states=states)
    made = time.perf_counter() - made
    rss_before = rss_mib()
    chosen = replace(settings(profile, seed), workers=workers)
    profiler = None
    if cprofile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    with tempfile.TemporaryDirectory(prefix="normtest-bench-stages-") as folder, \
            progress.timings() as recorded:
        t0 = time.perf_counter()
        if not cprofile:
            watch(recorded, result.with_name("progress.json"), t0)
        report = audit.run_audit(adapter, settings=chosen)
        t1 = time.perf_counter()
        render.write_renderings(report, folder)
        t2 = time.perf_counter()
        written = {p.name: p.stat().st_size for p in Path(folder).iterdir()
                   if p.name.startswith("report")}
    if profiler is not None:
        profiler.disable()
    figures: dict[str, Any] = {
        "dim": dim, "profile": profile, "seed": seed, "adapter_seconds_to_make": made,
        "audit_s": t1 - t0, "render_s": t2 - t1, "whole_s": t2 - t0,
        "peak_rss_mib": rss_mib(), "peak_rss_before_audit_mib": rss_before,
        "synthetic_states_s": adapter.seconds, "synthetic_state_calls": adapter.calls,
        "synthetic_state_tokens": adapter.tokens,
        "surprisal_scored_texts": sum(scored), "files": written,
        "whitening_fits": {"gram": sum(f["solver"] == "gram" for f in fits),
                           "svd": sum(f["solver"] == "svd" for f in fits),
                           "seconds": sum(f["seconds"] for f in fits),
                           "largest_error_bound": max((f["error_bound"] for f in fits
                                                       if f["error_bound"] is not None),
                                                      default=None),
                           "each": fits},
        "weights_read": adapter._weights.loaded, "threads": threads_set, "workers": workers,
        "source": source, "source_changed_during_run": source_state() != source,
        **describe(report),
    }
    if profiler is None:
        figures["tasks"] = recorded_tasks(recorded, adapter.name)
    else:
        figures["cprofile"] = top_functions(profiler, top)
    result.write_text(json.dumps(figures, indent=1), encoding="utf-8")


def top_functions(profiler: Any, top: int) -> dict[str, list[dict[str, Any]]]:
    """The ``top`` functions by own time, and normtest's by cumulative time, each with its
    cumulative time, calls and main callers."""
    import pstats

    stats = pstats.Stats(profiler)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]

    def name(func: tuple[str, int, str]) -> str:
        path, line, fn = func
        if path == "~":
            return fn
        short = path.split("site-packages/")[-1] if "site-packages/" in path else \
            os.path.relpath(path, HERE.parent) if path.startswith(str(HERE.parent)) else path
        return f"{short}:{line}({fn})"

    def entry(func: Any, figures: Any) -> dict[str, Any]:
        _, nc, tt, ct, callers = figures
        main = sorted(callers.items(), key=lambda kv: -kv[1][2])[:3]
        return {"function": name(func), "tottime_s": round(tt, 3), "cumtime_s": round(ct, 3),
                "calls": nc, "callers": [{"function": name(c), "tottime_s": round(v[2], 3)}
                                         for c, v in main]}

    own = sorted(raw.items(), key=lambda kv: -kv[1][2])[:top]
    roots = (str(HERE.parent / "normtest"), str(HERE.parent / "checks"))
    ours = [kv for kv in raw.items() if kv[0][0].startswith(roots)]
    cumulative = sorted(ours, key=lambda kv: -kv[1][3])[:top]
    return {"by_own_time": [entry(f, v) for f, v in own],
            "normtest_by_cumulative_time": [entry(f, v) for f, v in cumulative]}


# -- the parent: every dimension in turn --------------------------------------------------------
def _rss_gib(pid: int) -> float:
    """Resident set size of process ``pid`` now (GiB; 0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 0.0


def _available_gib() -> float:
    """The machine's available memory (GiB; infinite where /proc/meminfo is missing)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return float("inf")


def run_child(dim: int, args: Any, store: Path, cprofile: bool = False) -> dict[str, Any]:
    """Run one dimension in a fresh process and read its figures. The process is stopped when
    it holds more than ``--max-rss-gib``, leaves the machine less than ``--min-free-gib``, or
    runs past ``--max-seconds``; the figures then say so (``stopped``)."""
    with tempfile.TemporaryDirectory(prefix="normtest-bench-stages-result-") as folder:
        result = Path(folder) / "result.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--child", str(dim),
                   "--profile", args.profile, "--seed", str(args.seed), "--store", str(store),
                   "--result", str(result), "--threads", str(args.threads),
                   "--top", str(args.top), "--workers", str(args.workers),
                   "--states", args.states]
        if cprofile:
            command.append("--cprofile")
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=HERE)
        peak, stopped = 0.0, None
        while process.poll() is None:
            rss = _rss_gib(process.pid)
            peak = max(peak, rss)
            elapsed = time.perf_counter() - start
            if rss > args.max_rss_gib:
                stopped = f"holding {rss:.1f} GiB (more than --max-rss-gib {args.max_rss_gib})"
            elif _available_gib() < args.min_free_gib:
                stopped = (f"the machine had less than {args.min_free_gib} GiB available "
                           f"(the audit held {rss:.1f} GiB)")
            elif elapsed > args.max_seconds:
                stopped = f"running past --max-seconds {args.max_seconds}"
            if stopped is not None:
                process.kill()
                process.wait()
                print(f"  {dim}-d stopped after {elapsed:.0f} s: {stopped}", file=sys.stderr)
                reached = result.with_name("progress.json")
                return {"dim": dim, "stopped": stopped, "process_s": elapsed,
                        "peak_rss_seen_gib": peak,
                        "reached": json.loads(reached.read_text(encoding="utf-8"))
                        if reached.exists() else None}
            time.sleep(0.5)
        if process.returncode != 0:
            raise subprocess.CalledProcessError(process.returncode, command)
        figures = json.loads(result.read_text(encoding="utf-8"))
        figures["process_s"] = time.perf_counter() - start
    return figures


def stage_totals(run: dict[str, Any]) -> dict[str, float]:
    """Seconds of each stage (see the module doc): the audit's top-level tasks, robustness by
    its lines' own seconds, the rest of the audit, and the rendering."""
    tasks = run["tasks"]
    out = {stage: tasks.get(name, {}).get("seconds", 0.0) for stage, name in STAGE_TASKS.items()}
    lines = run.get("robustness_seconds_by_line") or {}
    out["robustness"] = sum(lines.values()) if lines else \
        tasks.get("robustness", {}).get("seconds", 0.0)
    out["outside"] = max(0.0, run["audit_s"] - sum(out.values()))
    out["rendering"] = run["render_s"]
    return {stage: out[stage] for stage in STAGES}


def nested_tasks(runs: dict[int, dict[str, Any]]) -> list[str]:
    """The tasks other than the stages' that any run recorded, the longest first."""
    longest: dict[str, float] = {}
    for run in runs.values():
        for name, row in run["tasks"].items():
            if name not in STAGE_TASKS.values():
                longest[name] = max(longest.get(name, 0.0), row["seconds"])
    return sorted(longest, key=lambda name: -longest[name])


def markdown(runs: dict[int, dict[str, Any]]) -> str:
    """The side-by-side table: stages, the tasks within them, whole audit and peak RSS by
    dimension."""
    dims = sorted(runs)
    ratio = len(dims) > 1
    head = "| | " + " | ".join(f"{d}-d" for d in dims) + (
        f" | {dims[-1]}/{dims[0]} |" if ratio else " |")
    rule = "|---" * (len(dims) + 1 + ratio) + "|"
    lines = [head, rule]

    def row(label: str, values: list[float], unit: str = "s", digits: int = 1) -> None:
        cells = [f"{v:,.{digits}f} {unit}".strip() for v in values]
        tail = ""
        if ratio:
            tail = f" | {values[-1] / values[0]:.1f}×" if values[0] > 0 else " | —"
        lines.append(f"| {label} | " + " | ".join(cells) + tail + " |")

    stages = {d: stage_totals(runs[d]) for d in dims}
    lines.append("| **stages** |" + " |" * (len(dims) + ratio))
    for stage in STAGES:
        if stage in STAGE_TASKS and not any(STAGE_TASKS[stage] in runs[d]["tasks"]
                                            for d in dims):
            continue  # a stage that did not run (sizing: AuditSettings(autosize=()))
        row(STAGE_NAMES[stage], [stages[d][stage] for d in dims])
    row("**whole audit**", [runs[d]["whole_s"] for d in dims])
    nested = nested_tasks(runs)
    if nested:
        lines.append("| **tasks within the stages (inclusive)** |" + " |" * (len(dims) + ratio))
        for name in nested:
            row(TASK_LABELS.get(name, name),
                [runs[d]["tasks"].get(name, {}).get("seconds", 0.0) for d in dims])
    row("synthetic states (the encoder's own clock)", [runs[d]["synthetic_states_s"]
                                                        for d in dims], digits=2)
    row("whitening fits (their own clock)", [runs[d]["whitening_fits"]["seconds"]
                                              for d in dims])
    for solver, label in (("gram", "the Gram matrix"), ("svd", "the SVD")):
        row(f"whitening fits by {label}", [runs[d]["whitening_fits"][solver] for d in dims],
            unit="", digits=0)
    row("peak RSS", [runs[d]["peak_rss_mib"] for d in dims], unit="MiB", digits=0)
    row("token positions the adapter computed", [runs[d]["synthetic_state_tokens"]
                                                  for d in dims], unit="", digits=0)
    return "\n".join(lines)


def same_kind(runs: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """Whether every dimension's report has the same rows, robustness and controls lines."""
    dims = sorted(runs)
    first = runs[dims[0]]
    same: dict[str, Any] = {field: all(runs[d][field] == first[field] for d in dims)
                            for field in ("rows", "row_keys", "robustness_lines",
                                          "controls_lines")}
    same["no_error_or_skipped_rows"] = all(
        n == 0 for d in dims for v, n in runs[d]["verdicts"].items()
        if v.lower() in ("error", "skipped"))
    same["all"] = all(same.values())
    # informational: a line's space of specifications follows its data (not required equal)
    same["robustness_specifications"] = {str(d): runs[d]["robustness_specifications"]
                                         for d in dims}
    same["verdicts"] = {str(d): runs[d]["verdicts"] for d in dims}
    return same


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = arguments(__doc__, repeats=False)
    parser.add_argument("--dims", default="384,1024,4096",
                        help="dimensions of the synthetic encoder, comma-separated")
    parser.add_argument("--quick", action="store_true",
                        help="--profile quick sizes (a smoke run)")
    parser.add_argument("--profile", default="standard",
                        help="sample sizes (standard: the defaults; quick: a pull request's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--states", choices=("nonlinear", "linear"), default="nonlinear",
                        help="the synthetic states: nonlinear as a network's (the default), or "
                             "linear in the token rows (the figures before 2026-12-07's)")
    parser.add_argument("--cprofile", action="store_true",
                        help="also run each dimension under cProfile (top functions)")
    parser.add_argument("--top", type=int, default=25, help="cProfile functions kept")
    parser.add_argument("--workers", type=int, default=1,
                        help="the audit's --workers (default 1: every task runs in one "
                             "process; with more, the robustness and controls stages' lines "
                             "run in forked processes, whose tasks show only as those "
                             "stages' wall time)")
    parser.add_argument("--max-rss-gib", type=float, default=16.0,
                        help="stop a dimension's audit holding more memory than this")
    parser.add_argument("--min-free-gib", type=float, default=1.0,
                        help="stop a dimension's audit when the machine has less available")
    parser.add_argument("--max-seconds", type=float, default=1800.0,
                        help="stop a dimension's audit running longer than this")
    parser.add_argument("--child", type=int, default=None, help=argparse_hidden())
    parser.add_argument("--store", type=Path, default=None, help=argparse_hidden())
    parser.add_argument("--result", type=Path, default=None, help=argparse_hidden())
    args = parser.parse_args(argv)
    if args.quick:
        args.profile = "quick"
    if args.child is not None:
        child(args.child, args.profile, args.seed, args.store, args.result, args.threads,
              args.cprofile, args.top, args.workers, args.states)
        return {}
    dims = [int(d) for d in args.dims.split(",") if d.strip()]
    figures: dict[str, Any] = {
        "benchmark": "where an audit's work goes, by dimension (no forward pass)",
        "model": "synthetic encoder: minilm-l6's tokenizer and adapter, synthetic states",
        "suite": "all", "robustness": True, "controls": True, "profile": args.profile,
        "seed": args.seed, "dims": dims, "workers": args.workers, "states": args.states,
    }
    with tempfile.TemporaryDirectory(prefix="normtest-bench-stages-store-") as store:
        print(f"warm-up: {dims[0]}-d, scoring the sentences' surprisal into {store}",
              file=sys.stderr)
        warm = run_child(dims[0], args, Path(store))
        if "stopped" in warm:
            raise SystemExit(f"the warm-up audit was stopped: {warm['stopped']}")
        figures["warmup"] = {k: warm[k] for k in ("dim", "whole_s", "process_s",
                                                  "surprisal_scored_texts", "peak_rss_mib")}
        runs: dict[int, dict[str, Any]] = {}
        stopped: dict[int, dict[str, Any]] = {}
        for dim in dims:
            print(f"timed: {dim}-d", file=sys.stderr)
            got = run_child(dim, args, Path(store))
            if "stopped" in got:
                stopped[dim] = got
                continue
            runs[dim] = got
            print(f"  {dim}-d: whole {runs[dim]['whole_s']:.1f} s, peak RSS "
                  f"{runs[dim]['peak_rss_mib']:.0f} MiB", file=sys.stderr)
        profiled: dict[int, Any] = {}
        if args.cprofile:
            for dim in runs:
                print(f"cProfile: {dim}-d", file=sys.stderr)
                got = run_child(dim, args, Path(store), cprofile=True)
                profiled[dim] = got if "stopped" in got else {
                    "whole_s_under_cprofile": got["whole_s"], "top": got["cprofile"]}
    figures["runs"] = {str(d): {**{k: v for k, v in r.items() if k != "row_keys"},
                                "stages_s": stage_totals(r)}
                       for d, r in runs.items()}
    if stopped:
        figures["stopped"] = {str(d): r for d, r in stopped.items()}
    if not runs:
        write(args.out, figures)
        return figures
    figures["same_kind_of_report"] = same_kind(runs)
    figures["surprisal_scored_in_timed_runs"] = sum(r["surprisal_scored_texts"]
                                                    for r in runs.values())
    if profiled:
        figures["cprofile"] = {str(d): p for d, p in profiled.items()}
    figures["table_markdown"] = markdown(runs)
    sources = {json.dumps(r["source"], sort_keys=True) for r in [*runs.values(), warm]}
    figures["source"] = runs[min(runs)]["source"]
    figures["same_source_in_every_run"] = len(sources) == 1 and not any(
        r["source_changed_during_run"] for r in runs.values())
    figures["machine"] = machine()
    write(args.out, figures, show={"same_kind_of_report": figures["same_kind_of_report"]})
    print()
    print(f"profile {args.profile}, seed {args.seed}; warm-up ({dims[0]}-d, surprisal scored "
          f"for {warm['surprisal_scored_texts']} sentences): {warm['whole_s']:.1f} s; timed runs "
          f"scored {figures['surprisal_scored_in_timed_runs']} sentences")
    print()
    print(figures["table_markdown"])
    print()
    for d in sorted(runs):
        print(f"{d}-d verdicts: {runs[d]['verdicts']} ({runs[d]['rows']} rows, "
              f"{runs[d]['robustness_specifications']} robustness specifications); "
              f"synthetic states: {runs[d]['synthetic_state_tokens']:,} token positions")
    for d, r in stopped.items():
        print(f"{d}-d stopped after {r['process_s']:.0f} s: {r['stopped']}")
        reached = r.get("reached")
        if reached:
            running = " > ".join(name for name, _ in reached["running"]) or "no task"
            print(f"  it was in {running} after {reached['elapsed_s']} s of audit; seconds "
                  f"so far by finished task: {reached['seconds']}")
    if not figures["same_source_in_every_run"]:
        print()
        print("WARNING: the audit's code changed while the benchmark ran (see source)")
    return figures


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
