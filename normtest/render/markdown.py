"""The report as Markdown: a summary short enough for a pull-request comment, then the full table.

Layout: a heading with the model; the scorecard (each hypothesis of the paper replicated,
contradicted, undecided or not tested, with its reason); the verdict counts and the agreement
with the paper, one row per claim family, the disagreements with the paper; then, folded in
``<details>``, every result with its role, estimate, interval, threshold, verdict and
expectation, the reasons of every result that did not PASS, and the provenance. Every string
from data or the user is escaped (:func:`md_text`): table-breaking ``|`` and newlines, Markdown
punctuation, and ``< > &`` as HTML entities, so no raw HTML from a report reaches a pull-request
comment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from normtest.render import _format as fmt
from normtest.report import Report
from normtest.result import Result, Verdict
from normtest.scorecard import Line, counts

__all__ = ["md_code", "md_text", "render_markdown", "scorecard_markdown"]

_PUNCTUATION = re.compile(r"([\\`*_\[\]|~#!])")
_UNSAFE_IN_CODE = re.compile(r"[`|<>&\r\n]")
#: At most this many disagreements are listed in the summary (the table has them all).
MAX_LISTED = 10


def md_text(value: Any) -> str:
    """Inline Markdown text that shows ``value`` literally, safe inside a table cell."""
    text = " ".join(str(value).split())  # newlines and tabs break tables: one line
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _PUNCTUATION.sub(r"\\\1", text)


def md_code(value: Any) -> str:
    """A code span when ``value`` is safe in one (ids), else escaped text."""
    text = str(value)
    if not text or _UNSAFE_IN_CODE.search(text):
        return md_text(text)
    return f"`{text}`"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _summary(report: Report) -> list[str]:
    name, about = fmt.model_line(report.model)
    results = list(report.results)
    lines = [f"## normtest audit of {md_code(name)}" + (f" ({md_text(about)})" if about else ""),
             "", *scorecard_markdown(report.scorecard), "",
             f"**{fmt.counts_text(report.summary)}** — {fmt.agreement_text(results)}.",
             ""]
    rejudged = report.provenance.get("rejudged")
    if isinstance(rejudged, Mapping) and rejudged:
        lines += ["Re-judged under other thresholds: "
                  + ", ".join(f"{md_code(c)} {md_text(fmt.flatten(v))}"
                              for c, v in rejudged.items()) + ".", ""]
    lines += ["| claim | statement | " + " | ".join(v.value for v in fmt.ORDER[:3])
              + " | agrees with the paper |",
              "|---|---|---|---|---|---|"]
    for family in fmt.families(results):
        if all(r.verdict is Verdict.SKIPPED for r in family.results):
            continue
        stated = [r for r in family.results if r.expected is not None]
        agree = sum(r.expected is r.verdict for r in stated)
        lines.append(_row([
            md_code(family.claim), md_text(family.statement or "—"),
            *(str(family.count(v)) for v in fmt.ORDER[:3]),
            f"{agree} of {len(stated)}" if stated else "—",
        ]))
    skipped = [f for f in fmt.families(results)
               if all(r.verdict is Verdict.SKIPPED for r in f.results)]
    if skipped:
        lines += ["", "Skipped: " + ", ".join(md_code(f.claim) for f in skipped)
                  + " (reasons below)."]
    differ = fmt.disagreements(results)
    if differ:
        lines += ["", "**Where the audit disagrees with the paper** (a finding, not an error):", ""]
        for r in differ[:MAX_LISTED]:
            assert r.expected is not None
            lines.append(
                f"- {md_code(r.id)}: {r.verdict.value}, the paper expects {r.expected.value} "
                f"(estimate {fmt.number(r.estimate)}, {fmt.confidence(r)} interval "
                f"{fmt.interval(r)}, threshold {fmt.threshold(r)})")
        if len(differ) > MAX_LISTED:
            lines.append(f"- and {len(differ) - MAX_LISTED} more (see the table)")
    return lines


def scorecard_markdown(lines: Sequence[Line]) -> list[str]:
    """The scorecard as a Markdown table: status, hypothesis, reason."""
    out = ["**Does the model behave as the paper says?** "
           + ", ".join(f"{n} {status}" for status, n in counts(lines).items() if n), "",
           "| | hypothesis of the paper | why |", "|---|---|---|"]
    for line in lines:
        out.append(_row([f"**{line.status}**", md_text(line.title), md_text(line.reason)]))
    return out


def _table(results: list[Result]) -> list[str]:
    lines = [_row(["claim", "role", "estimate", "interval", "threshold", "verdict", "expected",
                   "agrees", "p (adjusted)", "n"]),
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        p = r.p_adjusted if r.p_adjusted is not None else r.p_value
        lines.append(_row([
            md_code(r.id), r.role or "—", fmt.number(r.estimate), fmt.interval(r), fmt.threshold(r),
            f"**{r.verdict.value}**" if r.verdict is Verdict.FAIL else r.verdict.value,
            r.expected.value if r.expected else "—", fmt.agreement(r) or "—", fmt.p_value(p),
            str(r.n) if r.n else "—",
        ]))
    return lines


def _provenance(report: Report) -> list[str]:
    items = {**{f"model {k}": v for k, v in report.model.items() if k != "name"},
             **dict(report.provenance)}
    return ["Provenance: " + "; ".join(f"{md_text(k)}: {md_text(fmt.flatten(v))}"
                                       for k, v in items.items()) + "."]


def render_markdown(report: Report) -> str:
    """The Markdown rendering (see the module doc)."""
    results = list(report.results)
    lines = _summary(report)
    lines += ["", f"<details><summary>All {len(results)} results</summary>", ""]
    lines += ["Intervals are two-sided with ends at the one-sided bounds the verdict used; "
              "verdicts are adjusted by Holm over the confirmatory rows and by "
              "Benjamini–Hochberg over the exploratory rows.", ""]
    lines += _table(results)
    explained = [r for r in results if r.verdict is not Verdict.PASS]
    if explained:
        lines += ["", "Reasons:", ""]
        lines += [f"- {md_code(r.id)} ({r.verdict.value}): {md_text(r.reason)}"
                  for r in explained]
    lines += ["", *_provenance(report), "", "</details>"]
    return "\n".join(lines).rstrip() + "\n"
