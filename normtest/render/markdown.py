"""The report as Markdown, in the HTML page's reading order, clean to read raw and rendered.

Layout: a heading with the model and a one-line answer; the scorecard (each hypothesis of the
paper replicated, contradicted, undecided or not tested, with its reason); a short per-claim
summary (verdict counts, agreement with the paper, the disagreements); the confirmatory rows
with the reasons of those that did not PASS; then, folded in ``<details>`` (GitHub renders it),
the exploratory rows with their reasons, and the provenance.

Escaping is by context, so the raw text stays readable. Ids, variants and options go in code
spans (:func:`md_code`), where nothing needs escaping but the backtick (a longer fence then).
Prose from data or the user (:func:`md_text`) is escaped only where CommonMark/GFM would read
structure: ``|`` (a table cell), ``*``, ``~``, the backtick and ``$`` (GitHub math) always;
``_`` only where it could open emphasis (never between word characters, as in
``late_early_ratio``); ``<`` only before a letter, ``/``, ``!`` or ``?`` (where it could open a
tag); ``&`` only before an entity name; ``]`` only before ``(`` or ``[`` (where it could close a
link); ``\\`` only before punctuation; newlines collapse to spaces. No raw HTML from a report
reaches a comment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from normtest.audit.next_steps import next_steps
from normtest.audit.report import Report
from normtest.audit.sizing import stored_lines
from normtest.render import labels as fmt
from normtest.render.labels import deciding_label
from normtest.render.layers import layer_table, profile_summary, report_profiles
from normtest.scorecard.lines import Line, counts, deciding_row
from normtest.verdict.formatting import BESIDE, beside, stored_bounds
from normtest.verdict.formatting import interval as _interval
from normtest.verdict.formatting import number as _number
from normtest.verdict.formatting import threshold as _threshold
from normtest.verdict.result import Result, Verdict

__all__ = ["md_code", "md_prose", "md_text", "render_markdown", "scorecard_markdown"]

_ALWAYS = frozenset("`*~|$")
_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_ENTITY = re.compile(r"#?[0-9A-Za-z]+;")
_TICKS = re.compile(r"`+")
#: At most this many disagreements are listed in the summary (the tables have them all).
MAX_LISTED = 10


def _escaped(text: str, i: int) -> bool:
    """Whether the character at ``i`` needs a backslash where it stands."""
    ch = text[i]
    prev = text[i - 1] if i else ""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if ch in _ALWAYS:
        return True
    if ch == "_":  # after a letter or digit it cannot open emphasis, so none can form
        return not prev.isalnum()
    if ch == "<":
        return nxt.isascii() and (nxt.isalpha() or nxt in "/!?")
    if ch == "&":
        return _ENTITY.match(text, i + 1) is not None
    if ch == "]":
        return nxt in ("(", "[")
    if ch == "\\":
        return not nxt or nxt in _ASCII_PUNCTUATION
    return False


def _one_line(value: Any) -> str:
    return " ".join(str(value).split())  # newlines and tabs break tables: one line


def _escape(text: str) -> str:
    return "".join("\\" + ch if _escaped(text, i) else ch for i, ch in enumerate(text))


def md_text(value: Any) -> str:
    """Inline Markdown that shows ``value`` literally, on one line, safe inside a table cell."""
    return _escape(_one_line(value))


def md_code(value: Any) -> str:
    """``value`` as a code span (ids, variants, options); escaped text when it holds a ``|``
    (which would split a table cell even inside code). Backticks get a longer fence."""
    text = _one_line(value)
    if not text or "|" in text:
        return md_text(text)
    fence = "`" * (max((len(t) for t in _TICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_prose(text: str, ids: Sequence[str] | set[str]) -> str:
    """Escaped text with the ids and options it quotes as code spans."""
    return "".join(md_code(piece) if code else _escape(piece)
                   for piece, code in fmt.split_ids(_one_line(text), ids))


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _ids(results: Sequence[Result]) -> set[str]:
    return {r.id for r in results} | {r.label for r in results} | {
        r.claim for r in results if r.claim}


def scorecard_markdown(lines: Sequence[Line], ids: Sequence[str] | set[str] = (),
                       robustness: Sequence[Any] = (), controls: Sequence[Any] = (),
                       plan: Any = None) -> list[str]:
    """The scorecard as a Markdown table — each line's status, id (``*``: a criterion normtest
    reconstructed), the row that decides it with its effect against its threshold, its
    robustness in words, and what would decide it (``plan``: the report's
    :class:`normtest.audit.next_steps.NextSteps`) — then the rerun command, then why each line
    came out as it did (quoting ``ids`` as code)."""
    robust = {r.line: r for r in robustness if r.specifications or r.left_out}
    checked = {c.line: c for c in controls}
    steps = {s.line: s for s in plan.steps} if plan is not None else {}
    out = ["**Does the model behave as the paper says?** "
           + ", ".join(f"{n} {status}" for status, n in counts(lines).items() if n), "",
           "| status | line | the row that decides it | robustness | next |",
           "|---|---|---|---|---|"]
    for line in lines:
        r = deciding_row(line)
        decides = "" if r is None else (
            f"{md_code(deciding_label(r, (x.claim for x in line.rows)) or r.id)} "
            f"{md_text(_number(r.estimate))} {md_text(_interval(r))} {md_text(_threshold(r))} "
            f"{r.verdict.value}")
        item = robust.get(line.key)
        said = md_text(item.advice) if item is not None else ""
        if item is not None and item.heterogeneity_advice:
            said += f"; {md_text(item.heterogeneity_advice)}"
        if line.key in checked and line.status == "invalid":
            said += f"; invalid: {md_text(checked[line.key].reason())}"
        step = steps.get(line.key)
        star = "*" if line.basis == "reconstructed" else ""
        out.append(_row([f"**{md_text(line.verdict)}**", f"{md_code(line.key)}{star}", decides,
                         said, md_text(step.clause()) if step is not None else ""]))
    if plan is not None and plan.command is not None:
        when = plan.time_text()
        out += ["", f"**Next:** {md_code(plan.command)} decides "
                    f"{md_text(', '.join(plan.decides))}" + (f" ({md_text(when)})" if when else "")
                + " — sized for power 0.9 per row, each estimate taken as the truth."]
    if any(line.basis == "reconstructed" for line in lines):
        out += ["", "\\* a criterion normtest reconstructed from the authors' earlier work (the "
                    "paper's full text was not available)."]
    out += ["", "Why each line came out as it did:", ""]
    for line in lines:
        rests = f" ({md_text(line.rests_on)})" if line.rests_on else ""
        out.append(f"- {md_code(line.key)} — {md_text(line.title)}{rests}: "
                   f"{md_prose(line.reason, ids)}")
    return out


def _control_effect(row: Mapping[str, Any]) -> str:
    """A stored control row's estimate and interval: ``0.41 [0.38, 0.44]``."""
    return f"{_number(row.get('estimate'))} {stored_bounds(row.get('ci'))}"


def controls_markdown(controls: Sequence[Any]) -> list[str]:
    """Each line's controls: what each was built as, what it came out, the effect a positive
    control planted and the power the sample gives there, and its rows' estimates."""
    ran = [c for c in controls if c.ran or c.problem]
    if not ran:
        return []
    out = ["### Controls", "", "| line | control | came out | built as | rows |",
           "|---|---|---|---|---|"]
    for item in ran:
        if item.problem:
            out.append(_row([md_text(item.line), "—", f"not run: {md_text(item.problem)}", "",
                             ""]))
            continue
        for c in item.ran:
            came = f"{'ok' if c.ok else '**not ok**'}: {c.status}"
            came += f"; beyond {c.beyond}" if c.beyond else ""
            if c.power is not None:
                came += f"; power {c.power:.2f} at the smallest effect to detect ({c.planted:g})"
                came += f" ({c.needs} would give 0.8)" if c.needs else ""
            rows = "; ".join(
                f"{md_code(r['id'])} {r['verdict']} {_control_effect(r)}"
                + (f" (beyond {_control_effect(r['beyond'])})"
                   if isinstance(r.get("beyond"), Mapping) else "") for r in c.rows)
            out.append(_row([md_text(item.line), c.kind, md_text(came), md_text(c.note),
                             rows]))
    return [*out, ""]


def _summary(report: Report) -> list[str]:
    name, about = fmt.model_line(report.model)
    results = list(report.results)

    sized = stored_lines(report.provenance.get("sizing"))
    out = [f"## normtest audit of {md_code(name)}" + (f" ({md_text(about)})" if about else ""),
           "", *([md_text(" ".join(sized)), ""] if sized else []),
           *([f"**Re-judged:** {md_text(report.rejudged_note)}.", ""]
             if report.rejudged_note else []),
           *scorecard_markdown(report.scorecard, _ids(results), report.robustness,
                               report.controls, next_steps(report)), "",
           *controls_markdown(report.controls),
           "### Claims", "",
           f"**{fmt.counts_text(report.summary)}** — {fmt.agreement_text(results)}.", ""]
    out += ["| claim | statement | " + " | ".join(v.value for v in fmt.ORDER[:3])
            + " | agrees with the paper |", "|---|---|---|---|---|---|"]
    for family in fmt.families(results):
        if all(r.verdict is Verdict.SKIPPED for r in family.results):
            continue
        stated = [r for r in family.results if r.expected is not None]
        agree = sum(r.expected is r.verdict for r in stated)
        out.append(_row([
            md_code(family.claim), md_text(family.statement or "—"),
            *(str(family.count(v)) for v in fmt.ORDER[:3]),
            f"{agree} of {len(stated)}" if stated else "—",
        ]))
    skipped = [f for f in fmt.families(results)
               if all(r.verdict is Verdict.SKIPPED for r in f.results)]
    if skipped:
        out += ["", "Skipped: " + ", ".join(md_code(f.claim) for f in skipped)
                + " (reasons below)."]
    differ = fmt.disagreements(results)
    if differ:
        out += ["", "**Where the audit disagrees with the paper** (a finding, not an error):", ""]
        for r in differ[:MAX_LISTED]:
            assert r.expected is not None
            out.append(
                f"- {md_code(r.label)}: {r.verdict.value}, the paper expects {r.expected.value} "
                f"(estimate {_number(r.estimate)}, {fmt.confidence(r)} interval "
                f"{_interval(r)}, threshold {md_text(_threshold(r))})")
        if len(differ) > MAX_LISTED:
            out.append(f"- and {len(differ) - MAX_LISTED} more (see the confirmatory rows)")
    return out


def _table(results: Sequence[Result]) -> list[str]:
    """The rows, with the paper's expectation and agreement when any row has one, then the
    reasons of the rows that did not PASS."""
    paper = any(r.expected is not None for r in results)
    based = any("beyond" in r.details for r in results)
    head = ["row", "estimate", "interval", "threshold", "verdict",
            *(["paper", "agrees"] if paper else []),
            *([heading for _, heading in BESIDE] if based else []), "p (adjusted)", "n"]
    out = [_row(head), "|" + "---|" * len(head)]
    for r in results:
        p = r.p_adjusted if r.p_adjusted is not None else r.p_value
        out.append(_row([
            md_code(r.label), _number(r.estimate), _interval(r), md_text(_threshold(r)),
            f"**{r.verdict.value}**" if r.verdict is Verdict.FAIL else r.verdict.value,
            *([r.expected.value if r.expected else "—", fmt.agreement(r) or "—"] if paper
              else []),
            *([md_text(beside(r, part)) for part, _ in BESIDE] if based else []),
            md_text(fmt.p_value(p)), str(r.n) if r.n else "—",
        ]))
    explained = [r for r in results if r.verdict is not Verdict.PASS]
    if explained:
        out += ["", "Why the rows that did not PASS:", ""]
        out += [f"- {md_code(r.label)} ({r.verdict.value}): {md_text(r.reason)}"
                for r in explained]
    return out


def _provenance(report: Report) -> list[str]:
    items = {**{f"model {k}": v for k, v in report.model.items() if k != "name"},
             **dict(report.provenance)}
    return [f"- {md_text(k)}: {md_text(fmt.flatten(v))}" for k, v in items.items()]


def _layers(report: Report) -> list[str]:
    """The layer profile: where each followed row passes, and its estimates by layer."""

    found = report_profiles(report)
    if found is None:
        return []
    profiles, _ = found
    table = layer_table(profiles)
    out = ["", "### Layer profile", "",
           "Each claim at every layer, from the same forward passes; the rows below the last "
           "layer are exploratory (Benjamini–Hochberg).", ""]
    out += [f"- {md_code(profile_summary(p))}" for p in profiles]
    out += ["", _row([md_text(c) for c in table[0]]), _row(["---"] * len(table[0]))]
    out += [_row([md_code(row[0]), *(md_text(c) for c in row[1:])]) for row in table[1:]]
    return out


def render_markdown(report: Report) -> str:
    """The Markdown rendering (see the module doc)."""
    results = list(report.results)
    confirmatory = [r for r in results if r.confirmatory]
    others = [r for r in results if not r.confirmatory]
    lines = _summary(report) + _layers(report)
    lines += ["", f"### Confirmatory rows ({len(confirmatory)})", ""]
    if confirmatory:
        lines += ["The rows that decide the scorecard, each line from its own. Intervals are "
                  "two-sided, with ends at the one-sided bounds the verdict used.", ""]
        lines += _table(confirmatory)
    else:
        lines += ["None: no row of this report tests a hypothesis the paper states for this "
                  "model."]
    if others and not any(r.role for r in results):  # not from an audit: nothing to fold
        lines += ["", f"### All rows ({len(others)})", "", *_table(others)]
    elif others:
        explored = sum(r.role == "exploratory" for r in others)
        rest = len(others) - explored
        what = " and ".join(
            ([f"{explored} exploratory row{'s' * (explored != 1)}"] if explored else [])
            + ([f"{rest} other row{'s' * (rest != 1)}"] if rest else []))
        why = (" (adjusted by Benjamini–Hochberg; they never move the scorecard)" if explored
               else "")
        lines += ["", f"<details><summary>The {what}{why}</summary>", ""]
        analytic = sum(r.measurement is not None and r.measurement.interval_kind == "analytic"
                       and r.role == "exploratory" for r in others)
        if analytic:
            lines += [f"{analytic} of them read with an analytic interval where one is "
                      "calibrated (Fisher's z with the Bonett–Wright error: a Spearman ρ, its "
                      "pooled ρ within baseline strata, the difference of two ρ sharing x); "
                      "the others, like every row that decides a line, by the bootstrap.", ""]
        lines += _table(others)
        lines += ["", "</details>"]
    provenance = _provenance(report)
    if provenance:
        lines += ["", "<details><summary>Provenance</summary>", "", *provenance, "",
                  "</details>"]
    return "\n".join(lines).rstrip() + "\n"
