"""Re-run the broken and hostile inputs of the second hardening round, each built from scratch.

Every case builds its own input in a fresh temporary folder (claim files, reports, stores,
modules, configuration files), runs the ``normtest`` console script as a user would, and prints
one Markdown row: the case, the exit code, the seconds it took and the one line it printed
(the first ``normtest:`` line on stderr, else the last line of its output). A traceback is
flagged. Nothing here asserts; the tests that keep each case so are named in docs/security.md
and the closing notes. Run from the repository root, offline::

    python scripts/hardening_sweep.py [--only NAME ...] [--out sweep.md]

It takes about ten minutes on two cores (real models: GloVe, MiniLM, SmolLM2; Ray is started for
its three cases when installed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

FAST = ["--suite", "word", "--words", "60", "--resamples", "100"]
CLAIM = '''
import dataclasses, math
from normtest.catalogue import Claim, measures
from normtest.result import Criterion
from normtest.stats import measure_mean


@measures(Claim(id="{id}", statement="s", source="sweep", suite="word",
                quantities=("squared_norm",), unit="", sample="the word sample",
                statistic="mean", criterion=Criterion.minimum_effect(0.0)), data="words")
def measure(words, variant, settings):
    m = measure_mean(words.information, n_resamples=200)
    {body}
    return m
'''
MODELS = '''
import numpy as np


class Ragged:
    name, revision = "ragged", "1"

    def encode(self, texts):
        return [np.ones(1 + i % 2) for i, _ in enumerate(texts)]


class Strings:
    name, revision = "strings", "1"

    def encode(self, texts):
        return ["a vector" for _ in texts]


class Raises:
    name, revision = "raises", "1"

    def encode(self, texts):
        raise RuntimeError("GPU fell over")


def factory():
    raise RuntimeError("no weights")


text = "just a string"
'''


class Sweep:
    """The cases, their shared inputs (built once, on demand) and the rows printed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.rows: list[tuple[str, str, str, str]] = []
        self.env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                    "NORMTEST_CACHE_DIR": str(root / "cache"), "PYTHONPATH": str(root),
                    "NO_COLOR": "1"}
        self._reports: dict[str, Path] = {}

    # -- running ---------------------------------------------------------------------------
    def run(self, *args: str, cwd: Path | None = None, timeout: float = 600,
            env: dict[str, str] | None = None) -> tuple[int, str, str, float]:
        start = time.perf_counter()
        try:
            done = subprocess.run([sys.executable, "-m", "normtest", *args], cwd=cwd or self.root,
                                  env=env or self.env, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            return -9, str(exc.stdout or ""), f"(killed after {timeout:.0f} s)", timeout
        return done.returncode, done.stdout, done.stderr, time.perf_counter() - start

    def record(self, case: str, code: int, out: str, err: str, seconds: float,
               line: str | None = None) -> None:
        if line is None:
            line = one_line(out, err)
        if "Traceback (most recent call last)" in err:
            line = "TRACEBACK: " + line
        self.rows.append((case, str(code), f"{seconds:.1f}", line))
        print(f"| {case} | {code} | {seconds:.1f} | {line} |", flush=True)

    def report(self, name: str, *args: str) -> Path:
        """A report written once by ``normtest audit ARGS --out NAME``."""
        if name not in self._reports:
            out = self.root / name
            code, _, err, _ = self.run("audit", *args, "--out", str(out), "--format", "json")
            if code != 0:
                raise SystemExit(f"could not build the report {name}: {err.strip()[-500:]}")
            self._reports[name] = out / "report.json"
        return self._reports[name]

    def claim_file(self, folder: str, claim_id: str, body: str) -> Path:
        path = self.root / folder / "claims.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(CLAIM.format(id=claim_id, body=body), encoding="utf-8")
        return path


def one_line(out: str, err: str) -> str:
    for prefix in ("normtest: error:", "normtest: warning:", "normtest: gate", "normtest:"):
        lines = [s for s in err.splitlines() if s.startswith(prefix)]
        if lines:
            return lines[0].replace("|", "\\|")
    tail = [s for s in (err + "\n" + out).splitlines() if s.strip()]
    return (tail[-1] if tail else "(nothing)").replace("|", "\\|")


# ---------------------------------------------------------------------------- the cases
def two_claim_files(s: Sweep) -> None:
    first = s.claim_file("c1", "lab.dup", "pass")
    second = s.claim_file("c2", "lab.dup", "m = dataclasses.replace(m, estimate=m.estimate / 2)")
    s.record("two claim files, one id, two measures",
             *s.run("audit", "--model", "glove-6b-50d", "--checks", str(first), "--checks",
                    str(second), "--claims", "lab.dup", *FAST[2:], "--out", str(s.root / "o1")))


def nan_measurement(s: Sweep) -> None:
    path = s.claim_file("nan", "lab.nan", "m = dataclasses.replace(m, estimate=math.nan)")
    out = s.root / "o-nan"
    code, stdout, err, seconds = s.run("audit", "--model", "glove-6b-50d", "--checks", str(path),
                                       "--claims", "lab.nan", "word.norm_ic", *FAST[2:],
                                       "--out", str(out),
                                       "--format", "json")
    rows = [r for r in json.loads((out / "report.json").read_text())["results"]
            if r["claim"] == "lab.nan"] if code == 0 else []
    line = (f"row {rows[0]['verdict']}: {rows[0]['reason']}" if rows else None)
    s.record("a measure returning a NaN estimate (bootstrap intact)", code, stdout, err, seconds,
             line)


def compare_sizes(s: Sweep) -> None:
    a200 = s.report("a200", "--model", "glove-6b-50d", "--suite", "word", "--words", "200",
                    "--resamples", "100")
    a300 = s.report("a300", "--model", "glove-6b-50d", "--suite", "word", "--words", "300",
                    "--resamples", "100")
    s.record("compare a 200-word and a 300-word report",
             *s.run("compare", "--report", str(a200), "--report", str(a300)))
    s.record("compare --report (200 words) --model G --words 300",
             *s.run("compare", "--report", str(a200), "--model", "glove-6b-50d", "--words",
                    "300", "--resamples", "100"))
    s.record("compare a model with itself",
             *s.run("compare", "--report", str(a200), "--report", str(a200)))


def compare_text_on_static(s: Sweep) -> None:
    s.record("compare: text claims on a static model",
             *s.run("compare", "--model", "glove-6b-50d", "--model", "minilm-l6", "--suite",
                    "text", "--sentences", "40", "--resamples", "100"))


def _stored(folder: Path) -> Path:
    (path,) = sorted(folder.glob("*.npz"), key=lambda p: p.stat().st_mtime)[-1:]
    return path


def _rewrite(path: Path, change: Callable[[dict[str, np.ndarray]], None]) -> None:
    with np.load(path, allow_pickle=False) as stored:
        parts = dict(stored)
    change(parts)
    with path.open("wb") as out:
        np.savez(out, **parts)  # the stored digest (if any) is kept as it was


def surprisal_store(s: Sweep) -> None:
    args = ("--model", "minilm-l6", "--suite", "text", "--sentences", "40", "--resamples", "100",
            "--no-robustness", "--no-controls")
    s.report("texts", *args)
    store = s.root / "cache" / "surprisal"

    def shift(parts: dict[str, np.ndarray]) -> None:
        offsets = parts["offsets"].copy()
        offsets[1:-1] += np.where(np.arange(offsets.size - 2) % 2 == 0, 1, -1)
        parts["offsets"] = offsets

    def reverse(parts: dict[str, np.ndarray]) -> None:
        parts["values"] = parts["values"][::-1].copy()

    for name, change in (("token counts shifted (same total)", shift),
                         ("values reversed", reverse)):
        _rewrite(_stored(store), change)
        s.record(f"stored sentence surprisal, {name}",
                 *s.run("audit", *args, "--out", str(s.root / "o-texts")))


def corpus_store(s: Sweep) -> None:
    from normtest.information.texts import lee_texts

    corpus = s.root / "lee"
    corpus.mkdir()
    for i, text in enumerate(lee_texts()):  # a --corpus of its own: its counts are stored
        (corpus / f"doc{i:03d}.txt").write_text(text.text, encoding="utf-8")
    args = ("--model", "glove-6b-50d", "--suite", "conditions", "--words", "300",
            "--resamples", "100", "--no-robustness", "--no-controls", "--corpus", str(corpus))
    s.report("pairs", *args)
    store = s.root / "cache" / "corpora"

    def multiply(parts: dict[str, np.ndarray]) -> None:
        indptr, data = parts["indptr"], parts["data"].copy()
        for row in range(0, indptr.size - 1, 2):
            data[indptr[row]:indptr[row + 1]] *= 7
        parts["data"] = data

    _rewrite(_stored(store), multiply)
    s.record("stored corpus counts, co-occurrences ×7 on half the rows",
             *s.run("audit", *args, "--out", str(s.root / "o-pairs")))
    path = _stored(store)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    s.record("stored corpus counts cut to half their bytes",
             *s.run("audit", *args, "--out", str(s.root / "o-pairs")))


def gate_other_model(s: Sweep) -> None:
    baseline = s.report("m60", "--model", "minilm-l6", *FAST)
    s.record("gate: GloVe candidate, MiniLM baseline, --require",
             *s.run("gate", "--model", "glove-6b-50d", "--baseline", str(baseline), "--require",
                    "word.norm_ic"))


def budget_and_plan(s: Sweep) -> None:
    s.record("--until-decided --budget nan",
             *s.run("audit", "--model", "glove-6b-50d", *FAST, "--until-decided", "--budget",
                    "nan"))
    s.record("plan --claims cond.centered (exploratory rows only)",
             *s.run("plan", "--model", "glove-6b-50d", "--claims", "cond.centered"))
    s.record("--until-decided --stages 1000000",
             *s.run("audit", "--model", "glove-6b-50d", *FAST, "--until-decided", "--stages",
                    "1000000"))
    s.record("--until-decided --stages 30",
             *s.run("audit", "--model", "glove-6b-50d", *FAST, "--until-decided", "--stages",
                    "30"))


def two_writers(s: Sweep) -> None:
    out = s.root / "shared-out"
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-m", "normtest", "audit", "--model",
                               "glove-6b-50d", *FAST, "--seed", str(seed), "--out", str(out)],
                              cwd=s.root, env=s.env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for seed in (1, 2)]
    results = [p.communicate() for p in procs]
    seconds = time.perf_counter() - start
    codes = [p.returncode for p in procs]
    data = json.loads((out / "report.json").read_text())
    md = (out / "report.md").read_text()
    seed = data["provenance"].get("seed")
    whole = f"seed {seed}" in md or f"seed: {seed}" in md or f"seed={seed}" in md
    files = sorted(p.name for p in out.iterdir())
    line = (f"exits {codes}; the folder holds {files}, all of one audit (seed {seed})"
            if whole else f"exits {codes}; files {files}; report.md does not name seed {seed}")
    s.record("two audits writing one --out at once", max(codes), results[0][0],
             results[0][1] + results[1][1], seconds, line)


def python_models(s: Sweep) -> None:
    (s.root / "my_models.py").write_text(textwrap.dedent(MODELS), encoding="utf-8")
    for attr in ("Ragged", "Strings", "Raises", "factory", "text"):
        s.record(f"--model my_models:{attr}",
                 *s.run("audit", "--model", f"my_models:{attr}", *FAST))


def configuration(s: Sweep) -> None:
    project = s.root / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.normtest]\nchecks = ["missing_claims.py"]\n', encoding="utf-8")
    s.record("a claims file named by checks = [...] in [tool.normtest]",
             *s.run("audit", "--model", "glove-6b-50d", *FAST, cwd=project))


def ray_cases(s: Sweep) -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        s.rows.append(("Ray cases", "—", "—", "ray is not installed"))
        return
    s.record("--executor ray --ray-address 127.0.0.1:1",
             *s.run("audit", "--model", "glove-6b-50d", *FAST, "--executor", "ray",
                    "--ray-address", "127.0.0.1:1", timeout=150))
    s.record("--executor ray --no-cache",
             *s.run("audit", "--model", "glove-6b-50d", *FAST, "--executor", "ray",
                    "--no-cache"))
    args = ["audit", "--model", "minilm-l6", "--suite", "word", "--words", "3000",
            "--resamples", "100", "--executor", "ray", "--out", str(s.root / "o-ray")]
    env = {**s.env, "NORMTEST_CACHE_DIR": str(s.root / "ray-cache")}
    proc = subprocess.Popen([sys.executable, "-m", "normtest", *args], cwd=s.root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(25)  # Ray started, the workers computing
    start = time.perf_counter()
    proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        err += "\n(still running 120 s after SIGTERM: killed)"
    seconds = time.perf_counter() - start
    lines = len([x for x in err.splitlines() if x.strip()])
    again = s.run(*args, env=env)
    s.record("SIGTERM to a Ray audit (25 s in)", proc.returncode, out, err, seconds,
             f"exit {proc.returncode} ({-proc.returncode if proc.returncode < 0 else ''} "
             f"signal), {lines} lines on stderr; the same command again: exit {again[0]}")


def cache_removed(s: Sweep) -> None:
    cache = s.root / "removed-cache"
    env = {**s.env, "NORMTEST_CACHE_DIR": str(cache)}
    args = ["audit", "--model", "minilm-l6", "--suite", "word", "--words", "3000",
            "--resamples", "100", "--no-robustness", "--no-controls", "--out",
            str(s.root / "o-removed")]
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "normtest", *args], cwd=s.root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while not (cache / "embeddings.sqlite").exists() and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(1.0)  # some batches written
    shutil.rmtree(cache, ignore_errors=True)
    out, err = proc.communicate()
    s.record("the cache folder deleted mid-audit", proc.returncode, out, err,
             time.perf_counter() - start)


CASES: dict[str, Callable[[Sweep], None]] = {
    "claims": two_claim_files, "nan": nan_measurement, "compare": compare_sizes,
    "compare_text": compare_text_on_static, "surprisal": surprisal_store,
    "corpus": corpus_store, "gate": gate_other_model, "budget": budget_and_plan,
    "writers": two_writers, "models": python_models, "config": configuration,
    "ray": ray_cases, "cache": cache_removed,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="+", choices=sorted(CASES), default=None)
    parser.add_argument("--out", type=Path, default=None, help="also write the table here")
    args = parser.parse_args()
    print("| case | exit | s | what it prints |\n|---|---|---|---|", flush=True)
    with tempfile.TemporaryDirectory(prefix="normtest-sweep-") as folder:
        sweep = Sweep(Path(folder))
        for name, case in CASES.items():
            if args.only is None or name in args.only:
                case(sweep)
    if args.out is not None:
        args.out.write_text("| case | exit | s | what it prints |\n|---|---|---|---|\n"
                            + "".join(f"| {' | '.join(r)} |\n" for r in sweep.rows),
                            encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
