"""The third hardening round (issue #42): what a gated report could not show, configuration
errors in pytest, matplotlib's cache, and the wording of explain, --format layers, --device and
the model-family article. Each case ends in a clear refusal or a correct run (exit 0, 1 or 2,
one line, no traceback); each test builds its case from scratch."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from normtest.audit.report import Report
from normtest.cli.common import EXIT_OK, EXIT_USAGE
from normtest.cli.main import main
from normtest.errors import NormtestError
from normtest.gate.config import GateConfig
from normtest.gate.run import evaluate

ROOT = Path(__file__).resolve().parents[1]
EXIT_GATE_FAILED = 1


# -- 4. the gate says what a report could not show ------------------------------------------------
@pytest.fixture(scope="module")
def unchecked(glove: Any) -> Report:
    """GloVe's word line, audited without controls (robustness assessed): replicated by its
    rows, its controls never ran."""
    from normtest.audit.run import run_audit
    from normtest.base.settings import AuditSettings

    report = run_audit(glove, ["word.norm_ic", "word.norm_kl"],
                       settings=AuditSettings(words=300, resamples=100, controls=False))
    line = next(line for line in report.scorecard if line.key == "word_level")
    assert line.status == "replicated" and not report.controls and report.robustness
    return report


def _valid_controls() -> Any:
    from normtest.scorecard.controls import Control, LineControls

    return LineControls("word_level", Control("positive", "replicated", power=0.95),
                        Control("negative", "contradicted"))


def test_a_line_required_replicated_whose_controls_did_not_run(unchecked: Report) -> None:
    failed = evaluate(unchecked, GateConfig(replicated=("word_level",)))
    assert not failed.passed and failed.decision.exit_code == EXIT_GATE_FAILED
    assert "word_level required replicated: its controls did not run (the audit ran with " \
           "--no-controls)" in failed.decision.line
    assert "--unverified warn" in failed.decision.line
    warned = evaluate(unchecked, GateConfig(replicated=("word_level",), unverified="warn"))
    assert warned.passed and warned.decision.exit_code == 0
    assert warned.decision.line.startswith("gate passed with 1 warning: word_level required "
                                           "replicated: its controls did not run")
    from normtest.render.gate import gate_markdown

    markdown = gate_markdown(warned)
    assert "**Warnings**" in markdown and "⚠️" in markdown and "passed unverified" in markdown
    # with its controls in the report, nothing is missing: it passes, without a warning
    checked = evaluate(replace(unchecked, controls=(_valid_controls(),)),
                       GateConfig(replicated=("word_level",)))
    assert checked.passed and not checked.decision.warnings and not checked.unshown


def test_a_line_required_robust_whose_robustness_was_not_assessed(unchecked: Report) -> None:
    bare = replace(unchecked, robustness=())
    failed = evaluate(bare, GateConfig(require_robust=("word_level",)))
    assert not failed.passed
    assert "word_level required robust: its robustness was not assessed (the audit ran with " \
           "--no-robustness)" in failed.decision.line
    warned = evaluate(bare, GateConfig(require_robust=("word_level",), unverified="warn"))
    assert warned.passed and "word_level required robust" in warned.decision.warnings[0]
    # assessed: the line's robustness decides, under either rule
    for rule in ("fail", "warn"):
        assessed = evaluate(unchecked, GateConfig(require_robust=("word_level",),
                                                  unverified=rule))
        assert not assessed.unshown
        robust = assessed.robust[0]
        assert assessed.passed == robust.ok and not assessed.decision.warnings


def test_a_failing_line_fails_whatever_the_rule(unchecked: Report) -> None:
    for rule in ("fail", "warn"):
        outcome = evaluate(unchecked, GateConfig(replicated=("cer_growth",), unverified=rule))
        assert not outcome.passed and "not replicated (cer_growth)" in outcome.decision.line
        robust = evaluate(unchecked, GateConfig(require_robust=("cer_growth",),
                                                unverified=rule))
        assert not robust.passed and not robust.decision.warnings  # not tested: nothing to show


def test_the_gate_command_and_its_configuration(unchecked: Report, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = unchecked.write(tmp_path / "report.json")
    base = ["gate", "--report", str(path), "--replicated", "word_level"]
    assert main(base) == EXIT_GATE_FAILED
    err = capsys.readouterr().err
    assert "normtest: gate FAILED: the report cannot show 1 requirement: word_level" in err
    assert main([*base, "--unverified", "warn"]) == EXIT_OK
    assert "normtest: gate passed with 1 warning" in capsys.readouterr().err
    config = tmp_path / "normtest.toml"
    config.write_text('unverified = "warn"\nreplicated = ["word_level"]\n', encoding="utf-8")
    assert main(["gate", "--config", str(config), "--report", str(path)]) == EXIT_OK
    capsys.readouterr()
    config.write_text('unverified = "sometimes"\n', encoding="utf-8")
    assert main(["gate", "--config", str(config), "--report", str(path), "--replicated",
                 "word_level"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert f"{config}: unverified = 'sometimes': give \"fail\"" in err and "Traceback" not in err


# -- 7. configuration errors in pytest: one UsageError at start-up --------------------------
@pytest.mark.slow
@pytest.mark.parametrize(("line", "message"), [
    ('words = "many"', "words = 'many': give a whole number"),
    ("device = 3", "device = 3: give a string"),
    ("wrods = 300", "unknown key(s) ['wrods']"),
])
def test_pytest_reports_a_bad_configuration_as_a_usage_error(tmp_path: Path, line: str,
                                                             message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.normtest]\n{line}\n", encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    run = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "normtest.checks",
                          "--normtest-model", "glove-6b-50d", "-p", "no:cacheprovider"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    output = run.stdout + run.stderr
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, output
    assert "Traceback" not in output and "collected" not in output, output
    errors = [x for x in run.stderr.splitlines() if x.startswith("ERROR:")]
    assert len(errors) == 1 and message in errors[0], output
    cli = subprocess.run([sys.executable, "-m", "normtest", "audit", "--model", "glove-6b-50d"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert cli.returncode == EXIT_USAGE
    said = cli.stderr.strip().removeprefix("normtest: error: ")
    assert errors[0] == f"ERROR: normtest: {said}"  # the same message as the command line's


# -- 8. matplotlib's font cache under normtest's cache root ---------------------------------------
#: Three layers' rows of one claim, for the scripts below (each runs in a fresh process).
LAYER_ROWS = """
from normtest.verdict.result import Criterion, Measurement, Result, Sampling
rows = [Result.judged(Measurement("spearman_rho", 0.4 + 0.1 * i, 300, "bootstrap",
                                  Sampling("normal", 0.4 + 0.1 * i, 0.02)),
                      Criterion("greater", threshold=0.3), claim="word.norm_ic",
                      variant={"representation": layer, "transform": "raw"})
        for i, layer in enumerate(["0", "1", "last"])]
"""
DRAW = """
import os, sys
from pathlib import Path
from normtest.render.layers import layer_profiles, save_layer_plot
""" + LAYER_ROWS + """
save_layer_plot(layer_profiles(rows, 2), 2, Path(sys.argv[1]))
print(os.environ["MPLCONFIGDIR"])
"""


@pytest.mark.slow
def test_a_layer_plot_writes_nothing_outside_normtests_folders(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("MPLCONFIGDIR", "NORMTEST_CACHE_DIR", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    run = subprocess.run([sys.executable, "-c", DRAW, str(tmp_path / "layers.png")], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "layers.png").stat().st_size > 0
    assert Path(run.stdout.strip()) == home / ".cache" / "normtest" / "matplotlib"
    assert not (home / ".cache" / "matplotlib").exists()
    written = [p.relative_to(home) for p in home.rglob("*") if p.is_file()]
    assert written and all(p.parts[:3] == (".cache", "normtest", "matplotlib") for p in written)
    # a folder the user chose is kept
    own = tmp_path / "mine"
    run = subprocess.run([sys.executable, "-c", DRAW, str(tmp_path / "again.png")],
                         env={**env, "MPLCONFIGDIR": str(own)}, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == str(own), run.stderr


def test_the_matplotlib_folder_follows_the_cache_root(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from normtest.base import paths

    monkeypatch.delenv("MPLCONFIGDIR", raising=False)
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delitem(sys.modules, "matplotlib", raising=False)
    paths.use_own_matplotlib_dir()
    assert os.environ["MPLCONFIGDIR"] == str(tmp_path / "cache" / "matplotlib")
    assert (tmp_path / "cache" / "matplotlib").is_dir()


# -- 9. wording -------------------------------------------------------------------------------
def test_explain_takes_the_ids_the_gate_takes(capsys: pytest.CaptureFixture[str]) -> None:
    from normtest.audit.selection import Selector

    for name in ("word.norm_ic[composition=sqrt_n]", "word.norm_ic[transform=center_zipf]",
                 "word"):
        Selector.parse(name)  # what gate --require accepts …
        assert main(["explain", name]) == EXIT_OK  # … explain accepts
    out = capsys.readouterr().out
    assert "word.norm_ic[composition=sqrt_n] — rows of word.norm_ic" in out
    assert "PASS for encoder, decoder at composition=sqrt_n, representation=last" in out
    assert "PASS for static" not in out.split("gate:")[0]  # no composition axis there
    assert "role:           exploratory: the paper states no verdict at this variant" in out
    assert "word — the word suite" in out and "word.norm_kl:" in out
    assert main(["explain", "word.norm_ic[composition=nope]"]) == EXIT_USAGE
    assert "composition must be one of" in capsys.readouterr().err


def test_format_layers_on_a_two_layer_profile_says_why(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str],
                                                       ) -> None:
    from normtest.verdict.result import Criterion, Measurement, Result, Sampling

    rows = [Result.judged(Measurement("spearman_rho", 0.5, 300, "bootstrap",
                                      Sampling("normal", 0.5, 0.02)),
                          Criterion("greater", threshold=0.3), claim="word.norm_ic",
                          variant={"representation": layer, "transform": "raw"})
            for layer in ("0", "last")]
    two = Report(rows, {"name": "m"}, {"layers": ["0", "last"], "n_layers": 6})
    path = two.write(tmp_path / "two.json")
    assert main(["report", str(path), "--format", "layers", "--out",
                 str(tmp_path / "x.png")]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "audited at 2 layers (0, last), and a profile follows a row across at least 3" in err
    assert "--layers 0,3,last" in err and "(or a list of layers) first" not in err
    last = Report(rows[1:], {"name": "m"}).write(tmp_path / "last.json")
    assert main(["report", str(last), "--format", "layers", "--out",
                 str(tmp_path / "x.png")]) == EXIT_USAGE
    assert "audited at the last layer only" in capsys.readouterr().err


def test_a_device_is_named_as_given() -> None:
    torch = pytest.importorskip("torch")
    from normtest.adapters.transformers_base import _torch_device

    if torch.cuda.is_available() and torch.cuda.device_count() > 7:
        pytest.skip("this machine has a cuda:7")
    with pytest.raises(NormtestError, match=r"device='cuda:7' was asked for but "):
        _torch_device("cuda:7")
    with pytest.raises(NormtestError, match="'cpu', 'cuda' or 'cuda:N', got 'tpu'"):
        _torch_device("tpu")


def test_device_auto_is_the_default_and_the_report_says_which_ran(tmp_path: Path) -> None:
    """``--device auto`` (the default) takes CUDA where it is available, else the CPU, and
    the report's model records the device the forward passes ran on."""
    torch = pytest.importorskip("torch")
    from normtest.adapters.transformers_base import _torch_device
    from normtest.base.settings import BY_NAME

    assert BY_NAME["device"].default == "auto"
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert str(_torch_device("auto")) == expected
    assert main(["audit", "--model", "minilm-l6", "--suite", "word", "--words", "200",
                 "--resamples", "100", "--no-robustness", "--no-controls", "-q",
                 "--out", str(tmp_path)]) in (0, 1)
    assert Report.read(tmp_path / "report.json").model["device"] == expected


@pytest.mark.slow
def test_a_sentence_model_names_its_device_too() -> None:
    torch = pytest.importorskip("torch")
    from normtest.models.registry import load

    if torch.cuda.is_available() and torch.cuda.device_count() > 7:
        pytest.skip("this machine has a cuda:7")
    with pytest.raises(NormtestError, match=r"device='cuda:7'"):
        load("minilm-l6", kind="sentence", device="cuda:7", cache=False)


def test_the_article_follows_the_word() -> None:
    from normtest.errors import with_article

    assert [with_article(w) for w in ("encoder", "decoder", "static", "int", "sentence")] == [
        "an encoder", "a decoder", "a static", "an int", "a sentence"]
    with pytest.raises(NormtestError, match="minilm-l6 is an encoder model"):
        from normtest.models.registry import load

        load("minilm-l6", kind="decoder", cache=False)
    # no message writes "a {…}" before a word it does not know
    pattern = re.compile(r"""is a \{|gave a \{type""")
    found = [f"{p.relative_to(ROOT)}:{i}" for p in (ROOT / "normtest").rglob("*.py")
             for i, text in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(text)]
    assert found == []


# -- 5. a report file given where an id is expected -----------------------------------------------
def test_explain_given_a_report_file_says_how_to_render_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``normtest explain FILE`` (here a schema-only report): one usage error naming the file
    and the command that renders a report, never a read of the file or a traceback."""
    path = tmp_path / "junk.json"
    path.write_text('{"schema": "normtest.report/1"}', encoding="utf-8")
    assert main(["explain", str(path)]) == EXIT_USAGE
    captured = capsys.readouterr()
    lines = [x for x in captured.err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("normtest: error: "), captured.err
    assert f"{str(path)!r} is a file; explain takes an id" in lines[0]
    assert "normtest report FILE renders a stored report" in lines[0]
    assert not captured.out.strip() and "Traceback" not in captured.err


# -- 6. an install into a cache it cannot write ---------------------------------------------------
def test_smollm2s_copy_into_a_cache_it_cannot_write_says_what_to_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``normtest models install smollm2-135m`` (the embedded model's float32 copy) with the
    cache under a plain file, which no user, root included, can write: exit 2 and one error
    naming the folder and NORMTEST_CACHE_DIR; nothing is read or built."""
    import normtest.adapters.embedded as embedded

    def no_build(**_: Any) -> Any:
        raise AssertionError("the GGUF was read although nothing can be written")

    monkeypatch.setattr(embedded, "load_smollm2_gguf", no_build)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n", encoding="utf-8")
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(blocker / "cache"))
    assert main(["models", "install", "smollm2-135m"]) == EXIT_USAGE
    err = capsys.readouterr().err
    errors = [x for x in err.splitlines() if x.startswith("normtest: error: ")]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert errors[0].startswith("normtest: error: cannot install smollm2-135m")
    assert str(blocker / "cache" / "models") in errors[0]
    assert "nothing was installed" in errors[0] and "NORMTEST_CACHE_DIR" in errors[0]
    assert not (blocker / "cache").exists()


# -- 8. an HTML page draws its plots without writing to $HOME/.cache/matplotlib ---------------
DRAW_HTML = """
import os, sys
from pathlib import Path
from normtest.audit.report import Report
from normtest.render.formats import render
""" + LAYER_ROWS + """
report = Report(rows, {"name": "m"}, {"layers": ["0", "1", "last"], "n_layers": 2})
Path(sys.argv[1]).write_text(render(report, "html"), encoding="utf-8")
print(os.environ["MPLCONFIGDIR"])
"""


@pytest.mark.slow
def test_an_html_page_writes_nothing_outside_normtests_folders(tmp_path: Path) -> None:
    """The HTML page of a three-layer audit in a fresh HOME: its layer profile is drawn with
    matplotlib (the page's other figures are SVG written directly), whose cache goes under
    normtest's cache root, nothing under $HOME/.cache/matplotlib (as for the layer plot above)."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("MPLCONFIGDIR", "NORMTEST_CACHE_DIR", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    page = tmp_path / "report.html"
    run = subprocess.run([sys.executable, "-c", DRAW_HTML, str(page)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "data:image/svg+xml;base64," in page.read_text(encoding="utf-8")  # plots drawn
    assert Path(run.stdout.strip()) == home / ".cache" / "normtest" / "matplotlib"
    assert not (home / ".cache" / "matplotlib").exists()
    written = [p.relative_to(home) for p in home.rglob("*") if p.is_file()]
    assert all(p.parts[:3] == (".cache", "normtest", "matplotlib") for p in written), written
