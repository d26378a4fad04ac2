"""The report as one self-contained HTML page.

Reading order (``docs/reports.md`` shows and explains each part): the title with a one-line
answer; the scorecard at a glance (each hypothesis of the paper, its status, the row that
decides it, its robustness and what would decide it, then the one command that decides every
undecided line: :mod:`normtest.render.html_lines`); a table of contents; one section per tested
line, the plot that decides it first, then its rows, robustness and controls; the claims
summary (verdict counts, one row per claim, the disagreements with the paper); all the plots —
a forest plot of effects per claim, word-level
scatter plots of ‖e(w)‖² against IC per composition and transform (and sentence-level ones when
the report has them), CER curves s(L) per composition — each with a caption that says what its
axes are (:mod:`normtest.render.html_figures`); then the long tables: the confirmatory rows open,
the exploratory rows folded in a ``<details>`` element with their count; the provenance.

Self-contained: no script, no network, no font file. Figures are SVG embedded as ``data:``
images; a Content-Security-Policy forbids scripts and every remote load, so the page behaves the
same opened from a mail attachment or a CI artefact. Every string that comes from the report —
words, model names, paths, reasons, claim ids, variant values — goes through :func:`esc`
(``html.escape`` with quotes). A report without plot data (an old report, the demonstration)
renders without those plots and says why, and so does a page rendered without matplotlib.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from normtest.audit.report import SCHEMA, Report
from normtest.audit.sizing import stored_lines
from normtest.base.version import VERSION as __version__
from normtest.render import labels as fmt
from normtest.render import plots
from normtest.render.html_figures import Section, badge, esc, fold
from normtest.render.html_lines import LineSections
from normtest.scorecard.lines import counts
from normtest.verdict.formatting import BESIDE, MISSING, beside
from normtest.verdict.formatting import interval as _interval
from normtest.verdict.formatting import number as _number
from normtest.verdict.formatting import threshold as _threshold
from normtest.verdict.result import Result, Verdict

__all__ = ["CSP", "esc", "render_html"]

#: No script, no remote load of any kind; images only from data: URIs; inline styles only.
CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; "
       "form-action 'none'")

_CSS = """
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue",
       Arial, sans-serif; color: var(--fg); background: #fff; }
main { max-width: 1280px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h1 .id { font-size: inherit; }
h2 { font-size: 20px; margin: 36px 0 8px; padding-bottom: 4px;
     border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 22px 0 4px; }
h4 { font-size: 14px; margin: 16px 0 4px; color: var(--muted); }
p, li { max-width: 860px; }
.muted, figcaption, .note { color: var(--muted); }
.note { font-size: 13px; }
code, .id { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
            font-size: 12.5px; }
.counts { display: flex; flex-wrap: wrap; gap: 10px; margin: 14px 0; }
.count { border-radius: 8px; padding: 8px 16px; color: #fff; min-width: 104px; }
.count b { display: block; font-size: 24px; line-height: 1.1; }
.count span { font-size: 12px; letter-spacing: .04em; }
.count.zero { opacity: .35; }
table { border-collapse: collapse; margin: 8px 0 12px; font-size: 13px; }
.wide table { width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 9px; text-align: left;
         vertical-align: top; }
th { background: var(--soft); font-weight: 600; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.reason { color: var(--muted); font-size: 12px; min-width: 18em; }
.beside { font-size: 11px; }
td.nowrap { white-space: nowrap; }
tr.family th { background: #fff; padding-top: 14px; font-weight: 600; white-space: normal; }
.badge { display: inline-block; border-radius: 10px; padding: 0 8px; color: #fff; font-size: 11.5px;
         font-weight: 600; letter-spacing: .03em; }
.no { color: #cf222e; font-weight: 700; }
.wide { overflow-x: auto; }
figure { margin: 0; }
figure img { display: block; max-width: 100%; height: auto; }
.forest figure img { width: 840px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(350px, 1fr));
        gap: 18px 22px; }
.grid figcaption { font-size: 12px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; font-size: 13px; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
footer { margin-top: 40px; font-size: 12px; color: var(--muted); }
.status { display: inline-block; border-radius: 10px; padding: 1px 10px; color: #fff;
          font-size: 12px; font-weight: 600; white-space: nowrap; }
.status.replicated { background: #1a7f37; } .status.contradicted { background: #cf222e; }
.status.undecided { background: #9a6700; } .status.not-tested { background: #8c959f; }
.status.invalid { background: #8250df; }
.role { font-size: 11px; color: var(--muted); }
a { color: #0969da; text-decoration: none; } a:hover { text-decoration: underline; }
section, nav { scroll-margin-top: 12px; }
.answer { font-size: 15px; margin: 8px 0 0; max-width: 1000px; }
table.glance td { vertical-align: top; } table.glance small { color: var(--muted); }
.next { margin: 8px 0 4px; padding: 8px 12px; border-left: 3px solid #0969da;
        background: var(--soft); max-width: 1100px; }
section.line h2 .status { font-size: 13px; vertical-align: 2px; }
.block h3 { font-size: 15px; }
#scorecard h2 { margin-top: 18px; }
#scorecard p { margin: 4px 0; }
nav#contents { margin: 16px 0 0; padding: 8px 14px 10px; background: var(--soft);
               border: 1px solid var(--line); border-radius: 8px; }
nav#contents h2 { font-size: 12px; margin: 0 0 4px; padding: 0; border: 0; color: var(--muted);
                  text-transform: uppercase; letter-spacing: .06em; }
nav#contents ol { margin: 0; padding: 0; list-style: none; display: flex; flex-wrap: wrap;
                  gap: 2px 22px; }
nav#contents li { max-width: none; }
details.fold { margin: 12px 0; }
details.fold > summary { cursor: pointer; font-weight: 600; padding: 6px 12px; max-width: 860px;
                         background: var(--soft); border: 1px solid var(--line);
                         border-radius: 6px; }
details.fold[open] > summary { margin-bottom: 8px; }
.axes { color: var(--muted); }
ul.axes { margin: 6px 0 10px; padding-left: 20px; }
ul.axes li { margin: 3px 0; max-width: 1000px; }
"""


class _Page(LineSections):
    """The page's sections, built from one report."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.results = list(report.results)
        self.by_key = {(r.claim, fmt.variant_key(r.variant)): r for r in self.results}
        self.can_plot = plots.available()
        self.folding = any(r.confirmatory for r in self.results)
        self.gallery = any(line.status != "not tested" for line in report.scorecard)
        self.ids = {r.id for r in self.results} | {r.label for r in self.results} | {
            r.claim for r in self.results if r.claim}

    def prose(self, text: str) -> str:
        """Escaped text with the ids and options it quotes as ``<code>``."""
        return "".join(f"<code>{esc(piece)}</code>" if code else esc(piece)
                       for piece, code in fmt.split_ids(text, self.ids))

    # -- the top of the page ---------------------------------------------------------------------
    def header(self) -> str:
        name, about = fmt.model_line(self.report.model)
        revision = self.report.model.get("revision")
        sub = esc(about) + (f' · revision <code>{esc(revision)}</code>' if revision else "")
        lines = self.report.scorecard
        tally = ", ".join(f"{n} {status}" for status, n in counts(lines).items() if n)
        answer = (f"Of the paper's {len(lines)} hypotheses: <b>{esc(tally)}</b>. " if lines
                  else "")
        answer += (f"Over {len(self.results)} rows: {esc(fmt.counts_text(self.report.summary))}"
                   f"; {esc(fmt.agreement_text(self.results))}.")

        sized = stored_lines(self.report.provenance.get("sizing"))
        note = f'<p class="note">{esc(" ".join(sized))}</p>' if sized else ""
        if self.report.rejudged_note:
            note += f'<p class="note"><b>Re-judged:</b> {esc(self.report.rejudged_note)}.</p>'
        return (f'<header><h1>normtest audit of <span class="id">{esc(name)}</span></h1>'
                f'<p class="muted">{sub}</p><p class="answer">{answer}</p>{note}</header>')

    @staticmethod
    def contents(sections: Sequence[Section]) -> str:
        items = "".join(f'<li><a href="#{esc(s.id)}">{esc(s.title)}</a></li>' for s in sections)
        return (f'<nav id="contents" aria-label="Contents"><h2>Contents</h2><ol>{items}</ol>'
                "</nav>")

    def summary(self) -> Section:
        summary = self.report.summary
        boxes = "".join(
            f'<div class="count{" zero" if not summary.get(v.value) else ""}" '
            f'style="background:{plots.COLOURS[v.value]}"><b>{summary.get(v.value, 0)}</b>'
            f"<span>{v.value}</span></div>" for v in fmt.ORDER)
        out = ['<section id="summary"><h2>Claims summary</h2>',
               f'<div class="counts">{boxes}</div>',
               f"<p>Of {len(self.results)} results, {esc(fmt.agreement_text(self.results))}. "
               "PASS means the whole interval clears the claim's threshold, FAIL that it falls "
               "short, INCONCLUSIVE that the data cannot decide; verdicts are adjusted by Holm "
               "over the confirmatory rows and by Benjamini–Hochberg over the exploratory "
               "rows.</p>"]
        rejudged = self.report.provenance.get("rejudged")
        if isinstance(rejudged, Mapping) and rejudged:
            changed = ", ".join(f"<code>{esc(c)}</code> at {esc(fmt.flatten(v))}"
                                for c, v in rejudged.items())
            out.append(f'<p class="note">Re-judged from the stored measurements under other '
                       f"thresholds: {changed}.</p>")
        out.append("<table><thead><tr><th>claim</th><th>statement</th>"
                   + "".join(f"<th>{v.value}</th>" for v in fmt.ORDER[:3])
                   + "<th>agrees with the paper</th></tr></thead><tbody>")
        skipped = []
        for family in fmt.families(self.results):
            if all(r.verdict is Verdict.SKIPPED for r in family.results):
                skipped.append(family)
                continue
            stated = [r for r in family.results if r.expected is not None]
            agree = sum(r.expected is r.verdict for r in stated)
            cells = "".join(f'<td class="num">{family.count(v) or ""}</td>'
                            for v in fmt.ORDER[:3])
            out.append(f'<tr><td><code>{esc(family.claim)}</code></td>'
                       f"<td>{esc(family.statement or '—')}</td>{cells}"
                       f'<td class="num">{f"{agree} of {len(stated)}" if stated else "—"}</td>'
                       "</tr>")
        out.append("</tbody></table>")
        if skipped:
            out.append('<p class="note">Skipped: ' + "; ".join(
                f"<code>{esc(f.claim)}</code> ({esc(f.results[0].reason)})" for f in skipped)
                + ".</p>")
        differ = fmt.disagreements(self.results)
        if differ:
            out.append("<h3>Where the audit disagrees with the paper</h3><p class='note'>A "
                       "disagreement is a finding about this model, not an error.</p><ul>")
            for r in differ:
                assert r.expected is not None
                out.append(f"<li><code>{esc(r.label)}</code>: {badge(r.verdict.value)} where the "
                           f"paper expects {badge(r.expected.value)} — estimate "
                           f"{esc(_number(r.estimate))}, {esc(fmt.confidence(r))} interval "
                           f"{esc(_interval(r))}, threshold {esc(_threshold(r))}</li>")
            out.append("</ul>")
        if not self.can_plot:
            out.append('<p class="note">The plots need matplotlib, which is not installed: '
                       "<code>pip install 'normtest[report]'</code>, then re-render with "
                       "<code>normtest report report.json --format html</code>.</p>")
        out.append("</section>")
        return Section("summary", "Claims summary", "".join(out))

    # -- the long tables -------------------------------------------------------------------------
    @staticmethod
    def rows_table(rows: Sequence[Result]) -> str:
        """Rows grouped by claim (the claim's statement heads its group)."""
        paper = any(r.expected is not None for r in rows)
        roles = len({r.role for r in rows}) > 1  # named under the variant only when they differ
        based = any("beyond" in r.details for r in rows)
        columns = ["variant", "estimate", "interval", "threshold", "verdict",
                   *(["paper"] if paper else []), "p (adjusted)", "n",
                   "baseline ρ · beyond it · reason" if based else "reason"]
        out = ['<div class="wide"><table class="claims"><thead><tr>'
               + "".join(f"<th>{c}</th>" for c in columns) + "</tr></thead><tbody>"]
        for family in fmt.families(rows):
            labels, shared = fmt.row_labels(family.results)
            mark = "*" if any(r.details.get("reconstructed") for r in family.results) else ""
            head = f"<code>{esc(family.claim)}</code>{mark}"
            if family.statement:
                head += f" — {esc(family.statement)}"
            if shared:
                head += f' <span class="muted">(all with {esc(shared)})</span>'
            out.append(f'<tr class="family"><th colspan="{len(columns)}">{head}</th></tr>')
            for r, label in zip(family.results, labels, strict=True):
                p = r.p_adjusted if r.p_adjusted is not None else r.p_value
                variant = "—" if not r.variant else esc(label)
                role = (f'<br><span class="role">{esc(r.role or "no role")}</span>' if roles
                        else "")
                cell = ""
                if paper:
                    agrees = fmt.agreement(r)
                    cell = "<td class='nowrap'>" + ("—" if r.expected is None else badge(
                        r.expected.value) + (' <span class="no">NO</span>' if agrees == "NO"
                                             else " ?" if agrees == "undecided" else " ✓")
                    ) + "</td>"
                out.append(
                    f"<tr><td>{variant}{role}</td>"
                    f'<td class="num">{esc(_number(r.estimate))}</td>'
                    f'<td class="num">{esc(_interval(r))}</td>'
                    f'<td class="num">{esc(_threshold(r))}</td>'
                    f"<td>{badge(r.verdict.value)}</td>{cell}"
                    f"<td class='num'>{esc(fmt.p_value(p))}</td>"
                    f"<td class='num'>{r.n or '—'}</td>"
                    f"<td class='reason'>{_beside(r)}{esc(r.reason)}</td></tr>")
        out.append("</tbody></table></div>")
        return "".join(out)

    def confirmatory_rows(self) -> Section | None:
        """The confirmatory rows no line section shows (each line's section holds its own);
        None when every one is shown there."""
        shown = {id(r) for line in self.report.scorecard if line.status != "not tested"
                 for r in line.rows}
        rows = [r for r in self.results if r.confirmatory and id(r) not in shown]
        if not rows and shown:
            return None
        out = [f'<section id="confirmatory"><h2>Confirmatory rows ({len(rows)})</h2>']
        if rows:
            out.append(
                '<p class="note">The rows that decide the scorecard: the variants where the '
                "paper states a verdict, each line decided from its own rows. The interval is "
                "two-sided; its ends are the one-sided bounds the verdict used. <i>paper</i> is "
                "the paper's expectation, with whether the audit agrees (✓), disagrees "
                '(<span class="no">NO</span>) or leaves it undecided (?). * marks a claim '
                "reconstructed from the authors' earlier work.</p>" + self.rows_table(rows))
        else:
            out.append('<p class="note">None: no row of this report tests a hypothesis the '
                       "paper states for this model, so every row is in the next table.</p>")
        out.append("</section>")
        return Section("confirmatory", f"Confirmatory rows ({len(rows)})", "".join(out))

    def exploratory_rows(self) -> Section:
        rows = [r for r in self.results if not r.confirmatory]
        explored = sum(r.role == "exploratory" for r in rows)
        others = len(rows) - explored
        title = "Exploratory rows" if not others else "Exploratory and other rows"
        if not any(r.role for r in self.results):  # not from an audit: nothing to fold
            return Section("exploratory", f"All rows ({len(rows)})",
                           f'<section id="exploratory"><h2>All rows ({len(rows)})</h2>'
                           '<p class="note">This report gives its rows no role (it does not come '
                           "from an audit), so none is folded.</p>"
                           + self.rows_table(rows) + "</section>")
        out = [f'<section id="exploratory"><h2>{title}</h2>']
        if not rows:
            out.append('<p class="note">None: every row of this report is confirmatory.</p>')
        else:
            what = f"{explored} exploratory row{'s' * (explored != 1)}"
            if others:
                what += (f" and {others} other{'s' * (others != 1)} (skipped, or outside an "
                         "audit's roles)")
            out.append('<p class="note">Every other variant: adjusted by Benjamini–Hochberg, '
                       "they never move the scorecard. Folded; open to read them.</p>")
            out.append(fold(f"Show the {esc(what)}, grouped by {len(fmt.families(rows))} "
                            "claims", self.rows_table(rows)))
        out.append("</section>")
        return Section("exploratory", f"{title} ({len(rows)}, folded)", "".join(out))

    def provenance(self) -> Section:
        rows = [("model " + str(k), v) for k, v in self.report.model.items()]
        rows += list(self.report.provenance.items())
        items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(fmt.flatten(v))}</dd>" for k, v in rows)
        return Section("provenance", "Provenance",
                       '<section id="provenance"><h2>Provenance</h2>'
                       f"<dl>{items or '<dt>—</dt><dd>none recorded</dd>'}</dl></section>")

    def page(self, body: str) -> str:
        name, _ = fmt.model_line(self.report.model)

        return (
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="referrer" content="no-referrer">'
            '<link rel="icon" href="data:,">'
            f"<title>normtest audit: {esc(name)}</title><style>{_CSS}</style></head>\n"
            f"<body><main>\n{body}\n<footer>Rendered by normtest {esc(__version__)} from a "
            f"report of schema <code>{esc(SCHEMA)}</code>. Self-contained: no script, no "
            "network, no font file.</footer></main></body></html>\n")


def _beside(r: Result) -> str:
    """A row's readings beside its baseline (:data:`~normtest.verdict.formatting.BESIDE`),
    ahead of its reason (nothing without them)."""
    if "beyond" not in r.details:
        return ""
    cells = [(_SHORT.get(part, heading), heading, beside(r, part)) for part, heading in BESIDE]
    return "<span class='beside'>" + " · ".join(
        f"<b title='{esc(heading)}'>{esc(short)}</b> {esc(cell)}" for short, heading, cell in cells
        if cell != MISSING) + "</span><br>"


#: The HTML's short label of a reading beside a baseline (its full heading is the title).
_SHORT = {"beyond": "beyond", "artefact": "artefact"}


def render_html(report: Report) -> str:
    """The self-contained HTML page (see the module doc)."""
    page = _Page(report)
    glance = page.glance()
    rest = [*page.line_sections(), page.summary(), page.layers(), page.forest(), page.words(),
            page.texts(), page.cer(), page.confirmatory_rows(), page.exploratory_rows(),
            page.provenance()]
    sections = [s for s in rest if s is not None]
    body = "\n".join([page.header(), glance.html, page.contents([glance, *sections]),
                      *(s.html for s in sections)])
    return page.page(body)
