"""The one-call Python API: ``normtest.audit(model, **settings)`` returns the report the command
line writes, the snippet of docs/guide.md runs as shown, and ``dir(normtest)`` shows only the
public names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import normtest
from normtest.audit.report import Report

ROOT = Path(__file__).resolve().parent.parent


def test_dir_shows_only_the_public_names() -> None:
    assert dir(normtest) == ["NormtestError", "__version__", "audit", "compare", "load", "plan"]
    from normtest.audit import run

    assert run.run_audit is not None  # importing the package's modules keeps it callable
    assert callable(normtest.audit)


def test_an_unknown_setting_names_the_nearest_before_any_work() -> None:
    with pytest.raises(normtest.NormtestError, match="no setting 'word'; did you mean 'words'"):
        normtest.audit("no-such-model", word=100)
    with pytest.raises(normtest.NormtestError, match="did you mean 'word_level'"):
        normtest.audit("no-such-model", claims=["word_leve"])
    with pytest.raises(normtest.NormtestError, match=r"normtest\.compare has no setting 'seeds'"):
        normtest.compare(["a", "b"], seeds=1)
    with pytest.raises(normtest.NormtestError, match=r"normtest\.plan has no setting"):
        normtest.plan("a", wrods=1)


@pytest.mark.slow
def test_plan_runs_a_pilot_and_says_what_each_row_needs() -> None:
    planned = normtest.plan("glove-6b-50d", suite="word")
    assert planned.rows and planned.settings.words == 600  # the pilot's size, as the command's
    assert all(r.confirmatory for r, _ in planned.rows)


@pytest.mark.slow
def test_the_guides_snippet_runs_and_matches_the_command_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python block of docs/guide.md marked as tested, run as written (in a temporary
    folder); its report is the one the command line writes for the same settings."""
    text = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    snippet = re.search(r"<!-- tested: tests/test_api.py -->\n```python\n(.*?)```", text,
                        re.DOTALL)
    assert snippet is not None
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {}
    exec(compile(snippet.group(1), "docs/guide.md", "exec"), scope)
    report = scope["report"]
    assert isinstance(report, Report)
    stored = Report.read(tmp_path / "reports" / "glove" / "report.json")
    from normtest.cli.main import main

    assert main(["audit", "--model", "glove-6b-50d", "--suite", "word", "--words", "1000",
                 "--out", str(tmp_path / "cli"), "--format", "json", "--quiet"]) == 0
    cli = Report.read(tmp_path / "cli" / "report.json")
    assert [(r.id, r.estimate, r.verdict) for r in stored.results] == \
        [(r.id, r.estimate, r.verdict) for r in cli.results]
