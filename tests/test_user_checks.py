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
import math
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from normtest.audit.run import run_audit
from normtest.base.settings import AuditSettings
from normtest.claims import catalogue, loading
from normtest.claims import same_measure as measure_identity
from normtest.errors import NormtestError
from normtest.verdict.result import Verdict

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


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_documented_claim_is_measured_from_pytest(claim_file: Path, tmp_path: Path) -> None:
    common = ["--normtest-model", "glove-6b-50d", "--normtest-checks", str(claim_file),
              "--normtest-claims", DOCUMENTED_ID, "--normtest-words", "400",
              "--normtest-resamples", "200", "-p", "no:cacheprovider", "-rA"]
    done = _run(["-m", "pytest", "--pyargs", "normtest.checks", *common], cwd=tmp_path)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    items = re.findall(r"^(PASSED|FAILED) (\S+)", done.stdout, flags=re.M)
    # by default the claim's confirmatory row (its expectation: static, whitened) …
    assert [node.split("::")[-1] for _, node in items] == \
        [f"{DOCUMENTED_ID}[whiten_zipf]"], done.stdout
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
    monkeypatch.setattr(loading, "_LOADED_CHECKS", {})
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith(("normtest_user_checks", "lab_pkg")):
            del sys.modules[name]


CUSTOM = '''
from normtest.claims import Claim, Criterion, measure_mean, measures


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
    assert loading.load_checks(tmp_path / "mine") == ["mine.a", "mine.b"]
    assert catalogue.get("mine.a").origin == str((tmp_path / "mine" / "a.py").resolve())
    assert loading.load_checks(tmp_path / "mine") == ["mine.a", "mine.b"]  # loaded once


def test_an_importable_module_loads(tmp_path: Path, isolated: None,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "lab_pkg").mkdir()
    (tmp_path / "lab_pkg" / "__init__.py").write_text("", encoding="utf-8")
    _claim(tmp_path / "lab_pkg", "claims", "lab.module")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert loading.load_checks("lab_pkg.claims") == ["lab.module"]


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
            return importlib.metadata.EntryPoints([entry, *real(**selection)])
        return real(**selection)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    monkeypatch.setattr(catalogue, "_LOADED", False)
    ids = {c.id for c in catalogue.claims()}
    assert "lab.installed" in ids and "word.norm_ic" in ids


def test_the_built_in_claims_are_normtests_own_entry_point(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """The catalogue names no module of ``normtest.checks``: the built-ins register through the
    entry point normtest declares, and metadata that lacks it is a clear error, not an empty
    catalogue."""
    mine = [e for e in importlib.metadata.entry_points(group=catalogue.ENTRY_POINT_GROUP)
            if e.dist is not None and e.dist.name == "normtest"]
    assert [(e.name, e.value) for e in mine] == [("normtest", "normtest.checks")]
    real = importlib.metadata.entry_points

    def stale(**selection: str) -> object:
        if selection.get("group") == catalogue.ENTRY_POINT_GROUP:
            return importlib.metadata.EntryPoints([])
        return real(**selection)

    monkeypatch.setattr(importlib.metadata, "entry_points", stale)
    monkeypatch.setattr(catalogue, "_LOADED", False)
    with pytest.raises(NormtestError, match=r"lacks its 'normtest\.checks' entry point.*install "
                                            r"it again"):
        catalogue.load_builtin()


@pytest.mark.parametrize(("spec", "needle"), [
    ("missing_claims.py", "no such file"),
    ("no_such_module_xyz", "not a file, a folder or an importable module"),
])
def test_a_source_that_does_not_exist_is_a_clear_error(
    spec: str, needle: str, tmp_path: Path, isolated: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NormtestError, match=needle):
        loading.load_checks(spec)


def test_a_file_that_fails_to_import_names_the_file(tmp_path: Path, isolated: None) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import numpy\nraise RuntimeError('half written')\n", encoding="utf-8")
    with pytest.raises(NormtestError, match=r"broken\.py: importing it failed: RuntimeError"):
        loading.load_checks(broken)
    assert loading.load_checks(_claim(tmp_path, "fine", "mine.fine")) == ["mine.fine"]


def test_a_second_claim_with_a_built_in_id_is_refused(tmp_path: Path, isolated: None) -> None:
    with pytest.raises(NormtestError, match=r"'word\.norm_ic' is declared twice"):
        loading.load_checks(_claim(tmp_path, "clash", "word.norm_ic"))


def test_the_configuration_file_names_claim_files_relative_to_itself(
    tmp_path: Path, isolated: None
) -> None:
    from normtest.claims.loading import load_checks_of
    from normtest.gate.config import load_config

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
    loading.load_checks(_claim(tmp_path, "buggy", "mine.buggy", "return {}['missing']"))
    loading.load_checks(_claim(tmp_path, "wrong", "mine.wrong", "return 0.5"))
    loading.load_checks(_claim(tmp_path, "good", "mine.good",
                                 "return measure_mean(words.information, n_resamples=200)"))
    report = run_audit(glove, ["mine.buggy", "mine.wrong", "mine.good"], settings=FAST)
    rows = {r.claim: r for r in report.results}
    assert rows["mine.buggy"].verdict is Verdict.ERROR
    assert "raised KeyError" in rows["mine.buggy"].reason
    assert str(tmp_path / "buggy.py") in rows["mine.buggy"].reason
    assert rows["mine.wrong"].verdict is Verdict.ERROR
    assert "returned float, not a normtest.claims.Measurement" in rows["mine.wrong"].reason
    assert rows["mine.good"].verdict is Verdict.PASS  # the mean IC of words is above 0


@pytest.mark.slow
def test_a_claim_declared_without_a_measurement_is_skipped_with_the_way_out(
    isolated: None, glove: object
) -> None:
    from normtest.claims.catalogue import Claim, register
    from normtest.verdict.result import Criterion

    register(Claim(id="mine.bare", statement="s", source="test", suite="word",
                   quantities=("squared_norm",), unit="", sample="words", statistic="mean",
                   criterion=Criterion.minimum_effect(0.0)))
    report = run_audit(glove, ["mine.bare", "word.norm_ic"], settings=FAST)
    bare = next(r for r in report.results if r.claim == "mine.bare")
    assert bare.verdict is Verdict.SKIPPED
    assert "catalogue.measures" in bare.reason


# -- one id, one declaration and one measurement -------------------------------------------------
def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``normtest ARGS`` in this process: its exit code and standard error."""
    from normtest.cli.main import main

    code = main(args)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return code, err


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("normtest: error: ")]
    assert len(lines) == 1, err
    return lines[0]


def _audit_words(*extra: str, out: Path) -> list[str]:
    return ["audit", "--model", "glove-6b-50d", "--words", "300", "--resamples", "100", "-q",
            "--no-robustness", "--no-controls", "--out", str(out), *extra]


@pytest.mark.parametrize("order", ["first-then-second", "second-then-first"])
def test_one_id_with_two_measurements_is_refused_naming_both_files(
    order: str, tmp_path: Path, isolated: None, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _claim(tmp_path / "a", "lab", "lab.twice",
                   "return measure_mean(words.information, n_resamples=100)")
    second = _claim(tmp_path / "b", "lab", "lab.twice",
                    "return measure_mean(words.token_counts(), n_resamples=100)")
    files = [first, second] if order == "first-then-second" else [second, first]
    code, err = _cli(_audit_words("--checks", str(files[0]), "--checks", str(files[1]),
                                  "--claims", "lab.twice", out=tmp_path / "out"), capsys)
    line = _one_error_line(err)
    assert code == 2
    assert "'lab.twice' is declared twice, with different measurements" in line
    assert str(first.resolve()) in line and str(second.resolve()) in line
    assert not (tmp_path / "out" / "report.json").exists()


def test_one_file_declaring_an_id_twice_with_two_functions_is_refused(
    tmp_path: Path, isolated: None
) -> None:
    text = CUSTOM.format(id="lab.dup", body="return None")
    path = tmp_path / "twice.py"
    path.write_text(text + text.split("\n\n\n", 1)[-1].replace("return None", "return 1"),
                    encoding="utf-8")
    with pytest.raises(NormtestError, match=r"twice\.py, line \d+, and measure in .*twice\.py"):
        loading.load_checks(path)


def test_one_id_with_two_declarations_names_both_places(tmp_path: Path, isolated: None) -> None:
    loading.load_checks(_claim(tmp_path / "a", "lab", "lab.declared"))
    other = tmp_path / "b" / "lab.py"
    other.parent.mkdir()
    other.write_text(CUSTOM.format(id="lab.declared", body="return None")
                     .replace('statement="s"', 'statement="another"'), encoding="utf-8")
    with pytest.raises(NormtestError, match=r"declared twice, with different declarations: "
                                            r"first in .*a/lab\.py, again in .*b/lab\.py"):
        loading.load_checks(other)


def _import_as(name: str, path: Path) -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_the_same_file_imported_again_is_the_same_claim(
    tmp_path: Path, isolated: None, monkeypatch: pytest.MonkeyPatch, glove: object
) -> None:
    """Re-importing a claim file (another module name, importlib again, the package and the path)
    registers new function objects of the same definition: accepted, the first one kept."""
    (tmp_path / "lab_pkg").mkdir()
    (tmp_path / "lab_pkg" / "__init__.py").write_text("", encoding="utf-8")
    path = _claim(tmp_path / "lab_pkg", "claims", "lab.again",
                  "return measure_mean(words.information, n_resamples=100)")
    assert loading.load_checks(path) == ["lab.again"]
    kept = catalogue.get("lab.again")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert loading.load_checks("lab_pkg.claims") == []  # already declared, the same claim
    _import_as("lab_pkg_copy_one", path)
    _import_as("lab_pkg_copy_two", path)
    assert catalogue.get("lab.again") is kept
    assert sys.modules["lab_pkg_copy_one"].measure is not kept.measure
    report = run_audit(glove, ["lab.again"], settings=FAST)
    assert [r.verdict for r in report.results] == [Verdict.PASS]


def test_a_claim_file_pytest_imports_with_rewritten_asserts_is_the_same_claim(
    tmp_path: Path, isolated: None, pytestconfig: pytest.Config
) -> None:
    """pytest imports a claim file named like a test module itself, rewriting its asserts: other
    bytecode from the same source, still the same measurement."""
    import ast
    import types

    from _pytest.assertion.rewrite import AssertionRewritingHook, rewrite_asserts

    path = _claim(tmp_path, "test_lab_claims", "lab.asserted",
                  "assert len(words.information) > 1, 'too few'\n    return None")
    loading.load_checks(path)
    source = path.read_bytes()
    tree = ast.parse(source)
    rewrite_asserts(tree, source, str(path), pytestconfig)
    module = types.ModuleType("test_lab_claims")
    module.__file__ = str(path)
    module.__loader__ = AssertionRewritingHook(pytestconfig)
    exec(compile(tree, str(path), "exec"), module.__dict__)  # as pytest imports it
    rewritten = module.measure
    known = catalogue.get("lab.asserted").measure
    code_key = measure_identity._code_key
    assert code_key(rewritten.__code__) != code_key(known.__code__)
    assert catalogue.same_measure(known, rewritten)


def test_a_factory_closed_over_other_values_is_another_measurement(
    tmp_path: Path, isolated: None
) -> None:
    factory = tmp_path / "factory.py"
    factory.write_text(
        "import numpy as np\n"
        "from normtest.claims import Claim, Criterion, register\n"
        "from normtest.stats.equivalence import measure_mean\n\n"
        "def make(weights):\n"
        "    def measure(words, variant, settings):\n"
        "        return measure_mean(words.information * weights[0], n_resamples=100)\n"
        "    return measure\n\n"
        "CLAIM = Claim(id='lab.factory', statement='s', source='t', suite='word',\n"
        "              quantities=('squared_norm',), unit='', sample='w', statistic='mean',\n"
        "              criterion=Criterion.minimum_effect(0.0))\n"
        "register(CLAIM, measure=make(np.array([1.0, 2.0])), data='words')\n"
        "register(CLAIM, measure=make(np.array([1.0, 2.0])), data='words')  # equal values\n",
        encoding="utf-8")
    loading.load_checks(factory)  # the same factory over equal arrays: the same measurement
    module = next(m for n, m in sys.modules.items() if n.startswith("normtest_user_checks.fac"))
    with pytest.raises(NormtestError, match="different measurements"):
        catalogue.register(module.CLAIM, measure=module.make(np.array([3.0])), data="words")


def test_a_comparative_claim_id_is_unique_too(isolated: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from normtest.claims import comparative
    from normtest.claims.comparative import comparatives, compares

    monkeypatch.setattr(comparative, "_REGISTRY", dict(comparative._REGISTRY))
    known = comparatives()[0]
    assert compares(replace(known, measure=None))(known.measure) is known.measure  # again: free

    def another(pair: object, variant: object, settings: object) -> None:
        return None

    with pytest.raises(NormtestError, match="declared twice"):
        compares(replace(known, measure=None))(another)


# -- what a user's measurement returns is checked before it is judged -----------------------------
PARTS = ("import dataclasses, math\n"
         "import numpy as np\n"
         "from normtest.claims import Measurement\n"
         "from normtest.claims import Sampling\n")


def _bent(body: str) -> str:
    """A measurement body: the honest mean, then ``body`` bends it into ``m``."""
    return ("m = measure_mean(words.information, n_resamples=200)\n    "
            + body.replace("\n", "\n    ") + "\n    return m")


BROKEN = [
    ("nan_estimate", "m = dataclasses.replace(m, estimate=math.nan)",
     "its mean estimate is nan but it carries a sampling distribution"),
    ("inf_estimate", "m = dataclasses.replace(m, estimate=-math.inf)",
     "its mean estimate is -inf but it carries a sampling distribution"),
    ("outside", "m = dataclasses.replace(m, estimate=99.0, sampling=Sampling('normal', "
                "center=0.5, scale=0.01))", "estimate 99 lies outside its own 90% interval"),
    ("inverted", "s = Sampling('normal', center=m.estimate, scale=0.1)\n"
                 "object.__setattr__(s, 'scale', -0.1)\n"
                 "m = dataclasses.replace(m, sampling=s)", "is inverted"),
    ("infinite_interval", "m = dataclasses.replace(m, sampling=Sampling('normal', "
                          "center=m.estimate, scale=1.7e308))", "is not finite"),
    ("nan_center", "s = Sampling('normal', center=m.estimate, scale=0.1)\n"
                   "object.__setattr__(s, 'center', math.nan)\n"
                   "m = dataclasses.replace(m, sampling=s)", "has center nan"),
    ("nan_bias", "m = dataclasses.replace(m, sampling=dataclasses.replace(m.sampling, "
                 "bias=math.nan))", "has a bias of nan"),
    ("tuple_sampling", "m = dataclasses.replace(m, sampling=(0.1, 0.3))",
     "sampling is tuple, not a normtest.verdict.sampling.Sampling"),
    ("text_estimate", "m = dataclasses.replace(m, estimate='0.8')",
     "estimate is str '0.8', not a number"),
    ("negative_n", "m = dataclasses.replace(m, n=-3)", "n is -3, not a whole number"),
    ("confidence", "m = dataclasses.replace(m, confidence=1.5)",
     "confidence is 1.5, not a number in (0, 1)"),
    ("bad_component", "m = dataclasses.replace(m, components={'part': 0.3})",
     "component 'part' is float, not a normtest.claims.Measurement"),
    ("nan_component", "m = dataclasses.replace(m, components={'part': dataclasses.replace("
                      "m, estimate=math.nan)})", "its component 'part': mean estimate is nan"),
]


@pytest.mark.parametrize(("name", "body", "needle"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_measurement_is_an_error_row_never_pass_or_fail(
    name: str, body: str, needle: str, tmp_path: Path, isolated: None, glove: object
) -> None:
    path = _claim(tmp_path, name, f"lab.{name}", _bent(body))
    path.write_text(PARTS + path.read_text(encoding="utf-8"), encoding="utf-8")
    loading.load_checks(path)
    loading.load_checks(_claim(tmp_path, "honest", "lab.honest", _bent("pass")))
    report = run_audit(glove, [f"lab.{name}", "lab.honest"], settings=FAST)
    rows = {r.claim: r for r in report.results}
    broken = rows[f"lab.{name}"]
    assert broken.verdict is Verdict.ERROR, broken.reason
    assert broken.reason.startswith(f"the measurement of lab.{name} ({path.resolve()}) "
                                    "returned an invalid Measurement: ")
    assert needle in broken.reason
    assert broken.measurement is None
    assert rows["lab.honest"].verdict is Verdict.PASS  # the same measurement, unbent


@pytest.mark.slow
def test_a_criterion_judging_a_component_the_measurement_lacks_is_an_error_row(
    tmp_path: Path, isolated: None, glove: object
) -> None:
    path = _claim(tmp_path, "parts", "lab.parts", _bent("pass"))
    path.write_text(path.read_text(encoding="utf-8").replace(
        "criterion=Criterion.minimum_effect(0.0)",
        "criterion=Criterion('greater', threshold=0.0, components={'slope': "
        "Criterion.minimum_effect(0.0)})"), encoding="utf-8")
    loading.load_checks(path)
    report = run_audit(glove, ["lab.parts", "word.norm_ic"], settings=FAST)
    (row,) = [r for r in report.results if r.claim == "lab.parts"]
    assert row.verdict is Verdict.ERROR
    assert "its criterion judges the component(s) ['slope'], but the measurement has none" \
        in row.reason


def test_a_measurement_that_could_not_be_made_stays_inconclusive(
    tmp_path: Path, isolated: None, glove: object
) -> None:
    """The honest way to say "nothing to estimate": NaN, no sampling, a reason."""
    path = _claim(tmp_path, "none", "lab.none", "return Measurement.not_estimable("
                  "'mean', 3, 'mean', 'only three points')")
    path.write_text(PARTS + path.read_text(encoding="utf-8"), encoding="utf-8")
    loading.load_checks(path)
    rows = [r for r in run_audit(glove, ["lab.none", "word.norm_ic"], settings=FAST).results
            if r.claim == "lab.none"]
    assert [(r.verdict, r.reason) for r in rows] == [
        (Verdict.INCONCLUSIVE, "mean: only three points")]


def test_a_nan_estimate_is_an_error_row_from_the_command_line(
    tmp_path: Path, isolated: None, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _claim(tmp_path, "nan", "lab.nan", _bent(
        "m = dataclasses.replace(m, estimate=math.nan)"))
    path.write_text(PARTS + path.read_text(encoding="utf-8"), encoding="utf-8")
    code, _ = _cli(_audit_words("--checks", str(path), "--claims", "lab.nan", "word.norm_ic",
                                "--format", "json", out=tmp_path / "out"), capsys)
    assert code == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    (row,) = [r for r in report["results"] if r["claim"] == "lab.nan"]
    assert row["verdict"] == "ERROR"
    assert "lab.nan" in row["reason"] and "estimate is nan" in row["reason"]


def test_judging_a_nan_estimate_with_a_sampling_is_never_a_verdict() -> None:
    """The judge itself reads nothing from a sampling around a NaN estimate (the rule any
    measurement meets, built-in or not)."""
    from dataclasses import replace as bend

    from normtest.stats.equivalence import measure_mean
    from normtest.verdict.result import Criterion, Result

    honest = measure_mean(np.linspace(1.0, 2.0, 50), n_resamples=200)
    assert Result.judged(honest, Criterion.minimum_effect(0.0)).verdict is Verdict.PASS
    judged = Result.judged(bend(honest, estimate=math.nan), Criterion.minimum_effect(0.0))
    assert judged.verdict is Verdict.INCONCLUSIVE and "the estimate is nan" in judged.reason


# -- a claims file named by the configuration file is named so in messages ----------------------
@pytest.mark.parametrize("config", ["pyproject.toml", "normtest.toml"])
@pytest.mark.parametrize(("written", "needle"), [
    ("missing_claims.py", "no such file"),
    ("broken.py", "importing it failed: RuntimeError: half written"),
    ("no_such_module_xyz", "not a file, a folder or an importable module"),
    ("empty", "the folder holds no .py file of claims"),
])
def test_a_claims_file_of_the_configuration_is_named_by_its_file_and_key(
    config: str, written: str, needle: str, tmp_path: Path, isolated: None,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "broken.py").write_text("raise RuntimeError('half written')\n", encoding="utf-8")
    (project / "empty").mkdir()
    table = f'checks = ["{written}"]\n'
    (project / config).write_text(("[tool.normtest]\n" if config == "pyproject.toml" else "")
                                  + table, encoding="utf-8")
    monkeypatch.chdir(project)
    code, err = _cli(_audit_words(out=tmp_path / "out"), capsys)
    line = _one_error_line(err)
    assert code == 2
    assert line.startswith(f"normtest: error: {project / config}: checks = '{written}'"), line
    assert needle in line and "--checks" not in line


def test_a_claim_id_clash_within_the_configuration_names_the_file_and_both_claim_files(
    tmp_path: Path, isolated: None, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch
) -> None:
    _claim(tmp_path / "a", "lab", "lab.clash", "return None")
    _claim(tmp_path / "b", "lab", "lab.clash", "return 1")
    (tmp_path / "normtest.toml").write_text('checks = ["a", "b/lab.py"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, err = _cli(_audit_words(out=tmp_path / "out"), capsys)
    line = _one_error_line(err)
    assert code == 2 and f"{tmp_path / 'normtest.toml'}: checks = 'b/lab.py'" in line
    assert str(tmp_path / "a" / "lab.py") in line and str(tmp_path / "b" / "lab.py") in line


def test_a_claims_file_given_with_the_flag_is_still_named_by_the_flag(
    tmp_path: Path, isolated: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _cli(_audit_words("--checks", str(tmp_path / "nope.py"), out=tmp_path / "o"),
                     capsys)
    assert code == 2
    assert _one_error_line(err) == f"normtest: error: --checks {tmp_path / 'nope.py'}: no such file"
