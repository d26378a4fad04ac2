"""Every dotted ``normtest.…`` name the documentation gives resolves: a module, or a name of one
(a renamed or moved function leaves no stale path in README.md, CONTRIBUTING.md or docs/)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = sorted([*(REPO / "docs").glob("*.md"), REPO / "README.md", REPO / "CONTRIBUTING.md"])
#: Dotted words that are not Python names: the report and comparison schemas, the config file.
NOT_NAMES = {"normtest.report", "normtest.comparison", "normtest.toml"}
_DOTTED = re.compile(r"(?<![\w/.])(normtest(?:\.\w+)+)")


def resolves(name: str) -> bool:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attribute in parts[cut:]:
                found = getattr(found, attribute)
        except AttributeError:
            return False
        return True
    return False


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_dotted_name_in_the_document_resolves(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    names = {m.group(1).rstrip(".") for m in _DOTTED.finditer(text)} - NOT_NAMES
    assert not sorted(n for n in names if not resolves(n))


def test_a_stale_name_is_found() -> None:
    assert resolves("normtest.stats.multiplicity.adjust")
    assert not resolves("normtest.stats.adjust")  # the package re-exports nothing
    assert not resolves("normtest.catalogue")
