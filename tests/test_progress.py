"""Progress on long work: live bars on a terminal (a pseudo-terminal here), gone before the
answer is printed; one plain line per phase in a pipe; nothing with --quiet."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from normtest.base import progress

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
AUDIT = ["-m", "normtest", "audit", "--model", "glove-6b-50d", "--suite", "word", "--words",
         "300", "--resamples", "200", "--format", "json"]
#: what the display says while it works (the model loading, then the claims being measured)
WORKING = (b"loading glove-6b-50d", b"measuring")


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env.update(TERM="xterm-256color", COLUMNS="120", LINES="40", HF_HUB_OFFLINE="1")
    return env


def _on_a_terminal(args: list[str]) -> bytes:
    """Run ``python ARGS`` with a pseudo-terminal as its standard input, output and error."""
    leader, follower = pty.openpty()
    child = subprocess.Popen([sys.executable, *args], stdin=follower, stdout=follower,
                             stderr=follower, env=_environment(), close_fds=True)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert child.wait(timeout=600) == 0, b"".join(chunks).decode(errors="replace")[-3000:]
    return b"".join(chunks)


def test_a_terminal_shows_progress_and_then_the_answer_alone(tmp_path: Path) -> None:
    raw = _on_a_terminal([*AUDIT, "--out", str(tmp_path)])
    plain = ANSI.sub(b"", raw)
    assert any(w in plain for w in WORKING), plain[-2000:]
    last_progress = max(plain.rfind(w) for w in WORKING)
    answer = plain.find(b"Does the model behave as the paper says?")
    assert answer > last_progress  # the display was erased before the answer was printed
    # the answer's lines arrive whole: no progress text inside the scorecard or the table
    tail = plain[answer:].decode()
    assert "measuring" not in tail and "loading" not in tail
    assert re.search(r"^\s*word\.norm_ic\s+\d+\s+\d+\s+\d+", tail, flags=re.M), tail


def test_a_pipe_gets_one_plain_line_per_phase_and_quiet_none(tmp_path: Path) -> None:
    """Off a terminal (a pipe, a CI log) the audit says what it is doing as it goes: one plain
    line per phase on standard error, never a bar or an escape code, nothing on standard
    output but the answer; --quiet says nothing."""
    piped = subprocess.run([sys.executable, *AUDIT, "--out", str(tmp_path)], env=_environment(),
                           capture_output=True, timeout=600)
    assert piped.returncode == 0, piped.stderr
    lines = piped.stderr.decode().splitlines()
    assert lines and all(progress.PROGRESS_LINE.fullmatch(line) for line in lines), lines
    assert any("loading glove-6b-50d" in line for line in lines)
    assert any("measuring claims" in line for line in lines)
    assert progress.without_progress(piped.stderr.decode()) == ""
    assert not any(w in piped.stdout for w in WORKING) and b"\x1b[" not in piped.stdout + \
        piped.stderr
    quietly = subprocess.run([sys.executable, *AUDIT, "--out", str(tmp_path), "--quiet"],
                             env=_environment(), capture_output=True, timeout=600)
    assert quietly.returncode == 0 and quietly.stderr == b"", quietly.stderr
    quiet = ANSI.sub(b"", _on_a_terminal([*AUDIT, "--out", str(tmp_path), "--quiet"]))
    assert not any(w in quiet for w in WORKING), quiet[-2000:]
    assert b"Does the model behave as the paper says?" in quiet


def test_the_plain_display_prints_the_phases_two_deep(capsys: pytest.CaptureFixture[str]) -> None:
    with progress.showing("lines"):
        assert progress.active()
        with progress.task("outer"), progress.task("inner") as bar:
            bar.update(3)
            bar.describe("not printed")
            with progress.task("too deep"):
                pass
    err = capsys.readouterr().err.splitlines()
    assert [line.split("] ", 1)[1] for line in err] == ["outer", "  inner"]
    assert not progress.active()


def test_tasks_cost_nothing_without_a_display() -> None:
    assert not progress.active()
    with progress.task("anything", total=3) as bar:
        bar.update(2)
        bar.describe("still nothing")
    with progress.showing(False):
        assert not progress.active()


def test_a_display_counts_what_its_tasks_report(capsys: pytest.CaptureFixture[str]) -> None:
    with progress.showing(True):
        assert progress.active()
        with progress.task("words", total=10, unit="tokens") as bar:
            bar.update(4)
            (task,) = progress._DISPLAY.tasks
            assert (task.completed, task.total, task.fields["unit"]) == (4, 10, "tokens")
        assert not progress._DISPLAY.tasks  # a finished phase leaves the display
    assert not progress.active()
