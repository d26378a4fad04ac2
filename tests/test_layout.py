"""The package's faces: every package ``__init__`` is its docstring, except the two a user
imports from (``normtest`` and ``normtest.claims``); the claim-author face answers for everything
a claim file needs and loads no heavy library; the engine imports each name from the module that
defines it."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

import normtest

ROOT = Path(__file__).resolve().parent.parent
FACES = {"normtest/__init__.py", "normtest/claims/__init__.py"}


def _modules() -> list[Path]:
    return sorted(p for p in (ROOT / "normtest").rglob("*.py") if "__pycache__" not in p.parts)


def test_a_package_init_is_its_docstring_except_the_two_faces() -> None:
    inits = [p for p in _modules() if p.name == "__init__.py"]
    assert len(inits) >= 15
    for path in inits:
        relative = str(path.relative_to(ROOT))
        body = ast.parse(path.read_text(encoding="utf-8")).body
        assert body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str), f"{relative} has no docstring"
        if relative not in FACES:
            assert len(body) == 1, f"{relative} holds code: move it into a module named for it"


def test_the_engine_imports_a_name_from_the_module_that_defines_it() -> None:
    """Inside normtest/, no ``from normtest.claims import …`` (that is the claim files' face,
    which imports the stages below it eagerly) and no ``from normtest.<package> import name``
    of a name that is not a module."""
    for path in _modules():
        if str(path.relative_to(ROOT)) in FACES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(
                    "normtest."):
                continue
            package = ROOT / Path(*str(node.module).split("."))
            if not (package / "__init__.py").exists():
                continue  # an import from a module
            for alias in node.names:
                assert (package / f"{alias.name}.py").exists() \
                    or (package / alias.name / "__init__.py").exists(), \
                    f"{path.relative_to(ROOT)}:{node.lineno} imports {alias.name} from the " \
                    f"package {node.module}: import it from its module"


def test_the_face_names_everything_a_claim_file_needs_and_loads_nothing_heavy() -> None:
    import normtest.claims as face

    needed = {"Claim", "Criterion", "WordData", "measure_correlation", "measures"}
    assert needed <= set(face.__all__)
    for name in face.__all__:
        assert getattr(face, name) is not None, name
    code = ("import sys, normtest.claims; "
            "print(sorted({'scipy.stats', 'torch', 'transformers', 'matplotlib', 'statsmodels'} "
            "& set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.slow
def test_the_built_in_claims_and_the_documented_claim_file_import_without_a_warning(
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
    # unreleased: a development version of the next release (PEP 440)
    assert re.fullmatch(r"\d+\.\d+\.\d+\.dev\d+", VERSION), VERSION
