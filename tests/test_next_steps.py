"""What an audit says to do next (normtest.audit.next_steps): each undecided line's reason and
the sample that would decide it, one rerun command for every line the data can decide, the
lines out of reach named with what they need and what the data hold, and the rerun's time
scaled from the audit's own."""

from __future__ import annotations

from typing import Any

from normtest.audit.next_steps import next_steps
from normtest.audit.report import Report
from normtest.render.terminal import audit_text
from normtest.verdict.result import Criterion, Measurement, Result, Verdict
from normtest.verdict.sampling import Sampling


def _row(claim: str, variant: dict[str, str], estimate: float, line: str,
         power: dict[str, Any] | None = None) -> Result:
    """A confirmatory row of ``line`` whose sampling distribution is N(estimate, 0.05), held to
    ρ > 0.3, the paper expecting PASS."""
    criterion = Criterion.minimum_effect(0.3)
    m = Measurement("spearman_rho", estimate, 500, "normal",
                    sampling=Sampling("normal", center=estimate, scale=0.05))
    judged = Result.judged(m, criterion)
    return Result(judged.verdict, judged.reason, m, criterion, claim=claim, variant=variant,
                  p_value=judged.p_value, role="confirmatory", expected=Verdict.PASS,
                  hypothesis=line, details={"power": power} if power else {})


def _need(setting: str, now: int, needed: int, capacity: int | None,
          out_of_reach: bool = False) -> dict[str, Any]:
    return {"factor": needed / now, "alpha": 0.05, "power": 0.9, "setting": setting,
            "now": now, "needed": needed, "capacity": capacity, "out_of_reach": out_of_reach}


def _report(seconds: dict[str, float] | None = None, seed: int = 0) -> Report:
    """Three lines: the word line decided, the text line undecided within reach (two rows
    asking for different sizes), the growth line undecided out of reach of the data."""
    rows = [
        _row("word.norm_ic", {"composition": "sqrt_n"}, 0.6, "word_level"),
        _row("text.norm_surprisal", {"composition": "sqrt_n"}, 0.32, "text_level",
             _need("sentences", 819, 15_560, 20_411)),
        _row("text.norm_surprisal", {"composition": "f_ind"}, 0.33, "text_level",
             _need("sentences", 819, 4_000, 20_411)),
        _row("cer.linear", {"composition": "sqrt_n"}, 0.31, "cer_growth",
             _need("documents", 150, 2_658, 212, out_of_reach=True)),
    ]
    provenance: dict[str, Any] = {"words": 8276, "documents": 150, "sentences": 819,
                                  "seed": seed}
    if seconds is not None:
        provenance["seconds"] = seconds
    return Report(results=rows, model={"name": "minilm-l6", "family": "encoder"},
                  provenance=provenance)


def test_one_command_decides_every_line_the_data_can_and_names_the_others() -> None:
    plan = next_steps(_report())
    by_line = {s.line: s for s in plan.steps}
    assert set(by_line) == {"text_level", "cer_growth"}  # the decided line needs nothing
    assert plan.decides == ("text_level",)
    # the largest size any of its rows asks for; every size given, so that the rerun does not
    # size itself again
    assert plan.sizes["sentences"] == 15_560
    assert plan.command == ("normtest audit --model minilm-l6 --words 8276 --documents 150 "
                            "--sentences 15560")
    assert by_line["text_level"].clause() == "needs --sentences 15,560 (now 819)"
    (far,) = plan.out_of_reach
    assert far.line == "cer_growth" and not far.reachable
    assert far.clause() == ("out of reach of these data: needs --documents 2,658 (now 150; "
                            "212 held)")
    # the settings that chose the sample are kept (a seed, a corpus), quoted for a shell; the
    # model as the user named it
    command = next_steps(_report(seed=3), model="my models/bert").command
    assert command is not None and command.startswith("normtest audit --model 'my models/bert'")
    assert command.endswith("--sentences 15560 --seed 3")


def test_the_rerun_time_scales_each_kind_of_data_by_its_growth() -> None:
    """100 s in all, 20 s of them the sentences': without a rate for making a sentence, 19
    times the sentences costs 18 × 20 s more; with one (0.15 s a sentence, made fresh by this
    audit or an earlier one), each new sentence costs it; a report without timings gives no
    estimate."""
    plan = next_steps(_report({"total": 100.0, "texts": 20.0, "words": 50.0}))
    assert plan.seconds is not None
    assert abs(plan.seconds - (100 + 20 * (15_560 / 819 - 1))) < 1e-6
    # the sentences' time may have been a cache read: a lower bound, and said so
    assert plan.at_least and plan.time_text() == f"at least {plan.seconds / 60:.0f} min"
    rated = next_steps(_report({"total": 100.0, "texts": 20.0, "per_unit": {"texts": 0.15}}))
    assert rated.seconds is not None and not rated.at_least
    assert abs(rated.seconds - (100 + (15_560 - 819) * 0.15)) < 1e-6
    assert rated.time_text() == f"about {rated.seconds / 60:.0f} min"
    assert next_steps(_report()).seconds is None and next_steps(_report()).time_text() == ""


def test_a_rate_is_kept_for_later_estimates(tmp_path: object,
                                            monkeypatch: Any) -> None:
    """The seconds per unit an audit measured making a kind fresh are kept in the cache folder
    and read back; an unreadable file reads as no rate."""
    from normtest.base.paths import CACHE_ENV
    from normtest.models.cache import rates

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    assert rates.rate("m", "texts") is None
    rates.record("m", "texts", 120.0, 800)
    rates.record("m", "words", 10.0, 5000)
    assert rates.rate("m", "texts") == 0.15 and rates.rate("m", "words") == 0.002
    (tmp_path / rates.RATES_FILE).write_text("not json", encoding="utf-8")  # type: ignore[operator]
    assert rates.rate("m", "texts") is None


def test_the_answer_ends_with_the_command_and_names_each_line() -> None:
    text = audit_text(_report({"total": 100.0, "texts": 20.0}), width=None)
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("next: "))
    assert lines[at] == ("next: normtest audit --model minilm-l6 --words 8276 --documents 150 "
                         "--sentences 15560")
    assert lines[at + 1].startswith("      sized to decide text_level, at least ")
    assert lines[at + 1].endswith("; out of reach: cer_growth: --documents 2,658 (212 held)")
    at = next(i for i, line in enumerate(lines) if line.split()[:2] == ["UNDECIDED",
                                                                        "text_level"])
    assert lines[at + 1].strip() == "→ needs --sentences 15,560 (now 819)"
    assert "sqrt_n: 0.32 [" in lines[at]  # the row that needs the most is the one shown


def test_a_line_with_a_row_no_sample_decides_is_out_of_reach_and_the_cut_command_is_whole(
        ) -> None:
    """One row with a sample to ask for and one without a readable distribution: the line is
    not in the rerun (it would not decide it); and on a narrow screen the command is printed
    whole (to copy), not cut."""
    report = _report()
    broken = Result(Verdict.ERROR, "the corpus is too small", claim="text.norm_surprisal",
                    variant={"composition": "f_ind"}, role="confirmatory",
                    expected=Verdict.PASS, hypothesis="text_level")
    rows = [r for r in report.results if r.variant != {"composition": "f_ind"}] + [broken]
    plan = next_steps(Report(results=rows, model=report.model, provenance=report.provenance))
    step = next(s for s in plan.steps if s.line == "text_level")
    assert not step.reachable and "the corpus is too small" in step.clause()
    assert plan.command is None
    narrow = audit_text(_report(), width=60).splitlines()
    assert any(line == "next: normtest audit --model minilm-l6 --words 8276 --documents 150 "
                       "--sentences 15560" for line in narrow)


def test_a_rejudged_report_asks_for_nothing() -> None:
    """Its power analyses were made at the audit's thresholds: no sample is recommended."""
    report = _report()
    rejudged = Report(results=report.results, model=report.model,
                      provenance={**report.provenance, "rejudged": {"word.norm_ic": 0.5}})
    assert next_steps(rejudged).steps == () and next_steps(rejudged).command is None


def test_a_fully_decided_audit_says_nothing_more_to_do() -> None:
    rows = [_row("word.norm_ic", {"composition": "sqrt_n"}, 0.6, "word_level")]
    report = Report(results=rows, model={"name": "m"}, provenance={"words": 5000})
    plan = next_steps(report)
    assert plan.steps == () and plan.command is None
    assert "next:" not in audit_text(report)
