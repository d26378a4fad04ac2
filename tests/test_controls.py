"""Controls on the audit's own data (normtest.scorecard.controls, normtest.claims.control_models):
each line's negative control comes out contradicted and its confound control is never replicated
beyond its baseline, on real models at small sizes; its positive control, planted at the smallest
effect the line must detect, comes out replicated wherever the sample gives it the power to, and
otherwise the line keeps the status its rows give it (undecided says what sample would decide
it); a line whose controls misbehave is invalid, never replicated or contradicted; a line's power
is joint over its rows."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from normtest.adapters.decoder import DecoderAdapter
from normtest.adapters.encoder import EncoderAdapter
from normtest.adapters.static import StaticVectors
from normtest.audit.report import Report
from normtest.audit.run import AuditSettings, run_audit
from normtest.claims.line_declarations import builder_of, controls
from normtest.data.information.frequency import WordfreqSource
from normtest.data.information.samples import default_word_sample
from normtest.errors import NormtestError
from normtest.gate.config import GateConfig
from normtest.gate.run import evaluate
from normtest.models.synthetic import SubwordModel
from normtest.render.html import render_html
from normtest.render.terminal import audit_text
from normtest.scorecard.controls import MISS_POWER, POWER_AT_MARGIN, Control, LineControls
from normtest.scorecard.lines import STATUSES

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

#: Small sizes: the word, conditions, growth and fixed-point controls have the power they need
#: here; the composition line (multi-token contrasts) and the text line (120 sentences) do not at
#: their margins, which is what their positive controls must say (fewer than 30 documents leave
#: SmolLM2's CER positive control undecided).
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


#: The lines whose positive control has the power it needs at the small sizes above.
POWERED = ("word_level", "conditions", "cer_growth", "fixed_points")
#: The lines whose rows declare a baseline (and so run a confound control).
BASED = ("word_level", "composition", "text_level")


def _behaves(checked: LineControls | None, line: str) -> None:
    """A line's controls did what they were built to: the negative one contradicted, the
    confound one (where the line has a baseline) not replicated beyond it, and the positive one
    replicated with power where the sample has it — else the line says which sample would."""
    assert checked is not None and not checked.problem
    assert checked.positive is not None and checked.negative is not None
    assert checked.negative.status == "contradicted", checked.negative
    assert (checked.confound is not None) == (line in BASED)
    if checked.confound is not None:
        assert checked.confound.ok and checked.confound.beyond != "replicated", checked.confound
    if line in POWERED:
        assert checked.positive.status == "replicated", checked.positive
        assert checked.valid and checked.reason() == ""
    else:  # the sample lacks the power: not misbehaviour, the line says what would decide it
        assert not checked.positive.powered and checked.positive.needs, checked.positive
        assert checked.positive.status != "contradicted" and checked.valid, checked.reason()
        assert checked.underpowered and "power" in checked.positive.sample_clause()
        needed = int(checked.positive.needs.split()[-1].replace(",", ""))
        assert needed > {"composition": SMALL.words, "text_level": SMALL.sentences}[line]


@pytest.mark.parametrize("line", ["word_level", "conditions", "composition", "cer_growth",
                                  "fixed_points", "text_level"])
def test_every_control_of_an_encoder_behaves_as_designed(minilm_report: Report, line: str) -> None:
    _behaves(minilm_report.controls_of(line), line)


@pytest.mark.parametrize("line", ["word_level", "conditions", "composition", "cer_growth",
                                  "fixed_points", "text_level"])
def test_every_control_of_a_decoder_behaves_as_designed(smollm2_report: Report,
                                                        line: str) -> None:
    _behaves(smollm2_report.controls_of(line), line)


def test_the_confound_control_passes_as_stated_and_fails_beyond(minilm_report: Report) -> None:
    """The confound control keeps MiniLM's own token counts and norms that carry nothing beyond
    them: the word line as stated comes out replicated on it (the token count predicts IC), its
    beyond reading does not."""
    checked = minilm_report.controls_of("word_level")
    assert checked is not None and checked.confound is not None
    assert checked.confound.status == "replicated"
    assert checked.confound.beyond == "contradicted"
    assert all(r["beyond"]["verdict"] == "FAIL" for r in checked.confound.rows)
    assert "token counts" in checked.confound.note


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


def test_an_underpowered_audit_keeps_its_level_alpha_verdict() -> None:
    """A model whose mean is the faithful composition contradicts the composition line at a
    sample that can decide it (8,000 words); at 100 words (about fifty of several tokens) the
    line lacks the power it needs at its margin, yet a Holm-adjusted FAIL is a level-α decision
    at any power: the line stays contradicted (never invalid for low power) and says how little
    power it had and the sample that would give it 0.8."""
    sample = default_word_sample(size=8000, seed=0)
    ic = WordfreqSource().information_content(sample)
    info = dict(zip(ic.words, (float(v) for v in ic.values), strict=True))
    model = SubwordModel(info, faithful="mean", seed=0)
    claims = ["word.norm_ic.contrast"]
    decided = run_audit(model, claim_ids=claims, words=list(info),
                        settings=AuditSettings(words=8000, resamples=300, robustness=False))
    line = next(x for x in decided.scorecard if x.key == "composition")
    assert line.status == "contradicted", line.reason
    few = list(info)[:100]
    small = run_audit(model, claim_ids=claims, words=few,
                      settings=AuditSettings(words=100, resamples=300, robustness=False))
    line = next(x for x in small.scorecard if x.key == "composition")
    assert line.status == "contradicted", line.reason
    assert "a level-α decision at any power" in line.reason and "--words" in line.reason
    checked = small.controls_of("composition")
    assert checked is not None and checked.valid and checked.underpowered


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
    lines = audit_text(report, width=None).splitlines()
    at = next(i for i, row in enumerate(lines) if row.split()[:2] == ["INVALID", "word_level"])
    assert "invalid: its positive control (built to be replicated) came out undecided" in \
        "\n".join(lines[at + 1:at + 3])
    assert "1 line invalid by its controls" in next(x for x in lines if x.startswith("scorecard"))
    page = render_html(report)
    assert 'id="controls-word_level"' in page and "built to be replicated" in page
    again = Report.from_json(report.to_json())
    assert next(x for x in again.scorecard if x.key == "word_level").status == "invalid"
    stored = {c["line"]: c for c in json.loads(report.to_json())["controls"]}
    assert stored["word_level"]["valid"] is False
    assert not evaluate(report, GateConfig(replicated=("word_level",))).passed


def test_a_line_without_power_at_its_margin_says_so_and_keeps_its_status(
        minilm: EncoderAdapter) -> None:
    """MiniLM's word line at 300 words: its rows replicate (every row PASS: a level-α decision
    at any power), but the audit's sample gives the line power below 0.8 at the smallest effect
    it must detect (ρ 0.4 against 0.3). The line stays replicated and says so, naming the sample
    that would give it 0.8; at 5,000 words it has the power, with valid controls."""
    claims = ["word.norm_ic"]
    few = run_audit(minilm, claim_ids=claims, settings=AuditSettings(
        words=300, resamples=300, robustness=False))
    line = next(x for x in few.scorecard if x.key == "word_level")
    assert line.status == "replicated", line.reason
    positive = few.controls_of("word_level").positive
    assert positive is not None and positive.planted == 0.4
    assert positive.power is not None and positive.power < POWER_AT_MARGIN
    assert positive.needs.startswith("--words ") and "level-α decision" in line.reason
    assert positive.needs in line.reason
    many = run_audit(minilm, claim_ids=claims, settings=AuditSettings(
        words=5000, resamples=300, robustness=False))
    line = next(x for x in many.scorecard if x.key == "word_level")
    assert line.status == "replicated", line.reason
    checked = many.controls_of("word_level")
    assert checked is not None and checked.valid and checked.positive.power > 0.99
    assert next(r for r in checked.positive.rows)["estimate"] == pytest.approx(0.4, abs=0.05)


def test_only_a_misbehaving_control_makes_a_line_invalid() -> None:
    """The confound control must not be replicated beyond its baseline: where it is (the beyond
    reading fooled by the token count), the line is invalid; as stated it may pass. The negative
    control must not pass; the positive one must pass where the sample has the power for it,
    and must never be contradicted. Low power alone is not misbehaviour."""
    fooled = LineControls("word_level", Control("positive", "replicated", power=0.95),
                          Control("negative", "contradicted"),
                          confound=Control("confound", "replicated", beyond="replicated"))
    assert not fooled.valid and "confound control" in fooled.reason()
    assert fooled.short() == "confound replicated beyond its baseline"
    held = LineControls("word_level", Control("positive", "replicated", power=0.95),
                        Control("negative", "contradicted"),
                        confound=Control("confound", "replicated", beyond="contradicted"))
    assert held.valid and held.reason() == ""
    negative = Control("negative", "contradicted")

    def valid(positive: Control, other: Control = negative) -> bool:
        return LineControls("word_level", positive, other).valid

    unpowered = Control("positive", "undecided", planted=0.4, power=0.6, needs="--words 900")
    assert valid(unpowered) and LineControls("word_level", unpowered, negative).underpowered
    assert "--words 900 would give it 0.8" in unpowered.sample_clause()
    assert valid(replace(unpowered, status="replicated"))
    assert not valid(replace(unpowered, status="contradicted"))
    assert not valid(replace(unpowered, power=0.95))  # it had the power and did not pass
    # a miss at power 0.83 is what a sound audit shows one time in six: not invalid; from
    # power 1 − α (MISS_POWER) a miss is evidence at the audit's level, as a negative control's
    # pass is
    assert valid(replace(unpowered, power=0.83)) and MISS_POWER == 0.95
    assert not valid(replace(unpowered, power=MISS_POWER))
    assert not valid(Control("positive", "replicated", power=0.95),
                     Control("negative", "replicated"))  # the audit passes an absent effect
    assert valid(Control("positive", "replicated", power=0.95), Control("negative", "undecided"))
    out_of_reach = replace(unpowered, needs="--documents 2,595",
                           reach=", more than the data hold (212 at most): out of reach of this "
                                 "data")
    assert "out of reach of this data" in out_of_reach.sample_clause()
    # a report read back from a file may lack the planted effect or hold another needs text
    assert "power 0.60 at its margin (every row passing)" in replace(
        unpowered, planted=None).sample_clause()
    assert replace(unpowered, needs="--words many").needed() is None
    assert unpowered.needed() == ("words", 900)
    assert "would give" not in out_of_reach.sample_clause()
    again = LineControls.from_dict(fooled.to_dict())
    assert again.to_dict() == fooled.to_dict() and not again.valid


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
