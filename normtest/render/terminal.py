"""What ``normtest audit`` prints: the answer first, on one screen.

1. the scorecard: one line per hypothesis of the paper (its status and title), then the tally;
2. one line per claim: how many of its *primary* rows passed, failed and stayed undecided, how
   many agree with the paper, and the headline effect. The primary rows are the confirmatory
   rows when the claim has any, else (an exploratory claim) its rows at the reference variant,
   the raw last layer (:data:`normtest.claims.catalogue.REFERENCE`), else all its rows. The headline
   is one named primary row's estimate and interval (and threshold, where the width allows):
   the best-agreeing row — a PASS the paper expects, else a row that agrees with the paper,
   else a PASS, else an undecided row, else the first. A claim that was skipped (or failed)
   whole is one line with the reason, whatever its variants;
3. each confirmatory row that is not PASS: its estimate, interval and threshold, what the paper
   expects, and why — what would decide it first (the power analysis), then the parts of the
   reason the numbers do not already say. Rows against the paper come first, then undecided
   rows, then rows that FAIL as the paper expects; what does not fit the screen is counted, and
   ``--all`` lists it.

Every other variant (the exploratory rows) is folded into the counts; ``--all`` prints every row
too, and the scorecard's reasons. On a terminal the view takes the terminal's width and colour
(rich honours ``NO_COLOR``); anywhere else it is plain text :data:`WIDTH` columns wide, the same
on every machine.

The plain-text pieces are here too: the table of every row (what ``normtest audit --all`` and
``normtest demo`` end with, ASCII and grep-friendly) and ``normtest plan``'s text.
"""

from __future__ import annotations

import io
import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from normtest.audit.next_steps import next_steps
from normtest.audit.report import Report
from normtest.audit.sizing import stored_lines
from normtest.claims.catalogue import REFERENCE
from normtest.render.labels import agreement, deciding_label, families, short_variant
from normtest.render.layers import profile_summary, report_profiles
from normtest.scorecard.lines import Line, counts, deciding_row
from normtest.scorecard.power import OUT_OF_REACH
from normtest.scorecard.robustness import DECIDED
from normtest.verdict.formatting import BESIDE, beside, general, number, threshold
from normtest.verdict.result import Result, Verdict, variant_key

if TYPE_CHECKING:
    from normtest.scorecard.power import Plan

#: Width of the plain text of :func:`audit_text` by default (the docs' examples).
WIDTH = 100
#: Width of the plain text written anywhere but a terminal: no line is ever cut.
UNLIMITED = 10_000
#: Lines a default view stays within, leaving one for the "reports written to" line and two
#: for notes (a corpus read with replaced bytes).
SCREEN = 37
#: Lines the reasons always get, however long the rest.
MIN_REASONS = 4
#: Columns the reason needs beside a row to share its line (else it goes below the row).
_BESIDE = 24

_STATUS = {"replicated": "green", "contradicted": "bold red", "undecided": "yellow",
           "invalid": "bold magenta", "not tested": "dim"}
_VERDICT = {Verdict.PASS: "green", Verdict.FAIL: "red", Verdict.INCONCLUSIVE: "yellow",
            Verdict.ERROR: "magenta", Verdict.SKIPPED: "dim"}
#: Clauses of a reason the view rewrites: the adjustment and the power analysis.
_ADJUSTED, _DECIDING = "after multiplicity adjustment ", "deciding it "


class _Wide(Text):
    """Text printed as it is, neither wrapped nor cut (the table of every row)."""


def stdout_console(width: int | None = None) -> Console:
    """A console on standard output: on a terminal its width (or ``width``) and colour (rich
    honours ``NO_COLOR``, ``FORCE_COLOR`` and ``TERM=dumb``); anywhere else (a pipe, a file, a
    CI log) plain text ``width`` columns wide, by default never cut (:data:`UNLIMITED`)."""
    probe = _console(width=width)
    return probe if probe.is_terminal else _console(width=width or UNLIMITED, plain=True)


def _console(file: IO[str] | None = None, width: int | None = None,
             plain: bool = False) -> Console:
    """A console that reads no markup, emoji codes or numbers into what it prints; ``plain``:
    no colour and never a terminal."""
    if plain:
        return Console(file=file, width=width, markup=False, emoji=False, highlight=False,
                       color_system=None, force_terminal=False)
    return Console(file=file, width=width, markup=False, emoji=False, highlight=False)


def audit_text(report: Report, *, title: str | None = None, all_rows: bool = False,
               width: int | None = WIDTH, report_path: str | None = None) -> str:
    """The view as plain text, ``width`` columns wide (None: as wide as its lines are: what a
    pipe or a log file receives; ``normtest report --format text``)."""
    buffer = io.StringIO()
    console = _console(file=buffer, width=UNLIMITED if width is None else width, plain=True)
    print_audit(report, console, title=title, all_rows=all_rows, report_path=report_path)
    return buffer.getvalue()


def print_audit(report: Report, console: Console, *, title: str | None = None,
                all_rows: bool = False, report_path: str | None = None,
                model: str | None = None) -> None:
    """Print the view of ``report`` on ``console`` (its width; colour on a terminal);
    ``all_rows`` adds the scorecard's reasons, every reason and every row; ``report_path``
    (the report.json just written) goes into the command that explains a line, ``model`` (as
    the user named it) into the rerun command."""
    _print(console, audit_view(report, title=title, all_rows=all_rows, width=console.width,
                               report_path=report_path, model=model))


def print_rows(report: Report, console: Console, *, title: str, reasons: bool = False,
               then: str = "") -> None:
    """``title``, then every row of ``report`` (what ``normtest demo`` prints); ``reasons``
    adds every row's reason; ``then`` ends it (what to run next)."""
    parts: list[RenderableType] = [_line(title, "bold"), Text(""),
                                   _every_row(report.results), Text("")]
    if reasons:
        parts += [_line("Why:", "bold"),
                  *reason_lines(report.results, None, console.width, full=True), Text("")]
    summary = ", ".join(f"{n} {v}" for v, n in report.summary.items() if n)
    n = len(report.results)
    end = f"{n} row{'s' * (n != 1)}: {summary}" + (f"; {then}" if then else "")
    _print(console, [*parts, _line(end, "dim")])


def _print(console: Console, parts: Sequence[RenderableType]) -> None:
    for part in parts:
        # a line of text is cut to the width (rich joins the Texts it prints, so their own
        # no_wrap is lost: it is given here); tables fit their columns, a reason wraps, the
        # table of every row is printed whole
        wide = isinstance(part, _Wide)
        cut = True if isinstance(part, Text) and not wide else None
        if console.is_terminal:
            console.print(part, no_wrap=cut, overflow="ellipsis" if cut else None, soft_wrap=wide)
        else:  # plain text: no padding at the ends of lines
            with console.capture() as captured:
                console.print(part, no_wrap=cut, overflow="ellipsis" if cut else None,
                              soft_wrap=wide)
            console.out("\n".join(line.rstrip() for line in captured.get().splitlines()),
                        highlight=False)


def audit_view(report: Report, *, title: str | None = None, all_rows: bool = False,
               width: int = WIDTH, report_path: str | None = None,
               model: str | None = None) -> list[RenderableType]:
    """The parts of the view, in order (blank lines included), for ``width`` columns; ``title``
    (default ``normtest audit of NAME``) heads it, followed by the model's family; the last
    lines say what to do next (:func:`next_part`)."""
    name, family = report.model.get("name", "unnamed model"), report.model.get("family")
    head = (title or f"normtest audit of {name}") + (f" ({family})" if family else "")
    plan = next_steps(report, model)
    top = scorecard_part(report.scorecard, head=head, reasons=all_rows, width=width,
                         notes=answer_notes(report),
                         robustness={r.line: r for r in report.robustness},
                         controls={c.line: c for c in report.controls},
                         steps={s.line: s for s in plan.steps})
    claims = claim_rows(report.results)
    tail: list[RenderableType] = [*next_part(plan),
                                  _Wide(footer(report, all_rows, report_path), style="dim")]
    if all_rows:
        tail = [Text(""), _line(f"Every row ({len(report.results)}):", "bold"),
                _every_row(report.results), Text(""), *tail]
    body: list[RenderableType] = [Text(""), *map(_indent, claims_table(claims, width - 2)),
                                  Text("")]
    profile = layer_part(report)
    body += profile
    pending = pending_rows(report.results)
    if pending:
        used = len(top) + len(claims) + 3 + 1 + len(tail) + len(profile)  # and the title
        # a screen keeps to its lines; a log (no width limit) holds every reason
        budget = None if all_rows or width >= UNLIMITED else max(MIN_REASONS, SCREEN - used)
        body += [_reasons_title(pending), *reason_lines(pending, budget, width, full=all_rows)]
    return [*top, *body, *tail]


def next_part(plan: Any) -> list[RenderableType]:
    """What to do next (:class:`normtest.audit.next_steps.NextSteps`): one command that decides
    every undecided line the data can decide (sized for power 0.9 per row, the estimates taken
    as the truth), with its estimated time as a shell comment, and the lines no sample from
    these data decides; nothing when no line is undecided."""
    if not plan.steps:
        return []
    out: list[RenderableType] = []
    command = plan.command
    far = plan.out_of_reach
    reach = "; ".join(s.short() for s in far)
    corpus = any(n.setting in ("documents", "sentences") and not n.reachable
                 for s in far for n in s.needs)
    if command is not None:
        when = plan.time_text()
        out.append(_Wide(f"next: {command}", style="bold"))  # whole, to copy: never cut
        said = f"sized to decide {', '.join(plan.decides)}" + (f", {when}" if when else "")
        out.append(_line(f"      {said}" + (f"; out of reach: {reach}" if far else ""), "dim"))
    elif far:
        out.append(_line("next: no sample the bundled data hold decides them"
                         + ("; a corpus of your own (--corpus) can" if corpus else "") + ":",
                         "dim"))
        out.append(_line(f"      {reach}", "dim"))
    return out


def answer_notes(report: Report) -> list[str]:
    """What the answer must be read with, said before it: how the sample was sized, a report
    re-judged under other thresholds (its robustness and controls are the audit's), a word
    sample the model covers only in part (more than a tenth of the words without a vector)."""

    out = stored_lines(report.provenance.get("sizing"))
    if report.rejudged_note:
        out.append(report.rejudged_note)
    found = report.missing_vectors
    if found is None:
        return out
    missing, requested = found
    kept = report.provenance.get("words")
    have = f": word rows describe the {kept:,} it has" if isinstance(kept, int) else ""
    return [*out, f"no vector for {missing:,} of the {requested:,} sample words "
                  f"({missing / requested:.0%}){have}"]


def layer_part(report: Report) -> list[RenderableType]:
    """A layer profile's lines (where each followed row passes, where it peaks), or none."""

    found = report_profiles(report)
    if found is None:
        return []
    profiles, n_layers = found
    return [_line(f"Layer profile over {n_layers + 2} representations (exploratory below the "
                  "last layer; report.html plots it):", "bold"),
            *(_indent(_line(profile_summary(p))) for p in profiles), Text("")]


def _line(text: str, style: str = "") -> Text:
    """One line, cut short (with an ellipsis) where it is wider than the console."""
    return Text(text, style=style, no_wrap=True, overflow="ellipsis")


def _indent(part: RenderableType, by: int = 2) -> Padding:
    return Padding(part, (0, 0, 0, by), expand=False)


# -- the scorecard ---------------------------------------------------------------------------


def scorecard_part(lines: Sequence[Line], *, head: str = "", reasons: bool = False,
                   width: int = WIDTH, notes: Sequence[str] = (),
                   robustness: Mapping[str, Any] | None = None,
                   controls: Mapping[str, Any] | None = None,
                   steps: Mapping[str, Any] | None = None) -> list[RenderableType]:
    """The question (after ``head``, on a line of its own where the two do not fit ``width``),
    ``notes`` (what the answer must be read with, such as a sample the model covers only in
    part), then one line per hypothesis: its status, its id (``*``: its criterion is
    reconstructed by normtest, not stated by the paper), the effect of the row that decides it
    (:func:`normtest.scorecard.lines.deciding_row`) against its threshold, and its robustness
    in words (``robust (89% of 9 analyses)``, ``fragile: transform=raw gives contradicted``).
    Below a line, where there is something to say: its other readings where they differ
    (``as stated · not beyond token count``), the control that made it invalid, and for an
    undecided line what would decide it (``steps``: :class:`normtest.audit.next_steps.LineStep`
    by line). With ``reasons`` its title and reason follow. Then the tally."""
    question = "Does the model behave as the paper says?"
    first = f"{head}. {question}" if head else question
    out: list[RenderableType] = ([_line(first, "bold")] if len(first) <= width
                                 else [_line(head, "bold"), _line(question, "bold")])
    out += [_line(f"  ! {note}", "bold yellow") for note in notes]
    grid = Table.grid(padding=(0, 2, 0, 0))
    for _ in range(3):
        grid.add_column(no_wrap=True)
    below: list[list[Text]] = []
    for line in lines:
        status = Text(line.status.upper(), style=_STATUS.get(line.status, ""))
        name = Text(line.key).append("*" if line.basis == "reconstructed" else " ", style="dim")
        grid.add_row(status, name, _deciding_effect(line))
        robust = (robustness or {}).get(line.key)
        said = Text(" · ").join(t for t in (
            Text(robust.advice, style="" if robust.robust else "yellow")
            if robust is not None else Text(""), _beyond(line, robust),
            Text(robust.heterogeneity_advice, style="dim") if robust is not None
            else Text("")) if t.plain)
        extra = [t for t in (said, _controlled(line, (controls or {}).get(line.key)),
                             _step(line, (steps or {}).get(line.key))) if t.plain]
        if reasons:
            extra += [Text(line.title), Text(line.reason, style="dim")]
        below.append(extra)
    indent = 4 + max((len(line.status) for line in lines), default=0)
    for cells, extra in zip(_grid_lines(grid, width - 2), below, strict=True):
        out.append(_line("  ").append_text(cells))
        for more in extra:
            if reasons:  # wrapped, not cut
                out.append(_indent(more, indent))
            else:
                out.append(_line(" " * indent).append_text(more))
    tally = ", ".join(f"{n} {status}" for status, n in counts(lines).items() if n)
    tested = [line for line in lines if line.status != "not tested"]
    checked = [c for line in tested if (c := (controls or {}).get(line.key)) is not None]
    if checked:
        bad = sum(not c.valid for c in checked)
        tally += ("; all controls behaved" if not bad else
                  f"; {bad} line{'s' * (bad != 1)} invalid by {'their' if bad > 1 else 'its'} "
                  "controls")
    marked = any(line.basis == "reconstructed" for line in lines)
    out.append(_line(f"scorecard: {tally}" + (" (*: reconstructed)" if marked else "")))
    return out


def _deciding_effect(line: Line) -> Text:
    """The effect of the row that decides the line: ``sqrt_n: 0.46 [0.445, 0.476] > 0.3``
    (:func:`normtest.render.labels.deciding_label` names the row)."""
    r = deciding_row(line)
    if r is None:
        return Text("")
    label = deciding_label(r, (x.claim for x in line.rows))
    out = Text(f"{label}: ", style="cyan") if label else Text("")
    return out.append_text(effect(r))


def _step(line: Line, step: Any | None) -> Text:
    """What would decide an undecided line: ``→ needs --sentences 15,560 (now 819)``."""
    if step is None:
        return Text("")
    return Text(f"→ {step.clause()}", style="yellow")


def _beyond(line: Line, robustness: Any | None = None) -> Text:
    """The line's other readings where they differ from its status (``in raw geometry ·
    UNDECIDED after centring``, ``as stated · not beyond token count``) and its analyses' modal
    status where that differs (``· mostly CONTRADICTED across its analyses``), else nothing."""
    out = Text("")
    differ = [r for r in line.readings if r.status != line.status]
    if differ and line.reference:
        out.append(f"{line.reference} ")
    for reading in differ:
        out.append("· ")
        out.append(reading.status.upper(), style=_STATUS.get(reading.status, ""))
        out.append(f" {reading.name} ")
    phrase = line.beyond_phrase
    if phrase:
        assert line.beyond is not None
        out.append("as stated " if not differ else "")
        out.append(f"· {phrase} ", style=_STATUS.get(line.beyond.status, ""))
    if robustness is not None and robustness.assessed and robustness.status in DECIDED \
            and robustness.modal != robustness.status:
        out.append("· mostly " if out.plain else "mostly ")
        out.append(robustness.modal.upper(), style=_STATUS.get(robustness.modal, ""))
        out.append(" across its analyses")
    out.rstrip()
    return out


def _controlled(line: Line, controls: Any | None) -> Text:
    """For a line its controls made invalid, which control misbehaved and how (``invalid:
    positive undecided with power 0.97 at the margin``); nothing for a line whose controls
    behaved (the tally says so) or that has none."""
    if controls is None or line.status == "not tested" or controls.valid:
        return Text("")
    if controls.problem:
        return Text("controls not run: " + controls.problem, style="magenta")
    bad = next(c for c in controls.ran if not c.ok)
    return Text(f"invalid: its {bad.kind} control (built to be {bad.expected}) came out "
                f"{bad.came_out}", style="magenta")


def _grid_lines(grid: Table, width: int) -> list[Text]:
    """A grid's rows as single lines of aligned cells, each cut to ``width``."""
    columns = [list(column.cells) for column in grid.columns]
    widths = [max((cell.cell_len for cell in cells if isinstance(cell, Text)), default=0)
              for cells in columns[:-1]]
    out = []
    for row in zip(*columns, strict=True):
        line = Text(no_wrap=True, overflow="ellipsis")
        for cell, w in zip(row[:-1], widths, strict=True):
            assert isinstance(cell, Text)
            line.append_text(cell)
            line.append(" " * (w - cell.cell_len + 2))
        last = row[-1]
        assert isinstance(last, Text)
        line.append_text(last)
        line.rstrip()
        line.truncate(width, overflow="ellipsis")
        out.append(line)
    return out


# -- one line per claim ----------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimRow:
    """One claim as the view shows it: its primary rows and the headline among them."""

    claim: str
    rows: tuple[Result, ...]
    primary: tuple[Result, ...]
    #: whether the primary rows are the confirmatory ones
    confirmatory: bool
    headline: Result | None
    #: SKIPPED or ERROR when every row of the claim ended so (``note`` then says why)
    folded: Verdict | None = None
    note: str = ""

    def count(self, *verdicts: Verdict) -> int:
        """How many primary rows ended in one of ``verdicts``."""
        return sum(r.verdict in verdicts for r in self.primary)

    @property
    def agreeing(self) -> tuple[int, int]:
        """(primary rows that agree with the paper, those for which it states a verdict)."""
        stated = [r for r in self.primary if r.expected is not None]
        return sum(agreement(r) == "yes" for r in stated), len(stated)


def primary_rows(rows: Sequence[Result]) -> tuple[Result, ...]:
    """A claim's primary rows: the confirmatory rows when it has any, else the rows at the
    reference variant (each axis of ``REFERENCE`` a row has at its reference value), else all
    of them (SKIPPED rows never)."""

    ran = [r for r in rows if r.verdict is not Verdict.SKIPPED]
    confirmatory = tuple(r for r in ran if r.confirmatory)
    if confirmatory:
        return confirmatory
    reference = tuple(r for r in ran if all(r.variant.get(k, v) == v
                                            for k, v in REFERENCE.items()))
    return reference or tuple(ran)


def headline(rows: Sequence[Result]) -> Result | None:
    """The row whose effect a claim's line shows: the best-agreeing measured row (a PASS the
    paper expects, then a row that agrees, then a PASS, then an undecided row, then any), the
    first in report order among equals."""

    def rank(r: Result) -> int:
        agrees = agreement(r) == "yes"
        if agrees:
            return 0 if r.verdict is Verdict.PASS else 1
        if r.verdict is Verdict.PASS:
            return 2
        return 3 if r.verdict is Verdict.INCONCLUSIVE else 4

    return min((r for r in rows if math.isfinite(r.estimate)), key=rank, default=None)


def claim_rows(results: Sequence[Result]) -> list[ClaimRow]:
    """One :class:`ClaimRow` per claim, in report order."""
    out = []
    for family in families(results):
        rows = family.results
        verdicts = {r.verdict for r in rows}
        if len(verdicts) == 1 and verdicts <= {Verdict.SKIPPED, Verdict.ERROR}:
            reasons = list(dict.fromkeys(r.reason for r in rows))
            more = f" (and {len(reasons) - 1} other reasons)" if len(reasons) > 1 else ""
            out.append(ClaimRow(family.claim, rows, (), False, None, rows[0].verdict,
                                reasons[0] + more))
            continue
        primary = primary_rows(rows)
        out.append(ClaimRow(family.claim, rows, primary, any(r.confirmatory for r in primary),
                            headline(primary)))
    return out


def claims_table(rows: Sequence[ClaimRow], width: int = WIDTH) -> list[RenderableType]:
    """The per-claim lines under a header row, ``width`` columns wide at most (where the
    headline does not fit, it drops its threshold, then its variant, then is cut short); then a
    line for each claim skipped (or failed) whole, with the reason."""
    ran = [c for c in rows if c.folded is None]
    cells: list[list[RenderableType]] = []
    for c in ran:
        agree, stated = c.agreeing
        if c.confirmatory:
            against = sum(agreement(r) == "NO" for r in c.primary)
            paper = Text(f"{agree}/{stated} agree",
                         style="red" if against else "green" if agree == stated else "yellow")
        else:
            paper = Text("exploratory", style="dim")
        cells.append([c.claim, _count(c.count(Verdict.PASS), Verdict.PASS),
                      _count(c.count(Verdict.FAIL), Verdict.FAIL),
                      _count(c.count(Verdict.INCONCLUSIVE, Verdict.ERROR), Verdict.INCONCLUSIVE),
                      paper])
    header = ("claim", "PASS", "FAIL", "undecided", "paper")
    natural = [max([len(h)] + [_length(row[i]) for row in cells]) for i, h in enumerate(header)]
    natural[0] = max([natural[0]] + [len(c.claim) for c in rows])
    room = max(8, width - sum(natural) - 2 * len(header))
    table = _table()
    for i, name in enumerate(header):
        table.add_column(name, no_wrap=True, justify="right" if 1 <= i <= 3 else "left",
                         min_width=natural[i])
    table.add_column("headline", no_wrap=True, overflow="ellipsis", max_width=room)
    for c, row in zip(ran, cells, strict=True):
        choices = [effect(c.headline, label=True), effect(c.headline, label=True, limit=False),
                   effect(c.headline, limit=False)]
        fits = [t for t in choices if t.cell_len <= room]
        table.add_row(*row, fits[0] if fits else choices[-1])
    out: list[RenderableType] = [table] if ran else []
    for c in rows:
        if c.folded is not None:
            line = _line(f"{c.claim:<{natural[0]}}  ")
            line.append(c.folded.value.lower(), style=_VERDICT[c.folded])
            out.append(line.append(f": {c.note}", style="dim"))
    return out


def _count(n: int, verdict: Verdict) -> Text:
    return Text(str(n), style=_VERDICT[verdict] if n else "dim")


def _length(cell: RenderableType) -> int:
    return cell.cell_len if isinstance(cell, Text) else len(str(cell))


def effect(r: Result | None, *, label: bool = False, limit: bool = True) -> Text:
    """``0.691 [0.677, 0.705] > 0.3``: estimate, interval and (with ``limit``) threshold; with
    ``label``, the values of the row's variant first (those not at their reference value)."""
    if r is None:
        return Text("—", style="dim")
    low, high = r.ci
    out = Text()
    if label and short_variant(r):
        out.append(", ".join(short_variant(r).values()) + ": ", style="cyan")
    out.append(f"{number(r.estimate, minus='-')} [{number(low, minus='-')}, "
               f"{number(high, minus='-')}]")
    t, c = r.threshold, r.criterion
    if limit and t is not None and c is not None:
        if isinstance(t, tuple):
            out.append(f" in [{t[0]:g}, {t[1]:g}]", style="dim")
        else:
            out.append(f" {'>' if c.direction == 'greater' else '<'} {t:g}", style="dim")
    return out


def short_id(r: Result) -> str:
    """The row's id without the axes at their reference value."""
    inner = variant_key(short_variant(r))
    base = r.claim or r.id
    return f"{base}[{inner}]" if inner else base


# -- the confirmatory rows that are not PASS -------------------------------------------------


def pending_rows(results: Sequence[Result]) -> list[Result]:
    """Confirmatory rows that are not PASS: those against the paper, the undecided, then those
    that FAIL as the paper expects (report order within each)."""
    rows = [r for r in results if r.confirmatory and r.verdict is not Verdict.PASS
            and r.verdict is not Verdict.SKIPPED]

    def order(r: Result) -> int:
        said = agreement(r)
        return 0 if said == "NO" else 2 if said == "yes" else 1

    return sorted(rows, key=order)


def _reasons_title(rows: Sequence[Result]) -> Text:

    left_out = variant_key({k: v for k, v in REFERENCE.items()
                            if any(r.variant.get(k) == v for r in rows)}, ", ")
    note = f" (ids leave out {left_out})" if left_out else ""
    return _line(f"Confirmatory rows that are not PASS{note}:", "bold")


def reason_lines(rows: Sequence[Result], budget: int | None = None, width: int = WIDTH, *,
                 full: bool = False) -> list[RenderableType]:
    """A header, then each row on one line — id, verdict, the paper's verdict, estimate
    [interval] threshold — and why: beside it where ``width`` leaves room, else on a line below
    (only when the reason says more than the numbers). With ``budget``, at most that many lines,
    the last counting the rows left out; ``full``: every reason whole, wrapped below its row."""
    lines, shown = _reason_lines(rows, len(rows), budget, width, full)
    if shown < len(rows):  # columns as wide as the rows shown need
        lines, shown = _reason_lines(rows, shown, budget, width, full)
    left = rows[shown:]
    if left:
        expected = sum(agreement(r) == "yes" for r in left)
        kind = f", {expected} of them FAIL as the paper expects" if expected else ""
        lines.append(_line(f"  … and {len(left)} more{kind}; --all lists every one", "italic"))
    return lines


def _reason_lines(rows: Sequence[Result], most: int, budget: int | None, width: int,
                  full: bool) -> tuple[list[RenderableType], int]:
    """The header and the lines of at most ``most`` rows, within ``budget`` lines (one kept for
    the count of the rest); how many rows they show. ``full``: every reason whole, wrapped below
    its row."""
    header = ("row", "verdict", "paper", "estimate [interval] threshold")
    cells = [(Text(short_id(r)), Text(r.verdict.value, style=_VERDICT[r.verdict]),
              Text(r.expected.value if r.expected else "—",
                   style="red" if agreement(r) == "NO" else "dim"), effect(r))
             for r in rows[:most]]
    widths = [max([len(h)] + [_length(c[i]) for c in cells]) for i, h in enumerate(header)]
    beside = not full and width - (2 + sum(widths) + 2 * len(widths)) >= _BESIDE
    top = _line("  ", "bold")
    for name, w in zip((*header, "why" if beside else ""), (*widths, 0), strict=True):
        top.append(f"{name:<{w}}  ")
    top.rstrip()
    out: list[RenderableType] = [top]
    for shown, (r, c) in enumerate(zip(rows, cells, strict=False)):
        line = _line("  ")
        for cell, w in zip(c, widths, strict=True):
            line.append_text(cell)
            line.append(" " * (w - cell.cell_len + 2))
        reason = r.reason if full else why(r, numbers=beside)
        group: list[RenderableType] = [line]
        if beside:
            line.append(reason, style="dim")
        elif full:
            group.append(_indent(Text(reason, style="dim"), 6))
        elif reason:
            group.append(_line(f"      {reason}", "dim"))
        line.rstrip()
        reserve = 1 if shown + 1 < len(rows) else 0
        if budget is not None and len(out) + len(group) + reserve > budget:
            return out, shown
        out += group
    return out, len(cells)


def why(r: Result, *, numbers: bool = True) -> str:
    """The reason, what matters first: what would decide the row (the power analysis), the
    adjusted p-values that left it undecided, then the measurement's clauses (without
    ``numbers``, not the headline's own clause, which the estimate and interval already say)."""
    parts = [p.strip() for p in r.reason.split("; ") if p.strip()]
    first: list[str] = []
    power = r.details.get("power")
    if isinstance(power, dict) and power.get("needed") is not None:
        needs = f"--{power.get('setting')} {power['needed']:,} (now {power.get('now', 0):,})"
        first.append(f"out of reach: {needs}" if power.get("out_of_reach")
                     else f"needs about {needs}")
    if r.verdict is Verdict.INCONCLUSIVE:
        first += ["adjusted " + p[len(_ADJUSTED):].split(" (")[0] for p in parts
                  if p.startswith(_ADJUSTED)]
    own = f"{r.measurement.statistic} " if r.measurement is not None else None
    rest = [p for p in parts if not p.startswith((_ADJUSTED, _DECIDING))
            and (numbers or own is None or not p.startswith(own))]
    return "; ".join(first + rest)


# -- every row, and the footer ----------------------------------------------------------------


def _every_row(results: Sequence[Result]) -> _Wide:
    """Every row: the table of :func:`verdict_table` (one line per row however wide, so that
    ids stay whole), verdicts in colour on a terminal."""
    header, *rows = table_rows(results)
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    out = _Wide()
    for i, row in enumerate([header, tuple("-" * w for w in widths), *rows]):
        verdict = Verdict(row[5]) if i > 1 else None
        for j, (cell, w) in enumerate(zip(row, widths, strict=True)):
            out.append(cell, style=_VERDICT[verdict] if j == 5 and verdict else "")
            out.append(" " * (w - len(cell) + 2) if j < len(row) - 1 else "\n")
    out.rstrip()
    return out


def footer(report: Report, all_rows: bool = False, report_path: str | None = None) -> str:
    """``211 rows: 57 PASS, …``, that ``--all`` lists every row (in the default view) and the
    command that explains a line of this report."""
    summary = ", ".join(f"{n} {v}" for v, n in report.summary.items() if n)
    n = len(report.results)
    explain = "normtest explain LINE" + (f" --report {shlex.quote(report_path)}"
                                         if report_path else "")
    more = f"; why a line: {explain}" if all_rows else f"; --all: every row; why a line: {explain}"
    return f"{n} row{'s' * (n != 1)}: {summary}{more}"


def _table() -> Table:
    """A table without borders, its columns two spaces apart."""
    return Table(box=None, header_style="bold", pad_edge=False, padding=(0, 2, 0, 0),
                 show_edge=False, collapse_padding=True)


# -- plain text: the table of every row, and the plan ----------------------------------------


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
