"""The gate's Markdown summary (what ``normtest gate`` prints and writes with ``--summary``).

It renders the gate's :class:`~normtest.gate.run.Decision` and decides nothing: the headline and the
"Why it failed" list are the decision's, so they always agree with the exit code."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from normtest.render import labels as fmt
from normtest.render.markdown import md_text
from normtest.verdict.formatting import bounds as _bounds
from normtest.verdict.formatting import number as _number
from normtest.verdict.formatting import threshold as _threshold

if TYPE_CHECKING:
    from normtest.gate.regression import BaselineComparison
    from normtest.gate.run import Decision, GateOutcome


def gate_markdown(outcome: GateOutcome, decision: Decision | None = None) -> str:
    """The gate's summary for a pull request: the decision and why, the required claims, the
    regressions (``decision``: the outcome's own, :func:`normtest.gate.run.decide`)."""
    decision = decision or outcome.decision
    model = outcome.candidate.model
    own = str(model.get("name") or "the model")
    name = outcome.label or own
    # the model as the user named it, then the adapter's own name where it differs
    about = [own] if own != name else []
    about += [str(model["family"])] if model.get("family") else []
    family = f" ({', '.join(about)})" if about else ""
    lines = [f"## normtest gate {decision.headline}: `{name}`{family}", ""]
    failed, regressions = outcome.failed_requirements, outcome.regressions
    facts = []
    if outcome.lines:
        ok = len(outcome.lines) - len(outcome.failed_lines)
        facts.append(f"{ok} of {len(outcome.lines)} required scorecard lines replicated")
    if outcome.robust:
        ok = len(outcome.robust) - len(outcome.failed_robust)
        facts.append(f"{ok} of {len(outcome.robust)} scorecard lines required robust are")
    if outcome.requirements:
        facts.append(f"{len(outcome.requirements) - len(failed)} of {len(outcome.requirements)} "
                     "required claims PASS")
    if outcome.baseline is not None:
        base = md_text(str(outcome.baseline.model.get("name", "the baseline")))
        where = f" `{outcome.baseline_path}`" if outcome.baseline_path else ""
        if outcome.compared_nothing:
            facts.append(f"nothing could be compared with the baseline{where} ({base})")
        else:
            facts.append(f"{len(regressions)} regression{'s' * (len(regressions) != 1)} "
                         f"against the baseline{where} ({base})")
    if outcome.first_baseline:
        facts.append("no baseline to compare with yet: this audit is the first one")
    gaps = outcome.unshown
    if gaps:
        facts.append(f"{len(gaps)} requirement{'s' * (len(gaps) != 1)} the report cannot show "
                     f"({'passed with a warning' if outcome.unverified == 'warn' else 'failed'})")
    if not facts:
        facts.append("nothing was checked")
    lines += ["; ".join(facts) + ".", ""]
    if not decision.passed:
        lines += ["**Why it failed:**", ""]
        lines += [f"- {md_text(reason)}" for reason in decision.reasons]
        lines.append("")
    if decision.warnings:
        lines += ["**Warnings** (requirements the report cannot show, passed unverified):", ""]
        lines += [f"- ⚠️ {md_text(warning)}" for warning in decision.warnings]
        lines.append("")
    lines += _scorecard(outcome)
    if outcome.robust:
        lines += ["### Lines required robust", "",
                  "A line is robust when at least 90% of its reasonable specifications (geometry, "
                  "IC source, word population, margin, …) give it the audit's status.", ""]
        for robust in outcome.robust:
            mark = "✅" if robust.ok else ("⚠️" if robust.tested and not robust.assessed
                                          else "❌")
            lines.append(f"- {mark} `{robust.key}`: {md_text(robust.why)}")
        lines.append("")
    if outcome.requirements:
        lines += ["### Required claims", "",
                  "| | claim | verdict | estimate | 90% interval | threshold |",
                  "|---|---|---|---|---|---|"]
        for req in outcome.requirements:
            if not req.results:
                lines.append(f"| ❌ | `{req.selector}` | not measured | — | — | — |")
            for r in req.results:
                mark = "✅" if r.verdict.value == "PASS" else "❌"
                lines.append(f"| {mark} | `{r.label}` | {r.verdict.value} | "
                             f"{_number(r.estimate)} | {_bounds(r.ci)} | "
                             f"{_threshold(r)} |")
        lines.append("")
        for req in failed:
            for r in req.results:
                if r.verdict.value != "PASS":
                    lines.append(f"- `{r.label}`: {r.reason}")
            if not req.results:
                lines.append(f"- `{req.selector}`: no result; is it a claim this model can run?")
        if failed:
            lines.append("")
    if outcome.baseline is not None:
        n, paired = len(outcome.comparisons), sum(c.paired for c in outcome.comparisons)
        lines += ["### Regressions against the baseline", "",
                  f"A regression is a drop of a claim's effect by more than the margin "
                  f"({outcome.margin:g}), supported at α = {outcome.alpha:g} after Holm over the "
                  f"{n} compared results ({paired} paired); a smaller or unsupported decrease "
                  "is not one.", ""]
        if regressions:
            lines += _comparison_table(regressions)
        elif outcome.comparisons:
            lines.append("No regression.")
        else:
            lines.append("Nothing could be compared with the baseline, so the gate fails: it "
                         "never passes on nothing (see why above).")
        lines.append("")
        others = [c for c in outcome.comparisons if not c.regressed]
        if others and regressions:
            lines += ["<details><summary>The other compared results</summary>", ""]
            lines += _comparison_table(others)
            lines += ["", "</details>", ""]
        elif others:
            lines += ["<details><summary>Every compared result</summary>", ""]
            lines += _comparison_table(others)
            lines += ["", "</details>", ""]
        if outcome.uncompared:
            lines.append("Not compared: " + "; ".join(f"`{i}` ({why})"
                                                       for i, why in outcome.uncompared) + ".")
            lines.append("")
    if outcome.saved:
        lines += [outcome.saved[0].upper() + outcome.saved[1:] + ".", ""]
    return "\n".join(lines).rstrip() + "\n"


def _comparison_table(rows: Sequence[BaselineComparison]) -> list[str]:
    out = ["| claim | baseline | candidate | change in effect | 90% interval | p (Holm) | test |",
           "|---|---|---|---|---|---|---|"]
    for c in rows:
        mark = "❌ " if c.regressed else ""
        out.append(
            f"| {mark}`{c.id}` | {_number(c.baseline.estimate)} {_bounds(c.baseline.ci)} | "
            f"{_number(c.candidate.estimate)} {_bounds(c.candidate.ci)} | "
            f"{_number(c.difference)} | {_bounds(c.interval)} | "
            f"{fmt.p_value(c.p_adjusted)} | {c.method} |")
    return out


def _scorecard(outcome: GateOutcome) -> list[str]:
    """The candidate's scorecard, the lines the gate requires marked (✅ replicated, ❌ not)."""
    required = {r.key for r in outcome.lines}
    unverified = {gap.key: gap.why for gap in outcome.unshown if gap.requirement == "replicated"}
    out = ["### Scorecard: does the model behave as the paper says?", "",
           "| | status | hypothesis | why |", "|---|---|---|---|"]
    for line in outcome.candidate.scorecard:
        mark = ("✅" if line.status == "replicated" else "❌") if line.key in required else ""
        why = line.reason
        if line.key in unverified:
            mark, why = "⚠️", f"{why} (unverified: {unverified[line.key]})"
        out.append(f"| {mark} | **{line.status}** | {md_text(line.title)} | {md_text(why)} |")
    return [*out, ""]
