"""Plain-text pieces of the terminal: the table of every row (what ``normtest audit --all`` and
``normtest demo`` end with), the scorecard with its reasons, and ``normtest plan``'s text. The
view ``normtest audit`` prints is :mod:`normtest.render.console`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from normtest.render._format import agreement
from normtest.result import Result
from normtest.scorecard import Line, counts

if TYPE_CHECKING:
    from normtest.power import Plan


def number(value: float) -> str:
    """Three significant digits with an ASCII minus (grep-friendly), — when missing."""
    return "—" if value is None or not math.isfinite(value) else f"{value:.3g}"



def _threshold(result: Result) -> str:
    t = result.threshold
    if t is None:
        return "—"
    if isinstance(t, tuple):
        return f"[{t[0]:g}, {t[1]:g}]"
    direction = result.criterion.direction if result.criterion else ""
    return f"{'>' if direction == 'greater' else '<'} {t:g}"


def table_rows(results: Sequence[Result]) -> list[tuple[str, ...]]:
    """The header, then one row of cells per result: id, role, estimate, interval, threshold,
    verdict, expectation, agreement."""
    header = ("claim", "role", "estimate", "interval", "threshold", "verdict", "expected",
              "agrees")
    rows: list[tuple[str, ...]] = [header]
    for r in results:
        low, high = r.ci
        expected = r.expected.value if r.expected else "—"
        agrees = agreement(r) or "—"
        rows.append((
            r.label, _ROLE.get(r.role or "", "—"), number(r.estimate),
            f"[{number(low)}, {number(high)}]", _threshold(r), r.verdict.value, expected,
            agrees,
        ))
    return rows


def verdict_table(results: Sequence[Result]) -> str:
    """One row per result: id, estimate, interval, threshold, verdict, expectation, agreement."""
    rows = table_rows(results)
    header = rows[0]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


_ROLE = {"confirmatory": "conf", "exploratory": "expl"}


def scorecard_text(lines: Sequence[Line]) -> str:
    """The scorecard: one line per hypothesis (status, title, reason), then the counts."""
    width = max((len(line.status) for line in lines), default=0)
    out = ["Does the model behave as the paper says?", ""]
    for line in lines:
        out.append(f"  {line.status.upper():<{width}}  {line.title}")
        out.append(f"  {'':<{width}}    {line.reason}")
    tally = ", ".join(f"{n} {status}" for status, n in counts(lines).items() if n)
    out += ["", f"scorecard: {tally}"]
    return "\n".join(out)


def plan_text(plan: Plan, model: str, *, options: str = "") -> str:
    """``normtest plan``: each confirmatory row of the pilot, decided or what would decide it,
    then the settings to audit with (after the user's own ``options``, as a shell reads them)."""
    from normtest.power import OUT_OF_REACH

    out = [f"normtest plan for {model}: a pilot audit, and the sample each of the paper's "
           "hypotheses needs to be decided", ""]
    width = max((len(r.id) for r, _ in plan.rows), default=0)
    for r, need in plan.rows:
        low, high = r.ci
        head = f"  {r.id:<{width}}  {number(r.estimate):>8} [{number(low)}, {number(high)}]"
        if r.verdict.value in ("PASS", "FAIL"):
            out.append(f"{head}  decided at the pilot ({r.verdict.value})")
        elif need is None:
            out.append(f"{head}  undecided; no sample size would help ({r.reason})")
        elif plan.out_of_reach(need):
            out.append(f"{head}  out of reach: --{need.setting} {need.needed:,} "
                       f"(over {OUT_OF_REACH:g} times the default; the effect sits at its edge)")
        else:
            where = (f"--{need.setting} {need.needed:,}" if need.setting
                     else f"{need.factor:.3g} times the sample")
            out.append(f"{head}  needs about {where}")
    recommended = plan.recommended
    flags = " ".join(f"--{k} {v}" for k, v in recommended.items())
    if not plan.rows:
        out.append("  no confirmatory row among the selected claims: nothing to size")
    out += ["", "audit with: normtest audit --model " + model + (f" {options}" if options else "")
            + (f" {flags}" if flags else "")
            + "   (power 0.9 for each row, at the audit's Holm level; the pilot's estimates are "
              "taken as the truth)"]
    return "\n".join(out)
