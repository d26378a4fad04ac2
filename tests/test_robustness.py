"""Robustness (normtest.scorecard.robustness): each line re-decided under its reasonable analyses.

Known truth on real static adapters built from the default word sample: vectors whose squared
norm is a word's IC (plus a little noise) give a word-level line that survives every analysis
(robust); vectors whose norms follow IC only among the rarer half of the words give a line the
frequent half contradicts (not robust, and the flipping choice named). Then the declarations
(the margin is no analysis), analyses left out (too small, identical data), the one wording of
the share, the stored form, the terminal, the HTML figure and the gate; the sample axis (two
disjoint halves of the audit's sample) and a line only one half supports.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from normtest.adapters.static import StaticVectors
from normtest.audit.report import Report
from normtest.audit.run import AuditSettings, run_audit
from normtest.claims.line_declarations import space_of, specifications
from normtest.cli.main import main
from normtest.data.information.frequency import WordfreqSource
from normtest.data.information.samples import default_word_sample
from normtest.data.respecified import sample_half
from normtest.errors import NormtestError
from normtest.gate.config import GateConfig
from normtest.gate.run import evaluate
from normtest.render.gate import gate_markdown
from normtest.render.html import render_html
from normtest.render.terminal import audit_text
from normtest.scorecard.robustness import ROBUST_SHARE, LineRobustness, Specification

#: Enough words that each frequency half of each half-sample (800 words) gives the criterion
#: power 0.8 at its margin: an analysis with less is left out rather than counted
WORDS = 3200
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
    assert "population=frequent" in line.summary()
    assert line.short() == f"holds in {line.share:.0%} of {len(line.specifications)} analyses"


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
    assert "holds in " in word and " analyses" in word
    faithful_line = next(line for line in audit_text(faithful).splitlines()
                         if "Word level" in line)
    assert "holds in 100% of" in faithful_line
    page = render_html(rare_only)
    assert 'id="robustness"' in page and "specification curve of word_level" in page
    failed = evaluate(rare_only, GateConfig(require_robust=("word_level",)))
    passed = evaluate(faithful, GateConfig(require_robust=("word_level",)))
    assert not failed.passed and passed.passed
    assert "holds in" in gate_markdown(failed) and "require_robust" not in gate_markdown(failed)
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
    """The margin is the criterion, not an analysis: a space that names it is refused."""
    assert set(space_of("word_level").choices) == {"transform", "ic_source", "population",
                                                   "sample"}
    assert space_of("no_such_line").choices == {}
    with pytest.raises(NormtestError, match="unknown choices"):
        specifications("word_level", geometry=("raw",))
    with pytest.raises(NormtestError, match="population takes"):
        specifications("lab_line", population=("everyone",))
    with pytest.raises(NormtestError, match="at least one value"):
        specifications("lab_line", grid=())
    with pytest.raises(NormtestError, match="the margin is the criterion, not an analysis"):
        specifications("lab_line", margin=("stated", "looser"))
    with pytest.raises(NormtestError, match="declared twice"):
        specifications("word_level", grid=("every",))


def test_share_modal_status_and_one_wording() -> None:
    reference = {"transform": "raw", "population": "all"}
    specs = (Specification(reference, "replicated"),
             Specification({"transform": "center_zipf", "population": "all"}, "contradicted"),
             Specification({"transform": "raw", "population": "rare"}, "replicated"),
             Specification({"transform": "center_zipf", "population": "rare"}, "replicated"))
    line = LineRobustness("h", "replicated", reference, specs,
                          left_out={"too small": 2, "identical": 1})
    assert line.share == 0.75 and not line.robust and ROBUST_SHARE == 0.8
    assert line.flips == [("transform", "center_zipf", "contradicted")]
    assert line.short() == line.label == "holds in 75% of 4 analyses"
    assert line.summary().startswith("holds in 75% of 4 analyses (not robust at 80%, 3 left "
                                     "out: 2 too small, 1 identical)")
    assert LineRobustness.from_dict(line.to_dict()).to_dict() == line.to_dict()
    mostly = LineRobustness("h", "replicated", reference, (
        specs[0], *(Specification(s.choices, "undecided") for s in specs[1:])))
    assert mostly.modal == "undecided" and mostly.label.endswith("; mostly undecided")
    assert mostly.share_text == "holds in 25% of 4 analyses"
    # the terminal keeps the share whole in its column, the modal status on the line below
    from normtest.render.terminal import scorecard_part
    from normtest.scorecard.lines import Line

    shown = scorecard_part([Line("h", "Word level", "replicated", "ok", short="Word level")],
                           robustness={"h": mostly}, width=70)
    text = "\n".join(part.plain for part in shown if hasattr(part, "plain"))
    assert "holds in 25% of 4 analyses\n" in text + "\n", text
    assert "mostly UNDECIDED across its analyses" in text, text
    few = LineRobustness("h", "replicated", reference, specs[:1], left_out={"too small": 26})
    assert few.label == "too few analyses: 1 of 27 can tell" and not few.robust
    empty = LineRobustness("h", "undecided", {})
    assert empty.short() == "robustness not assessed" and not empty.robust


def test_analyses_that_cannot_tell_are_left_out(sample: tuple[list[str], np.ndarray]) -> None:
    """Over 300 words the frequent and rare halves (150 words each) give the word line's
    criterion power below 0.8 at ρ 0.4: those analyses are left out and counted, not counted
    as disagreeing; the audit's own analysis always counts."""
    words, ic = sample
    small = words[:300]
    noisy = np.exp(ic[:300] / 5 + np.random.default_rng(0).normal(0, 1.0, 300))
    model = _model("small", small, noisy)
    report = run_audit(model, claim_ids=["word.norm_ic"], words=small,
                       settings=AuditSettings(words=300, resamples=200, controls=False))
    line = report.robustness_of("word_level")
    assert line is not None and line.left_out.get("too small", 0) > 0, line.summary()
    assert dict(line.reference) in [dict(s.choices) for s in line.specifications]
    assert "left out" in line.summary()


def test_the_halves_of_a_sample_are_disjoint_whole_units_drawn_by_the_seed() -> None:
    """Each half holds whole units (a document's sentences go together), the two halves part
    the sample between them, ``drawn`` is all of it, and another seed draws other halves."""
    documents = np.repeat(np.arange(41), 6)[::-1]
    first, second = (sample_half(documents, h, seed=0) for h in ("half_1", "half_2"))
    assert not set(first) & set(second) and sorted([*first, *second]) == list(range(246))
    assert abs(len(set(documents[first])) - len(set(documents[second]))) == 1
    assert not set(documents[first]) & set(documents[second])  # no document split
    assert list(sample_half(documents, "drawn", seed=0)) == list(range(246))
    assert list(sample_half(documents, "half_1", seed=0)) == list(first)
    assert list(sample_half(documents, "half_1", seed=1)) != list(first)
    with pytest.raises(NormtestError, match="unknown sample"):
        sample_half(documents, "half_3", seed=0)


def test_a_line_one_half_of_the_sample_contradicts_is_not_robust(
        sample: tuple[list[str], np.ndarray]) -> None:
    """Norms track IC on one half of the words the audit's seed draws and are shuffled on the
    other: over all words the line is replicated (ρ ≈ 0.5), on the shuffled half it is
    contradicted, and the sample axis names that half as the choice that flips it."""
    words, ic = sample
    squared = ic.copy()
    other = sample_half(np.arange(len(words)), "half_2", seed=SETTINGS.seed)
    squared[other] = np.random.default_rng(3).permutation(squared[other])
    report = run_audit(_model("one_half", words, squared), claim_ids=["word.norm_ic"],
                       words=words, settings=replace(SETTINGS, controls=False))
    line = report.robustness_of("word_level")
    assert line is not None and line.status == "replicated" and not line.robust, line.summary()
    flips = {(c, v): s for c, v, s in line.flips}
    assert flips.get(("sample", "half_2")) == "contradicted", line.flips
    assert ("sample", "half_1") not in flips
    assert {s.choices["sample"] for s in line.specifications} == {"drawn", "half_1", "half_2"}
