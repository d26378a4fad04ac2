"""The figure sections of the HTML page: forest plots, word and sentence scatters, CER curves.

Split from :mod:`normtest.render.html` (which assembles the page). Each section comes back as a
:class:`Section` (its id, its title for the table of contents, its HTML). Every figure has a
caption that says what its axes are: the statistic of a forest plot; IC in nats and ‖e‖² under
the plot's geometry transform for a scatter — raw, Zipf-centred, or Zipf-whitened, where the
squared norm is in units of each direction's frequency-weighted variance, can reach 10⁴–10⁶ for
rare words and is drawn on a logarithmic axis; prefix length and s(L) for a CER curve.

When the report has confirmatory rows, figures of variants with none (exploratory only) are
folded in a ``<details>`` element, closed, with a count in its ``<summary>``: the open page shows
what decides the scorecard. Every string from the report goes through :func:`esc`.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from normtest.audit.report import Report
from normtest.errors import NormtestError
from normtest.render import fits, layers, plots
from normtest.render import labels as fmt
from normtest.render.specification import specification_curve
from normtest.verdict.formatting import interval as _interval
from normtest.verdict.formatting import number as _number
from normtest.verdict.formatting import stored_bounds
from normtest.verdict.result import Result, variant_key

__all__ = ["Figures", "Section", "badge", "esc", "figure", "fold", "parse_variant",
           "transform_note"]

#: Outlier words listed under each scatter plot (each side of the line).
OUTLIERS = 3


def esc(value: Any) -> str:
    """HTML-escaped text of any value (quotes included, so it is safe in attributes too)."""
    return html.escape(str(value), quote=True)


def badge(verdict: str) -> str:
    """A verdict as a coloured badge."""
    colour = plots.COLOURS.get(verdict, "#57606a")
    return f'<span class="badge" style="background:{colour}">{esc(verdict)}</span>'


def fold(summary: str, inner: str) -> str:
    """``inner`` in a closed ``<details>`` whose ``<summary>`` is ``summary`` (HTML, escaped by
    the caller)."""
    return f'<details class="fold"><summary>{summary}</summary>{inner}</details>'


def magnitude(value: float) -> str:
    """A value for an axis range: ``9,975`` at a thousand and beyond, else three digits."""
    if math.isfinite(value) and abs(value) >= 1000:
        return f"{value:,.0f}".replace("-", "−")
    return _number(value)


def floats(values: Any) -> np.ndarray:
    """Stored numbers (None for NaN) as a float array."""
    return np.asarray([math.nan if v is None else float(v) for v in values], dtype=np.float64)


@dataclass(frozen=True)
class Section:
    """One section of the page: its anchor id, its title in the table of contents, its HTML."""

    id: str
    title: str
    html: str


def _whitening(weights: str, symbol: str) -> str:
    return (f"centred on the {weights} mean, then each principal direction rescaled by the "
            f"inverse square root of its {weights} variance (fitted on the other half of the "
            f"sample). {symbol} then sums squared distances measured in units of each "
            "direction's variance (a Mahalanobis distance), not in the model's units: frequent "
            "words land in the order of the number of dimensions d, while rare words, which the "
            "weights hardly count, lie many variances out along low-variance directions and can "
            "reach 10⁴–10⁶ (each caption gives its plot's range). Hence the large scale, drawn "
            "on a logarithmic axis (the line is "
            f"then the least-squares line of ln {symbol}; ρ, a rank correlation, is the same on "
            "any scale)")


def transform_note(transform: str, symbol: str = "‖e(w)‖²") -> tuple[str, str]:
    """(y-axis label, one-sentence explanation) of ``symbol`` under a geometry transform."""
    known = {
        "raw": ("raw", f"{symbol} of the vector as the model gives it, in the model's own "
                       "units"),
        "center_zipf": ("Zipf-centred", "after Zipfian centring: the frequency-weighted mean "
                        "vector μ = Σ p(w) e(w), which every vector shares, is subtracted first "
                        "(fitted on the other half of the sample); same units as the raw norm"),
        "center_uniform": ("centred", "after centring on the plain mean vector (fitted on the "
                           "other half of the sample); same units as the raw norm"),
        "whiten_zipf": ("Zipf-whitened", "after Zipfian whitening: "
                        + _whitening("frequency-weighted", symbol)),
        "whiten_uniform": ("whitened", "after plain whitening: " + _whitening("plain", symbol)),
    }
    label, note = known.get(transform, (transform, f"{symbol} under the transform {transform}"))
    return f"{symbol}, {label}" + (" (log scale)" if is_whitened(transform) else ""), note


def is_whitened(transform: str | None) -> bool:
    """Whether a transform whitens (its squared norms are drawn on a logarithmic axis)."""
    return bool(transform) and str(transform).startswith("whiten")


def figure(draw: Callable[[], str | plots.Scatter | plots.Curves], alt: str,
           caption: str) -> str:
    """An ``<figure>`` with the drawn SVG (``caption`` is HTML already), or a note saying why it
    could not be drawn."""
    try:
        drawn = draw()
        svg = drawn if isinstance(drawn, str) else drawn.svg
    except (NormtestError, ArithmeticError, ValueError, TypeError, KeyError, IndexError) as exc:
        return f'<p class="note">This plot could not be drawn: {esc(exc)}</p>'
    return (f'<figure><img src="{plots.data_uri(svg)}" alt="{esc(alt)}">'
            f"<figcaption>{caption}</figcaption></figure>")


def parse_variant(key: str) -> dict[str, str]:
    """``composition=sum,transform=raw`` as a mapping."""
    return dict(part.split("=", 1) for part in key.split(",") if "=" in part)


class Figures:
    """The figure sections; mixed into the page, which sets these attributes."""

    report: Report
    results: list[Result]
    by_key: dict[tuple[str | None, str], Result]
    can_plot: bool
    #: whether figures of exploratory-only variants are folded (the report has confirmatory rows)
    folding: bool
    #: whether every figure of the galleries is folded (the line sections show those that
    #: decide)
    gallery: bool

    def figure(self, draw: Callable[[], str | plots.Scatter | plots.Curves], alt: str,
               caption: str) -> str:
        """An ``<figure>`` with the drawn SVG, or a note saying why it could not be drawn."""
        return figure(draw, alt, caption)

    def confirmatory(self, claims: Iterable[str], key: str) -> bool:
        """Whether a variant ``key`` of one of ``claims`` is a confirmatory row."""
        return any((r := self.by_key.get((c, key))) is not None and r.confirmatory
                   for c in claims)

    def _split(self, items: Sequence[tuple[bool, str]], what: str, grid: bool = False) -> str:
        """Items marked confirmatory open, the rest folded (when folding) with a count; on a
        page whose line sections show the plots that decide (``gallery``), all of them folded.
        ``grid``: the items are cells of a grid."""
        def joined(parts: Sequence[str]) -> str:
            return f'<div class="grid">{"".join(parts)}</div>' if grid else "".join(parts)

        if self.gallery and items:
            return fold(f"All {len(items)} {what} (each line's section above shows the ones "
                        "that decide it)", joined([h for _, h in items]))
        shown = joined([h for keep, h in items if keep or not self.folding])
        rest = [h for keep, h in items if not keep and self.folding]
        if rest:
            shown += fold(f"{len(rest)} {what} with exploratory rows only (folded)",
                          joined(rest))
        return shown

    # -- effects ---------------------------------------------------------------------------------
    def forest(self) -> Section:
        out = ['<p class="note">Per claim, each variant\'s estimate (dot) and interval (bar), '
               "coloured by verdict. The x axis is the claim's statistic, named under each plot; "
               "dashed lines are the threshold or the equivalence margin, and the shaded side is "
               "where an interval must lie for a PASS. An interval reaching past the drawn range "
               "ends in a triangle. Bold labels are confirmatory rows.</p>"]
        items: list[tuple[bool, str]] = []
        # a layer profile's hidden layers are drawn by layer (section "layers"), not here
        shown = [r for r in self.results if not layers.in_profile(r)]
        for family in fmt.families(shown):
            rows = family.measured
            if not rows or not self.can_plot:
                continue
            statistic = rows[0].measurement.statistic if rows[0].measurement else ""
            title = f"<code>{esc(family.claim)}</code>"
            if family.statement:
                title += f" — {esc(family.statement)}"
            missing = [r for r in family.results if not math.isfinite(r.estimate)]
            caption = (f"x: <code>{esc(statistic or 'estimate')}</code>, the estimate and its "
                       f"{esc(fmt.confidence(rows[0]))} interval; y: {len(rows)} variant"
                       f"{'s' * (len(rows) != 1)}")
            _, shared = fmt.row_labels(rows)
            if shared:
                caption += f", all with {esc(shared)}"
            if missing:
                caption += "; not estimated: " + "; ".join(
                    f"<code>{esc(r.id)}</code> ({esc(r.verdict.value)})" for r in missing)
            figure = self.figure(partial(plots.forest_plot, rows, statistic),
                                 f"forest plot of {family.claim}", caption + ".")
            items.append((any(r.confirmatory for r in family.results),
                           f"<h3>{title}</h3>{figure}"))
        if not self.can_plot:
            out.append('<p class="note">No plots (matplotlib is not installed).</p>')
        elif not items:
            out.append('<p class="note">No result has an estimate to draw.</p>')
        out.append(self._split(items, "forest plots of claims"))
        return Section("effects", "Effects: forest plots",
                       '<section id="effects" class="forest"><h2>Effects</h2>'
                       + "".join(out) + "</section>")

    # -- robustness and controls, per line ------------------------------------------------------
    def robustness_block(self, key: str) -> str:
        """A line's robustness: the multiverse, the halves and the subpopulations in words, and
        its specification curve (folded); empty where it was not assessed."""
        item = self.report.robustness_of(key)
        if item is None or not (item.specifications or item.left_out):
            return ""
        out = [f'<div id="robustness-{esc(key)}" class="block"><h3>Robustness: would another '
               "reasonable analysis say the same?</h3>",
               f"<p>{esc(item.summary())}.</p>",
               '<p class="note">The <b>multiverse</b>: the full sample\'s analyses of the same '
               "quantity that can tell, the audit's own included (robust from 80% of at least "
               "three); the <b>halves</b> of the sample that agree with each analysis; the line "
               "<b>by subpopulation</b>, another question shown apart.</p>"]
        if item.specifications and self.can_plot:
            flips = "; ".join(f"<code>{esc(c)}={esc(v)}</code> gives {esc(s)}"
                              for c, v, s in item.flips) or "no single choice flips it"
            notes = "".join(f"<br>{esc(n)}" for n in item.notes)
            caption = (f"x: the {len(item.specifications)} specifications, sorted by the "
                       "line's status and the first row's estimate; y: the line's status (the "
                       "audit's own boxed), each deciding row's estimate and interval (its "
                       "threshold dashed), then the choices each makes. "
                       f"<b>{esc(item.line)}</b>: {esc(item.status)} under the audit's own "
                       f"analysis; {esc(item.label)}"
                       f"{' (robust)' if item.robust else ''}. {flips}.{notes}")
            out.append(fold(f"The specification curve of {esc(item.line)}", self.figure(
                partial(specification_curve, item), f"specification curve of {item.line}",
                caption)))
        out.append("</div>")
        return "".join(out)

    def controls_block(self, key: str) -> str:
        """A line's positive, negative and confound controls: can this audit see the effect and
        refuse it, at its sample sizes? Empty where none ran."""
        item = self.report.controls_of(key)
        if item is None or not (item.ran or item.problem):
            return ""
        out = [f'<div id="controls-{esc(key)}" class="block"><h3>Controls: can this audit see '
               "the effect?</h3>",
               '<p class="note">Models built from the audit\'s own words, documents, sentences '
               "and corpus, at its sample sizes, through the same claims, criteria and "
               "adjustment: a <b>positive</b> control, planted at the smallest effect the line "
               "must detect, must come out replicated (power 0.8 at this sample is what the "
               "audit sizes for); a <b>negative</b> one contradicted; a <b>confound</b> one (the "
               "model's own token counts or lengths, norms carrying nothing beyond them) not "
               "replicated beyond its baseline. Otherwise the line is invalid.</p>"]
        if item.problem:
            out.append(f"<p>Not run: {esc(item.problem)}</p></div>")
            return "".join(out)
        out.append('<table class="controls"><thead><tr><th>control</th><th>came out</th>'
                   "<th>built as, and its rows</th></tr></thead><tbody>")
        for c in item.ran:
            rows = "; ".join(f"<code>{esc(r['id'])}</code> {badge(str(r['verdict']))} "
                             f"{esc(_number(r.get('estimate')))} "
                             f"{esc(stored_bounds(r.get('ci')))}" for r in c.rows)
            mark = "✅" if c.ok else "❌"
            power = "" if c.power is None else (
                f" · power {c.power:.2f} at {c.planted:g}"
                + (f" ({esc(c.needs)} for 0.8)" if c.needs else ""))
            beyond = f" · beyond {esc(c.beyond)}" if c.beyond else ""
            out.append(f"<tr><td>{esc(c.kind)} (built to be {esc(c.expected)})</td>"
                       f"<td>{mark} {esc(c.status)}{beyond}{power}</td>"
                       f"<td>{esc(c.note)}<br>{rows}</td></tr>")
        out.append("</tbody></table></div>")
        return "".join(out)

    # -- layer profile ---------------------------------------------------------------------------
    def layers(self) -> Section | None:
        found = layers.report_profiles(self.report)
        if found is None:
            return None
        profiles, n_layers = found
        lines = "".join(f"<li><code>{esc(layers.profile_summary(p))}</code></li>"
                        for p in profiles)
        name, _ = fmt.model_line(self.report.model)
        figure = ""
        if self.can_plot:
            figure = self.figure(
                partial(layers.layer_plot, profiles, n_layers, name),
                "each claim's effect by layer",
                "x: the representation — <em>in</em> is the input embedding rows, 0 the "
                "embedding output, then each block's output to the last layer; y: the claim's "
                "statistic, with its interval as a band (filled dots: PASS). The dashed line is "
                "the threshold, a shaded band the equivalence margin.")
        table = layers.layer_table(profiles)
        head = "".join(f"<th>{esc(c)}</th>" for c in table[0])
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>"
                       for row in table[1:])
        html_ = ('<section id="layers"><h2>Layer profile</h2>'
                 '<p class="note">Each claim measured at every layer from the same forward '
                 "passes. The rows below the last layer are exploratory (adjusted by "
                 "Benjamini–Hochberg); the last layer's rows are the audit's own.</p>"
                 f"<ul>{lines}</ul>{figure}"
                 + fold("Estimates and verdicts by layer",
                        f'<table class="rows"><thead><tr>{head}</tr></thead>'
                        f"<tbody>{body}</tbody></table>")
                 + "</section>")
        return Section("layers", "Layer profile", html_)

    # -- scatters --------------------------------------------------------------------------------
    def _scatters(self, series: Mapping[str, Any], x: np.ndarray, claim: str,
                  labels: Sequence[str] | None, token_counts: np.ndarray | None,
                  xlabel: str, symbol: str) -> str:
        """Scatter figures per variant, grouped by every axis but the transform."""
        groups: dict[str, list[tuple[str, dict[str, str]]]] = {}
        for key in series:
            variant = parse_variant(key)
            group = variant_key({k: v for k, v in variant.items() if k != "transform"}, ", ")
            groups.setdefault(group, []).append((key, variant))
        items: list[tuple[bool, str]] = []
        for group, members in groups.items():
            out = [f"<h4>{esc(group)}</h4>" if group else "", '<div class="grid">']
            for key, _ in members:
                out.append(self.scatter_figure(series[key], key, x, claim, labels,
                                               token_counts, xlabel, symbol))
            out.append("</div>")
            items.append((any(self.confirmatory([claim], k) for k, _ in members),
                          "".join(out)))
        return self._split(items, "groups of plots")

    def scatter_figure(self, values: Any, key: str, x: np.ndarray, claim: str,
                       labels: Sequence[str] | None, token_counts: np.ndarray | None,
                       xlabel: str, symbol: str, result: Result | None = None) -> str:
        """One scatter figure: ``values`` (the y of variant ``key``) against ``x``, with the
        row of ``claim`` at that variant (or ``result``) in its title and caption."""
        variant = parse_variant(key)
        y_all = floats(values)
        n = min(x.size, y_all.size)
        keep = np.isfinite(x[:n]) & np.isfinite(y_all[:n])
        xs, ys = x[:n][keep], y_all[:n][keep]
        result = result if result is not None else self.by_key.get((claim, key))
        rho = result.estimate if result is not None and math.isfinite(
            result.estimate) else fits.spearman(xs, ys)
        verdict = result.verdict.value if result is not None else None
        counts = None if token_counts is None else token_counts[:n][keep]
        names = (None if labels is None else [labels[int(i)] for i in np.flatnonzero(keep)])
        transform = variant.get("transform")
        log_y = is_whitened(transform) and bool(ys.size) and bool(np.all(ys > 0))
        ylabel = transform_note(transform, symbol)[0] if transform else symbol
        line = fits.ols(xs, np.log(ys) if log_y else ys)  # for the plot and caption
        caption = self._scatter_caption(key, variant, xs, ys, rho, result, names, log_y,
                                        ylabel, line)
        return self.figure(
            partial(plots.scatter_plot, xs, ys, rho=rho, verdict=verdict, token_counts=counts,
                    xlabel=xlabel, ylabel=ylabel, log_y=log_y, line=line),
            f"{ylabel} against {xlabel}, {key}", caption)

    def _scatter_caption(self, key: str, variant: Mapping[str, str], xs: np.ndarray,
                         ys: np.ndarray, rho: float, result: Result | None,
                         names: Sequence[str] | None, log_y: bool, ylabel: str,
                         line: fits.Line | None) -> str:
        label = variant.get("transform") or key
        bits = [f"<b>{esc(label)}</b>", f"n = {xs.size:,}", f"ρ = {esc(_number(rho))}"]
        if result is not None:
            bits[-1] += f" {esc(_interval(result))} {badge(result.verdict.value)}"
            if result.expected is not None:
                bits.append(f"paper: {badge(result.expected.value)}")
        if line is not None:
            bits.append(f"OLS slope {'of ln y ' if log_y else ''}{esc(_number(line.slope))} "
                        "per nat")
        if xs.size > plots.MAX_POINTS:
            bits.append(f"{plots.MAX_POINTS:,} of {xs.size:,} points drawn (a random subsample; "
                        "the line and ρ use all)")
        text = " · ".join(bits)
        axis = f"y: {esc(ylabel)}"
        if ys.size:
            axis += f", here {esc(magnitude(ys.min()))} to {esc(magnitude(ys.max()))}"
        if log_y:
            axis += (" — in units of each direction's frequency-weighted variance, not the "
                     "model's units (see above)")
        text += f'<br><span class="axes">{axis}</span>'
        if names is not None:
            above, below = fits.outliers(xs, np.log(ys) if log_y else ys, OUTLIERS, line)
            if above:
                text += ("<br>farthest above the line: "
                         + ", ".join(f"<code>{esc(names[i])}</code>" for i in above)
                         + "; below: " + ", ".join(f"<code>{esc(names[i])}</code>" for i in below))
        return text

    def _transforms_note(self, series: Mapping[str, Any], symbol: str) -> str:
        seen = list(dict.fromkeys(parse_variant(k).get("transform", "") for k in series))
        dim = self.report.model.get("dim")
        items = []
        for transform in (t for t in seen if t):
            _, note = transform_note(transform, symbol)
            if dim and is_whitened(transform):
                note = note.replace("dimensions d", f"dimensions d (here {dim})")
            items.append(f"<li><code>{esc(transform)}</code>: {esc(note)}.</li>")
        return f'<ul class="note axes">{"".join(items)}</ul>' if items else ""

    def words(self) -> Section:
        out = ['<section id="words"><h2>Word level: squared norm against information content'
               "</h2>"]
        data = self.report.data.get("words") if isinstance(self.report.data, Mapping) else None
        if not isinstance(data, Mapping) or not data.get("squared_norms"):
            out.append('<p class="note">This report holds no word-level data (it measured no '
                       "word claim, predates plot data, or comes from the demonstration).</p>")
        elif not self.can_plot:
            out.append('<p class="note">No plots (matplotlib is not installed).</p>')
        else:
            try:
                x = floats(data.get("information", []))
                words = [str(w) for w in data.get("words", [])]
                counts_raw = data.get("token_counts")
                counts = None if not counts_raw else np.asarray(counts_raw, dtype=np.intp)
                out.append('<p class="note">Each point is a word of the sample. <b>x</b>: its '
                           "information content IC(w) = −ln p(w), in nats, from its frequency "
                           "p(w) in the reference corpus (rarer words to the right). <b>y</b>: "
                           "its squared norm ‖e(w)‖² under the plot's geometry transform "
                           "(below). The line is the least-squares fit; ρ is the Spearman "
                           "correlation the verdict of <code>word.norm_ic</code> judges "
                           "(threshold and interval in the rows tables); colours separate words "
                           "the model splits into several tokens.</p>")
                out.append(self._transforms_note(data["squared_norms"], "‖e(w)‖²"))
                out.append(self._scatters(data["squared_norms"], x, "word.norm_ic",
                                          words if len(words) == x.size else None, counts,
                                          "IC(w) (nats)", "‖e(w)‖²"))
            except (TypeError, ValueError, AttributeError) as exc:
                out.append(f'<p class="note">The word data are malformed: {esc(exc)}</p>')
        out.append("</section>")
        return Section("words", "Word level: ‖e(w)‖² against IC(w)", "".join(out))

    def texts(self) -> Section | None:
        data = self.report.data.get("texts") if isinstance(self.report.data, Mapping) else None
        if not isinstance(data, Mapping) or not data.get("squared_norms") or not self.can_plot:
            return None
        out = ['<section id="texts"><h2>Sentence level: squared norm against surprisal</h2>',
               '<p class="note">Each point is a sentence, one plot per pooling. <b>x</b>: its '
               "information content IC(t) = −Σᵢ ln P(tᵢ | t₁ … tᵢ₋₁), its surprisal summed over "
               "its tokens under a causal language model, in nats. <b>y</b>: ‖e(t)‖² of the pooled "
               "sentence embedding, raw, in the model's own units: <code>sum</code> pooling "
               "grows with the number of tokens, so its scale is far above that of "
               "<code>mean</code> pooling.</p>"]
        try:
            x = floats(data.get("information", []))
            out.append(self._scatters(data["squared_norms"], x, "text.norm_surprisal", None,
                                      None, "IC(t) (nats)", "‖e(t)‖²"))
        except (TypeError, ValueError, AttributeError) as exc:
            out.append(f'<p class="note">The sentence data are malformed: {esc(exc)}</p>')
        out.append("</section>")
        return Section("texts", "Sentence level: ‖e(t)‖² against surprisal", "".join(out))

    # -- CER -------------------------------------------------------------------------------------
    def cer(self) -> Section:
        title = "Growth with length: CER curves s(L)"
        out = [f'<section id="cer"><h2>{title}</h2>']
        data = self.report.data.get("prefixes") if isinstance(self.report.data, Mapping) else None
        curves = data.get("curves") if isinstance(data, Mapping) else None
        if not isinstance(curves, Mapping) or not curves:
            out.append('<p class="note">This report holds no prefix curves (it measured no CER '
                       "claim, the model cannot embed prefixes, or the report predates plot "
                       "data).</p></section>")
            return Section("cer", title, "".join(out))
        if not self.can_plot:
            out.append('<p class="note">No plots (matplotlib is not installed).</p></section>')
            return Section("cer", title, "".join(out))
        documents = [str(d) for d in (data.get("documents") or [])] if isinstance(
            data, Mapping) else []
        out.append(
            '<p class="note"><b>x</b>: the prefix length L, in model tokens. <b>y</b>: s(L) = '
            "‖e(prefix of L tokens)‖², raw, in the model's own units — for each document (grey) "
            "and their mean (black), with a linear and a saturating fit of the mean. Linear "
            "growth is the CER prediction (late/early slope ratio ≈ 1); a curve that levels off "
            "— a ratio near 0 and a saturating fit whose plateau is reached inside the range — "
            "is the fixed-point signature of mean pooling and of CLS/EOS states."
            + "</p>")
        if documents:
            names = ", ".join(f"<code>{esc(d)}</code>" for d in documents)
            out.append(fold(f"The {len(documents)} documents", f'<p class="note">{names}.</p>')
                       if len(documents) > 12 else f'<p class="note">Documents: {names}.</p>')
        items: list[tuple[bool, str]] = []
        for key, curve in curves.items():
            items.append((self.confirmatory(("cer.linear", "cer.fixed_point", "cer.monotone"),
                                            key),
                          f'<div class="cell">{self.cer_figure(key, curve)}</div>'))
        out.append(self._split(items, "CER plots", grid=True))
        out.append("</section>")
        return Section("cer", title, "".join(out))

    def cer_figure(self, key: str, curve: Any) -> str:
        """The CER plot of one pooling ``key`` (or a note where its curves are malformed)."""
        try:
            lengths = floats(curve["lengths"])
            values = floats(curve["squared_norms"])
            docs = np.asarray(curve["document"], dtype=np.intp)
            if not lengths.size == values.size == docs.size:
                raise ValueError("lengths, values and documents differ in length")
        except (KeyError, TypeError, ValueError) as exc:
            return f'<p class="note">Curves {esc(key)} are malformed: {esc(exc)}</p>'
        ratio = self.by_key.get(("cer.linear", key))
        fixed = self.by_key.get(("cer.fixed_point", key))
        fit = fits.fit_curves(lengths, values, docs)  # once, for the plot and caption
        caption = self._cer_caption(key, lengths, values, docs, ratio, fixed, fit)
        return self.figure(partial(plots.cer_plot, lengths, values, docs, ratio=ratio, fit=fit),
                           f"s(L) against prefix length, {key}", caption)

    def _cer_caption(self, key: str, lengths: np.ndarray, values: np.ndarray, docs: np.ndarray,
                     ratio: Result | None, fixed: Result | None, fit: fits.CurveFit) -> str:
        variant = parse_variant(key)
        label = variant.get("composition", key)
        rest = variant_key({k: v for k, v in variant.items() if k != "composition"}, ", ")
        bits = [f"<b>{esc(label)}</b>" + (f" ({esc(rest)})" if rest else ""),
                f"{np.unique(docs).size} documents"]
        if ratio is not None:
            bits.append(f"<code>cer.linear</code> {badge(ratio.verdict.value)}"
                        + (f" (paper: {badge(ratio.expected.value)})" if ratio.expected else ""))
        if fixed is not None:
            bits.append(f"<code>cer.fixed_point</code> {badge(fixed.verdict.value)}")
        line, curve = fit.line, fit.saturating
        text = " · ".join(bits)
        if line is not None:
            text += f"<br>linear fit: slope {esc(_number(line.slope))} per token"
        if curve is not None:
            top = float(lengths.max())
            shape = ("levels off inside the range: the fixed-point signature"
                     if curve.tau < top / 2 else
                     "no levelling off inside the range" if curve.tau > 2 * top else
                     "bends over the range")
            text += (f"; saturating fit: plateau {esc(_number(curve.plateau))}, "
                     f"τ = {esc(_number(curve.tau))} tokens ({shape})")
        text += (f'<br><span class="axes">x: prefix length L (tokens), up to '
                 f"{esc(_number(lengths.max() if lengths.size else math.nan))}; y: s(L), raw "
                 "‖e‖²")
        if values.size and np.isfinite(values).any():
            text += (f", here {esc(magnitude(np.nanmin(values)))} to "
                     f"{esc(magnitude(np.nanmax(values)))}")
        return text + "</span>"
