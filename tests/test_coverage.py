"""A model that lacks vectors for much of the word sample: the answer says so first, and every
word row says which population its estimate describes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from normtest.audit.report import Report
from normtest.cli.common import EXIT_OK
from normtest.cli.main import main
from normtest.data.information.samples import default_word_sample

WORDS = 300


def _vector_file(path: Path, share: float) -> tuple[Path, int]:
    """A word2vec text file with random vectors for the first ``share`` of the sample."""
    words = default_word_sample(size=WORDS, seed=0)
    kept = words[: int(len(words) * share)]
    rng = np.random.default_rng(0)
    lines = [f"{len(kept)} 16"] + [" ".join([w, *(f"{x:.5f}" for x in rng.normal(size=16))])
                                    for w in kept]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, len(kept)


def _audit(path: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, Report]:
    code = main(["audit", "--model", str(path), "--suite", "word", "--words", str(WORDS),
                 "--resamples", "200", "--out", str(out), "--quiet"])
    assert code == EXIT_OK
    return capsys.readouterr().out, Report.read(out / "report.json")


@pytest.mark.slow
def test_a_vector_file_covering_a_third_of_the_sample_says_so_first(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, kept = _vector_file(tmp_path / "third.vec", 1 / 3)
    text, report = _audit(path, tmp_path / "out", capsys)
    head = text.splitlines()[:10]
    missing = WORDS - kept
    assert any(f"no vector for {missing:,} of the {WORDS:,} sample words" in line
               for line in head), "\n".join(head)
    assert report.provenance["words_requested"] == WORDS
    assert report.provenance["words"] == kept
    measured = [r for r in report.results if r.measurement is not None]
    assert measured and all(f"the {kept:,} of {WORDS:,} sample words" in r.details["population"]
                            for r in measured)


@pytest.mark.slow
def test_a_model_with_the_whole_sample_adds_no_note(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = _vector_file(tmp_path / "all.vec", 1.0)
    text, report = _audit(path, tmp_path / "out", capsys)
    assert "no vector for" not in text
    assert report.missing_vectors is None
    assert all("population" not in r.details for r in report.results)
