"""The command line: a real demonstration run, exit codes and the written report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from normtest.cli import EXIT_OK, EXIT_USAGE, main
from normtest.report import Report


def test_demo_prints_verdicts_and_writes_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--out", str(tmp_path), "--words", "600"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "demo.norm_ic[model=faithful]" in out and "verdict" in out
    report = Report.read(tmp_path / "report.json")
    assert "demo.norm_ic" in (tmp_path / "report.md").read_text(encoding="utf-8")
    assert (tmp_path / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    # each synthetic model was built to satisfy or violate its claim: the engine must agree
    for r in report.results:
        assert r.expected is not None
        assert r.verdict is r.expected, f"{r.id}: {r.verdict} ({r.reason})"


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nonsense"]) == EXIT_USAGE
    assert main(["demo", "--words", "0"]) == EXIT_USAGE
    assert "--words: must be at least 10" in capsys.readouterr().err


def test_module_entry_point_runs() -> None:
    done = subprocess.run([sys.executable, "-m", "normtest", "--help"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0 and "demo" in done.stdout
