"""docs/architecture.md "Where to add what" stays true file by file: every file a row names
exists (a ``<name>`` placeholder: its folder holds such files), and every name a row tells a
contributor to edit is found in the files that row lists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "architecture.md"
_CODE = re.compile(r"`([^`]+)`")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*")


def _rows() -> list[tuple[str, str, str]]:
    """(what is added, what to do, code files) of each row of the table."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Where to add what", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith("| to add") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        rows.append((cells[0], cells[1], cells[2]))
    return rows


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
    return token.endswith(".py") or "/" in token


ROWS = _rows()


def test_the_table_covers_what_contributors_add() -> None:
    added = [what for what, _, _ in ROWS]
    for expected in ("a claim", "a suite", "an adapter", "a statistic", "a setting",
                     "a kind of data", "a report format", "a CLI subcommand"):
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


def _named_paths() -> set[str]:
    """Every ``normtest/...`` path the document names (a module file or a package folder)."""
    text = DOC.read_text(encoding="utf-8")
    return set(re.findall(r"normtest/[A-Za-z_][A-Za-z0-9_/]*(?:\.py)?", text))


def test_every_module_and_package_the_document_names_exists() -> None:
    missing = sorted(p for p in _named_paths() if not (REPO / p.rstrip("/")).exists())
    assert not missing, missing


def test_every_module_and_package_of_normtest_is_named() -> None:
    """A newcomer reads the map: no top-level module or package of ``normtest/`` is left off it
    (``__init__`` and ``__main__`` aside)."""
    named = {p.split("/")[1].removesuffix(".py") for p in _named_paths() if p.count("/") >= 1}
    root = REPO / "normtest"
    present = {p.stem for p in root.glob("*.py") if not p.stem.startswith("__")} | {
        p.name for p in root.iterdir() if (p / "__init__.py").is_file()}
    assert not present - named, sorted(present - named)
