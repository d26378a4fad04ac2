"""The numbers the docs quote are the tool's own: each generated block of the docs
(``scripts/docs_numbers.py``) and the leaderboard page (``scripts/leaderboard_docs.py``) is what
its data file under ``docs/numbers/`` renders to, so a hand-edited number, or a data file
regenerated without its block, fails here."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests/repo_scripts.py
from repo_scripts import ROOT, load_script

docs_numbers: Any = load_script("docs_numbers")
leaderboard_docs: Any = load_script("leaderboard_docs")


@pytest.mark.parametrize("name", sorted(docs_numbers.BLOCKS))
def test_each_generated_block_is_what_its_numbers_render_to(name: str) -> None:
    assert docs_numbers.in_document(name) == docs_numbers.rendered(name)


def test_the_leaderboard_page_is_what_its_numbers_render_to() -> None:
    """docs/leaderboard.md is written whole from docs/numbers/leaderboard.json (the stored
    comparison is too large to keep); a hand edit of the page fails here."""
    numbers = json.loads((ROOT / "docs" / "numbers" / "leaderboard.json").read_text(
        encoding="utf-8"))
    page = (ROOT / "docs" / "leaderboard.md").read_text(encoding="utf-8")
    assert page == leaderboard_docs.leaderboard_page(numbers)
    assert [row[0] for row in numbers["grid"]] and len(numbers["names"]) == 5
    edited = page.replace(" PASS |", " FAIL |", 1)
    assert edited != page and edited != leaderboard_docs.leaderboard_page(numbers)


def test_a_hand_edited_number_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Copy the docs and the numbers, change one figure in the copy's text: the check finds it;
    change it back: it passes again."""
    name = "robustness"
    data_file, _, _, document = docs_numbers.BLOCKS[name]
    (tmp_path / "docs" / "numbers").mkdir(parents=True)
    (tmp_path / "docs" / "numbers" / data_file).write_text(
        (ROOT / "docs" / "numbers" / data_file).read_text(encoding="utf-8"), encoding="utf-8")
    text = (ROOT / document).read_text(encoding="utf-8")
    monkeypatch.setattr(docs_numbers, "ROOT", tmp_path)
    monkeypatch.setattr(docs_numbers, "NUMBERS", tmp_path / "docs" / "numbers")
    copy = tmp_path / document
    copy.write_text(text, encoding="utf-8")
    assert docs_numbers.in_document(name) == docs_numbers.rendered(name)
    numbers = json.loads((tmp_path / "docs" / "numbers" / data_file).read_text(encoding="utf-8"))
    quoted = numbers["models"][0]["lines"]["word_level"]["label"]
    assert quoted in text
    edited = quoted.replace("%", "1%", 1) if "%" in quoted else quoted + " (edited)"
    copy.write_text(text.replace(quoted, edited, 1), encoding="utf-8")
    assert docs_numbers.in_document(name) != docs_numbers.rendered(name)


def test_every_line_of_the_default_reports_is_quoted() -> None:
    numbers = json.loads((ROOT / "docs" / "numbers" / "robustness.json").read_text(
        encoding="utf-8"))
    assert [m["model"] for m in numbers["models"]] == ["minilm-l6", "smollm2-135m",
                                                       "nomic-embed-text-v1.5"]
    for model in numbers["models"]:
        assert set(model["lines"]) == set(docs_numbers.LINES), model["model"]
        for line in model["lines"].values():
            assert "halves" in line["stability"] and line["label"]
