"""Why a report's line (or claim, or rows) came out as it did: ``normtest explain ID --report R``.

``normtest explain ID`` says how a line is decided in general; with a report it says why *this*
line got *this* status: the rows that decided it with their estimates, intervals, thresholds
and reasons, its beyond reading, its controls (each with what it was built to give and what it
gave), its robustness (the analyses that disagree with the headline, the halves, the
subpopulations), how far its thresholds could move before a row changed, and what sample would
decide it (or that none from these data would). A claim, a claim's rows or a suite lists its
rows in the report, with the same numbers.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from normtest.audit.next_steps import line_step, next_steps
from normtest.audit.report import Report
from normtest.audit.selection import Selector, line_keys
from normtest.errors import NormtestError
from normtest.scorecard.lines import Line, deciding_row, deciding_rows
from normtest.verdict.formatting import BESIDE, beside, bounds, number, threshold
from normtest.verdict.result import Result

WIDTH = 100


def explain_result(name: str, report: Report) -> str:
    """Why ``report``'s line, claim, rows or suite named ``name`` came out as it did."""
    name = name.strip()
    model = report.model.get("name", "the model")
    if name in line_keys():  # a line first (``conditions`` is a suite too), as explain reads it
        line = next((x for x in report.scorecard if x.key == name), None)
        if line is None:
            raise NormtestError(f"the report of {model} has no scorecard line {name!r}")
        return _line_text(line, report)
    selector = Selector.parse(name)
    rows = [r for r in report.results if selector.matches_result(r)]
    if not rows:
        raise NormtestError(f"the report of {model} has no row of {name!r} (it was not in the "
                            "audit's selection: normtest audit --claims ID measures it)")
    head = f"{name} in the audit of {model}: {len(rows)} row{'s' * (len(rows) != 1)}"
    return "\n".join([head, "", *_rows_text(rows)])


def _line_text(line: Line, report: Report) -> str:
    model = report.model.get("name", "the model")
    star = " (* its criterion is reconstructed by normtest)" if line.basis == "reconstructed" \
        else ""
    out = [f"{line.key}: {line.status.upper()} in the audit of {model}{star}",
           *_wrap(line.title, "  "), ""]
    out += _wrap(f"why: {line.reason}", "")
    rows = deciding_rows(line)
    decider = deciding_row(line)
    if rows:
        out += ["", f"the rows that decide it ({len(rows)} confirmatory; > marks the one the "
                    "answer shows):", *_rows_text(rows, decider)]
    if line.beyond is not None:
        out += ["", *_wrap(f"{line.beyond.name} (the reading beyond its baseline): "
                           f"{line.beyond.status}; {line.beyond.reason}", "")]
    for reading in line.readings:
        out += ["", *_wrap(f"{reading.name}: {reading.status}; {reading.reason}", "")]
    controls = report.controls_of(line.key)
    if controls is not None:
        out += ["", "its controls (norms built from the audit's own design to give a known "
                    "answer):"]
        for c in controls.ran:
            planted = f", planted at {c.planted:g}" if c.planted is not None else ""
            mark = "ok" if c.ok else "MISBEHAVED"
            out += _wrap(f"{c.kind} (built to be {c.expected}{planted}): came out {c.came_out}"
                         f" — {mark}", "  ")
        if controls.problem:
            out += _wrap(f"not run: {controls.problem}", "  ")
    robustness = report.robustness_of(line.key)
    if robustness is not None:
        out += ["", *_wrap(f"robustness: {robustness.summary()}", "")]
        others = [s for s in robustness.counted if s.status != robustness.status]
        for s in others[:6]:
            changed = ", ".join(f"{k}={v}" for k, v in s.choices.items()
                                if robustness.reference.get(k) != v) or "the audit's own"
            out += _wrap(f"disagrees: {changed} gives {s.status}", "  ")
        if len(others) > 6:
            out.append(f"  … and {len(others) - 6} more analyses that disagree")
        if robustness.notes:
            out += _wrap("left out: " + "; ".join(robustness.notes), "  ")
    out.append("")
    step = line_step(line, report) if not report.rejudged_note else None
    if step is not None:
        out += _wrap(f"what would decide it: {step.clause()}", "")
        plan = next_steps(report)
        if line.key in plan.decides and plan.command:
            when = plan.time_text()
            out += _wrap("the rerun sized for it (power 0.9 per row, each estimate taken as the "
                         "truth)" + (f", {when}" if when else "") + ":", "")
            out.append(f"  {plan.command}")  # whole, on one line: to copy
    elif line.status in ("replicated", "contradicted"):
        if line.sensitivity:
            out += _wrap(f"thresholds: {line.sensitivity}", "")
        out += _wrap("no larger sample is needed: every PASS and every Holm-adjusted FAIL is a "
                     "decision whose error rate is held at α whatever the sample size", "")
    return "\n".join(out).rstrip() + "\n"


def _rows_text(rows: Sequence[Result], marked: Result | None = None) -> list[str]:
    """Each row: its id, verdict, what the paper expects, estimate [interval] against its
    threshold, the readings beside a baseline, what would decide it, and its reason."""
    out = []
    for r in rows:
        low, high = r.ci
        paper = f", paper {r.expected.value}" if r.expected is not None else ""
        role = f" ({r.role})" if r.role else ""
        lead = ">" if marked is not None and r is marked else " "
        out.append(f" {lead} {r.id}{role}")
        out += _wrap(f"{r.verdict.value}{paper}: {number(r.estimate)} "
                     f"{bounds((low, high))} against {threshold(r)}, n {r.n:,}", "      ")
        based = [f"{heading} {beside(r, part)}" for part, heading in BESIDE
                 if r.measurement is not None and part in r.measurement.components]
        if based:
            out += _wrap("; ".join(based), "      ")
        out += _wrap(f"reason: {r.reason}", "      ")
    return out


def _wrap(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ",
                         break_on_hyphens=False, break_long_words=False) or [indent.rstrip()]
