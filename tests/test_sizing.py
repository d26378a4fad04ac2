"""An audit that sizes itself before it reads the model's geometry (normtest.audit.sizing): the
sizes it chooses give every line the power it needs at its margin, within what the data hold;
an explicit size wins; the report records what was chosen and why."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from normtest.adapters.encoder import EncoderAdapter
from normtest.audit.run import AuditSettings, claims, run_audit, variants
from normtest.audit.sizing import LineNeed, choose, size_audit
from normtest.base.settings import autosized, resolve
from normtest.data.capacity import bundled
from normtest.errors import NormtestError
from normtest.render.html import render_html
from normtest.render.markdown import render_markdown
from normtest.render.terminal import audit_text
from normtest.scorecard.controls import POWER_AT_MARGIN


def test_the_choice_is_the_largest_need_within_the_data() -> None:
    needs = [LineNeed("word_level", "words", 1.0, None, False),
             LineNeed("composition", "words", 0.57, 8_276, False),
             LineNeed("text_level", "sentences", 0.36, 605, False),
             LineNeed("far", "sentences", 0.01, 90_000, True)]
    assert choose({"words": 5000, "sentences": 240}, needs,
                  {"words": 93_628, "sentences": 20_411}) == {"words": 8_276, "sentences": 605}
    # never above what the data hold, never below the profile's size
    assert choose({"words": 5000}, needs, {"words": 6_000}) == {"words": 6_000}
    assert choose({"words": 9000}, needs, {"words": None}) == {"words": 9000}


def test_a_stored_sizing_is_read_back_whatever_the_file_holds() -> None:
    """The answer's sizing lines come from a report read back from a file: entries of another
    shape are left out, never an error."""
    from normtest.audit.sizing import stored_lines

    good = {"pilot": {"words": 5000}, "chosen": {"words": 8276},
            "lines": [{"line": "composition", "setting": "words", "power": 0.57,
                       "needed": 8276, "out_of_reach": False},
                      {"line": "far", "setting": "words", "power": 0.1, "needed": 200_000,
                       "out_of_reach": True}]}
    shown = stored_lines(good)
    assert shown[1] == "--words 8,276 (composition line: 0.57 at 5,000)"
    assert "the far line needs --words 200,000" in shown[2]
    for bad in (None, [], {"chosen": "x"}, {"chosen": {"words": "many"}},
                {**good, "lines": [{"line": "x", "setting": "words", "power": "high",
                                    "needed": "lots", "out_of_reach": True}]},
                {**good, "pilot": {"words": "x"}, "lines": "none"}):
        out = stored_lines(bad)
        assert isinstance(out, list) and all(isinstance(x, str) for x in out)


def test_the_bundled_data_say_how_much_they_hold() -> None:
    held = bundled()
    assert held["words"] == 93_628 and held["documents"] == 212
    # ten sentences per document of the text sources (247): past that, more sentences come
    # from the same documents and the text claim's interval stops narrowing
    from normtest.base.settings import SENTENCES_PER_DOCUMENT, TEXT_SOURCES
    from normtest.data.information.documents import default_documents

    texts = default_documents(1_000_000, sources=TEXT_SOURCES)
    assert held["sentences"] == SENTENCES_PER_DOCUMENT * len(texts) == 2_470


def test_only_sizes_not_given_are_chosen_and_only_under_quick_and_standard() -> None:
    values = resolve({})
    assert autosized(values, {}) == ("words", "sentences")
    assert autosized(values, {"words": 5000}) == ("sentences",)
    assert autosized(resolve({"profile": "quick"}), {}) == ("words", "sentences")
    assert autosized(resolve({"profile": "thorough"}), {}) == ()
    assert autosized(resolve({"autosize": False}), {}) == ()
    with pytest.raises(NormtestError, match="autosize names"):
        AuditSettings(autosize=("documents",))


@pytest.mark.slow
def test_a_self_sized_audit_gives_its_lines_the_power_they_need(minilm: EncoderAdapter) -> None:
    """MiniLM's composition line at 1,500 words lacks the power at its margin (its four
    contrasts, joint); sized before the model is read, the audit asks for more words, checks
    the power at the size it asks for (growing it again where the √n extrapolation fell short),
    and at the size it chose the line's own positive control — the same computation on the same
    design — has the target power. The report records the choice, and the answer says it
    before the scorecard, in every format."""
    settings = AuditSettings(words=1500, resamples=300, robustness=False, autosize=("words",))
    chosen_claims = [c for c in claims("all") if c.id == "word.norm_ic.contrast"]
    planned = {c.id: variants(c, "encoder", ("last",), "standard") for c in chosen_claims}
    sized, sizing = size_audit(minilm, settings, "encoder", chosen_claims, planned)
    assert sizing is not None and sizing.pilot == {"words": 1500}
    need = next(n for n in sizing.lines if n.line == "composition")
    assert need.power < POWER_AT_MARGIN and need.needed is not None and need.needed > 1500
    assert sized.words == sizing.chosen["words"] >= need.needed
    checked_sizes, checked_lines = sizing.rounds[-1]
    assert checked_sizes == sizing.chosen
    assert next(n for n in checked_lines if n.line == "composition").power >= POWER_AT_MARGIN
    report = run_audit(minilm, claim_ids=["word.norm_ic.contrast"], settings=settings)
    stored = json.loads(report.to_json())["provenance"]["sizing"]
    assert stored["chosen"] == {"words": sized.words} and "composition" in stored["why"]
    assert report.provenance["sample"]["words"] == sized.words
    checked = report.controls_of("composition")
    assert checked is not None and checked.positive is not None
    assert checked.positive.power is not None, checked.positive
    assert checked.positive.power >= POWER_AT_MARGIN and not checked.underpowered
    shown = audit_text(report)
    assert "sample sized before the model was read" in shown
    assert f"--words {sized.words:,} (composition line: " in shown
    assert "sample sized before the model was read" in render_markdown(report)
    assert "sample sized before the model was read" in render_html(report)
    # nothing to size where no line follows the size: the word suite and --sentences
    assert size_audit(minilm, replace(settings, autosize=("sentences",)), "encoder",
                      chosen_claims, planned) == (replace(settings, autosize=("sentences",)),
                                                  None)
    # an explicit size is not changed
    fixed = run_audit(minilm, claim_ids=["word.norm_ic.contrast"],
                      settings=AuditSettings(words=1500, resamples=300, robustness=False))
    assert "sizing" not in fixed.provenance and fixed.provenance["sample"]["words"] == 1500
