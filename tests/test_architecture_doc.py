"""docs/architecture.md stays true to the tree.

- "Where to add what", row by row: every file a row names exists (a ``<name>`` placeholder: its
  folder holds such files), and every name a row tells a contributor to edit is found in the
  files that row lists.
- Everything the document names exists: every ``normtest/...`` path, every file name, every
  backticked repository path, and every dotted ``normtest.x.y`` name (a module or package, or a
  name of one).
- Nothing of the tree is left off the map: every package of ``normtest/`` (every folder with an
  ``__init__.py``) and every top-level module is named, and "The layers" lists the top-level
  entries in the order ``scripts/check_structure.py`` enforces (``LAYERS``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "architecture.md"
#: Installed package name → folder of the repository (the ``package-dir`` map of pyproject.toml).
PACKAGE_DIRS = {"normtest": "normtest", "normtest.checks": "checks",
                "normtest.theorems": "theorems"}
#: Where a bare file name (``session.py``) of the document is looked for.
FILE_ROOTS = ("normtest", "checks", "theorems", "scripts", "tests", "benchmarks", "docs")
_CODE = re.compile(r"`([^`]+)`")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*")
_PATH = re.compile(r"normtest/[A-Za-z_][A-Za-z0-9_/]*(?:\.py)?")
#: ``normtest.x.y`` (not a schema id such as ``normtest.report/1``).
_DOTTED = re.compile(r"(?<![\w.$/-])normtest(?:\.[A-Za-z_]\w*)+(?![\w/])")
_BARE_FILE = re.compile(r"(?<![\w<>-])\w+\.py\b")
_REPO_PATH = re.compile(r"^(?:[\w<>-]+/)+[\w<>.-]*$")


def _text() -> str:
    return DOC.read_text(encoding="utf-8")


def _section(title: str) -> str:
    return _text().split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _table(section: str, header: str) -> list[list[str]]:
    """The cells of each body row of the table whose header row starts with ``| header``."""
    rows = []
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith(f"| {header}") or line.startswith("|---"):
            continue
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))])
    return rows


# ------------------------------------------------------------------------- where to add what


def _rows() -> list[tuple[str, str, str]]:
    """(what is added, what to do, code files) of each row of the table."""
    return [(c[0], c[1], c[2]) for c in _table(_section("Where to add what"), "to add")]


def _files(token: str) -> list[Path]:
    """The repository files a path token names (relative to the root or to ``normtest/``;
    ``<name>`` matches any file)."""
    for base in (REPO, REPO / "normtest"):
        if "<" in token:
            pattern = re.sub(r"<[^>]+>", "*", token)
            found = sorted(p for p in base.glob(pattern) if "__pycache__" not in p.parts)
        else:
            found = [base / token] if (base / token).is_file() else []
        if found:
            return found
    return []


def _is_path(token: str) -> bool:
    return token.endswith((".py", ".toml")) or "/" in token


ROWS = _rows()


def test_the_table_covers_what_contributors_add() -> None:
    added = [what for what, _, _ in ROWS]
    for expected in ("a claim", "a suite", "an adapter", "a composition", "a transform",
                     "a statistic", "a setting", "a kind of data", "a report format",
                     "a CLI subcommand", "a package"):
        assert any(a.startswith(expected) for a in added), (expected, added)


@pytest.mark.parametrize(("what", "todo", "code"), ROWS, ids=[r[0] for r in ROWS])
def test_each_row_names_files_that_exist_and_names_found_in_them(what: str, todo: str,
                                                                 code: str) -> None:
    listed = [t for t in _CODE.findall(code) if _is_path(t)]
    assert listed, f"{what}: no code file listed"
    files: list[Path] = []
    for token in listed:
        found = _files(token)
        assert found, f"{what}: {token} does not exist"
        files += found
    text = "\n".join(f.read_text(encoding="utf-8") for f in files)
    for token in _CODE.findall(todo):
        if _is_path(token):
            assert _files(token), f"{what}: {token} does not exist"
            continue
        name = _NAME.match(token)
        if name is None or "<" in token or len(name.group(0)) < 3:
            continue  # prose in code type (``"words"|"prefixes"``, ``<name>``)
        assert re.search(rf"\b{re.escape(name.group(0))}\b", text), \
            f"{what}: {name.group(0)} is not found in {', '.join(listed)}"


# ------------------------------------------------------------ what the document names exists


def _module_file(dotted: str) -> Path | None:
    """The file of a module or package of the tree (``normtest.checks`` is ``checks/``)."""
    parts = dotted.split(".")
    for package in sorted(PACKAGE_DIRS, key=len, reverse=True):
        if dotted == package or dotted.startswith(package + "."):
            base = REPO / PACKAGE_DIRS[package]
            rest = parts[len(package.split(".")):]
            break
    else:
        return None
    path = base.joinpath(*rest)
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    module = path.with_name(path.name + ".py") if rest else None
    return module if module is not None and module.is_file() else None


def _resolves(dotted: str) -> bool:
    """A module or package of the tree, or names of one
    (``normtest.models.cache.adapter.CachedAdapter``): each name after the longest module prefix
    is found in that module's source."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        module = _module_file(".".join(parts[:k]))
        if module is not None:
            source = module.read_text(encoding="utf-8")
            return all(re.search(rf"\b{re.escape(name)}\b", source) for name in parts[k:])
    return False


def _named_paths() -> set[str]:
    """Every ``normtest/...`` path the document names (a module file or a package folder)."""
    return set(_PATH.findall(_text()))


def _named_dotted() -> set[str]:
    """Every dotted ``normtest.x.y`` the document names (a file name such as ``normtest.toml``
    aside)."""
    return {n for n in _DOTTED.findall(_text()) if not n.endswith((".toml", ".json", ".md"))}


def test_every_module_and_package_the_document_names_exists() -> None:
    missing = sorted(p for p in _named_paths() if not (REPO / p.rstrip("/")).exists())
    assert not missing, missing


def test_every_dotted_name_the_document_gives_exists() -> None:
    missing = sorted(n for n in _named_dotted() if not _resolves(n))
    assert not missing, missing


def test_every_file_the_document_names_exists() -> None:
    """Backticked paths (``checks/axes.py``, ``docs/claims.md``) and bare file names
    (``session.py``, in prose or in the stage diagram) name files of the repository."""
    text = _text()
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # inline code outside the diagrams
    missing = [t for t in _CODE.findall(prose)
               if _REPO_PATH.match(t) and not _files(t) and not (REPO / t).is_dir()
               and not (REPO / "normtest" / t).is_dir()]
    present = {p.name for root in FILE_ROOTS for p in (REPO / root).rglob("*.py")}
    present |= {p.name for p in REPO.glob("*.py")}
    missing += sorted({f for f in _BARE_FILE.findall(text) if f not in present})
    assert not missing, missing


# ------------------------------------------------------------------ the tree is on the map


def _named_modules() -> set[str]:
    """Every module or package the document names, dotted, as a path or as a dotted name."""
    named = {p.rstrip("/").removesuffix(".py").replace("/", ".") for p in _named_paths()}
    named = {n.removesuffix(".__init__") if n != "normtest.__init__" else n for n in named}
    return named | _named_dotted()


def test_every_package_and_top_level_module_of_normtest_is_named() -> None:
    """A newcomer reads the map: no package of ``normtest/`` (subpackages too) and no top-level
    module (``__init__``, ``__main__``, ``errors``) is left off it."""
    root = REPO / "normtest"
    packages = {".".join(("normtest", *p.parent.relative_to(root).parts))
                for p in root.rglob("__init__.py") if "__pycache__" not in p.parts}
    modules = {f"normtest.{p.stem}" for p in root.glob("*.py")}
    assert {"normtest.__init__", "normtest.__main__", "normtest.errors"} <= modules
    expected = (packages - {"normtest"}) | modules | {"normtest.checks", "normtest.theorems"}
    left_off = sorted(expected - _named_modules())
    assert not left_off, left_off


def _doc_layers() -> list[frozenset[str]]:
    """The layers of the diagram in "The layers", lowest first, as installed dotted names."""
    block = _section("The layers").split("```", 2)[1]
    layers, numbers = [], []
    for line in block.splitlines():
        match = re.match(r"\s*(\d+)\s", line)
        if match is None:
            continue
        numbers.append(int(match.group(1)))
        names = set()
        for path in re.findall(r"(?<![\w/.])(?:normtest/[\w/.]*|checks/|theorems/)", line):
            if path in ("checks/", "theorems/"):
                names.add(f"normtest.{path.rstrip('/')}")
            elif path in ("normtest/__init__.py", "normtest/__main__.py"):
                names.add("normtest")
            else:
                names.add(path.rstrip("/").removesuffix(".py").replace("/", "."))
        layers.append(frozenset(names))
    assert numbers == list(range(1, len(numbers) + 1)), numbers
    return layers


def _enforced_layers() -> list[frozenset[str]]:
    """The layers contract of pyproject.toml (``lint-imports``), lowest first; ``checks`` and
    ``theorems`` as the wheel names them."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    layers = next(c["layers"] for c in config["tool"]["importlinter"]["contracts"]
                  if c["type"] == "layers")
    named = {"checks": "normtest.checks", "theorems": "normtest.theorems"}
    return [frozenset(named.get(m.strip(), m.strip()) for m in layer.split("|"))
            for layer in reversed(layers)] + [frozenset({"normtest"})]


def test_the_layers_are_the_tree_in_the_enforced_order() -> None:
    layers = _doc_layers()
    root = REPO / "normtest"
    top = {f"normtest.{p.name}" for p in root.iterdir() if (p / "__init__.py").is_file()}
    top |= {"normtest" if p.stem.startswith("__") else f"normtest.{p.stem}"
            for p in root.glob("*.py")}
    top |= {"normtest.checks", "normtest.theorems"}
    listed = set().union(*layers)
    assert listed == top, {"not in the tree": sorted(listed - top),
                           "left off": sorted(top - listed)}
    assert layers == _enforced_layers()
