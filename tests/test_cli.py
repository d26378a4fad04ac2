"""The command line: a real demonstration run, exit codes and the written report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from normtest.audit.report import Report
from normtest.cli.common import EXIT_OK, EXIT_USAGE
from normtest.cli.main import main


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


@pytest.mark.slow
def test_module_entry_point_runs() -> None:
    done = subprocess.run([sys.executable, "-m", "normtest", "--help"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0 and "demo" in done.stdout


MODEL_MODULE = '''
import numpy as np
from wordfreq import top_n_list

from normtest.adapters.static import StaticVectors
from normtest.models.registry import load_model


class FirstWords(StaticVectors):
    """GloVe's vectors of the 50,000 most frequent English words, as a user's own class."""

    def __init__(self):
        glove = load_model("glove-6b-50d", cache=False)
        words = top_n_list("en", 50000)
        words = [w for w, known in zip(words, glove.represents(words)) if known]
        super().__init__("first-words", words, np.asarray(glove.word_vectors(words)), "test")


def factory():
    return FirstWords()


instance = FirstWords()
'''


@pytest.mark.slow
@pytest.mark.parametrize("attribute", ["FirstWords", "factory", "instance"])
def test_a_model_given_as_module_attribute_is_audited(
    attribute: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "my_models.py").write_text(MODEL_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / f"report-{attribute}"
    code = main(["audit", "--model", f"my_models:{attribute}", "--claims", "word.norm_ic",
                 "--words", "300", "--resamples", "200", "--out", str(out), "--format", "json"])
    assert code == EXIT_OK, capsys.readouterr().err
    report = Report.read(out / "report.json")
    assert report.model["name"] == "first-words"
    assert {r.verdict.value for r in report.results} <= {"PASS", "FAIL", "INCONCLUSIVE"}


@pytest.mark.slow
def test_the_gate_takes_a_module_attribute_model_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "my_models.py").write_text(MODEL_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    code = main(["gate", "--model", "my_models:FirstWords", "--require",
                 "word.norm_ic[transform=whiten_zipf]", "--words", "300", "--resamples", "200"])
    out = capsys.readouterr().out
    assert code == EXIT_OK, out
    assert "first-words" in out


@pytest.mark.parametrize(("spec", "needle"), [
    ("no_such_module_q:thing", "cannot import 'no_such_module_q'"),
    ("my_models:missing", "has no attribute 'missing'"),
    ("my_models:np", "gave a module, not a model adapter"),
])
def test_a_module_attribute_that_is_not_an_adapter_is_a_clear_error(
    spec: str, needle: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "my_models.py").write_text(MODEL_MODULE.replace("instance = FirstWords()", ""),
                                           encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["audit", "--model", spec, "--claims", "word.norm_ic"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from normtest import __version__

    assert main(["--version"]) == EXIT_OK
    assert capsys.readouterr().out.strip() == f"normtest {__version__}"


@pytest.mark.slow
def test_an_audit_without_out_writes_one_folder_per_model_and_revision(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from normtest.base.paths import RESULTS_ENV, default_results_dir

    monkeypatch.setenv(RESULTS_ENV, str(tmp_path))
    args = ["audit", "--model", "glove-6b-50d", "--claims", "word.norm_ic", "--words", "200",
            "--resamples", "200", "--format", "json", "md"]
    assert main(args) == 0
    (folder,) = [p.parent for p in tmp_path.rglob("report.json")]
    model = Report.read(folder / "report.json").model
    assert folder == default_results_dir(model["name"], model["revision"])
    assert folder.relative_to(tmp_path).parts[0] == "glove-6b-50d"
    assert ";" not in folder.name and ":" not in folder.name  # one plain folder name
    assert sorted(p.name for p in folder.iterdir()) == ["report.json", "report.md"]
    assert capsys.readouterr().out.rstrip().endswith(
        f"reports written to {folder}/: report.json, report.md")


def test_an_audit_gated_without_a_configuration_says_so_before_any_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``audit --gate`` reads the gate configuration once, before the model is loaded: with
    none and no --baseline, the answer is the missing configuration, not a loaded model."""
    monkeypatch.chdir(tmp_path)
    code = main(["audit", "--model", "no-such-model-anywhere", "--gate", "--quiet"])
    assert code == EXIT_USAGE
    err = capsys.readouterr().err
    assert "no gate configuration" in err and "no-such-model-anywhere" not in err
