"""What ``normtest audit`` prints: the answer first (the scorecard), one line per claim, why each
confirmatory row that is not PASS is not, on one screen; every row with ``--all``; colour and the
terminal's width on a terminal, plain text of a fixed width anywhere else."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from normtest.audit.report import Report
from normtest.audit.run import AuditSettings, run_audit
from normtest.cli.common import EXIT_OK
from normtest.cli.main import main
from normtest.render.labels import agreement
from normtest.render.terminal import (
    WIDTH,
    audit_text,
    claim_rows,
    headline,
    pending_rows,
    primary_rows,
    print_audit,
    short_id,
)
from normtest.scorecard.lines import deciding_row
from normtest.verdict.formatting import number
from normtest.verdict.result import Criterion, Measurement, Result, Verdict
from normtest.verdict.sampling import Sampling

FAST = AuditSettings(words=300, resamples=200)
#: What a default audit may print, its "reports written to" line included.
SCREEN = 40
ANSI = re.compile(r"\x1b\[[0-9;]*m")
QUESTION = "Does the model behave as the paper says?"


@pytest.fixture(scope="module")
def glove_report(glove: Any) -> Report:
    """A real audit of the whole catalogue: GloVe-50d, 300 words, 200 resamples."""
    return run_audit(glove, settings=FAST)


def _row(claim: str, variant: dict[str, str], estimate: float, *, role: str = "exploratory",
         expected: Verdict | None = None, hypothesis: str | None = None,
         power: dict[str, Any] | None = None) -> Result:
    """A judged row whose sampling distribution is N(estimate, 0.05), held to ρ > 0.3."""
    criterion = Criterion.minimum_effect(0.3)
    m = Measurement("spearman_rho", estimate, 500, "normal",
                    sampling=Sampling("normal", center=estimate, scale=0.05))
    judged = Result.judged(m, criterion)
    return Result(judged.verdict, judged.reason, m, criterion, claim=claim, variant=variant,
                  p_value=judged.p_value, role=role, expected=expected,
                  hypothesis=hypothesis if role == "confirmatory" else None,
                  details={"power": power} if power else {})


def _large_report() -> Report:
    """An audit the size of an encoder's (12 claims × 27 variants, 324 rows) in which most of
    the 36 confirmatory rows are not PASS: more than one screen of reasons."""
    compositions = ("sum", "mean", "sqrt_n", "f_ind", "f_joint", "f_inf", "f_avg", "first", "last")
    transforms = ("raw", "center_zipf", "whiten_zipf")
    lines = [(f"line{i}", f"hypothesis {i} of the paper, a long title " * 3, "") for i in range(6)]
    rows = []
    for c in range(12):
        claim = f"suite.claim_number_{c}"
        for k, composition in enumerate(compositions):
            for transform in transforms:
                variant = {"composition": composition, "representation": "last",
                           "transform": transform}
                if transform == "raw" and k < 3:  # confirmatory: PASS, FAIL or undecided
                    estimate = (0.6, 0.0, 0.3)[(c + k) % 3]
                    power = {"setting": "words", "needed": 20_000, "now": 5_000,
                             "out_of_reach": False} if estimate == 0.3 else None
                    rows.append(_row(claim, variant, estimate, role="confirmatory",
                                     expected=Verdict.PASS if c % 4 else Verdict.FAIL,
                                     hypothesis=f"line{c % 6}", power=power))
                else:
                    rows.append(_row(claim, variant, 0.1 * (k % 7)))
    return Report(results=rows, model={"name": "large", "family": "encoder"}, line_titles=lines)


def _cut(lines: list[str]) -> list[str]:
    """The lines a screen cuts to its width: all but the commands to copy (the rerun command,
    and the footer's command that explains a line), which are printed whole."""
    return [line for line in lines if not line.startswith("next: ")
            and "why a line: normtest explain" not in line]


def _terminal(report: Report, width: int = 80, **options: Any) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=width, color_system="truecolor",
                      markup=False, emoji=False, highlight=False)
    print_audit(report, console, **options)
    return buffer.getvalue()


@pytest.mark.slow
def test_the_scorecard_comes_first(glove_report: Report) -> None:
    text = audit_text(glove_report)
    lines = text.splitlines()
    assert lines[0] == f"normtest audit of glove-6b-50d (static). {QUESTION}"
    card = glove_report.scorecard
    tally = next(i for i, line in enumerate(lines) if line.startswith("scorecard: "))
    # one line per hypothesis — its status, its id (* marks a reconstructed criterion) and the
    # effect of the row that decides it; what else it says (robustness, other readings, what
    # would decide it) indented under it
    heads = [line for line in lines[1:tally] if not line.startswith("    ")]
    assert len(heads) == len(card)
    for line, shown in zip(card, heads, strict=True):
        status = line.status.upper()
        assert shown.strip().startswith(status)
        key = shown.strip()[len(status):].split()[0]
        assert key == line.key + ("*" if line.basis == "reconstructed" else "")
        decider = deciding_row(line)
        if decider is not None:  # its estimate and interval, as the rows tables write them
            assert f"{number(decider.estimate, minus='-')} [" in shown
    # then one line per claim, under a header
    assert lines[tally + 2].split()[:2] == ["claim", "PASS"]
    claims = {r.claim for r in glove_report.results}
    body = lines[tally + 3:tally + 3 + len(claims)]
    assert sorted(line.split()[0] for line in body) == sorted(claims)
    skipped = [line for line in body if "skipped: " in line]
    assert len(skipped) == len({r.claim for r in glove_report.results
                                if r.verdict is Verdict.SKIPPED})


@pytest.mark.parametrize("which", ["glove", "large"])
def test_a_default_audit_fits_a_screen_and_names_every_row_that_is_not_pass(
        which: str, glove_report: Report) -> None:
    report = glove_report if which == "glove" else _large_report()
    text = audit_text(report)
    lines = text.splitlines()
    assert len(lines) + 3 <= SCREEN, text
    assert max(len(line) for line in _cut(lines)) <= WIDTH
    pending = pending_rows(report.results)
    assert pending and all(r.confirmatory and r.verdict is not Verdict.PASS for r in pending)
    assert len(pending) == sum(r.confirmatory and r.verdict not in (Verdict.PASS,
                                                                    Verdict.SKIPPED)
                               for r in report.results)
    named = [r for r in pending if any(line.split()[:1] == [short_id(r)] for line in lines)]
    more = re.search(r"… and (\d+) more", text)
    assert len(named) + (int(more.group(1)) if more else 0) == len(pending)
    if which == "large":  # more than a screen: the rest are counted, --all lists them
        assert more and "--all lists every one" in text
        # the rows shown come first: against the paper, then undecided, then as it expects
        assert named == pending[:len(named)]
        rank = {"NO": 0, "undecided": 1, "yes": 2}
        assert [rank[agreement(r) or ""] for r in pending] == sorted(
            rank[agreement(r) or ""] for r in pending)
        assert all(agreement(r) == "NO" for r in named)
    # the exploratory rows are folded; the footer says so
    assert "--all: every row" in lines[-1]
    assert sum(r.role == "exploratory" and r.id in text for r in report.results) == 0


@pytest.mark.parametrize("which", ["glove", "large"])
def test_all_prints_every_row(which: str, glove_report: Report) -> None:
    report = glove_report if which == "glove" else _large_report()
    text = audit_text(report, all_rows=True)
    for r in report.results:
        assert r.id in text
    for line in report.scorecard:
        assert line.reason.split()[0] in text
    assert "… and" not in text  # nothing left out


def test_plain_text_has_no_escape_codes_and_a_terminal_gets_colour_in_its_width(
        glove_report: Report) -> None:
    report = _large_report()
    for text in (audit_text(report), audit_text(glove_report, all_rows=True)):
        assert "\x1b" not in text
    assert audit_text(report) == audit_text(report)  # deterministic
    for shown in (glove_report, report):
        coloured = _terminal(shown, 80)
        assert "\x1b[" in coloured
        plain = ANSI.sub("", coloured).splitlines()
        assert max(len(line) for line in _cut(plain)) <= 80
        assert len(plain) + 3 <= SCREEN
        assert QUESTION in plain[0] or plain[1] == QUESTION  # on its own line if need be


def test_no_color_is_honoured(glove_report: Report, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    text = _terminal(glove_report)
    assert not re.search(r"\x1b\[[0-9;]*3[0-9]m", text)  # no foreground colour


def test_primary_rows_and_the_headline() -> None:
    report = _large_report()
    by_claim = {c.claim: c for c in claim_rows(report.results)}
    first = by_claim["suite.claim_number_1"]
    assert first.confirmatory and all(r.confirmatory for r in first.primary)
    assert len(first.primary) == 3 and len(first.rows) == 27
    # the best-agreeing row: the PASS the paper expects
    assert first.headline is not None and first.headline.verdict is Verdict.PASS
    # an exploratory claim: its rows at the reference variant (the raw last layer)
    explored = [_row("x", {"composition": k, "representation": "last", "transform": t}, 0.5)
                for k in ("sum", "mean") for t in ("raw", "whiten_zipf")]
    assert [r.variant["transform"] for r in primary_rows(explored)] == ["raw", "raw"]
    assert headline([]) is None
    contradicted = [_row("y", {"composition": "sum"}, 0.0, role="confirmatory",
                         expected=Verdict.PASS),
                    _row("y", {"composition": "mean"}, 0.3, role="confirmatory",
                         expected=Verdict.PASS)]
    chosen = headline(contradicted)
    assert chosen is not None and chosen.verdict is Verdict.INCONCLUSIVE


@pytest.mark.slow
def test_the_command_line_answers_first(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    args = ["audit", "--model", "glove-6b-50d", "--suite", "word", "--words", "300",
            "--resamples", "200", "--out", str(tmp_path), "--format", "json"]
    assert main(args) == EXIT_OK
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines[0].startswith("normtest audit of glove-6b-50d") and QUESTION in lines[0]
    assert lines[1].split()[0] in ("REPLICATED", "CONTRADICTED", "UNDECIDED", "INVALID", "NOT")
    assert "\x1b" not in out and len(out.splitlines()) <= SCREEN
    # off a terminal (a pipe, a log) no line is cut: every threshold and reason whole
    assert "…" not in out.replace("… and ", "")
    assert out.rstrip().endswith(f"reports written to {tmp_path}/: report.json")
    assert f"normtest explain LINE --report {tmp_path / 'report.json'}" in out
    # --width cuts it to a terminal's width, as on a terminal
    assert main([*args, "--width", "80"]) == EXIT_OK
    narrow = capsys.readouterr().out.rstrip().splitlines()
    assert max(len(line) for line in _cut(narrow[:-1])) <= 80
    assert QUESTION in narrow[0] or narrow[1] == QUESTION
    report = Report.read(tmp_path / "report.json")
    exploratory = [r.id for r in report.results if r.role == "exploratory"]
    assert exploratory and not any(i in out for i in exploratory)
    # --all (and -v): every row
    for flag in ("--all", "-v"):
        assert main([*args, flag]) == EXIT_OK
        every = capsys.readouterr().out
        assert every.splitlines()[0] == out.splitlines()[0]
        for r in report.results:
            assert r.id in every
    # the stored report renders the same view
    assert main(["report", str(tmp_path / "report.json"), "--format", "text"]) == EXIT_OK
    stored = capsys.readouterr().out
    assert stored.splitlines()[0].startswith("normtest report of glove-6b-50d (static). ")
    assert stored.splitlines()[1:] == out.splitlines()[1:-1]
    # and takes --all as the audit does
    assert main(["report", str(tmp_path / "report.json"), "--format", "text", "--all"]) \
        == EXIT_OK
    every_row = capsys.readouterr().out
    assert all(r.id in every_row for r in report.results)
