"""The report as one self-contained HTML page.

Sections, in order (``docs/reports.md`` shows and explains each): the verdict summary; the claims
table with the paper's expectation and whether the result agrees; a forest plot of effects with
their intervals and thresholds per claim family; word-level scatter plots of ‖e(w)‖² against IC
with the OLS line and Spearman ρ per composition and transform (and sentence-level ones when the
report has them); CER curves s(L) per composition with a linear and a saturating fit; the
provenance.

Self-contained: no script, no network, no font file. Figures are SVG embedded as ``data:``
images; a Content-Security-Policy forbids scripts and every remote load, so the page behaves the
same opened from a mail attachment or a CI artefact. Every string that comes from the report —
words, model names, paths, reasons, claim ids, variant values — goes through :func:`esc`
(``html.escape`` with quotes). A report without plot data (an old report, the demonstration)
renders without those plots and says why.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from normtest.errors import NormtestError
from normtest.render import _format as fmt
from normtest.render import fits, plots
from normtest.report import SCHEMA, Report
from normtest.result import Result, Verdict
from normtest.scorecard import counts

__all__ = ["CSP", "esc", "render_html"]

#: No script, no remote load of any kind; images only from data: URIs; inline styles only.
CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; "
       "form-action 'none'")
#: Outlier words listed under each scatter plot (each side of the line).
OUTLIERS = 3

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
.role { font-size: 11px; color: var(--muted); }
"""


def esc(value: Any) -> str:
    """HTML-escaped text of any value (quotes included, so it is safe in attributes too)."""
    return html.escape(str(value), quote=True)


def _badge(verdict: str) -> str:
    colour = plots.COLOURS.get(verdict, "#57606a")
    return f'<span class="badge" style="background:{colour}">{esc(verdict)}</span>'


def _floats(values: Any) -> np.ndarray:
    return np.asarray([math.nan if v is None else float(v) for v in values], dtype=np.float64)


class _Page:
    """Collects the page's parts, and notes about what could not be drawn."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.results = list(report.results)
        self.by_key: dict[tuple[str | None, str], Result] = {
            (r.claim, fmt.variant_key(r.variant)): r for r in self.results}
        self.plots = plots.available()
        self.parts: list[str] = []

    def figure(self, draw: Callable[[], str | plots.Scatter | plots.Curves], alt: str,
               caption: str) -> str:
        """An ``<figure>`` with the drawn SVG, or a note saying why it could not be drawn."""
        try:
            drawn = draw()
            svg = drawn if isinstance(drawn, str) else drawn.svg
        except (NormtestError, ValueError, TypeError, KeyError, IndexError) as exc:
            return f'<p class="note">This plot could not be drawn: {esc(exc)}</p>'
        return (f'<figure><img src="{plots.data_uri(svg)}" alt="{esc(alt)}">'
                f"<figcaption>{caption}</figcaption></figure>")

    # -- sections --------------------------------------------------------------------------------
    def header(self) -> None:
        name, about = fmt.model_line(self.report.model)
        revision = self.report.model.get("revision")
        sub = esc(about) + (f' · revision <code>{esc(revision)}</code>' if revision else "")
        self.parts.append(f'<header><h1>normtest audit of <span class="id">{esc(name)}</span>'
                          f'</h1><p class="muted">{sub}</p></header>')

    def scorecard(self) -> None:
        lines = self.report.scorecard
        tally = ", ".join(f"{n} {status}" for status, n in counts(lines).items() if n)
        out = ['<section id="scorecard"><h2>Does the model behave as the paper says?</h2>',
               f"<p>{esc(tally)}. Each line is a hypothesis of the paper, decided by its "
               "confirmatory rows (the variants where the paper states a verdict; Holm over all "
               "of them): <b>replicated</b> when every one agrees, <b>contradicted</b> when one "
               "is decided against the paper, <b>undecided</b> when one is INCONCLUSIVE.</p>",
               '<table class="scorecard"><tbody>']
        for line in lines:
            status = esc(line.status)
            out.append(f'<tr><td><span class="status {status.replace(" ", "-")}">{status}'
                       f"</span></td><td><b>{esc(line.title)}</b><br>"
                       f'<span class="muted">{esc(line.reason)}</span></td></tr>')
        out.append("</tbody></table></section>")
        self.parts.append("".join(out))

    def summary(self) -> None:
        summary = self.report.summary
        boxes = "".join(
            f'<div class="count{" zero" if not summary.get(v.value) else ""}" '
            f'style="background:{plots.COLOURS[v.value]}"><b>{summary.get(v.value, 0)}</b>'
            f"<span>{v.value}</span></div>" for v in fmt.ORDER)
        out = ['<section id="summary"><h2>Verdicts</h2>', f'<div class="counts">{boxes}</div>',
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
                out.append(f"<li><code>{esc(r.id)}</code>: {_badge(r.verdict.value)} where the "
                           f"paper expects {_badge(r.expected.value)} — estimate "
                           f"{esc(fmt.number(r.estimate))}, {esc(fmt.confidence(r))} interval "
                           f"{esc(fmt.interval(r))}, threshold {esc(fmt.threshold(r))}</li>")
            out.append("</ul>")
        if not self.plots:
            out.append('<p class="note">The plots need matplotlib, which is not installed: '
                       "<code>pip install 'normtest[report]'</code>, then re-render with "
                       "<code>normtest report report.json --format html</code>.</p>")
        out.append("</section>")
        self.parts.append("".join(out))

    def table(self) -> None:
        out = ['<section id="claims"><h2>Claims</h2>',
               '<p class="note">One row per claim and variant, grouped by claim. The interval is '
               "two-sided; its ends are the one-sided bounds the verdict used. <i>paper</i> is "
               "the paper's expectation for this model family and variant where it states one, "
               "with whether the audit agrees (✓), disagrees (<span class=\"no\">NO</span>) or "
               "leaves it undecided (?); such a row is <i>confirmatory</i>, every other row "
               "<i>exploratory</i>. † marks "
               "a claim reconstructed from the authors' earlier work.</p>",
               '<div class="wide"><table class="claims"><thead><tr><th>variant</th>'
               "<th>estimate</th><th>interval</th><th>threshold</th><th>verdict</th>"
               "<th>paper</th><th>p (adjusted)</th><th>n</th><th>reason</th></tr></thead><tbody>"]
        for family in fmt.families(self.results):
            labels, shared = fmt.row_labels(family.results)
            mark = " †" if any(r.details.get("reconstructed") for r in family.results) else ""
            head = f"<code>{esc(family.claim)}</code>{mark}"
            if family.statement:
                head += f" — {esc(family.statement)}"
            if shared:
                head += f' <span class="muted">(all with {esc(shared)})</span>'
            out.append(f'<tr class="family"><th colspan="9">{head}</th></tr>')
            for r, label in zip(family.results, labels, strict=True):
                agrees = fmt.agreement(r)
                paper = "—" if r.expected is None else _badge(r.expected.value) + (
                    ' <span class="no">NO</span>' if agrees == "NO" else
                    " ?" if agrees == "undecided" else " ✓")
                p = r.p_adjusted if r.p_adjusted is not None else r.p_value
                variant = "—" if not r.variant else esc(label)
                role = f'<br><span class="role">{esc(r.role)}</span>' if r.role else ""
                out.append(
                    f"<tr><td>{variant}{role}</td>"
                    f'<td class="num">{esc(fmt.number(r.estimate))}</td>'
                    f'<td class="num">{esc(fmt.interval(r))}</td>'
                    f'<td class="num">{esc(fmt.threshold(r))}</td>'
                    f"<td>{_badge(r.verdict.value)}</td><td class='nowrap'>{paper}</td>"
                    f"<td class='num'>{esc(fmt.p_value(p))}</td>"
                    f"<td class='num'>{r.n or '—'}</td>"
                    f"<td class='reason'>{esc(r.reason)}</td></tr>")
        out.append("</tbody></table></div></section>")
        self.parts.append("".join(out))

    def forest(self) -> None:
        out = ['<section id="effects" class="forest"><h2>Effects</h2>',
               '<p class="note">Per claim, each variant\'s estimate (dot) and interval (bar), '
               "coloured by verdict. Dashed lines are the threshold or the equivalence margin; the "
               "shaded side is where an interval must lie for a PASS. An interval reaching past "
               "the drawn range ends in a triangle.</p>"]
        drawn = 0
        for family in fmt.families(self.results):
            rows = family.measured
            if not rows:
                continue
            statistic = rows[0].measurement.statistic if rows[0].measurement else ""
            title = f"<code>{esc(family.claim)}</code>"
            if family.statement:
                title += f" — {esc(family.statement)}"
            out.append(f"<h3>{title}</h3>")
            missing = [r for r in family.results if not math.isfinite(r.estimate)]
            caption = f"{len(rows)} variant{'s' * (len(rows) != 1)}"
            _, shared = fmt.row_labels(rows)
            if shared:
                caption += f", all with {esc(shared)}"
            if missing:
                caption += "; not estimated: " + "; ".join(
                    f"<code>{esc(r.id)}</code> ({esc(r.verdict.value)})" for r in missing)
            if self.plots:
                out.append(self.figure(partial(plots.forest_plot, rows, statistic),
                                       f"forest plot of {family.claim}", caption + "."))
                drawn += 1
        if not drawn and not self.plots:
            out.append('<p class="note">No plots (matplotlib is not installed).</p>')
        elif not drawn:
            out.append('<p class="note">No result has an estimate to draw.</p>')
        out.append("</section>")
        self.parts.append("".join(out))

    def _scatters(self, series: Mapping[str, Any], x: np.ndarray, claim: str,
                  labels: Sequence[str] | None, token_counts: np.ndarray | None,
                  xlabel: str, ylabel: str, unit: str) -> list[str]:
        """Scatter figures per variant, grouped by every axis but the transform."""
        groups: dict[str, list[tuple[str, dict[str, str]]]] = {}
        for key in series:
            variant = dict(part.split("=", 1) for part in key.split(",") if "=" in part)
            group = ", ".join(f"{k}={v}" for k, v in variant.items() if k != "transform")
            groups.setdefault(group, []).append((key, variant))
        out = []
        for group, members in groups.items():
            if group:
                out.append(f"<h4>{esc(group)}</h4>")
            out.append('<div class="grid">')
            for key, variant in members:
                y_all = _floats(series[key])
                keep = np.isfinite(x[: y_all.size]) & np.isfinite(y_all[: x.size])
                n = min(x.size, y_all.size)
                xs, ys = x[:n][keep[:n]], y_all[:n][keep[:n]]
                result = self.by_key.get((claim, key))
                rho = result.estimate if result is not None and math.isfinite(
                    result.estimate) else fits.spearman(xs, ys)
                verdict = result.verdict.value if result is not None else None
                counts = None if token_counts is None else token_counts[:n][keep[:n]]
                names = (None if labels is None else
                         [labels[int(i)] for i in np.flatnonzero(keep[:n])])
                caption = self._scatter_caption(key, variant, xs, ys, rho, result, names, unit)
                out.append(self.figure(
                    partial(plots.scatter_plot, xs, ys, rho=rho, verdict=verdict,
                            token_counts=counts, xlabel=xlabel, ylabel=ylabel),
                    f"{ylabel} against {xlabel}, {key}", caption))
            out.append("</div>")
        return out

    def _scatter_caption(self, key: str, variant: Mapping[str, str], xs: np.ndarray,
                         ys: np.ndarray, rho: float, result: Result | None,
                         names: Sequence[str] | None, unit: str) -> str:
        label = variant.get("transform") or key
        bits = [f"<b>{esc(label)}</b>", f"n = {xs.size:,}", f"ρ = {esc(fmt.number(rho))}"]
        if result is not None:
            bits[-1] += f" {esc(fmt.interval(result))} {_badge(result.verdict.value)}"
            if result.expected is not None:
                bits.append(f"paper: {_badge(result.expected.value)}")
        line = fits.ols(xs, ys)
        if line is not None:
            bits.append(f"OLS slope {esc(fmt.number(line.slope))} per {esc(unit)}")
        if xs.size > plots.MAX_POINTS:
            bits.append(f"{plots.MAX_POINTS:,} of {xs.size:,} points drawn (a random subsample; "
                        "the line and ρ use all)")
        text = " · ".join(bits)
        if names is not None:
            above, below = fits.outliers(xs, ys, OUTLIERS)
            if above:
                text += ("<br>farthest above the line: "
                         + ", ".join(f"<code>{esc(names[i])}</code>" for i in above)
                         + "; below: " + ", ".join(f"<code>{esc(names[i])}</code>" for i in below))
        return text

    def words(self) -> None:
        out = ['<section id="words"><h2>Word level: squared norm against information content'
               "</h2>"]
        data = self.report.data.get("words") if isinstance(self.report.data, Mapping) else None
        if not isinstance(data, Mapping) or not data.get("squared_norms"):
            out.append('<p class="note">This report holds no word-level data (it measured no '
                       "word claim, predates plot data, or comes from the demonstration).</p>")
        elif not self.plots:
            out.append('<p class="note">No plots (matplotlib is not installed).</p>')
        else:
            try:
                x = _floats(data.get("information", []))
                words = [str(w) for w in data.get("words", [])]
                counts_raw = data.get("token_counts")
                counts = None if not counts_raw else np.asarray(counts_raw, dtype=np.intp)
                out.append('<p class="note">Each point is a word of the sample: its information '
                           "content IC(w) = −ln p(w) against ‖e(w)‖², with the least-squares "
                           "line. ρ is the Spearman correlation the verdict of "
                           "<code>word.norm_ic</code> judges (threshold and interval in the "
                           "table); colours separate words the model splits into several "
                           "tokens.</p>")
                out += self._scatters(data["squared_norms"], x, "word.norm_ic",
                                      words if len(words) == x.size else None, counts,
                                      "IC(w) (nats)", "‖e(w)‖²", "nat")
            except (TypeError, ValueError, AttributeError) as exc:
                out.append(f'<p class="note">The word data are malformed: {esc(exc)}</p>')
        out.append("</section>")
        self.parts.append("".join(out))

    def texts(self) -> None:
        data = self.report.data.get("texts") if isinstance(self.report.data, Mapping) else None
        if not isinstance(data, Mapping) or not data.get("squared_norms") or not self.plots:
            return
        out = ['<section id="texts"><h2>Sentence level: squared norm against surprisal</h2>',
               '<p class="note">Each point is a sentence: its information content (summed '
               "surprisal under a causal language model) against ‖e(t)‖², per pooling.</p>"]
        try:
            x = _floats(data.get("information", []))
            out += self._scatters(data["squared_norms"], x, "text.norm_surprisal", None, None,
                                  "IC(t) (nats)", "‖e(t)‖²", "nat")
        except (TypeError, ValueError, AttributeError) as exc:
            out.append(f'<p class="note">The sentence data are malformed: {esc(exc)}</p>')
        out.append("</section>")
        self.parts.append("".join(out))

    def cer(self) -> None:
        out = ['<section id="cer"><h2>Growth with length: CER curves s(L)</h2>']
        data = self.report.data.get("prefixes") if isinstance(self.report.data, Mapping) else None
        curves = data.get("curves") if isinstance(data, Mapping) else None
        if not isinstance(curves, Mapping) or not curves:
            out.append('<p class="note">This report holds no prefix curves (it measured no CER '
                       "claim, the model cannot embed prefixes, or the report predates plot "
                       "data).</p></section>")
            self.parts.append("".join(out))
            return
        if not self.plots:
            out.append('<p class="note">No plots (matplotlib is not installed).</p></section>')
            self.parts.append("".join(out))
            return
        documents = [str(d) for d in (data.get("documents") or [])] if isinstance(
            data, Mapping) else []
        out.append(
            '<p class="note">s(L) = ‖e(prefix of L tokens)‖² for each document (grey) and their '
            "mean (black), with a linear and a saturating fit of the mean. Linear growth is the "
            "CER prediction (late/early slope ratio ≈ 1); a curve that levels off — a ratio near "
            "0 and a saturating fit whose plateau is reached inside the range — is the "
            "fixed-point signature of mean pooling and of CLS/EOS states."
            + (f" Documents: {', '.join(f'<code>{esc(d)}</code>' for d in documents)}."
               if documents else "") + "</p>")
        out.append('<div class="grid">')
        for key, curve in curves.items():
            try:
                lengths = _floats(curve["lengths"])
                values = _floats(curve["squared_norms"])
                docs = np.asarray(curve["document"], dtype=np.intp)
                if not lengths.size == values.size == docs.size:
                    raise ValueError("lengths, values and documents differ in length")
            except (KeyError, TypeError, ValueError) as exc:
                out.append(f'<p class="note">Curves {esc(key)} are malformed: {esc(exc)}</p>')
                continue
            ratio = self.by_key.get(("cer.linear", key))
            fixed = self.by_key.get(("cer.fixed_point", key))
            caption = self._cer_caption(key, lengths, values, docs, ratio, fixed)
            out.append(self.figure(partial(plots.cer_plot, lengths, values, docs, ratio=ratio),
                                   f"s(L) against prefix length, {key}", caption))
        out.append("</div></section>")
        self.parts.append("".join(out))

    def _cer_caption(self, key: str, lengths: np.ndarray, values: np.ndarray, docs: np.ndarray,
                     ratio: Result | None, fixed: Result | None) -> str:
        variant = dict(part.split("=", 1) for part in key.split(",") if "=" in part)
        label = variant.get("composition", key)
        rest = ", ".join(f"{k}={v}" for k, v in variant.items() if k != "composition")
        bits = [f"<b>{esc(label)}</b>" + (f" ({esc(rest)})" if rest else ""),
                f"{np.unique(docs).size} documents"]
        if ratio is not None:
            bits.append(f"<code>cer.linear</code> {_badge(ratio.verdict.value)}"
                        + (f" (paper: {_badge(ratio.expected.value)})" if ratio.expected else ""))
        if fixed is not None:
            bits.append(f"<code>cer.fixed_point</code> {_badge(fixed.verdict.value)}")
        grid, mean, _ = fits.mean_curve(lengths, values, docs)
        line, curve = fits.ols(grid, mean), fits.saturating(grid, mean)
        text = " · ".join(bits)
        if line is not None:
            text += f"<br>linear fit: slope {esc(fmt.number(line.slope))} per token"
        if curve is not None:
            top = float(lengths.max())
            shape = ("levels off inside the range: the fixed-point signature"
                     if curve.tau < top / 2 else
                     "no levelling off inside the range" if curve.tau > 2 * top else
                     "bends over the range")
            text += (f"; saturating fit: plateau {esc(fmt.number(curve.plateau))}, "
                     f"τ = {esc(fmt.number(curve.tau))} tokens ({shape})")
        return text

    def provenance(self) -> None:
        rows = [("model " + str(k), v) for k, v in self.report.model.items()]
        rows += list(self.report.provenance.items())
        items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(fmt.flatten(v))}</dd>" for k, v in rows)
        self.parts.append('<section id="provenance"><h2>Provenance</h2>'
                          f"<dl>{items or '<dt>—</dt><dd>none recorded</dd>'}</dl></section>")

    def page(self) -> str:
        name, _ = fmt.model_line(self.report.model)
        from normtest import __version__

        body = "\n".join(self.parts)
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


def render_html(report: Report) -> str:
    """The self-contained HTML page (see the module doc)."""
    page = _Page(report)
    page.header()
    page.scorecard()
    page.summary()
    page.table()
    page.forest()
    page.words()
    page.texts()
    page.cer()
    page.provenance()
    return page.page()
