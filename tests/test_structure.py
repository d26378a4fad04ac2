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
    """A small package that passes every check."""
    return write(root, {
        "normtest/__init__.py": "from normtest.errors import NormtestError\n",
        "normtest/errors.py": "class NormtestError(Exception):\n    pass\n",
        "normtest/settings.py": SETTINGS,
        "normtest/stats/__init__.py": "from normtest.stats.core import mean\n",
        "normtest/stats/core.py": "from normtest.stats import _inputs\n"
                                  "from normtest.errors import NormtestError\n\n"
                                  "def mean(x):\n    return sum(x) / len(x)\n",
        "normtest/stats/_inputs.py": "from normtest import stats\n",
        "normtest/audit.py": "from typing import TYPE_CHECKING\n\n"
                             "from normtest.stats import mean\n\n"
                             "if TYPE_CHECKING:\n    from normtest.report import Report\n\n"
                             "def run():\n    from normtest.errors import NormtestError\n"
                             "    return NormtestError\n",
        "normtest/report.py": "from normtest.audit import run\n",
        "normtest/cli.py": "import argparse\n\nfrom normtest.settings import add_cli_options\n\n"
                           "def parser():\n    p = argparse.ArgumentParser()\n"
                           "    p.add_argument('--model')\n    add_cli_options(p)\n"
                           "    return p\n",
        "docs/guide.md": "See docs/theory.md and docs/architecture.md.\n",
    })


@pytest.mark.slow
def test_the_tree_passes() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT)], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "import cycles: ok" in done.stdout


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    assert cs.check_imports(root) == []
    assert cs.check_lengths(root) == []
    assert cs.check_setting_flags(root) == []
    assert cs.check_outside_references(root) == []
    assert cs.main(["--root", str(root)]) == 0


def test_imports_in_functions_count_and_those_under_type_checking_do_not(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    edges = {(e.source, e.target): e for e in cs.import_edges(cs.discover(root))}
    assert not edges[("normtest.report", "normtest.audit")].lazy
    assert ("normtest.audit", "normtest.report") not in edges  # under TYPE_CHECKING
    assert edges[("normtest.audit", "normtest.errors")].lazy  # inside run()
    assert ("normtest.stats.core", "normtest.stats._inputs") in edges  # from package import module
    assert ("normtest.stats._inputs", "normtest.stats") not in edges  # its own package


def test_a_cycle_closed_by_an_import_inside_a_function_is_found(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    write(root, {"normtest/audit.py": "def run():\n    from normtest.report import Report\n"
                                      "    return Report\n"})
    problems = cs.check_imports(root)
    assert any(p.startswith("module cycle") and "normtest/audit.py:2, in a function" in p
               for p in problems), problems
    assert cs.main(["--root", str(root)]) == 1
    # an arrow named in the allowlist (with its reason) is not counted
    allowed = {("normtest.audit", "normtest.report"): "a heavy import deferred on purpose"}
    assert cs.check_imports(root, allowed=allowed) == []


def test_a_two_module_cycle_is_found(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    write(root, {"normtest/audit.py": "from normtest.report import Report\n",
                 "normtest/report.py": "from normtest.audit import run\n"})
    problems = cs.check_imports(root)
    assert any(p.startswith("package cycle normtest.audit → normtest.report → normtest.audit")
               for p in problems), problems
    assert any(p.startswith("module cycle") and "normtest/report.py:1" in p for p in problems)
    assert cs.main(["--root", str(root)]) == 1


def test_a_cycle_between_packages_through_submodules_is_found(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    write(root, {"normtest/render/__init__.py": "",
                 "normtest/render/html.py": "from .. import stats\n",
                 "normtest/stats/plots.py": "from normtest.render.html import page\n"})
    problems = cs.check_imports(root)
    assert [p for p in problems if p.startswith("package cycle")] == [
        "package cycle normtest.render → normtest.stats → normtest.render: "
        "normtest.render.html → normtest.stats (normtest/render/html.py:1); "
        "normtest.stats.plots → normtest.render.html (normtest/stats/plots.py:1)"
    ]
    assert not [p for p in problems if p.startswith("module cycle")]  # no module-level loop


def test_a_long_module_is_found(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    write(root, {"normtest/big.py": "x = 1\n" * 700})
    assert cs.check_lengths(root) == ["normtest/big.py: 700 lines (limit 600)"]
    assert cs.module_lengths(root)[0] == (700, "normtest/big.py")


@pytest.mark.parametrize("call", [
    "parser.add_argument('--words', type=int)",
    "group.addoption('--normtest-words', type=int)",
    "parser.add_argument('--trust-remote-code', action='store_true')",
    "group.addoption('--normtest-no-cache', action='store_true')",
])
def test_a_hand_declared_setting_flag_is_found(tmp_path: Path, call: str) -> None:
    root = clean_tree(tmp_path)
    write(root, {"normtest/demo.py": f"def options(parser, group):\n    {call}\n"})
    problems = cs.check_setting_flags(root)
    assert len(problems) == 1 and problems[0].startswith("normtest/demo.py:2: "), problems


def test_setting_names_are_read_from_the_table() -> None:
    assert cs.setting_names(REPO / "normtest" / "settings.py")[:3] == ["profile", "seed", "words"]


def test_a_mention_of_an_outside_file_is_found(tmp_path: Path) -> None:
    root = clean_tree(tmp_path)
    write(root, {"docs/guide.md": "Intro.\nThe derivation is in ../THEORY.md §3.\n",
                 "normtest/stats/core.py": "# see docs/theory.md, not MODELS.md\n",
                 "reports/notes.md": "THEORY.md is outside the scope of the check\n"})
    assert cs.check_outside_references(root) == [
        "docs/guide.md:2: mentions THEORY.md, a file outside the repository",
        "normtest/stats/core.py:1: mentions MODELS.md, a file outside the repository",
    ]
