"""Renderings of a :class:`~normtest.audit.compare.Comparison`: terminal, Markdown and HTML.

Answer first, in every form:

1. the comparative verdicts: for each pair of models and each comparative claim, the statement
   ("A's s(L) grows closer to linearly than B's"), its verdict, the paired difference with its
   interval and the minimum difference it was held to;
2. each model's scorecard, side by side (the paper's hypotheses, one line each);
3. the leaderboard: every row that is confirmatory for at least one model, each model's
   estimate and interval (a model's own CLS or EOS is shown as ``state``), with a plot in HTML.

Every string that comes from data goes through the escaping of its format.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from normtest.base.version import VERSION as __version__
from normtest.claims.catalogue import REFERENCE
from normtest.render import labels as fmt
from normtest.render import plots
from normtest.render.html import _CSS, CSP
from normtest.render.html_figures import badge, esc
from normtest.render.html_figures import figure as figure_html
from normtest.render.markdown import _row, md_code, md_text
from normtest.render.plots import figure, svg
from normtest.render.terminal import _VERDICT, _console, _indent, _line, _print, _table
from normtest.verdict.formatting import interval as _interval
from normtest.verdict.formatting import number as _number
from normtest.verdict.formatting import threshold as _threshold
from normtest.verdict.result import Result, Verdict, variant_key

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from normtest.audit.compare import Comparison

__all__ = ["Leader", "comparison_text", "leaderboard", "print_comparison",
           "render_comparison_html", "render_comparison_markdown"]

_MODEL_STATES = ("cls", "eos")


@dataclass(frozen=True)
class Leader:
    """One leaderboard row: a claim's variant and each model's result for it (None: absent)."""

    label: str
    claim: str
    cells: tuple[Result | None, ...]


def _label(r: Result) -> str:

    variant = {k: ("state" if k == "composition" and v in _MODEL_STATES else v)
               for k, v in r.variant.items() if REFERENCE.get(k) != v}
    return f"{r.claim}[{', '.join(variant.values())}]" if variant else str(r.claim)


def leaderboard(comparison: Comparison) -> list[Leader]:
    """Rows confirmatory for at least one model and measured for two or more, in catalogue
    order; a model's CLS or EOS row is its ``state`` row."""
    per_model = [{_label(r): r for r in report.results if r.measurement is not None
                  and r.variant.get("representation", "last") == "last"}
                 for report in comparison.reports]
    wanted = [label for rows in per_model for label, r in rows.items() if r.confirmatory]
    out = []
    for label in dict.fromkeys(wanted):
        cells = tuple(rows.get(label) for rows in per_model)
        if sum(c is not None for c in cells) >= 2:
            claim = next(c.claim for c in cells if c is not None)
            out.append(Leader(label, str(claim), cells))
    order = {c: i for i, c in enumerate(dict.fromkeys(
        r.claim for report in comparison.reports for r in report.results))}
    return sorted(out, key=lambda x: order.get(x.claim, 0))


_SHORT = {Verdict.INCONCLUSIVE: "undecided"}


def _cell(r: Result | None) -> str:
    if r is None:
        return "—"
    return (f"{_number(r.estimate)} {_interval(r)} "
            f"{_SHORT.get(r.verdict, r.verdict.value)}")


def _statement(r: Result) -> str:
    return str(r.details.get("statement") or r.id)


def _difference(r: Result) -> str:
    statistic = r.measurement.statistic if r.measurement else "difference"
    if r.measurement is None or not math.isfinite(r.estimate):
        return r.reason
    return (f"{statistic} {_number(r.estimate)} {_interval(r)} "
            f"(minimum {_threshold(r)})")


def _variant_note(r: Result) -> str:
    rest = {k: v for k, v in r.variant.items() if k not in ("first", "second")}
    note = variant_key(rest, ", ")
    states = r.details.get("states")
    return note + (f" ({states})" if states else "")


def scorecards(comparison: Comparison, *, readings: bool = False
               ) -> tuple[list[str], list[list[str]]]:
    """(model names, rows of hypothesis title then each model's status — with ``readings``,
    its verdict with its other readings where they differ: ``replicated as stated · not beyond
    token count``)."""
    names = list(comparison.provenance.get("models") or [r.model.get("name")
                                                         for r in comparison.reports])
    lines = [report.scorecard for report in comparison.reports]
    titles = list(dict.fromkeys(line.title for card in lines for line in card))
    rows = []
    for title in titles:
        found = [next((x for x in card if x.title == title), None) for card in lines]
        statuses = ["—" if x is None else x.status for x in found]
        if any(status not in ("not tested", "—") for status in statuses):
            rows.append([title, *(["—" if x is None else x.verdict for x in found]
                                  if readings else statuses)])
    return [str(n) for n in names], rows


def _head(comparison: Comparison) -> str:
    names = comparison.provenance.get("models") or []
    return f"normtest compare: {' vs '.join(str(n) for n in names)}"


_UNITS = (("words", "words"), ("prefixes", "documents"), ("texts", "sentences"))


def _sample(comparison: Comparison) -> str:
    """The sample in one line: what was requested, then what each pair was paired on as
    measured (the words both models kept, the documents both read, the sentences both
    encoded), and the prefixes' model tokens."""
    prov = comparison.provenance
    sample = prov.get("sample")
    if not isinstance(sample, dict):  # a comparison written before the sample was recorded
        return _old_sample(comparison)
    asked = [f"{sample[what]:,} {what}" for _, what in _UNITS
             if isinstance(sample.get(what), int)]
    head = f"one sample for every model (seed {sample.get('seed', '?')}"
    head += f"; requested {', '.join(asked)})" if asked else ")"
    pairs = [p for p in prov.get("paired") or [] if isinstance(p, dict)]
    shown = []
    for data, what in _UNITS:
        counts = [p[data] for p in pairs if isinstance(p.get(data), int)]
        if not counts:
            continue
        if len(set(counts)) == 1:
            shown.append(f"{counts[0]:,} {what}")
        else:
            shown.append(", ".join(f"{p[data]:,} {what} ({p['first']} vs {p['second']})"
                                   for p in pairs if isinstance(p.get(data), int)))
    text = head + ("; paired as measured: " + ", ".join(shown) if shown else "")
    tokens = _tokens(comparison)
    if tokens:
        text += ("; prefixes on a word grid, each document's longest read as "
                 + ", ".join(tokens) + " model tokens on average")
    return text


def _same_models(comparison: Comparison) -> list[str]:
    """One line per pair that is one model twice (it was not compared with itself)."""
    return [f"{a} and {b} are the same model (the same name and revision, or the same vectors): "
            "not compared with each other (a model's difference with itself is zero by "
            "construction)"
            for a, b in comparison.provenance.get("same_model") or []]


def _tokens(comparison: Comparison) -> list[str]:
    tokens = []
    for report in comparison.reports:
        block = report.data.get("prefixes", {})
        if block.get("tokens"):
            mean = sum(t[-1] for t in block["tokens"]) / max(1, len(block["tokens"]))
            tokens.append(f"{mean:.0f} ({report.model.get('name')})")
    return tokens


def _old_sample(comparison: Comparison) -> str:
    bits = []
    for report in comparison.reports[:1]:
        p = report.provenance
        for key, what in (("words", "words"), ("documents", "documents"),
                          ("sentences", "sentences")):
            if key in p:
                bits.append(f"{p[key]:,} {what}")
    tokens = _tokens(comparison)
    sample = ("one sample for every model: " + ", ".join(bits) if bits
              else "one sample for every model")
    if tokens:
        sample += ("; prefixes on a word grid, each document's longest read as "
                   + ", ".join(tokens) + " model tokens on average")
    return sample


# -- terminal ------------------------------------------------------------------------------------
def comparison_view(comparison: Comparison, width: int = 100) -> list[RenderableType]:
    from rich.text import Text


    # the sample and the pairs not compared wrap rather than being cut: they say what was paired
    out: list[RenderableType] = [_line(_head(comparison), "bold"),
                                 _indent(Text(_sample(comparison), style="dim"), 0)]
    out += [_indent(Text(line, style="yellow"), 0) for line in _same_models(comparison)]
    statement = None
    for r in comparison.results:
        if _statement(r) != statement:
            statement = _statement(r)
            out.append(_line(statement, "bold"))
        line = Text("  ")
        line.append(f"{r.verdict.value:<13}", style=_VERDICT.get(r.verdict, ""))
        note = _variant_note(r)
        line.append(f"{note}: " if note else "", style="cyan")
        line.append(_difference(r))
        if r.expected:
            line.append(f"; paper: {r.expected.value}", style="dim")
        elif (r.details or {}).get("proxy"):
            line.append(f"; exploratory proxy: {r.details['proxy']}", style="dim")
        out.append(line)
    tally = ", ".join(f"{sum(r.verdict is v for r in comparison.results)} {v.value}"
                      for v in fmt.ORDER if any(r.verdict is v for r in comparison.results))
    out += [_line(f"{len(comparison.results)} comparative rows: {tally}"), Text("")]
    names, rows = scorecards(comparison)
    table = _table()
    for column in ("scorecard", *names):
        table.add_column(column, no_wrap=True, overflow="ellipsis",
                         max_width=44 if column == "scorecard" else None)
    for row in rows:
        table.add_row(*row)
    out += [_indent(table), Text("")]
    board = leaderboard(comparison)
    if board:
        out.append(_line("Leaderboard: estimate [interval] verdict, on the rows the paper "
                         "states an expectation for", "bold"))
        table = _table()
        for column in ("row", *names):
            table.add_column(column, no_wrap=True, overflow="ellipsis")
        for leader in board:
            table.add_row(leader.label, *(_cell(c) for c in leader.cells))
        out += [_indent(table), Text("")]
    return out


def print_comparison(comparison: Comparison, console: Console) -> None:

    _print(console, comparison_view(comparison, console.width))


def comparison_text(comparison: Comparison, width: int = 100) -> str:
    """The terminal view as plain text."""

    buffer = io.StringIO()
    print_comparison(comparison, _console(file=buffer, width=width, plain=True))
    return buffer.getvalue()


# -- Markdown --------------------------------------------------------------------------------------
def render_comparison_markdown(comparison: Comparison) -> str:

    out = [f"## {md_text(_head(comparison))}", "", md_text(_sample(comparison)) + ".", ""]
    for line in _same_models(comparison):
        out += [f"**{md_text(line)}.**", ""]
    out += ["### Comparative claims", "",
            "| verdict | statement | variant | difference [interval] | minimum | paper |",
            "|---|---|---|---|---|---|"]
    for r in comparison.results:
        out.append(_row([f"**{r.verdict.value}**", md_text(_statement(r)),
                         md_text(_variant_note(r)) or "—",
                         f"{_number(r.estimate)} {_interval(r)}"
                         if math.isfinite(r.estimate) else md_text(r.reason),
                         md_text(_threshold(r)),
                         _expected(r)]))
    names, rows = scorecards(comparison, readings=True)
    out += ["", "### Scorecards", "", _row(["hypothesis", *map(md_code, names)]),
            _row(["---"] * (len(names) + 1))]
    out += [_row([md_text(row[0]), *(md_text(c) for c in row[1:])]) for row in rows]
    board = leaderboard(comparison)
    if board:
        out += ["", "### Leaderboard", "", "Estimate [interval] and verdict of each model on "
                "the rows the paper states an expectation for.", "",
                _row(["row", *map(md_code, names)]), _row(["---"] * (len(names) + 1))]
        out += [_row([md_code(x.label), *(md_text(_cell(c)) for c in x.cells)])
                for x in board]
    return "\n".join(out).rstrip() + "\n"


# -- HTML ------------------------------------------------------------------------------------------
def leaderboard_plot(board: Sequence[Leader], names: Sequence[str]) -> str:
    """Each model's estimate and interval per leaderboard row (one colour per model)."""

    palette = ["#0969da", "#bf3989", "#1a7f37", "#9a6700", "#8250df", "#cf222e"]
    n = len(board)
    with figure(8.0, 0.9 + 0.34 * n) as fig:
        ax = fig.add_subplot()
        for m, name in enumerate(names):
            offset = (m - (len(names) - 1) / 2) * 0.18
            for i, leader in enumerate(board):
                r = leader.cells[m]
                if r is None or not math.isfinite(r.estimate):
                    continue
                y = n - 1 - i + offset
                low, high = r.ci
                colour = palette[m % len(palette)]
                if math.isfinite(low) and math.isfinite(high):
                    ax.hlines(y, low, high, color=colour, lw=1.8)
                filled = r.verdict is Verdict.PASS
                ax.plot([r.estimate], [y], marker="o", ms=4.5, color=colour,
                        mfc=colour if filled else "white", label=name if i == 0 else None)
        ax.set_yticks(range(n), [x.label for x in reversed(board)])
        ax.tick_params(axis="y", length=0)
        ax.grid(axis="x", color="#d0d7de", lw=0.5)
        ax.set_xlabel("each row's statistic: estimate and interval (filled: PASS)")
        ax.legend(loc="best", frameon=False)
        return svg(fig)


def render_comparison_html(comparison: Comparison) -> str:

    def figure(draw: partial[str], alt: str, caption: str) -> str:
        if not plots.available():
            return '<p class="note">No plots (matplotlib is not installed).</p>'
        return figure_html(draw, alt, caption)

    rows = "".join(
        f"<tr><td>{badge(r.verdict.value)}</td><td>{esc(_statement(r))}</td>"
        f"<td><code>{esc(_variant_note(r))}</code></td><td>{esc(_difference(r))}</td>"
        f"<td>{esc(_expected(r))}</td></tr>"
        for r in comparison.results)
    measured = [r for r in comparison.results if math.isfinite(r.estimate)]
    forest = figure(partial(plots.forest_plot, measured, "paired difference"),
                    "paired differences", "x: each comparative row's paired difference "
                    "(first − second) and its interval; the dashed line is the minimum "
                    "difference a PASS must exceed.") if measured else ""
    names, cards = scorecards(comparison)
    head = "".join(f"<th>{esc(n)}</th>" for n in names)
    card_rows = "".join(f"<tr><td>{esc(row[0])}</td>"
                        + "".join(f"<td>{esc(c)}</td>" for c in row[1:]) + "</tr>"
                        for row in cards)
    board = leaderboard(comparison)
    board_html = ""
    if board:
        lines = "".join(f"<tr><td><code>{esc(x.label)}</code></td>"
                        + "".join(f"<td>{esc(_cell(c))}</td>" for c in x.cells) + "</tr>"
                        for x in board)
        board_html = ("<section id=\"leaderboard\"><h2>Leaderboard</h2>"
                      + figure(partial(leaderboard_plot, board, names), "leaderboard",
                               "Per row (y), each model's estimate and interval (x), one colour "
                               "per model; a filled dot is a PASS.")
                      + f'<table class="rows"><thead><tr><th>row</th>{head}</tr></thead>'
                      f"<tbody>{lines}</tbody></table></section>")
    same = "".join(f'<p class="note"><strong>{esc(line)}.</strong></p>'
                   for line in _same_models(comparison))
    body = (f"<h1>{esc(_head(comparison))}</h1><p>{esc(_sample(comparison))}.</p>{same}"
            '<section id="comparisons"><h2>Comparative claims</h2>'
            '<table class="rows"><thead><tr><th>verdict</th><th>statement</th><th>variant</th>'
            f"<th>difference [interval] (minimum)</th><th>paper</th></tr></thead><tbody>{rows}"
            f"</tbody></table>{forest}</section>"
            f'<section id="scorecards"><h2>Scorecards</h2><table class="rows"><thead><tr>'
            f"<th>hypothesis</th>{head}</tr></thead><tbody>{card_rows}</tbody></table></section>"
            + board_html)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="referrer" content="no-referrer"><link rel="icon" href="data:,">'
            f"<title>{esc(_head(comparison))}</title><style>{_CSS}</style></head>\n"
            f"<body><main>\n{body}\n<footer>Rendered by normtest {esc(__version__)}; "
            "self-contained: no script, no network, no font file.</footer></main></body>"
            "</html>\n")


def _expected(r: Result) -> str:
    """The paper's verdict for a row, or why it has none (exploratory; a proxy's pair)."""
    if r.expected:
        return r.expected.value
    proxy = (r.details or {}).get("proxy")
    return f"exploratory (proxy: {proxy})" if proxy else "exploratory"
