"""Re-run the broken and hostile inputs of the hardening rounds (issue #42), each built from
scratch.

Every case builds its own input in a fresh temporary folder (claim files, reports, stores,
modules, configuration files, copies of installed models), runs the ``normtest`` console script
(or pytest) as a user would, and prints one Markdown row: the case, the exit code, the seconds it
took and the one line it printed (the first ``normtest:`` or ``ERROR:`` line on stderr, else the
last line of its output). A traceback is flagged. Nothing here asserts; the tests that keep each
case so are named in docs/security.md and the closing notes (round 3:
tests/test_hardening_round3.py, tests/test_report_schema.py). Run from the repository root,
offline::

    python scripts/hardening_sweep.py [--round 2|3] [--only NAME ...] [--out sweep.md] [--online]

Round 2 (the default cases before round 3) takes about ten minutes on two cores (real models:
GloVe, MiniLM, SmolLM2; Ray is started for its three cases when installed). Round 3 takes a few
minutes more: it copies the installed nomic-embed-text-v1.5 (about 0.5 GB) into temporary caches,
never touching the original, and runs ``normtest models install`` against those copies with pip
kept off the package index (``PIP_NO_INDEX=1``) unless ``--online`` is given.
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
from normtest.claims.catalogue import Claim, measures
from normtest.verdict.result import Criterion
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
        #: whether `normtest models install` may reach the package index (round 3)
        self.online = False

    # -- running ---------------------------------------------------------------------------
    def run(self, *args: str, cwd: Path | None = None, timeout: float = 600,
            env: dict[str, str] | None = None) -> tuple[int, str, str, float]:
        return self.run_command([sys.executable, "-m", "normtest", *args], cwd=cwd,
                                timeout=timeout, env=env)

    def run_command(self, argv: list[str], cwd: Path | None = None, timeout: float = 600,
                    env: dict[str, str] | None = None) -> tuple[int, str, str, float]:
        """Any command (``python -m pytest …``), as :meth:`run` runs normtest: no input (a
        prompt fails rather than waits), its output captured, killed after ``timeout``."""
        start = time.perf_counter()
        try:
            done = subprocess.run(argv, cwd=cwd or self.root, env=env or self.env,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True,
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
    for prefix in ("normtest: error:", "normtest: warning:", "normtest: gate", "normtest:",
                   "ERROR:"):
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
    from normtest.data.information.texts import lee_texts

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
    code, out, err, seconds = interrupted(s, args, env, 25, signal.SIGTERM, "SIGTERM")
    lines = len([x for x in err.splitlines() if x.strip()])
    again = s.run(*args, env=env)
    s.record("SIGTERM to a Ray audit (25 s in)", code, out, err, seconds,
             f"exit {code} ({-code if code < 0 else ''} "
             f"signal), {lines} lines on stderr; the same command again: exit {again[0]}")


def interrupted(s: Sweep, args: list[str], env: dict[str, str], after: float, sig: int,
                name: str) -> tuple[int, str, str, float]:
    """``normtest ARGS`` sent ``sig`` ``after`` seconds in: its exit code, output, error output
    and the seconds it took to end after the signal (killed after 120 s)."""
    proc = subprocess.Popen([sys.executable, "-m", "normtest", *args], cwd=s.root, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(after)
    start = time.perf_counter()
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        err += f"\n(still running 120 s after {name}: killed)"
    return proc.returncode, out, err, time.perf_counter() - start


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


# ----------------------------------------------------------------------- round 3 (issue #42)
NOMIC = "nomic-embed-text-v1.5"


def _installed_models() -> Path:
    """The installed models' folder of the user running the sweep (read, never written)."""
    from normtest.base.paths import default_cache_dir

    return default_cache_dir() / "models"


def _model_copy(s: Sweep, name: str) -> Path | None:
    """A fresh cache root holding a copy of every folder of the installed NOMIC
    (``<cache>/models/nomic-embed-text-v1.5*``), or None (a row saying so) when it is not
    installed. The original is only read."""
    found = sorted(_installed_models().glob(f"{NOMIC}*"))
    if not found:
        s.rows.append((name, "—", "—", f"{NOMIC} is not installed here (normtest models "
                                       f"install {NOMIC}); case left out"))
        print(f"| {name} | — | — | {NOMIC} is not installed: left out |", flush=True)
        return None
    root = Path(tempfile.mkdtemp(prefix="models-", dir=s.root))
    for folder in found:
        shutil.copytree(folder, root / "models" / folder.name, symlinks=False)
    return root


def _listing(s: Sweep, case: str, env: dict[str, str]) -> None:
    """``normtest models``, recorded by NOMIC's row of the listing."""
    code, out, err, seconds = s.run("models", env=env)
    row = next((" ".join(x.split()) for x in out.splitlines() if x.startswith(NOMIC)), None)
    s.record(case, code, out, err, seconds, row)


def _install_env(s: Sweep, cache: Path) -> dict[str, str]:
    env = {**s.env, "NORMTEST_CACHE_DIR": str(cache)}
    if not s.online:  # pip kept off the index: a reinstall is refused, never downloaded
        env["PIP_NO_INDEX"] = "1"
    return env


def models_corrupted(s: Sweep) -> None:
    """(1) The installed copy's weights changed in place, same size; then list and install."""
    cache = _model_copy(s, "r3: nomic weights corrupted, same size")
    if cache is None:
        return
    weights = sorted((cache / "models").glob("*/model.safetensors"))[0]
    size = weights.stat().st_size
    with weights.open("r+b") as handle:  # flip 4 KiB in the middle: the size is unchanged
        handle.seek(size // 2)
        block = handle.read(4096)
        handle.seek(size // 2)
        handle.write(bytes(b ^ 0xFF for b in block))
    assert weights.stat().st_size == size
    env = _install_env(s, cache)
    _listing(s, "r3: `normtest models` listing a same-size-corrupted nomic copy", env)
    s.record(f"r3: `normtest models install {NOMIC}` on it",
             *s.run("models", "install", NOMIC, env=env, timeout=900))
    s.record(f"r3: `normtest models install {NOMIC} --force` on it",
             *s.run("models", "install", NOMIC, "--force", env=env, timeout=900))
    s.record(f"r3: audit {NOMIC} from the corrupted copy",
             *s.run("audit", "--model", NOMIC, *FAST, env=env))
    shutil.rmtree(cache, ignore_errors=True)


def models_extra_file(s: Sweep) -> None:
    """(2) An extra special_tokens_map.json in the installed copy's folder."""
    cache = _model_copy(s, "r3: nomic copy with an extra special_tokens_map.json")
    if cache is None:
        return
    folder = sorted((cache / "models").glob(f"{NOMIC}*"))[0]
    (folder / "special_tokens_map.json").write_text(
        json.dumps({"cls_token": "[MASK]", "sep_token": "[MASK]"}), encoding="utf-8")
    env = _install_env(s, cache)
    _listing(s, "r3: `normtest models` with an extra special_tokens_map.json in the copy", env)
    s.record(f"r3: audit {NOMIC} with the extra special_tokens_map.json",
             *s.run("audit", "--model", NOMIC, *FAST, env=env))
    shutil.rmtree(cache, ignore_errors=True)


def kind_decoder(s: Sweep) -> None:
    """(3) A BERT (MiniLM) read as a decoder: by name and by its folder."""
    from normtest.adapters.embedded import minilm_folder

    s.record("r3: --model minilm-l6 --kind decoder",
             *s.run("audit", "--model", "minilm-l6", "--kind", "decoder", *FAST))
    s.record("r3: --model <MiniLM's folder> --kind decoder",
             *s.run("audit", "--model", str(minilm_folder()), "--kind", "decoder", *FAST))


def gate_unverified(s: Sweep) -> None:
    """(4) Required lines whose controls or robustness a report does not hold."""
    words = ("--model", "glove-6b-50d", "--suite", "word", "--words", "300", "--resamples",
             "100")
    unchecked = s.report("r3-no-controls", *words, "--no-controls")
    unassessed = s.report("r3-no-robustness", *words, "--no-robustness")
    for extra in ((), ("--unverified", "warn")):
        s.record(f"r3: gate --replicated word_level on a --no-controls report {' '.join(extra)}",
                 *s.run("gate", "--report", str(unchecked), "--replicated", "word_level",
                        *extra))
        s.record(f"r3: gate --require-robust word_level on a --no-robustness report "
                 f"{' '.join(extra)}",
                 *s.run("gate", "--report", str(unassessed), "--require-robust", "word_level",
                        *extra))


def junk_reports(s: Sweep) -> None:
    """(5) A schema-only report and 50 MB of junk under the schema, through every reader."""
    folder = s.root / "junk"
    folder.mkdir(exist_ok=True)
    big = "x" * (50 * 2**20)
    files = {
        "schema only": '{"schema": "normtest.report/1"}',
        "50 MB under an unknown key": json.dumps({"schema": "normtest.report/1", "junk": big}),
        "50 MB of junk rows": ('{"schema": "normtest.report/1", "model": {}, "provenance": {}, '
                               '"summary": {}, "results": ['
                               + ",".join(["[1,2,3,4,5,6,7,8,9]"] * (50 * 2**20 // 20)) + "]}"),
        "a 50 MB model name": json.dumps({"schema": "normtest.report/1",
                                          "model": {"name": big}, "provenance": {},
                                          "summary": {}, "results": []}),
    }
    for i, (what, text) in enumerate(files.items()):
        path = folder / f"junk{i}.json"
        path.write_text(text, encoding="utf-8")
        for label, args in (("report", ("report", str(path))),
                            ("report --format html", ("report", str(path), "--format", "html")),
                            ("gate", ("gate", "--report", str(path), "--replicated",
                                      "word_level")),
                            ("compare", ("compare", "--report", str(path), "--report",
                                         str(path))),
                            ("explain", ("explain", str(path)))):
            s.record(f"r3: {what} through {label}", *s.run(*args))
        path.unlink()


def unwritable_cache(s: Sweep) -> None:
    """(6) ``normtest models install`` with a cache it cannot write."""
    locked = s.root / "locked-cache"
    locked.mkdir()
    locked.chmod(0o500)
    cache, how = locked / "normtest", "a read-only folder"
    if os.geteuid() == 0:  # root writes anywhere: a path under a plain file instead
        blocker = s.root / "a-file"
        blocker.write_text("not a folder\n", encoding="utf-8")
        cache, how = blocker / "cache", "a path under a plain file (running as root)"
    env = _install_env(s, cache)
    for name in (NOMIC, "smollm2-135m"):
        s.record(f"r3: models install {name}, cache at {how}",
                 *s.run("models", "install", name, env=env))
    locked.chmod(0o700)


def pytest_configuration(s: Sweep) -> None:
    """(7) pytest with a bad ``[tool.normtest]``: one usage error at start-up, as the CLI says."""
    for i, line in enumerate(('words = "many"', "device = 3", "wrods = 300")):
        project = s.root / f"pytest-project-{i}"
        project.mkdir()
        (project / "pyproject.toml").write_text(f"[tool.normtest]\n{line}\n", encoding="utf-8")
        code, out, err, seconds = s.run_command(
            [sys.executable, "-m", "pytest", "--pyargs", "normtest.checks", "--normtest-model",
             "glove-6b-50d", "-p", "no:cacheprovider"], cwd=project)
        errors = [x for x in err.splitlines() if x.startswith("ERROR:")]
        n = len([x for x in (out + err).splitlines() if x.strip()])
        trace = "Traceback (most recent call last)" in out + err
        s.record(f"r3: pytest --pyargs normtest.checks with {line}", code, out,
                 err + ("\nTraceback (most recent call last)" if trace else ""), seconds,
                 f"{errors[0] if errors else '(no ERROR line)'} ({n} lines)".replace("|", "\\|"))
        s.record(f"r3: normtest audit with {line}",
                 *s.run("audit", "--model", "glove-6b-50d", *FAST, cwd=project))


def matplotlib_home(s: Sweep) -> None:
    """(8) A layer plot and an HTML page drawn with HOME in a fresh folder: nothing may appear
    under $HOME/.cache/matplotlib."""
    report = s.report("r3-layers3", "--model", "minilm-l6", "--claims", "word.norm_ic",
                      "--words", "200", "--resamples", "100", "--layers", "0,3,last",
                      "--no-controls", "--no-robustness")
    home = s.root / "home"
    home.mkdir()
    env = {k: v for k, v in s.env.items() if k not in ("MPLCONFIGDIR", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    for label, args in (("layer plot", ("--format", "layers", "--out", str(s.root / "l.png"))),
                        ("HTML page", ("--format", "html", "--out", str(s.root / "r.html")))):
        code, out, err, seconds = s.run("report", str(report), *args, env=env)
        written = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())
        mine = (home / ".cache" / "matplotlib").exists()
        ours = Path(env["NORMTEST_CACHE_DIR"]) / "matplotlib"
        s.record(f"r3: {label} with HOME={home.name}/", code, out, err, seconds,
                 f"exit {code}; $HOME/.cache/matplotlib {'EXISTS' if mine else 'absent'}; "
                 f"files under $HOME: {written or 'none'}; matplotlib's cache in "
                 f"$NORMTEST_CACHE_DIR/matplotlib: {'yes' if ours.is_dir() else 'no'}")


def wording(s: Sweep) -> None:
    """(9) The wording of explain, --format layers, --device and the family article, and of an
    interrupted install."""
    code, out, err, seconds = s.run("explain", "word.norm_ic[composition=sqrt_n]")
    head = (out.strip().splitlines() or [one_line(out, err)])[0]
    s.record("r3: explain 'word.norm_ic[composition=sqrt_n]'", code, out, err, seconds,
             head if code == 0 else None)
    s.record("r3: gate --require 'word.norm_ic[composition=sqrt_n]' (the same id)",
             *s.run("gate", "--model", "minilm-l6", "--require",
                    "word.norm_ic[composition=sqrt_n]", "--words", "300", "--resamples",
                    "100"))
    two = s.report("r3-layers2", "--model", "minilm-l6", "--claims", "word.norm_ic",
                   "--words", "200", "--resamples", "100", "--layers", "0,last",
                   "--no-controls", "--no-robustness")
    s.record("r3: report --format layers on a --layers 0,last audit",
             *s.run("report", str(two), "--format", "layers", "--out", str(s.root / "l2.png")))
    for extra in ((), ("--kind", "sentence")):
        s.record(f"r3: audit --model minilm-l6 {' '.join(extra)} --device cuda:7",
                 *s.run("audit", "--model", "minilm-l6", *extra, "--device", "cuda:7", *FAST))
    s.record("r3: the family's article (--model minilm-l6 --kind decoder)",
             *s.run("audit", "--model", "minilm-l6", "--kind", "decoder", *FAST))
    # Ctrl-C three seconds into building SmolLM2's float32 copy in an empty cache
    env = {**s.env, "NORMTEST_CACHE_DIR": str(s.root / "interrupted-cache")}
    code, out, err, seconds = interrupted(s, ["models", "install", "smollm2-135m", "--force"],
                                          env, 3, signal.SIGINT, "Ctrl-C")
    s.record("r3: Ctrl-C 3 s into models install smollm2-135m", code, out, err, 3 + seconds)


CASES: dict[str, Callable[[Sweep], None]] = {
    "claims": two_claim_files, "nan": nan_measurement, "compare": compare_sizes,
    "compare_text": compare_text_on_static, "surprisal": surprisal_store,
    "corpus": corpus_store, "gate": gate_other_model, "budget": budget_and_plan,
    "writers": two_writers, "models": python_models, "config": configuration,
    "ray": ray_cases, "cache": cache_removed,
}
#: The third round (issue #42): ``--round 3``, or each by name with ``--only``.
ROUND3: dict[str, Callable[[Sweep], None]] = {
    "r3_models_corrupted": models_corrupted, "r3_models_extra_file": models_extra_file,
    "r3_kind_decoder": kind_decoder, "r3_gate_unverified": gate_unverified,
    "r3_junk_reports": junk_reports, "r3_unwritable_cache": unwritable_cache,
    "r3_pytest_config": pytest_configuration, "r3_matplotlib_home": matplotlib_home,
    "r3_wording": wording,
}
ROUNDS: dict[int, dict[str, Callable[[Sweep], None]]] = {2: CASES, 3: ROUND3}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    every = {name: case for cases in ROUNDS.values() for name, case in cases.items()}
    parser.add_argument("--round", type=int, choices=sorted(ROUNDS), default=None,
                        help="the cases of one round (default: every round)")
    parser.add_argument("--only", nargs="+", choices=sorted(every), default=None)
    parser.add_argument("--online", action="store_true",
                        help="let `normtest models install` reach the package index (round 3; "
                             "default: PIP_NO_INDEX=1, nothing is downloaded)")
    parser.add_argument("--out", type=Path, default=None, help="also write the table here")
    args = parser.parse_args()
    chosen = ROUNDS[args.round] if args.round is not None else every
    print("| case | exit | s | what it prints |\n|---|---|---|---|", flush=True)
    with tempfile.TemporaryDirectory(prefix="normtest-sweep-") as folder:
        sweep = Sweep(Path(folder))
        sweep.online = args.online
        for name, case in chosen.items():
            if args.only is None or name in args.only:
                case(sweep)
    if args.out is not None:
        args.out.write_text("| case | exit | s | what it prints |\n|---|---|---|---|\n"
                            + "".join(f"| {' | '.join(r)} |\n" for r in sweep.rows),
                            encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
