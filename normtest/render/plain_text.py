"""Plain-text pieces of the terminal: the table of every row (what ``normtest audit --all`` and
``normtest demo`` end with), and ``normtest plan``'s text. The
view ``normtest audit`` prints is :mod:`normtest.render.summary`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from normtest.render.labels import agreement
from normtest.verdict.formatting import BESIDE, beside, general, number, threshold
from normtest.verdict.result import Result

if TYPE_CHECKING:
    from normtest.scorecard.power import Plan


#: The plain table's heading of each reading beside a baseline (ASCII).
_PLAIN_HEADING = {"baseline": "baseline", "difference": "rho - baseline", "beyond": "beyond",
                  "artefact": "norm~baseline|IC"}


def _ascii(value: float) -> str:
    """Three significant digits with an ASCII minus (grep-friendly), — when missing."""
    return number(value, minus="-")


def table_rows(results: Sequence[Result]) -> list[tuple[str, ...]]:
    """The header, then one row of cells per result: id, role, estimate, interval, threshold,
    verdict, expectation, agreement, and — when any row declares a baseline — the baseline's ρ
    and the beyond reading (estimate, interval, verdict)."""
    based = any("beyond" in r.details for r in results)
    header = ("claim", "role", "estimate", "interval", "threshold", "verdict", "expected",
              "agrees", *((_PLAIN_HEADING[part] for part, _ in BESIDE) if based else ()))
    rows: list[tuple[str, ...]] = [header]
    for r in results:
        low, high = r.ci
        expected = r.expected.value if r.expected else "—"
        agrees = agreement(r) or "—"
        rows.append((
            r.label, _ROLE.get(r.role or "", "—"), _ascii(r.estimate),
            f"[{_ascii(low)}, {_ascii(high)}]", threshold(r, general), r.verdict.value, expected,
            agrees, *((beside(r, part, _ascii) for part, _ in BESIDE) if based else ()),
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


def plan_text(plan: Plan, model: str, *, options: str = "") -> str:
    """``normtest plan``: each confirmatory row of the pilot, decided or what would decide it,
    then the settings to audit with (after the user's own ``options``, as a shell reads them)."""
    from normtest.scorecard.power import OUT_OF_REACH

    out = [f"normtest plan for {model}: a pilot audit, and the sample each of the paper's "
           "hypotheses needs to be decided", ""]
    width = max((len(r.id) for r, _ in plan.rows), default=0)
    for r, need in plan.rows:
        low, high = r.ci
        head = f"  {r.id:<{width}}  {_ascii(r.estimate):>8} [{_ascii(low)}, {_ascii(high)}]"
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
    lines = plan.lines()
    if lines:
        out += ["", "each line's power at the smallest effect it must detect (its positive "
                    "control; every row must pass):"]
        for line, power, needed, reach in lines:
            head = f"  {line:<{width}}  power {power:.2f}"
            if needed is None:
                out.append(f"{head}  enough (0.8 or more)")
            elif reach:
                out.append(f"{head}  out of reach: --{needed[0]} {needed[1]:,}{reach}")
            else:
                out.append(f"{head}  needs about --{needed[0]} {needed[1]:,} for 0.8")
    recommended = plan.recommended
    flags = " ".join(f"--{k} {v}" for k, v in recommended.items())
    if not plan.rows:
        out.append("  no confirmatory row among the selected claims: nothing to size")
    out += ["", "audit with: normtest audit --model " + model + (f" {options}" if options else "")
            + (f" {flags}" if flags else "")
            + "   (power 0.9 for each row, at the audit's Holm level, the pilot's estimates "
              "taken as the truth; power 0.8 for each line at its margin)"]
    return "\n".join(out)
