"""Robustness (normtest.robustness): each line re-decided under its reasonable specifications.

Known truth on real static adapters built from the default word sample: vectors whose squared
norm is a word's IC (plus a little noise) give a word-level line that survives every
specification (robust); vectors whose norms follow IC only among the rarer half of the words
give a line the frequent half contradicts (fragile, and the flipping choice named). Then the
declarations, the stored form, the terminal, the HTML figure and the gate.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from normtest.adapters.static import StaticVectors
from normtest.audit import AuditSettings, run_audit
from normtest.cli import main
from normtest.config import GateConfig
from normtest.errors import NormtestError
from normtest.gate import evaluate
from normtest.information import WordfreqSource, default_word_sample
from normtest.render.console import audit_text
from normtest.render.gate import gate_markdown
from normtest.render.html import render_html
from normtest.report import Report
from normtest.robustness import (
    ROBUST_SHARE,
    LineRobustness,
    Specification,
    space_of,
    specifications,
)

WORDS = 400
SETTINGS = AuditSettings(words=WORDS, resamples=200)


@pytest.fixture(scope="module")
def sample() -> tuple[list[str], np.ndarray]:
    words = default_word_sample(size=WORDS, seed=0)
    ic = WordfreqSource().information_content(words)
    return list(ic.words), np.asarray(ic.values, dtype=np.float64)


def _model(name: str, words: list[str], squared: np.ndarray) -> StaticVectors:
    rng = np.random.default_rng(0)
    directions = rng.standard_normal((len(words), 24))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    vectors = directions * np.sqrt(squared)[:, None]
    return StaticVectors(name, words, vectors.astype(np.float64), f"synthetic:{name}")


def _audit(model: StaticVectors, words: list[str]) -> Report:
    return run_audit(model, claim_ids=["word.norm_ic"], words=words, settings=SETTINGS)


@pytest.fixture(scope="module")
def faithful(sample: tuple[list[str], np.ndarray]) -> Report:
    """‖e(w)‖² = IC(w)·(1 + 5% noise): the correspondence under every reasonable analysis."""
    words, ic = sample
    noise = np.random.default_rng(1).normal(1.0, 0.05, ic.size)
    return _audit(_model("faithful", words, ic * noise), words)


@pytest.fixture(scope="module")
def rare_only(sample: tuple[list[str], np.ndarray]) -> Report:
    """Norms follow IC among the rarer half; the frequent half's norms are shuffled among
    themselves: over all words ρ stays high (the halves stay apart), within the frequent half
    it is about 0."""
    words, ic = sample
    squared = ic.copy()
    frequent = np.flatnonzero(ic <= np.median(ic))
    squared[frequent] = np.random.default_rng(2).permutation(squared[frequent])
    return _audit(_model("rare_only", words, squared), words)


@pytest.mark.slow
def test_a_faithful_model_is_robust(faithful: Report) -> None:
    line = faithful.robustness_of("word_level")
    assert line is not None and line.status == "replicated"
    assert line.robust and line.share >= ROBUST_SHARE, line.summary()
    assert {s.choices["population"] for s in line.specifications} == {"all", "frequent", "rare"}
    assert any("whole words" in n for n in line.notes)  # one_token/multitoken left out
    # the audit's own specification reproduces the headline exactly
    own = next(s for s in line.specifications if dict(s.choices) == dict(line.reference))
    headline = next(r for r in faithful.results if r.confirmatory)
    assert own.status == "replicated" and own.rows[0]["estimate"] == pytest.approx(
        headline.estimate)


def test_a_model_faithful_on_rare_words_only_is_fragile(rare_only: Report) -> None:
    line = rare_only.robustness_of("word_level")
    assert line is not None and line.status == "replicated" and not line.robust
    flips = {(c, v): s for c, v, s in line.flips}
    assert flips.get(("population", "frequent")) == "contradicted", line.flips
    assert ("population", "rare") not in flips
    assert "population=frequent" in line.short() or "population=frequent" in line.summary()


def test_robustness_is_stored_and_read_back(rare_only: Report) -> None:
    data = json.loads(rare_only.to_json())
    stored = {r["line"]: r for r in data["robustness"]}
    assert stored["word_level"]["robust"] is False
    assert {"choice": "population", "value": "frequent", "status": "contradicted"} in \
        stored["word_level"]["flips"]
    again = Report.from_json(rare_only.to_json())
    line = again.robustness_of("word_level")
    assert line is not None and line.share == rare_only.robustness_of("word_level").share
    assert line.flips == rare_only.robustness_of("word_level").flips


def test_the_terminal_html_and_gate_show_it(rare_only: Report, faithful: Report) -> None:
    text = audit_text(rare_only)
    word = next(line for line in text.splitlines() if "Word level" in line)
    assert "fragile" in word and "population=frequent" in word
    assert "robust" in next(line for line in audit_text(faithful).splitlines()
                            if "Word level" in line)
    page = render_html(rare_only)
    assert 'id="robustness"' in page and "specification curve of word_level" in page
    failed = evaluate(rare_only, GateConfig(require_robust=("word_level",)))
    passed = evaluate(faithful, GateConfig(require_robust=("word_level",)))
    assert not failed.passed and passed.passed
    assert "fragile" in gate_markdown(failed) and "require_robust" not in gate_markdown(failed)
    with pytest.raises(NormtestError, match="no scorecard line 'wordlevel'"):
        evaluate(faithful, GateConfig(require_robust=("wordlevel",)))


def test_the_gate_command_takes_require_robust(rare_only: Report, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = rare_only.write(tmp_path / "report.json")
    assert main(["gate", "--report", str(path), "--require-robust", "word_level"]) == 1
    out = capsys.readouterr().out
    assert "Lines required robust" in out and "❌ `word_level`" in out


def test_no_robustness_when_asked(sample: tuple[list[str], np.ndarray]) -> None:
    words, ic = sample
    report = run_audit(_model("off", words, ic), claim_ids=["word.norm_ic"], words=words,
                       settings=AuditSettings(words=WORDS, resamples=200, robustness=False))
    assert report.robustness == () and "robustness" not in json.loads(report.to_json())


def test_declarations_are_checked() -> None:
    assert set(space_of("word_level").choices) == {"transform", "ic_source", "population",
                                                   "margin"}
    assert set(space_of("no_such_line").choices) == {"margin"}
    with pytest.raises(NormtestError, match="unknown choices"):
        specifications("word_level", geometry=("raw",))
    with pytest.raises(NormtestError, match="population takes"):
        specifications("lab_line", population=("everyone",))
    with pytest.raises(NormtestError, match="at least one value"):
        specifications("lab_line", margin=())
    with pytest.raises(NormtestError, match="declared twice"):
        specifications("word_level", margin=("stated",))


def test_share_flips_and_summary() -> None:
    reference = {"transform": "raw", "margin": "stated"}
    specs = (Specification(reference, "replicated"),
             Specification({"transform": "center_zipf", "margin": "stated"}, "contradicted"),
             Specification({"transform": "raw", "margin": "looser"}, "replicated"),
             Specification({"transform": "center_zipf", "margin": "looser"}, "replicated"))
    line = LineRobustness("h", "replicated", reference, specs)
    assert line.share == 0.75 and not line.robust
    assert line.flips == [("transform", "center_zipf", "contradicted")]
    assert line.short() == "fragile 75% (transform=center_zipf)"
    assert LineRobustness.from_dict(line.to_dict()).to_dict() == line.to_dict()
    empty = LineRobustness("h", "undecided", {})
    assert empty.short() == "robustness not assessed" and not empty.robust
