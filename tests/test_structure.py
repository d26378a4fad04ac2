"""The structure checks: the import contracts of pyproject.toml (``lint-imports``) catch an upward
import of any kind, and scripts/check_structure.py catches what they cannot, on small trees."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests/repo_scripts.py
from repo_scripts import load_script

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "check_structure.py"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


cs: Any = load_script("check_structure")

SETTINGS = '''
from dataclasses import dataclass

@dataclass(frozen=True)
class Setting:
    name: str
    help: str
    kind: str
    default: object = None

SETTINGS = (
    Setting("words", "word sample size", "int", 2000),
    Setting(name="trust_remote_code", help="run the folder's code", kind="bool", default=False),
    Setting("cache", "use the cache", "bool", True),
)


def add_cli_options(parser):
    for s in SETTINGS:
        parser.add_argument("--" + s.name.replace("_", "-"))
'''


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def clean_tree(root: Path) -> Path:
    """A small package, laid out by stage, that passes every check (the repository's contracts)."""
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return write(root, {
        "normtest/__init__.py": "from normtest.errors import NormtestError\n",
        "normtest/__main__.py": "from normtest.cli import main\n",
        "normtest/errors.py": "class NormtestError(Exception):\n    pass\n",
        "normtest/base/__init__.py": "",
        "normtest/base/settings.py": SETTINGS,
        "normtest/stats/__init__.py": "from normtest.stats.core import mean\n",
        "normtest/stats/core.py": "from normtest.stats import _inputs\n"
                                  "from normtest.errors import NormtestError\n\n"
                                  "def mean(x):\n    return sum(x) / len(x)\n",
        "normtest/stats/_inputs.py": "from normtest import stats\n",  # its own package
        "normtest/claims/__init__.py": "",
        "normtest/audit/__init__.py": "",
        "normtest/audit/run.py": "from normtest.stats import mean\n\n"
                                 "def run():\n    from normtest.errors import NormtestError\n"
                                 "    return NormtestError\n",
        "normtest/audit/report.py": "import importlib\n\nfrom normtest.audit import run\n\n"
                                    "def stats():\n"
                                    "    return importlib.import_module('normtest.stats.core')\n",
        "normtest/gate/__init__.py": "",
        "normtest/gate/config.py": "def load_config(path=None):\n    return {}\n",
        "normtest/cli/__init__.py": "import argparse\n\n"
                                    "from normtest.base.settings import add_cli_options\n"
                                    "from normtest.gate.config import load_config\n\n"
                                    "def parser():\n    p = argparse.ArgumentParser()\n"
                                    "    p.add_argument('--model')\n    add_cli_options(p)\n"
                                    "    return p\n",
        "normtest/pytest/__init__.py": "",
        "checks/__init__.py": "from normtest.checks import axes\n",
        "checks/axes.py": "import normtest.claims\n",
        "docs/guide.md": "See docs/theory.md and docs/architecture.md.\n",
    })


# -- the contracts (lint-imports) ----------------------------------------------------------------


def test_the_contracts_declare_the_stages_in_order() -> None:
    assert cs.contract_layers(REPO) == [
        ("normtest.errors",), ("normtest.base",), ("normtest.verdict",), ("normtest.stats",),
        ("normtest.geometry",), ("normtest.adapters",), ("normtest.models",), ("normtest.data",),
        ("normtest.claims",), ("normtest.checks",), ("normtest.scorecard",), ("normtest.audit",),
        ("normtest.gate",), ("normtest.render",), ("normtest.testing",),
        ("normtest.cli", "normtest.pytest"), ("normtest.theorems",)]
    assert cs.check_declared(REPO, cs.contract_layers(REPO)) == []


def _copy_of_the_package(root: Path) -> Path:
    """The repository's package folders and contracts, copied to ``root``."""
    for folder in ("normtest", "checks", "theorems"):
        shutil.copytree(REPO / folder, root / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the tree at ``root`` (it reads the packages of its working folder)."""
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo"], cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.slow
def test_lint_imports_refuses_a_planted_upward_import(tmp_path: Path) -> None:
    root = _copy_of_the_package(tmp_path)
    write(root, {"normtest/base/planted.py": "import normtest.audit.run\n"})
    done = _lint_imports(root)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "normtest is laid out by stage; no import points up the layers BROKEN" in out
    assert "normtest.base is not allowed to import normtest.audit:" in out
    assert "- normtest.base.planted -> normtest.audit.run (l.1)" in out
    assert "only the front ends and the gate read the gate's configuration KEPT" in out


@pytest.mark.slow
def test_lint_imports_counts_imports_in_functions_and_type_only_ones(tmp_path: Path) -> None:
    root = _copy_of_the_package(tmp_path)
    write(root, {
        "normtest/stats/planted_local.py": "def f():\n    from normtest.render import html\n"
                                           "    return html\n",
        "normtest/verdict/planted_types.py": "from typing import TYPE_CHECKING\n\n"
                                             "if TYPE_CHECKING:\n"
                                             "    from normtest.gate.run import run_gate\n",
        "normtest/render/planted_config.py": "def f():\n"
                                             "    from normtest.gate.config import load_config\n"
                                             "    return load_config\n",
        "normtest/pytest/planted_across.py": "import normtest.cli.main\n",
    })
    done = _lint_imports(root)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "- normtest.stats.planted_local -> normtest.render.html (l.2)" in out
    assert "- normtest.verdict.planted_types -> normtest.gate.run (l.4)" in out
    assert "- normtest.pytest.planted_across -> normtest.cli.main (l.1)" in out
    assert "only the front ends and the gate read the gate's configuration BROKEN" in out
    assert "normtest.render.planted_config -> normtest.gate.config (l.2)" in out


# -- scripts/check_structure.py ------------------------------------------------------------------


@pytest.mark.slow
def test_the_tree_passes() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT)], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "layers (with lint-imports): ok" in done.stdout
    assert "import cycles: ok\n  0 " in done.stdout


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    layers = cs.contract_layers(root)
    assert cs.check_declared(root, layers) == []
    assert cs.check_unseen(root, layers) == []
    assert cs.check_cycles(root)[0] == []
    assert cs.check_lengths(root) == []
    assert cs.check_setting_flags(root) == []
    assert cs.check_outside_references(root) == []
    assert cs.main(["--root", str(root)]) == 0


def test_an_undeclared_package_and_a_loose_module_are_found(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    write(root, {"normtest/extras/__init__.py": "", "normtest/helpers.py": ""})
    assert cs.check_declared(root, cs.contract_layers(root)) == [
        "normtest/helpers.py: a loose module at the top level; put it in the package of its "
        "stage",
        "normtest/extras/: package normtest.extras is not in the layers contract of "
        "pyproject.toml (add it, in its place)"]


def test_the_imports_the_graph_misses_are_read_with_their_kind() -> None:
    tree = cs.ast.parse(
        "import importlib\nfrom typing import TYPE_CHECKING\n"
        "from normtest import checks, claims\n"
        "from normtest.claims import Claim\n"
        "from . import sibling\n"
        "if TYPE_CHECKING:\n    import normtest.theorems.growth\n"
        "def f(name):\n"
        "    importlib.util.find_spec('normtest.checks')\n"
        "    __import__('numpy')\n"
        "    return importlib.import_module(f'normtest.audit.{name}')\n")
    assert list(cs.unseen_imports(tree)) == [
        ("normtest.checks", 3, "import"),
        ("normtest.theorems.growth", 7, "type-only"),
        ("normtest.checks", 9, "loaded by name"),
        ("normtest.audit", 11, "loaded by name"),
    ]


@pytest.mark.parametrize(("importer", "code", "found"), [
    ("normtest/stats/plots.py", "import importlib\n\ndef f(name):\n"
     "    return importlib.import_module(f'normtest.audit.{name}')\n",
     "normtest/stats/plots.py:4: normtest.stats.plots → normtest.audit (loaded by name): "
     "normtest.stats imports normtest.audit, upward"),
    ("normtest/pytest/plugin.py", "import importlib.util\n"
     "SPEC = importlib.util.find_spec('normtest.cli')\n",
     "normtest/pytest/plugin.py:2: normtest.pytest.plugin → normtest.cli (loaded by name): "
     "normtest.pytest imports normtest.cli, across its layer"),
    ("normtest/claims/catalogue.py", "from normtest.checks.axes import PAPER\n",
     "normtest/claims/catalogue.py:1: normtest.claims.catalogue → normtest.checks.axes.PAPER "
     "(import): normtest.claims imports normtest.checks, upward"),
    ("checks/axes.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
     "    from normtest.theorems import growth\n",
     "checks/axes.py:3: normtest.checks.axes → normtest.theorems.growth (type-only): "
     "normtest.checks imports normtest.theorems, upward"),
])
def test_an_upward_import_the_graph_misses_is_found(tmp_path: Path, importer: str, code: str,
                                                    found: str) -> None:
    root = clean_tree(tmp_path)
    write(root, {importer: code})
    assert cs.check_unseen(root, cs.contract_layers(root)) == [found]
    assert cs.main(["--root", str(root)]) == 1


def test_a_cycle_that_runs_is_found(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)  # report → run at run time; now run → report inside a function
    write(root, {"normtest/audit/run.py": "def run():\n"
                                          "    from normtest.audit.report import Report\n"
                                          "    return Report\n"})
    cycles, _ = cs.check_cycles(root)
    assert cycles == ["normtest.audit.report → normtest.audit.run → normtest.audit.report "
                      "(arrows at normtest.audit.report:3; normtest.audit.run:2)"]
    assert cs.main(["--root", str(root)]) == 1


def test_a_cycle_a_type_only_import_closes_is_a_failure_too(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = clean_tree(tmp_path)  # report → run at run time; now run → report under TYPE_CHECKING
    write(root, {"normtest/audit/run.py": "from typing import TYPE_CHECKING\n\n"
                                          "from normtest.stats import mean\n\n"
                                          "if TYPE_CHECKING:\n"
                                          "    from normtest.audit.report import Report\n"})
    cycles, graph = cs.check_cycles(root)
    assert cycles == ["normtest.audit.report → normtest.audit.run → normtest.audit.report "
                      "(arrows at normtest.audit.report:3; normtest.audit.run:6, type-only)"]
    assert not graph.direct_import_exists(importer="normtest.stats._inputs",
                                          imported="normtest.stats")  # its own package
    assert cs.main(["--root", str(root)]) == 1
    assert "import cycles: FAIL" in capsys.readouterr().out


def test_the_clean_tree_has_no_cycle(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    root = clean_tree(tmp_path)
    assert cs.check_cycles(root)[0] == []
    assert cs.main(["--root", str(root)]) == 0
    assert "import cycles: ok\n  0 cycles among" in capsys.readouterr().out


def test_a_cycle_through_modules_named_as_installed_is_found(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)  # the graph knows checks/ as `checks`, the code as normtest.checks
    write(root, {"checks/word.py": "from normtest.checks.axes import PAPER\n",
                 "checks/axes.py": "PAPER = 1\n\ndef f():\n"
                                   "    from normtest.checks.word import PAPER\n"})
    assert cs.check_cycles(root)[0] == [
        "normtest.checks.axes → normtest.checks.word → normtest.checks.axes "
        "(arrows at normtest.checks.axes:4; normtest.checks.word:1)"]


def test_a_long_module_is_found_and_only_noted(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = clean_tree(tmp_path)
    write(root, {"normtest/stats/big.py": "x = 1\n" * 950})
    assert cs.check_lengths(root) == ["normtest/stats/big.py: 950 lines (limit 900)"]
    assert cs.module_lengths(root)[0] == (950, "normtest/stats/big.py")
    assert cs.main(["--root", str(root)]) == 0  # never a failure
    assert "module length (a look past 900 lines): look\n  normtest/stats/big.py: 950 lines" \
        in capsys.readouterr().out


@pytest.mark.parametrize("call", [
    "parser.add_argument('--words', type=int)",
    "group.addoption('--normtest-words', type=int)",
    "parser.add_argument('--trust-remote-code', action='store_true')",
    "group.addoption('--normtest-no-cache', action='store_true')",
])
def test_a_hand_declared_setting_flag_is_found(tmp_path: Path, call: str) -> None:
    root = clean_tree(tmp_path)
    write(root, {"normtest/audit/demo.py": f"def options(parser, group):\n    {call}\n"})
    problems = cs.check_setting_flags(root)
    assert len(problems) == 1 and problems[0].startswith("normtest/audit/demo.py:2: "), problems


def test_setting_names_are_read_from_the_table() -> None:
    assert cs.setting_names(REPO / "normtest" / "base" / "settings.py")[:3] == \
        ["profile", "seed", "words"]


def test_a_mention_of_an_outside_file_is_found(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    write(root, {"docs/guide.md": "Intro.\nThe derivation is in ../THEORY.md §3.\n",
                 "normtest/stats/core.py": "# see docs/theory.md, not MODELS.md\n",
                 "reports/notes.md": "THEORY.md is outside the scope of the check\n"})
    assert cs.check_outside_references(root) == [
        "docs/guide.md:2: mentions THEORY.md, a file outside the repository",
        "normtest/stats/core.py:1: mentions MODELS.md, a file outside the repository",
    ]
