"""Faults around an audit process: stopped mid-way (Ctrl-C, or killed outright) it keeps what it
computed and the same command finishes with the report an uninterrupted run gives; two audits
racing on one cache, or one over a damaged cache file, both finish with the right report."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from normtest.audit.report import Report
from normtest.base.progress import without_progress
from normtest.cli.common import EXIT_INTERRUPTED, EXIT_OK

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

#: A cold MiniLM CER audit: ~20 s on two cores, writing prefix vectors batch by batch.
AUDIT = ["audit", "--model", "minilm-l6", "--suite", "cer", "--documents", "10",
         "--resamples", "100", "--format", "json"]


def _command(out: Path) -> list[str]:
    return [sys.executable, "-m", "normtest", *AUDIT, "--out", str(out)]


def _env(cache: Path) -> dict[str, str]:
    """The audit's environment: offline, its own cache, and one thread for torch and BLAS, in
    the audit process as in Ray's workers (which Ray starts with one), so that every sum runs
    in one order whichever executor computes it and a Ray audit's numbers equal a local one's
    to the bit (with more threads in the local process they can differ in the last bits)."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "NORMTEST_CACHE_DIR": str(cache), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1"}


def _default_sigint() -> None:
    """In the child: Ctrl-C's default action. A shell without job control starts background
    jobs with SIGINT ignored, the child inherits that, and Python then never raises
    KeyboardInterrupt (so the audit would run to its end whatever the test sends)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _entries(cache: Path) -> int:
    """How many vectors the cache holds now (0 while it does not exist or is busy)."""
    path = cache / "embeddings.sqlite"
    if not path.exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.1)
        try:
            return int(db.execute("SELECT COUNT(*) FROM entries").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def _running_with_vectors_stored(command: list[str], cache: Path,
                                 **popen: Any) -> tuple[subprocess.Popen[str], int]:
    """An audit started in a subprocess, once its first vectors are in the cache (still
    running), and how many entries the cache holds then."""
    process = subprocess.Popen(command, env=_env(cache), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, **popen)
    deadline = time.monotonic() + 300
    while _entries(cache) == 0 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, "the audit finished before it could be stopped"
    stored = _entries(cache)
    assert stored > 0
    return process, stored


def _numbers(report: Report) -> list[dict[str, Any]]:
    """Every row whole: verdict, reason, estimate, interval, p-values, sampling distribution."""
    return [r.to_dict() for r in report.results]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """The report of the same audit run start to finish on a cache of its own."""
    root = tmp_path_factory.mktemp("uninterrupted")
    done = subprocess.run(_command(root / "out"), env=_env(root / "cache"), capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == EXIT_OK, done.stderr
    return Report.read(root / "out" / "report.json")


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill"])
def test_a_stopped_audit_resumes_to_the_same_report(
    stop: signal.Signals, uninterrupted: Report, tmp_path: Path
) -> None:
    cache, out = tmp_path / "cache", tmp_path / "out"
    process, stored = _running_with_vectors_stored(_command(out), cache,
                                                   preexec_fn=_default_sigint)
    process.send_signal(stop)
    _, stderr = process.communicate(timeout=120)
    assert not (out / "report.json").exists()
    if stop == signal.SIGINT:
        assert process.returncode == EXIT_INTERRUPTED, stderr
        assert "Traceback" not in stderr
        assert "interrupted" in stderr and "resumes" in stderr
        assert len([line for line in without_progress(stderr).splitlines()
                    if line.strip()]) <= 2, stderr
    else:
        assert process.returncode == -signal.SIGKILL
    # what was stored before the stop is still there, readable, and used by the rerun
    assert _entries(cache) >= stored
    done = subprocess.run(_command(out), env=_env(cache), capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == EXIT_OK, done.stderr
    assert "warning" not in done.stderr  # nothing in the cache was damaged
    assert _numbers(Report.read(out / "report.json")) == _numbers(uninterrupted)


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_sigterm_ends_an_audit_quietly_and_a_rerun_resumes(
    executor: str, uninterrupted: Report, tmp_path: Path
) -> None:
    """SIGTERM (what `kill`, `timeout` and job schedulers send) ends a Ray audit as it ends a
    local one: at once, exit status −15 (143 in a shell), nothing printed — not Ray's native
    stack dump and SIGABRT — and the cache keeps what was stored, for the rerun to resume."""
    if executor == "ray":
        pytest.importorskip("ray", reason="the ray extra is not installed")
    cache, out = tmp_path / "cache", tmp_path / "out"
    command = [*_command(out), "--executor", executor]
    process, stored = _running_with_vectors_stored(command, cache)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == -signal.SIGTERM, stderr
    # no stack dump, no traceback, no "SIGTERM received": only the progress lines
    assert not without_progress(stderr).strip(), stderr
    assert not (out / "report.json").exists()
    assert _entries(cache) >= stored
    done = subprocess.run(command, env=_env(cache), capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == EXIT_OK, done.stderr
    assert "warning" not in done.stderr and "Traceback" not in done.stderr
    # the same numbers, every one, as the audit run start to finish (locally: one thread in
    # every process, _env, so the executor changes no sum)
    assert _numbers(Report.read(out / "report.json")) == _numbers(uninterrupted)


#: A command stopped by Ctrl-C, and another Ctrl-C pending just as the process ends (a second
#: press, or the first delivered again from a finaliser, whose timer fired as the command ended).
LATE_CTRL_C = """
import _thread, sys
import normtest.cli.demo as demo
from normtest.cli.main import run

def stopped(args):
    raise KeyboardInterrupt  # the Ctrl-C, while the command works

def exit_with_a_late_ctrl_c(code=None):
    _thread.interrupt_main()  # another one: Python raises it at its next step, in here
    real_exit(code)

demo.command, real_exit, sys.exit = stopped, sys.exit, exit_with_a_late_ctrl_c
sys.argv = ["normtest", "demo"]
run()
"""


def test_a_ctrl_c_pending_as_the_process_ends_still_exits_130_quietly(tmp_path: Path) -> None:
    """Once the command handled a Ctrl-C, another one changes nothing: the exit status stays
    130, not −2 (Python ends a process by SIGINT when a KeyboardInterrupt escapes it), and
    standard error holds the one line that says how to resume."""
    done = subprocess.run([sys.executable, "-c", LATE_CTRL_C], env=_env(tmp_path / "cache"),
                          capture_output=True, text=True, timeout=120, check=False,
                          preexec_fn=_default_sigint)
    assert done.returncode == EXIT_INTERRUPTED, done.stderr
    assert [line for line in done.stderr.splitlines() if line.strip()] == [
        "normtest: interrupted; every finished batch of vectors is in the embedding cache, and "
        "running the same command again resumes from it"], done.stderr


#: A command that gets SIGTERM while the garbage collector runs a finaliser: the handler's
#: exception cannot propagate there, so the command line delivers it again as a Ctrl-C.
SIGTERM_IN_A_FINALISER = """
import gc, os, signal, sys, time
import normtest.cli.demo as demo
from normtest.cli.main import run

class Sends:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs here, inside the finaliser
        time.sleep(0.05)

def working(args):
    Sends()
    gc.collect()
    time.sleep(30)  # the redelivered interruption ends this
    return 0

demo.command = working
sys.argv = ["normtest", "demo"]
run()
"""


def test_a_sigterm_landing_in_a_finaliser_still_ends_the_process_by_sigterm(
        tmp_path: Path) -> None:
    """The redelivered interruption is the SIGTERM still: status −15 and nothing printed, not
    the Ctrl-C's 130 and its line on resuming (what a SIGTERM that landed in a finaliser of a
    Ray audit used to give)."""
    done = subprocess.run([sys.executable, "-c", SIGTERM_IN_A_FINALISER],
                          env=_env(tmp_path / "cache"), capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == -signal.SIGTERM, done.stderr
    assert not done.stderr.strip(), done.stderr


#: A GloVe word audit: a few seconds, its word vectors read through the embedding cache.
GLOVE = ["audit", "--model", "glove-6b-50d", "--suite", "word", "--words", "300",
         "--resamples", "200", "--format", "json"]


def test_two_audits_racing_on_one_cache_both_finish_alike(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    runs = [subprocess.Popen([sys.executable, "-m", "normtest", *GLOVE, "--out",
                              str(tmp_path / f"out{i}")], env=_env(cache),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for i in range(2)]
    for process in runs:
        _, stderr = process.communicate(timeout=600)
        assert process.returncode == EXIT_OK, stderr
        assert "Traceback" not in stderr and "warning" not in stderr
    first, second = (Report.read(tmp_path / f"out{i}" / "report.json") for i in range(2))
    assert _numbers(first) == _numbers(second)
    assert _entries(cache) > 0


def test_an_audit_over_a_damaged_cache_page_warns_once_and_recomputes(tmp_path: Path) -> None:
    cache, out = tmp_path / "cache", tmp_path / "out"
    command = [sys.executable, "-m", "normtest", *GLOVE, "--out", str(out)]
    done = subprocess.run(command, env=_env(cache), capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == EXIT_OK, done.stderr
    reference = _numbers(Report.read(out / "report.json"))
    database = cache / "embeddings.sqlite"
    page = 4096
    with database.open("r+b") as handle:  # random bytes over the second page (a table root)
        handle.seek(page)
        handle.write(os.urandom(page))
    done = subprocess.run(command, env=_env(cache), capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == EXIT_OK, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.count(str(database)) == 1, done.stderr  # one warning, naming the file
    # one line, as the command line writes its warnings: no file name or source line of normtest
    warned = [line for line in done.stderr.splitlines() if str(database) in line]
    assert warned[0].startswith("normtest: warning: the embedding cache"), done.stderr
    assert "cache.py" not in done.stderr and "return self" not in done.stderr
    assert list(cache.glob("embeddings.corrupt-*"))
    assert _numbers(Report.read(out / "report.json")) == reference


def _wiki_in_a_daemon(queue: Any) -> None:
    from normtest.data.information import texts

    try:
        queue.put(len(texts._parse_wiki(texts.bundled_corpus_path(texts.WIKI_FILE))))
    except BaseException as exc:  # reported to the test, not lost in the child
        queue.put(repr(exc))


def _keep_whole(text: str, low: int, high: int, lower: bool) -> list[str]:
    return [text]


def test_the_wiki_sample_parses_inside_a_daemonic_worker_as_gensims_corpus_does() -> None:
    """An audit's forked workers are daemonic, and a daemonic process may not start children:
    gensim's WikiCorpus.get_texts opens a process pool even with processes=1, so a first audit
    on an empty cache crashed in the robustness worker that read the sample. The sample is now
    parsed in-process, article for article what WikiCorpus yields."""
    import multiprocessing

    from gensim.corpora import WikiCorpus

    from normtest.data.information import texts

    source = texts.bundled_corpus_path(texts.WIKI_FILE)
    queue: Any = multiprocessing.get_context("fork").Queue()
    worker = multiprocessing.get_context("fork").Process(target=_wiki_in_a_daemon,
                                                         args=(queue,), daemon=True)
    worker.start()
    got = queue.get(timeout=120)
    worker.join()
    parsed = texts._parse_wiki(source)
    assert got == len(parsed) == 106
    corpus = WikiCorpus(str(source), processes=1, dictionary={}, metadata=True,
                        tokenizer_func=_keep_whole, article_min_tokens=1)
    expected = []
    for pieces, (pageid, title) in corpus.get_texts():
        text = texts._clean_wiki_text(pieces[0])
        if len(text.split()) >= texts._WIKI_MIN_WORDS:
            expected.append(texts.SourceText(f"wiki:{pageid}", str(title), text))
    assert tuple(expected) == parsed
