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
from collections.abc import Sequence
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


@pytest.fixture(scope="module")
def centred_only(sample: tuple[list[str], np.ndarray]) -> Report:
    """IC lives in the vectors' common direction, reversed: e(w) = (3 − 2·u(w))·e₁ + r(w),
    u the IC scaled to [0, 1], r(w) a random unit vector orthogonal to e₁. In raw geometry the
    squared norm falls with IC (contradicted); centring or whitening (Zipfian weights: the
    mean sits at the frequent, low-IC end) leaves a norm that rises with IC (replicated): the
    line's status turns on the geometry, a fragile verdict."""
    words, ic = sample
    rng = np.random.default_rng(4)
    rest = rng.standard_normal((len(words), 23))
    rest /= np.linalg.norm(rest, axis=1, keepdims=True)
    scaled = (ic - ic.min()) / (ic.max() - ic.min())
    vectors = np.column_stack([3 - 2 * scaled, rest])
    model = StaticVectors("centred_only", words, vectors, "synthetic:centred_only")
    return _audit(model, words)


@pytest.mark.slow
def test_a_faithful_model_is_robust(faithful: Report) -> None:
    line = faithful.robustness_of("word_level")
    assert line is not None and line.status == "replicated"
    assert line.robust and line.share >= ROBUST_SHARE, line.summary()
    assert {s.choices["population"] for s in line.specifications} == {"all", "frequent", "rare"}
    assert any("whole words" in n for n in line.notes)  # one_token/multitoken left out
    # the multiverse is the full sample over all words: geometry × IC source, each once
    assert {(s.choices["population"], s.choices["sample"]) for s in line.analyses} == {
        ("all", "drawn")}
    assert len(line.analyses) == 9 and len(line.counted) == 9
    # every subpopulation and every half gives it too
    assert [(c, v, s.status) for c, v, s in line.heterogeneity] == [
        ("population", "frequent", "replicated"), ("population", "rare", "replicated")]
    agree, halves = line.stability
    assert halves == 18 and agree == 18, line.summary()
    # the audit's own specification reproduces the headline exactly
    own = next(s for s in line.specifications if dict(s.choices) == dict(line.reference))
    headline = next(r for r in faithful.results if r.confirmatory)
    assert own.status == "replicated" and own.rows[0]["estimate"] == pytest.approx(
        headline.estimate)


def test_a_model_faithful_on_rare_words_only_is_heterogeneous_not_fragile(
        rare_only: Report) -> None:
    """Over all words every analysis replicates the line (robust); the frequent half, another
    estimand, contradicts it: the panel shows it, the share does not fold it in."""
    line = rare_only.robustness_of("word_level")
    assert line is not None and line.status == "replicated" and line.robust, line.summary()
    panel = {v: s.status for _, v, s in line.heterogeneity}
    assert panel == {"frequent": "contradicted", "rare": "replicated"}, panel
    assert line.flips == []  # a subpopulation is no analysis of this line
    assert "by subpopulation: frequent contradicted, rare replicated" in line.summary()
    assert line.short() == (f"holds in {line.share:.0%} of {len(line.counted)} analyses; "
                            "halves agree 18 of 18")


@pytest.mark.slow
def test_a_model_whose_verdict_turns_on_the_geometry_is_fragile(centred_only: Report) -> None:
    """The static model's line reads whitened geometry (its reference): replicated there and
    after centring, contradicted in raw geometry under every IC source: 6 of 9 analyses."""
    line = centred_only.robustness_of("word_level")
    assert line is not None and line.status == "replicated" and not line.robust, \
        line.summary()
    assert line.reference["transform"] == "whiten_zipf"
    assert line.statuses == {"replicated": 6, "contradicted": 3}, line.summary()
    flips = {(c, v): s for c, v, s in line.flips}
    assert flips == {("transform", "raw"): "contradicted"}, line.flips
    assert line.share == pytest.approx(2 / 3) and "transform=raw gives contradicted" in \
        line.summary()


def test_robustness_is_stored_and_read_back(rare_only: Report) -> None:
    data = json.loads(rare_only.to_json())
    stored = {r["line"]: r for r in data["robustness"]}["word_level"]
    assert stored["robust"] is True and stored["stability"]["halves"] == 18
    assert {"choice": "population", "value": "frequent", "status": "contradicted",
            "can_tell": True} in stored["heterogeneity"]
    again = Report.from_json(rare_only.to_json())
    line, before = again.robustness_of("word_level"), rare_only.robustness_of("word_level")
    assert line is not None and before is not None
    assert line.to_dict() == before.to_dict()


def test_the_terminal_html_and_gate_show_it(centred_only: Report, faithful: Report) -> None:
    def under(report: Report, key: str) -> str:  # the line under the scorecard line ``key``
        lines = audit_text(report, width=None).splitlines()
        at = next(i for i, line in enumerate(lines) if line.split()[1:2] == [key])
        return lines[at + 1]

    assert under(centred_only, "word_level").split()[0] == "fragile:"
    assert "gives contradicted" in under(centred_only, "word_level")
    assert under(faithful, "word_level").split()[:3] == ["robust", "(100%", "of"]
    page = render_html(centred_only)
    assert 'id="robustness-word_level"' in page and "specification curve of word_level" in page
    failed = evaluate(centred_only, GateConfig(require_robust=("word_level",)))
    passed = evaluate(faithful, GateConfig(require_robust=("word_level",)))
    assert not failed.passed and passed.passed
    assert "holds in" in gate_markdown(failed) and "require_robust" not in gate_markdown(failed)
    with pytest.raises(NormtestError, match="no scorecard line 'wordlevel'"):
        evaluate(faithful, GateConfig(require_robust=("wordlevel",)))


def test_the_gate_command_takes_require_robust(centred_only: Report, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = centred_only.write(tmp_path / "report.json")
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
    reference = {"transform": "raw", "ic_source": "wordfreq", "population": "all",
                 "sample": "drawn"}

    def spec(status: str, can_tell: bool = True, **changed: str) -> Specification:
        return Specification({**reference, **changed}, status, can_tell=can_tell)

    specs = (spec("replicated"), spec("contradicted", transform="center_zipf"),
             spec("replicated", ic_source="corpus"),
             spec("replicated", transform="center_zipf", ic_source="corpus"),
             spec("undecided", False, ic_source="subtitles"),  # cannot tell: left out
             spec("undecided", population="frequent"),  # a subpopulation: the panel
             spec("replicated", sample="half_1"), spec("undecided", sample="half_2"),
             spec("replicated", sample="half_1", transform="center_zipf"))
    line = LineRobustness("h", "replicated", reference, specs,
                          left_out={"too small": 1, "identical": 1})
    assert len(line.analyses) == 5 and len(line.counted) == 4
    assert line.share == 0.75 and not line.robust and ROBUST_SHARE == 0.8
    assert line.flips == [("transform", "center_zipf", "contradicted")]
    assert line.stability == (1, 3)  # half_1 agrees, half_2 does not; center_zipf's half_1 not
    assert [(c, v, s.status) for c, v, s in line.heterogeneity] == [
        ("population", "frequent", "undecided")]
    assert line.label == "holds in 75% of 4 analyses"
    assert line.short() == "holds in 75% of 4 analyses; halves agree 1 of 3"
    assert line.summary().startswith(
        "holds in 75% of 4 analyses (not robust at 80%, 2 left out: 1 too small, 1 identical); "
        "halves agree 1 of 3; by subpopulation: frequent undecided: transform=center_zipf "
        "gives contradicted")
    assert LineRobustness.from_dict(line.to_dict()).to_dict() == line.to_dict()
    mostly = LineRobustness("h", "replicated", reference, (
        specs[0], *(Specification(s.choices, "undecided") for s in specs[1:4])))
    assert mostly.modal == "undecided" and mostly.label.endswith("; mostly undecided")
    assert mostly.share_text == "holds in 25% of 4 analyses"
    # an undecided headline shows how its analyses fall, never a share that "holds"
    open_line = LineRobustness("h", "undecided", reference, (
        spec("undecided"), spec("undecided", transform="center_zipf"),
        spec("replicated", ic_source="corpus")))
    assert open_line.share_text == "3 analyses: 2 undecided, 1 replicated"
    assert not open_line.robust and "robust at" not in open_line.summary()
    # the headline is held to the same power filter as every other analysis
    unpowered = LineRobustness("h", "replicated", reference, (
        spec("replicated", False), spec("replicated", transform="center_zipf")))
    assert unpowered.counted == (unpowered.specifications[1],)
    # the terminal says it in words to act on — fragile, and the choice that flips it — and
    # the modal status, under the line
    from normtest.render.terminal import scorecard_part
    from normtest.scorecard.lines import Line

    assert mostly.advice == "fragile: transform=center_zipf gives undecided"
    shown = scorecard_part([Line("h", "Word level", "replicated", "ok", short="Word level")],
                           robustness={"h": mostly}, width=90)
    text = "\n".join(part.plain for part in shown if hasattr(part, "plain"))
    assert "fragile: transform=center_zipf gives undecided · mostly UNDECIDED across its " \
           "analyses" in text, text
    few = LineRobustness("h", "replicated", reference, specs[:1], left_out={"too small": 26})
    assert few.label == "too few analyses: 1 of 1 can tell" and not few.robust
    empty = LineRobustness("h", "undecided", {})
    assert empty.short() == "robustness not assessed" and not empty.robust


def _simulated_robust_rate(effects: Sequence[float], correlation: float, draws: int,
                           seed: int = 0) -> float:
    """P(robust | the headline replicated) for a line of one row decided under
    ``len(effects)`` analyses of one sample: each analysis's estimate is its true effect (in
    standard errors beyond the margin) plus a standard normal error, the errors correlated
    ``correlation`` between analyses (they read one sample); a row passes when its one-sided
    95% bound clears the margin and fails when it falls short of it (the line's own rule).
    Each simulated line is a :class:`LineRobustness` read by the rule the audit uses."""
    rng = np.random.default_rng(seed)
    k = len(effects)
    cov = np.full((k, k), correlation) + (1 - correlation) * np.eye(k)
    estimates = np.asarray(effects) + rng.multivariate_normal(np.zeros(k), cov, size=draws)
    z = 1.6448536269514722
    statuses = np.where(estimates - z > 0, "replicated",
                        np.where(estimates + z < 0, "contradicted", "undecided"))
    reference = {"transform": "0", "sample": "drawn"}
    robust = replicated = 0
    for row in statuses:
        if row[0] != "replicated":
            continue
        replicated += 1
        line = LineRobustness("h", "replicated", reference, tuple(
            Specification({"transform": str(i), "sample": "drawn"}, str(status))
            for i, status in enumerate(row)))
        robust += line.robust
    return robust / replicated


@pytest.mark.parametrize("correlation", [0.5, 0.9])
def test_the_robust_cut_off_passes_a_homogeneous_line_and_fails_a_partial_one(
        correlation: float) -> None:
    """The cut-off, simulated (docs/statistics.md, "Robustness"): nine analyses of one sample
    whose errors correlate 0.5 or 0.9 (analyses of one sample agree more than independent
    tests). A line whose effect lies 3.29 standard errors beyond its margin under every analysis
    (power 0.95 each) is called robust in at least 90% of the samples that replicate it; one
    whose effect is that large under five of the nine and at the margin under four is called
    robust in at most 6%. 4,000 draws: a Monte-Carlo error of about 0.005 and 0.004."""
    homogeneous = _simulated_robust_rate([3.29] * 9, correlation, 4000)
    partial = _simulated_robust_rate([3.29] * 5 + [0.0] * 4, correlation, 4000)
    assert homogeneous >= 0.90, homogeneous
    assert partial <= 0.06, partial


def test_analyses_that_cannot_tell_are_left_out(sample: tuple[list[str], np.ndarray]) -> None:
    """Over 300 words the halves of the sample (150 words each) give the word line's criterion
    power below 0.8 at ρ 0.4, and so may some analyses of the full sample: those that cannot
    tell are left out and counted, not counted as disagreeing; the audit's own analysis is
    recorded, held to the same filter."""
    words, ic = sample
    small = words[:300]
    noisy = np.exp(ic[:300] / 5 + np.random.default_rng(0).normal(0, 1.0, 300))
    model = _model("small", small, noisy)
    report = run_audit(model, claim_ids=["word.norm_ic"], words=small,
                       settings=AuditSettings(words=300, resamples=200, controls=False))
    line = report.robustness_of("word_level")
    assert line is not None, report.robustness
    assert dict(line.reference) in [dict(s.choices) for s in line.specifications]
    assert any(not s.can_tell for s in line.specifications), line.summary()
    assert len(line.counted) == len(line.analyses) - line.left_out.get("too small", 0)
    assert all(s.can_tell for s in line.counted)


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


def test_a_line_one_half_of_the_sample_contradicts_is_unstable(
        sample: tuple[list[str], np.ndarray]) -> None:
    """Norms track IC on one half of the words the audit's seed draws and are shuffled on the
    other: over all words the line is replicated (ρ ≈ 0.5) under every analysis, and the
    halves tell the sampling stability apart: the shuffled half contradicts every analysis,
    the other agrees."""
    words, ic = sample
    squared = ic.copy()
    other = sample_half(np.arange(len(words)), "half_2", seed=SETTINGS.seed)
    squared[other] = np.random.default_rng(3).permutation(squared[other])
    report = run_audit(_model("one_half", words, squared), claim_ids=["word.norm_ic"],
                       words=words, settings=replace(SETTINGS, controls=False))
    line = report.robustness_of("word_level")
    assert line is not None and line.status == "replicated", line.summary()
    agree, halves = line.stability
    assert halves == 2 * len(line.analyses) and agree <= halves // 2, line.summary()
    by_half = {s.choices["sample"]: s.status for s in line.specifications
               if s.choices["transform"] == line.reference["transform"]
               and s.choices["ic_source"] == line.reference["ic_source"]
               and s.choices["population"] == "all"}
    assert by_half == {"drawn": "replicated", "half_1": "replicated",
                       "half_2": "contradicted"}, by_half
    assert all(c != "sample" for c, _, _ in line.flips)
