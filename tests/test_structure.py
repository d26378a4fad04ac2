"""The structural checker (scripts/check_structure.py): the tree passes it, and it catches each
kind of violation on a small synthetic tree."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "check_structure.py"


def _load_checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_structure", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("check_structure", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


cs = _load_checker()

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
    """A small package, laid out by stage, that passes every check."""
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
        "normtest/stats/_inputs.py": "from normtest import stats\n",
        "normtest/claims/__init__.py": "from normtest.base.lazy import lazy_exports\n\n"
                                       "__getattr__, __dir__ = lazy_exports(__name__, "
                                       "{'normtest.stats.core': ('mean',)})\n",
        "normtest/audit/__init__.py": "",
        "normtest/audit/run.py": "from typing import TYPE_CHECKING\n\n"
                                 "from normtest.stats import mean\n\n"
                                 "if TYPE_CHECKING:\n"
                                 "    from normtest.audit.report import Report\n\n"
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
        "docs/guide.md": "See docs/theory.md and docs/architecture.md.\n",
    })


@pytest.mark.slow
def test_the_tree_passes() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT)], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "layers: ok" in done.stdout and "import cycles: ok" in done.stdout
    assert "errors → base → verdict → stats" in done.stdout  # the declared order is reported


def test_every_package_of_the_tree_is_declared_in_a_layer() -> None:
    packages = {p.parent.name for p in (REPO / "normtest").glob("*/__init__.py")}
    declared = {name.removeprefix("normtest.") for layer in cs.LAYERS for name in layer}
    assert packages <= declared, packages - declared
    loose = {p.stem for p in (REPO / "normtest").glob("*.py")}
    assert loose == {"__init__", "__main__", "errors"}


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    assert cs.check_layers(root) == []
    assert cs.check_imports(root) == []
    assert cs.check_config_readers(root) == []
    assert cs.check_lengths(root) == []
    assert cs.check_setting_flags(root) == []
    assert cs.check_outside_references(root) == []
    assert cs.main(["--root", str(root)]) == 0


def test_every_kind_of_import_is_an_edge(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    edges = {(e.source, e.target): e for e in cs.import_edges(cs.discover(root))}
    assert edges[("normtest.audit.report", "normtest.audit.run")].kind == "import"
    assert not edges[("normtest.audit.report", "normtest.audit.run")].lazy
    assert edges[("normtest.audit.run", "normtest.audit.report")].kind == "type"
    assert edges[("normtest.audit.run", "normtest.errors")].lazy  # inside run()
    assert edges[("normtest.audit.report", "normtest.stats.core")].kind == "importlib"
    assert edges[("normtest.claims", "normtest.stats.core")].kind == "lazy-export"
    assert ("normtest.stats.core", "normtest.stats._inputs") in edges  # from package import module
    assert ("normtest.stats._inputs", "normtest.stats") not in edges  # its own package


@pytest.mark.parametrize(("importer", "code", "how"), [
    ("normtest/stats/plots.py", "from normtest.audit.run import run\n", ""),
    ("normtest/stats/plots.py", "def f():\n    from normtest.audit import run\n",
     ", in a function"),
    ("normtest/stats/plots.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                "    from normtest.audit.run import run\n",
     ", under TYPE_CHECKING"),
    ("normtest/stats/plots.py", "import importlib\n\n"
                                "def f(name):\n"
                                "    return importlib.import_module(f'normtest.audit.{name}')\n",
     ", loaded by name"),
    ("normtest/base/lazy_user.py", "from normtest.base.lazy import lazy_exports\n"
                                   "EXPORTS = {'normtest.claims': ('x',)}\n"
                                   "__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)\n",
     ", a lazy re-export"),
])
def test_an_upward_import_of_any_kind_is_found(tmp_path: Path, importer: str, code: str,
                                               how: str) -> None:
    root = clean_tree(tmp_path)
    write(root, {importer: code})
    problems = cs.check_layers(root)
    assert len(problems) == 1 and problems[0].startswith(f"{importer}:"), problems
    assert how in problems[0] and "upward" in problems[0]
    assert cs.main(["--root", str(root)]) == 1


def test_the_two_front_ends_do_not_import_each_other(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    write(root, {"normtest/pytest/plugin.py": "from normtest.cli import parser\n"})
    problems = cs.check_layers(root)
    assert problems == ["normtest/pytest/plugin.py:1: normtest.pytest.plugin → normtest.cli: "
                        "normtest.pytest imports normtest.cli, across its layer"]


def test_an_undeclared_package_and_a_loose_module_are_found(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    write(root, {"normtest/extras/__init__.py": "", "normtest/helpers.py": ""})
    problems = cs.check_layers(root)
    assert "normtest/extras/__init__.py: package normtest.extras is not in the declared " \
           "layers (add it to LAYERS, in its place)" in problems
    assert "normtest/helpers.py: a loose module at the top level; put it in the package of " \
           "its stage" in problems


def test_the_gate_configuration_is_read_by_the_front_ends_only(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    write(root, {"normtest/audit/gating.py": "def f():\n"
                                             "    from normtest.gate.config import load_config\n"})
    assert cs.check_config_readers(root) == [
        "normtest/audit/gating.py:2: normtest.audit.gating imports load_config; only the front "
        "ends read the gate's configuration (pass a GateConfig)"]


def test_a_cycle_closed_by_an_import_inside_a_function_is_found(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    write(root, {"normtest/audit/run.py": "def run():\n"
                                          "    from normtest.audit.report import Report\n"
                                          "    return Report\n"})
    problems = cs.check_imports(root)
    assert any(p.startswith("module cycle") and "normtest/audit/run.py:2, in a function" in p
               for p in problems), problems
    assert cs.main(["--root", str(root)]) == 1


def test_a_type_only_import_closes_no_cycle(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)  # run → report under TYPE_CHECKING, report → run at run time
    assert cs.check_imports(root) == []


def test_a_two_module_cycle_is_found(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    write(root, {"normtest/audit/run.py": "from normtest.audit.report import Report\n"})
    problems = cs.check_imports(root)
    assert any(p.startswith("module cycle normtest.audit.report → normtest.audit.run → "
                            "normtest.audit.report") for p in problems), problems
    assert cs.main(["--root", str(root)]) == 1


def test_a_long_module_is_found_and_only_noted(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = clean_tree(tmp_path)
    write(root, {"normtest/big.py": "x = 1\n" * 950})
    assert cs.check_lengths(root) == ["normtest/big.py: 950 lines (limit 900)"]
    assert cs.module_lengths(root)[0] == (950, "normtest/big.py")
    assert cs._warning("module length", cs.check_lengths(root), "") is True  # never a failure
    assert "module length: look\n  normtest/big.py: 950 lines" in capsys.readouterr().out


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
