"""Controls on the audit's own data (normtest.controls, normtest.control_data): each line's
positive control comes out replicated and its negative control contradicted, on real models at
small sizes; a line whose controls misbehave is invalid, never replicated or contradicted; an
underpowered audit says so."""

from __future__ import annotations

import json

import numpy as np
import pytest

from normtest.adapters.decoder import DecoderAdapter
from normtest.adapters.encoder import EncoderAdapter
from normtest.adapters.static import StaticVectors
from normtest.audit import AuditSettings, run_audit
from normtest.config import GateConfig
from normtest.controls import Control, LineControls, builder_of, controls
from normtest.errors import NormtestError
from normtest.gate import evaluate
from normtest.information import WordfreqSource, default_word_sample
from normtest.render.console import audit_text
from normtest.render.html import render_html
from normtest.report import Report
from normtest.scorecard import STATUSES
from normtest.synthetic import SubwordModel

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

#: Small but not underpowered: every control of MiniLM and SmolLM2 behaves at these sizes, far
#: from the threshold (the text line's controls at 120 sentences: MiniLM's positive rows
#: ρ ≥ 0.49 at their 95% lower bound, its negative rows ≤ 0.13 at the upper; fewer than 30
#: documents leave SmolLM2's CER positive control undecided).
SMALL = AuditSettings(words=1500, documents=30, sentences=120, resamples=300,
                      robustness=False)


@pytest.fixture(scope="module")
def minilm_report(minilm: EncoderAdapter) -> Report:
    return run_audit(minilm, settings=SMALL)


@pytest.fixture(scope="module")
def smollm2_report(smollm2: DecoderAdapter) -> Report:
    return run_audit(smollm2, settings=SMALL)


@pytest.fixture(scope="module")
def glove_report(glove: StaticVectors) -> Report:
    return run_audit(glove, settings=AuditSettings(words=1500, resamples=300, robustness=False))


@pytest.mark.parametrize("line", ["word_level", "conditions", "composition", "cer_growth",
                                  "fixed_points", "text_level"])
def test_every_control_of_an_encoder_behaves_as_designed(minilm_report: Report, line: str) -> None:
    checked = minilm_report.controls_of(line)
    assert checked is not None and not checked.problem
    assert checked.positive is not None and checked.negative is not None
    assert checked.positive.status == "replicated", checked.positive
    assert checked.negative.status == "contradicted", checked.negative
    assert checked.valid and checked.reason() == ""


@pytest.mark.parametrize("line", ["word_level", "conditions", "composition", "cer_growth",
                                  "fixed_points", "text_level"])
def test_every_control_of_a_decoder_behaves_as_designed(smollm2_report: Report,
                                                        line: str) -> None:
    checked = smollm2_report.controls_of(line)
    assert checked is not None and checked.positive is not None and checked.negative is not None
    assert checked.positive.status == "replicated", checked.positive
    assert checked.negative.status == "contradicted", checked.negative
    assert checked.valid and checked.reason() == ""


@pytest.mark.parametrize("line", ["word_level", "conditions"])
def test_every_control_of_static_vectors_behaves_as_designed(glove_report: Report,
                                                              line: str) -> None:
    checked = glove_report.controls_of(line)
    assert checked is not None and checked.valid, checked.reason()
    # the controls run through the very rows the line is decided by
    decided = {r.id for r in next(x for x in glove_report.scorecard if x.key == line).rows
               if not r.details.get("reading")}
    assert {r["id"] for r in checked.positive.rows} == decided


def test_controls_are_built_from_the_audits_own_data(minilm_report: Report) -> None:
    words = minilm_report.controls_of("word_level")
    assert words is not None and "1,500 words" in words.positive.note
    texts = minilm_report.controls_of("text_level")
    assert texts is not None and f"{minilm_report.provenance['sentences']} sentences" in \
        texts.positive.note


def test_an_underpowered_audit_is_invalid_rather_than_contradicted() -> None:
    """A model whose mean is the faithful composition contradicts the composition line at a
    sample that can decide it; at 100 words (about fifty of several tokens) its controls cannot
    both be decided, so the line is invalid instead, with the reason."""
    sample = default_word_sample(size=1500, seed=0)
    ic = WordfreqSource().information_content(sample)
    info = dict(zip(ic.words, (float(v) for v in ic.values), strict=True))
    model = SubwordModel(info, faithful="mean", seed=0)
    claims = ["word.norm_ic.contrast"]
    decided = run_audit(model, claim_ids=claims, words=list(info),
                        settings=AuditSettings(words=1500, resamples=300, robustness=False))
    line = next(x for x in decided.scorecard if x.key == "composition")
    assert line.status == "contradicted"
    few = list(info)[:100]
    small = run_audit(model, claim_ids=claims, words=few,
                      settings=AuditSettings(words=100, resamples=300, robustness=False))
    line = next(x for x in small.scorecard if x.key == "composition")
    assert line.status == "invalid" and line.measured == "contradicted"
    assert "control (built to be" in line.reason and "at this sample" in line.reason


def test_invalid_lines_everywhere(minilm_report: Report) -> None:
    """An invalid line is a status of its own in the scorecard, the terminal, the HTML, the
    stored report and the gate (it is never replicated)."""
    assert "invalid" in STATUSES
    bad = LineControls("word_level", Control("positive", "undecided"),
                       Control("negative", "contradicted"))
    others = tuple(c for c in minilm_report.controls if c.line != "word_level")
    report = Report(minilm_report.results, minilm_report.model, minilm_report.provenance,
                    minilm_report.data, controls=(bad, *others))
    line = next(x for x in report.scorecard if x.key == "word_level")
    assert line.status == "invalid" and line.measured == "replicated"
    text = audit_text(report)
    shown = next(row for row in text.splitlines() if "Word level" in row)
    assert "INVALID" in shown and "positive: undecided" in shown
    assert "controls ok" in next(row for row in text.splitlines() if "Fixed points" in row)
    page = render_html(report)
    assert 'id="controls"' in page and "built to be replicated" in page
    again = Report.from_json(report.to_json())
    assert next(x for x in again.scorecard if x.key == "word_level").status == "invalid"
    stored = {c["line"]: c for c in json.loads(report.to_json())["controls"]}
    assert stored["word_level"]["valid"] is False
    assert not evaluate(report, GateConfig(replicated=("word_level",))).passed


def test_controls_are_declared_once() -> None:
    assert builder_of("word_level") is not None and builder_of("no_such_line") is None
    with pytest.raises(NormtestError, match="declared twice"):
        controls("word_level", lambda context: ({}, ""))


def test_no_controls_when_asked() -> None:
    sample = default_word_sample(size=300, seed=0)
    ic = WordfreqSource().information_content(sample)
    words, values = list(ic.words), np.asarray(ic.values)
    from normtest.adapters.static import StaticVectors

    vectors = np.random.default_rng(0).standard_normal((len(words), 8)) * values[:, None]
    model = StaticVectors("plain", words, vectors, "synthetic:plain")
    report = run_audit(model, claim_ids=["word.norm_ic"], words=words,
                       settings=AuditSettings(words=300, resamples=200, robustness=False,
                                              controls=False))
    assert report.controls == () and "controls" not in json.loads(report.to_json())
