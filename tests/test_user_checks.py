"""A user's own claims load and run like the built-in ones (docs/claims.md).

The documented claim file is extracted from docs/claims.md exactly as written and run from a
folder outside the package, through the command line and through pytest, in subprocesses (a
loaded claim joins the catalogue of the process that loaded it). The loader's other sources —
folders, module names, the configuration file, the entry-point group — and its errors run
in-process against a catalogue that is restored after each test.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from normtest import catalogue
from normtest.audit import run_audit
from normtest.errors import NormtestError
from normtest.result import Verdict
from normtest.settings import AuditSettings

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTED_ID = "lab.norm_ic.kendall"
MEASURED = {"PASS", "FAIL", "INCONCLUSIVE"}
FAST = AuditSettings(words=300, resamples=200)


def documented_claim_file() -> str:
    """The one ```python block of the "Adding your own claim" section, as written."""
    text = (ROOT / "docs" / "claims.md").read_text(encoding="utf-8")
    section = text[text.index("## Adding your own claim"):]
    section = section[:section.find("\n## ", 1)] if "\n## " in section[1:] else section
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "the section must hold exactly one complete claim file"
    return blocks[0]


@pytest.fixture
def claim_file(tmp_path: Path) -> Path:
    path = tmp_path / "lab_claims.py"
    path.write_text(documented_claim_file(), encoding="utf-8")
    return path


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=600)


def test_the_documented_claim_is_measured_from_the_command_line(
    claim_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    done = _run(["-m", "normtest", "audit", "--model", "glove-6b-50d", "--checks",
                 str(claim_file), "--claims", DOCUMENTED_ID, "--words", "400",
                 "--resamples", "200", "--out", str(out), "--format", "json"], cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    rows = [r for r in report["results"] if r["claim"] == DOCUMENTED_ID]
    assert {r["variant"]["transform"] for r in rows} == {"raw", "whiten_zipf"}
    assert all(r["verdict"] in MEASURED for r in rows), rows
    assert all(r["measurement"]["statistic"] == "kendall_tau" for r in rows)
    assert DOCUMENTED_ID in done.stdout


def test_the_documented_claim_is_measured_from_pytest(claim_file: Path, tmp_path: Path) -> None:
    common = ["--normtest-model", "glove-6b-50d", "--normtest-checks", str(claim_file),
              "--normtest-claims", DOCUMENTED_ID, "--normtest-words", "400",
              "--normtest-resamples", "200", "-p", "no:cacheprovider", "-rA"]
    done = _run(["-m", "pytest", "--pyargs", "normtest.checks", *common], cwd=tmp_path)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    items = re.findall(r"^(PASSED|FAILED) (\S+)", done.stdout, flags=re.M)
    # by default the claim's confirmatory row (its expectation: static, whitened) …
    assert [node.split("::")[-1] for _, node in items] == \
        [f"{DOCUMENTED_ID}[transform=whiten_zipf]"], done.stdout
    # … and with --normtest-exploratory both rows
    done = _run(["-m", "pytest", "--pyargs", "normtest.checks", *common,
                 "--normtest-exploratory"], cwd=tmp_path)
    items = re.findall(r"^(PASSED|FAILED) (\S+)", done.stdout, flags=re.M)
    assert len(items) == 2 and all(DOCUMENTED_ID in node for _, node in items), done.stdout
    assert "2 claim checks ran" in done.stdout
    # collected under the file that declares the claim when pytest is pointed at it
    done = _run(["-m", "pytest", str(claim_file), *common], cwd=tmp_path)
    nodes = re.findall(r"^(?:PASSED|FAILED) (\S+)", done.stdout, flags=re.M)
    assert nodes and all(n.startswith("lab_claims.py::") for n in nodes), done.stdout


# -- in-process loading ----------------------------------------------------------------------------
@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The catalogue as it was, restored after the test (loaded user claims forgotten)."""
    catalogue.claims()  # the built-in catalogue, loaded before the snapshot
    monkeypatch.setattr(catalogue, "_REGISTRY", dict(catalogue._REGISTRY))
    monkeypatch.setattr(catalogue, "_LOADED_CHECKS", {})
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith(("normtest_user_checks", "lab_pkg")):
            del sys.modules[name]


CUSTOM = '''
from normtest.catalogue import Claim, measures
from normtest.result import Criterion
from normtest.stats import measure_mean


@measures(Claim(id="{id}", statement="s", source="test", suite="word",
                quantities=("squared_norm",), unit="", sample="the word sample",
                statistic="mean", criterion=Criterion.minimum_effect(0.0)), data="words")
def measure(words, variant, settings):
    {body}
'''


def _claim(folder: Path, name: str, claim_id: str, body: str = "return None") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(CUSTOM.format(id=claim_id, body=body), encoding="utf-8")
    return path


def test_a_folder_loads_every_claim_file(tmp_path: Path, isolated: None) -> None:
    _claim(tmp_path / "mine", "a", "mine.a")
    _claim(tmp_path / "mine", "b", "mine.b")
    _claim(tmp_path / "mine", "_private", "mine.private")
    assert catalogue.load_checks(tmp_path / "mine") == ["mine.a", "mine.b"]
    assert catalogue.get("mine.a").origin == str((tmp_path / "mine" / "a.py").resolve())
    assert catalogue.load_checks(tmp_path / "mine") == ["mine.a", "mine.b"]  # loaded once


def test_an_importable_module_loads(tmp_path: Path, isolated: None,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "lab_pkg").mkdir()
    (tmp_path / "lab_pkg" / "__init__.py").write_text("", encoding="utf-8")
    _claim(tmp_path / "lab_pkg", "claims", "lab.module")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert catalogue.load_checks("lab_pkg.claims") == ["lab.module"]


def test_the_entry_point_group_loads_installed_claims(
    tmp_path: Path, isolated: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lab_pkg").mkdir()
    (tmp_path / "lab_pkg" / "__init__.py").write_text("", encoding="utf-8")
    _claim(tmp_path / "lab_pkg", "installed", "lab.installed")
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = importlib.metadata.EntryPoint("lab", "lab_pkg.installed", catalogue.ENTRY_POINT_GROUP)
    real = importlib.metadata.entry_points

    def entry_points(**selection: str) -> object:
        if selection.get("group") == catalogue.ENTRY_POINT_GROUP:
            return importlib.metadata.EntryPoints([entry])
        return real(**selection)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    monkeypatch.setattr(catalogue, "_LOADED", False)
    assert "lab.installed" in {c.id for c in catalogue.claims()}


@pytest.mark.parametrize(("spec", "needle"), [
    ("missing_claims.py", "no such file"),
    ("no_such_module_xyz", "not a file, a folder or an importable module"),
])
def test_a_source_that_does_not_exist_is_a_clear_error(
    spec: str, needle: str, tmp_path: Path, isolated: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NormtestError, match=needle):
        catalogue.load_checks(spec)


def test_a_file_that_fails_to_import_names_the_file(tmp_path: Path, isolated: None) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import numpy\nraise RuntimeError('half written')\n", encoding="utf-8")
    with pytest.raises(NormtestError, match=r"broken\.py: importing it failed: RuntimeError"):
        catalogue.load_checks(broken)
    assert catalogue.load_checks(_claim(tmp_path, "fine", "mine.fine")) == ["mine.fine"]


def test_a_second_claim_with_a_built_in_id_is_refused(tmp_path: Path, isolated: None) -> None:
    with pytest.raises(NormtestError, match=r"'word\.norm_ic' is declared twice"):
        catalogue.load_checks(_claim(tmp_path, "clash", "word.norm_ic"))


def test_the_configuration_file_names_claim_files_relative_to_itself(
    tmp_path: Path, isolated: None
) -> None:
    from normtest.config import load_config
    from normtest.settings import load_checks_of

    _claim(tmp_path / "project" / "claims", "ours", "ours.configured")
    config = tmp_path / "project" / "normtest.toml"
    config.write_text('checks = ["claims/ours.py"]\n', encoding="utf-8")
    settings = load_config(config).settings
    assert settings["checks"] == (str(tmp_path / "project" / "claims" / "ours.py"),)
    load_checks_of(settings)
    assert catalogue.get("ours.configured").origin is not None


def test_a_user_measurement_that_raises_is_an_error_row(
    tmp_path: Path, isolated: None, glove: object
) -> None:
    catalogue.load_checks(_claim(tmp_path, "buggy", "mine.buggy", "return {}['missing']"))
    catalogue.load_checks(_claim(tmp_path, "wrong", "mine.wrong", "return 0.5"))
    catalogue.load_checks(_claim(tmp_path, "good", "mine.good",
                                 "return measure_mean(words.information, n_resamples=200)"))
    report = run_audit(glove, ["mine.buggy", "mine.wrong", "mine.good"], settings=FAST)
    rows = {r.claim: r for r in report.results}
    assert rows["mine.buggy"].verdict is Verdict.ERROR
    assert "raised KeyError" in rows["mine.buggy"].reason
    assert str(tmp_path / "buggy.py") in rows["mine.buggy"].reason
    assert rows["mine.wrong"].verdict is Verdict.ERROR
    assert "returned float, not a normtest.result.Measurement" in rows["mine.wrong"].reason
    assert rows["mine.good"].verdict is Verdict.PASS  # the mean IC of words is above 0


def test_a_claim_declared_without_a_measurement_is_skipped_with_the_way_out(
    isolated: None, glove: object
) -> None:
    from normtest.catalogue import Claim, register
    from normtest.result import Criterion

    register(Claim(id="mine.bare", statement="s", source="test", suite="word",
                   quantities=("squared_norm",), unit="", sample="words", statistic="mean",
                   criterion=Criterion.minimum_effect(0.0)))
    report = run_audit(glove, ["mine.bare", "word.norm_ic"], settings=FAST)
    bare = next(r for r in report.results if r.claim == "mine.bare")
    assert bare.verdict is Verdict.SKIPPED
    assert "catalogue.measures" in bare.reason
