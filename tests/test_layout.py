"""The package laid out by stage: the paths of release 0.1 still import, with a warning that
names the new one; the claim-author facade answers for everything a claim file needs; and
nothing of normtest's own code, nor the documented claim file, uses an old path."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import normtest
from normtest import _MOVED, _RENAMED, _SPLIT

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("old", sorted(_MOVED))
def test_every_old_path_names_a_module_that_exists(old: str) -> None:
    assert importlib.util.find_spec(f"normtest.{_MOVED[old]}") is not None
    assert not (ROOT / "normtest" / f"{old.replace('.', '/')}.py").exists()


@pytest.mark.parametrize(("old", "name", "new"), [
    ("catalogue", "Claim", "normtest.claims.catalogue"),
    ("result", "Criterion", "normtest.verdict.result"),
    ("robustness", "specifications", "normtest.claims.line_checks"),
    ("robustness", "SAMPLES", "normtest.data.respecified"),
    ("controls", "controls", "normtest.claims.line_checks"),
    ("comparison", "compares", "normtest.claims.comparative"),
    ("comparison", "compare_reports", "normtest.audit.compare"),
    ("vectors", "WordData", "normtest.data.words"),
    ("information.scaled", "corpus_counts", "normtest.data.information.scaled"),
    ("checking", "check_model", "normtest.testing.api"),
    ("model_install", "BUILD_MARKER", "normtest.adapters.built_folder"),
])
def test_an_old_path_imports_the_same_object_with_a_deprecation_warning(
        old: str, name: str, new: str) -> None:
    for loaded in [m for m in sys.modules if m.startswith(f"normtest.{old.split('.')[0]}")]:
        if loaded.removeprefix("normtest.") in _MOVED:
            sys.modules.pop(loaded)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(f"normtest.{old}")
    said = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert any(s.startswith(f"normtest.{old} is now normtest.") for s in said), said
    assert getattr(module, name) is getattr(importlib.import_module(new), name)


def test_the_old_modules_that_became_packages_export_their_names() -> None:
    from normtest.audit import AuditSettings, run_audit
    from normtest.audit.run import run_audit as defined
    from normtest.gate import decide, load_config
    from normtest.models import load
    from normtest.scorecard import build
    from normtest.testing import check_adapter

    assert run_audit is defined and AuditSettings.__module__ == "normtest.base.settings"
    assert {f.__module__ for f in (decide, load_config, load, build, check_adapter)} == {
        "normtest.gate.run", "normtest.gate.config", "normtest.models.registry",
        "normtest.scorecard.lines", "normtest.testing.conformance"}


def test_an_unknown_name_of_an_old_module_is_an_attribute_error() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        module = importlib.import_module("normtest.catalogue")
    with pytest.raises(AttributeError, match=r"now normtest\.claims\.catalogue"):
        _ = module.no_such_name


def test_split_and_renamed_names_point_at_modules_that_define_them() -> None:
    for names in _SPLIT.values():
        for name, home in names.items():
            assert hasattr(importlib.import_module(f"normtest.{home}"), name), (name, home)
    for renames in _RENAMED.values():
        for home, now in renames.values():
            assert hasattr(importlib.import_module(f"normtest.{home}"), now), (home, now)


@pytest.mark.parametrize(("old", "name", "new", "now"), [
    ("regression", "Comparison", "normtest.gate.regression", "BaselineComparison"),
    ("controls", "KINDS", "normtest.scorecard.controls", "CONTROL_KINDS"),
    ("model_store", "Listed", "normtest.models.named", "NamedModel"),
    ("checking", "decide", "normtest.testing.outcomes", "outcome_of"),
])
def test_a_renamed_name_is_found_under_its_old_name_too(old: str, name: str, new: str,
                                                          now: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        module = importlib.import_module(f"normtest.{old}")
    assert getattr(module, name) is getattr(importlib.import_module(new), now)


@pytest.mark.parametrize(("package", "name", "home", "now"), [
    ("normtest.gate", "gate_audit", "normtest.gate.run", "gate_audit"),
    ("normtest.gate", "Comparison", "normtest.gate.regression", "BaselineComparison"),
    ("normtest.models", "KINDS", "normtest.models.registry", "ADAPTER_KINDS"),
    ("normtest.scorecard", "decide", "normtest.scorecard.lines", "decide_line"),
    ("normtest.audit", "measure_claim", "normtest.audit.run", "measure_claim"),
])
def test_a_package_answers_for_its_old_modules_other_names_with_a_warning(
        package: str, name: str, home: str, now: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"{package}\.{name}"):
        value = getattr(importlib.import_module(package), name)
    assert value is getattr(importlib.import_module(home), now)
    with pytest.raises(AttributeError):
        _ = importlib.import_module(package).no_such_name


def test_the_facade_names_everything_a_claim_file_needs_and_loads_nothing_heavy() -> None:
    import normtest.claims as facade

    for name in facade.__all__:
        assert getattr(facade, name) is not None, name
    code = ("import sys, normtest.claims; "
            "print(sorted({'numpy', 'scipy', 'torch'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.slow
def test_the_built_in_claims_and_the_documented_claim_file_use_no_old_path(
        tmp_path: Path) -> None:
    from tests.test_user_checks import documented_claim_file

    (tmp_path / "lab_claims.py").write_text(documented_claim_file(), encoding="utf-8")
    code = ("import runpy, sys, normtest.claims; normtest.claims.claims(); "
            f"runpy.run_path({str(tmp_path / 'lab_claims.py')!r})")
    done = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_root_package_exports_its_version_from_one_place() -> None:
    from normtest.base.version import VERSION

    assert normtest.__version__ == VERSION == importlib.metadata.version("normtest")


def _lazy_tables() -> list[tuple[str, dict[str, set[str]], dict[str, set[str]], set[str]]]:
    """For each package ``__init__`` that calls ``lazy_exports``: its table, the names its
    ``TYPE_CHECKING`` block imports (by module) and its ``__all__``, read with ast."""
    import ast

    out = []
    for path in sorted((ROOT / "normtest").rglob("__init__.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assigned = {t.id: n.value for n in tree.body if isinstance(n, ast.Assign)
                    for t in n.targets if isinstance(t, ast.Name)}
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and getattr(n.func, "id", "") == "lazy_exports"]
        if not calls:
            continue
        table_node = calls[0].args[1]
        if isinstance(table_node, ast.Name):
            table_node = assigned[table_node.id]
        table = {k: set(v) for k, v in ast.literal_eval(table_node).items()}
        typed: dict[str, set[str]] = {}
        for node in tree.body:
            if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
                for imp in node.body:
                    assert isinstance(imp, ast.ImportFrom)
                    typed.setdefault(str(imp.module), set()).update(a.name for a in imp.names)
        out.append((str(path.relative_to(ROOT)), table, typed,
                    set(ast.literal_eval(assigned["__all__"]))))
    return out


def test_each_lazy_package_names_its_exports_the_same_way_three_times() -> None:
    """A package that re-exports on first use writes its names three times (the table it
    imports them by, the ``TYPE_CHECKING`` imports type checkers read, ``__all__``): they
    agree, so a name added to one is not missing from another."""
    tables = _lazy_tables()
    assert {path for path, *_ in tables} >= {
        "normtest/audit/__init__.py", "normtest/claims/__init__.py", "normtest/data/__init__.py",
        "normtest/gate/__init__.py", "normtest/models/__init__.py",
        "normtest/scorecard/__init__.py", "normtest/testing/__init__.py"}
    for path, table, typed, public in tables:
        assert typed == table, path
        assert set().union(*table.values()) <= public, path
