"""The report's figures as SVG text: forest plots, scatter plots, CER curves.

The forest, scatter and CER figures are written directly as SVG by :mod:`normtest.render.canvas`
(a few milliseconds each; through matplotlib they cost 0.1–0.25 s each, most of a report's
rendering time). Text stays text in a font browsers have, every label from the data escaped;
scatter points are one PNG inside the SVG, so the page stays small however many words there
are; the same report gives the same bytes. The page embeds each SVG as an image (``data:``
URI), where nothing in it can run.

The layer profile (:mod:`normtest.render.layers`) and the comparison's leaderboard, one figure a
page and also written to PNG or PDF files, are drawn with matplotlib (:func:`figure`,
:func:`svg`, :func:`save`): imported on first use (``import normtest`` stays light) and only
through its object-oriented API — each figure a :class:`matplotlib.figure.Figure` on an explicit
``FigureCanvasAgg``, so no GUI backend is loaded and pyplot's global state is never touched.
Their text is glyph outlines (``svg.fonttype = path``), their ids seeded (``svg.hashsalt``), the
date left out; labels from data are shown literally (mathtext is off) and escaped by matplotlib.
"""

from __future__ import annotations

import base64
import io
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from normtest.base.paths import atomic_write, publish, use_own_matplotlib_dir
from normtest.errors import NormtestError
from normtest.render import canvas, fits
from normtest.render import labels as fmt
from normtest.render.canvas import EDGE, TEXT
from normtest.verdict.formatting import interval as _interval
from normtest.verdict.formatting import number as _number
from normtest.verdict.result import Result, Verdict

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["COLOURS", "available", "cer_plot", "data_uri", "forest_plot", "scatter_plot"]

#: Verdict colours (shared with the page's badges).
COLOURS: dict[str, str] = {
    Verdict.PASS.value: "#1a7f37",
    Verdict.FAIL.value: "#cf222e",
    Verdict.INCONCLUSIVE.value: "#9a6700",
    Verdict.ERROR.value: "#6e7781",
    Verdict.SKIPPED.value: "#8c959f",
}
#: Scatter points: words of one token, words of several.
POINTS = ("#4c72b0", "#dd8452")
NOTE_SIZE = 7.5  # the verdicts right of a forest plot
#: At most this many points are drawn in one scatter plot (a seeded subsample beyond).
MAX_POINTS = 4000
_STYLE: Any = {  # matplotlib types rcParams keys as literals
    "svg.fonttype": "path",
    "svg.hashsalt": "normtest",
    "font.size": 8.0,
    "axes.titlesize": 9.0,
    "axes.labelsize": 8.0,
    "xtick.labelsize": 7.5,
    "ytick.labelsize": 7.5,
    "legend.fontsize": 7.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#57606a",
    "axes.linewidth": 0.8,
    "text.usetex": False,
    "text.parse_math": False,  # labels from data are shown as written ($ starts no mathtext)
}


def available() -> bool:
    """Whether matplotlib is installed (the page shows its plots only then; the layer profile
    and the leaderboard draw with it). Looked up, not imported: importing it costs 0.3 s."""
    from importlib.util import find_spec

    try:
        return find_spec("matplotlib") is not None
    except (ImportError, ValueError):  # a module entry without a spec: not usable
        return False


@contextmanager
def _figure(width: float, height: float) -> Iterator[Figure]:

    use_own_matplotlib_dir()  # its font cache under normtest's cache root, not ~/.cache
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise NormtestError(
            "the report's plots need matplotlib: pip install 'normtest[report]'"
        ) from exc
    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=(width, height), layout="constrained")
        FigureCanvasAgg(fig)
        yield fig


_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_METADATA = re.compile(r"<metadata>.*?</metadata>", re.DOTALL)
_PROLOGUE = re.compile(r"^.*?(?=<svg\b)", re.DOTALL)
_EMBEDDED = re.compile(r'(data:image/png;base64,)([^"]*)')  # rasterised points: no whitespace


def _svg(fig: Figure) -> str:
    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context(_STYLE):
        fig.savefig(buffer, format="svg", dpi=110, metadata={"Date": None})
    text = buffer.getvalue().decode("utf-8")
    text = _PROLOGUE.sub("", text, count=1)
    text = _METADATA.sub("", _COMMENT.sub("", text))
    text = re.sub(r"\s*\n\s*", " ", text).strip()
    return _EMBEDDED.sub(lambda m: m.group(1) + re.sub(r"\s+", "", m.group(2)), text)


#: The figure context and the SVG writer, for the other figure modules (render/layers.py).
figure = _figure
svg = _svg


def save(fig: Figure, path: Path) -> Path:
    """Write a figure to a file (PNG, SVG or PDF by the suffix) in the report's style, whole or
    not at all (:func:`normtest.base.paths.atomic_write`)."""
    import matplotlib


    def draw(out: Any) -> None:
        publish(out)
        with matplotlib.rc_context(_STYLE):
            fig.savefig(out, format=path.suffix.lstrip(".").lower() or "png", dpi=130,
                        metadata={"Date": None} if path.suffix == ".svg" else None)

    atomic_write(path, draw)
    return path


def data_uri(svg: str) -> str:
    """An SVG as a ``data:`` URI for an ``<img>`` (base64, so no character needs escaping)."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


# -- forest plot -----------------------------------------------------------------------------------
def limits(rows: Sequence[Result]) -> tuple[float, float]:
    """The axis range of rows with finite estimates: every estimate and threshold, intervals
    up to one and a half times that range beyond it (an unstable interval would flatten the
    rest), padded."""
    core = [r.estimate for r in rows]
    for r in rows:
        t = r.threshold
        core += list(t) if isinstance(t, tuple) else ([] if t is None else [float(t)])
    lows = [r.ci[0] for r in rows if math.isfinite(r.ci[0])]
    highs = [r.ci[1] for r in rows if math.isfinite(r.ci[1])]
    lo, hi = min(core), max(core)
    width = hi - lo if hi > lo else max(abs(hi), 1.0) * 0.5
    lo_all = max(min([lo, *lows]), lo - 1.5 * width)
    hi_all = min(max([hi, *highs]), hi + 1.5 * width)
    pad = 0.06 * (hi_all - lo_all)
    return lo_all - pad, hi_all + pad


def forest_plot(rows: Sequence[Result], statistic: str = "") -> str:
    """One row per variant: estimate, interval, threshold(s), coloured by verdict.

    Intervals reaching beyond the drawn range end in a triangle at its edge. The threshold is a
    vertical line with the passing side shaded (an equivalence margin: the band between two).
    Confirmatory rows are labelled in bold; each row's verdict (and the paper's, where it
    differs) is written on its right.
    """
    rows = [r for r in rows if math.isfinite(r.estimate)]
    if not rows:
        raise NormtestError("a forest plot needs at least one result with an estimate")
    n = len(rows)
    labels, _ = fmt.row_labels(rows)
    bold = [r.confirmatory for r in rows]
    notes = []
    for r in rows:
        note = r.verdict.value
        if r.expected is not None and r.expected is not r.verdict:
            note += f"  (paper: {r.expected.value})"
        notes.append(note)
    left = canvas.left_margin(labels, ylabel=False, tick=0.0, bold=bold)
    right_side = 6.0 + max(canvas.text_width(t, NOTE_SIZE) for t in notes) + canvas.PAD
    width = max(576.0, left + right_side + 300.0)  # 8 in, wider for very long labels
    height = 72.0 * (0.75 + 0.27 * n)
    x0, x1 = limits(rows)
    picture = canvas.Canvas(width, height)
    ax = canvas.Axes(picture, (left, canvas.PAD + 2.0, width - right_side,
                               height - canvas.PAD - canvas.BELOW), (x0, x1), (-0.7, n - 0.3))
    ticks = canvas.linear_ticks(x0, x1, ax.right - ax.left)
    ax.grid(ticks)
    shaded: set[Any] = set()
    for r in rows:
        t, c = r.threshold, r.criterion
        if t is None or c is None or (c.direction, t) in shaded:
            continue
        shaded.add((c.direction, t))
        if isinstance(t, tuple):
            ax.span(t[0], t[1], COLOURS["PASS"], 0.07)
            for edge in t:
                ax.rule(edge, EDGE, 0.9, "--")
        else:
            ax.span(*((t, x1) if c.direction == "greater" else (x0, t)), COLOURS["PASS"], 0.07)
            ax.rule(t, EDGE, 0.9, "--")
    for i, (r, note) in enumerate(zip(rows, notes, strict=True)):
        y = n - 1 - i
        colour = COLOURS.get(r.verdict.value, EDGE)
        low, high = r.ci
        if math.isfinite(low) and math.isfinite(high):
            ax.line([max(low, x0), min(high, x1)], [y, y], colour, 2.2)
            if low < x0:
                ax.triangle(x0, y, "<", colour)
            if high > x1:
                ax.triangle(x1, y, ">", colour)
        ax.circles([r.estimate], [y], colour, 5.0, edge="#fff", edge_width=0.6)
        picture.text(ax.right + 6.0, float(ax.py(y)) + 0.36 * NOTE_SIZE, note, NOTE_SIZE,
                     colour=colour)
    ax.frame(ticks, canvas.tick_labels(ticks), [n - 1 - i for i in range(n)], labels,
             xlabel=statistic or "estimate" + f" — estimate and {fmt.confidence(rows[0])} "
             "interval", ytick_length=0.0, bold=bold)
    return picture.svg()


# -- scatter ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Scatter:
    """What a scatter plot drew, for its caption."""

    svg: str
    n: int
    shown: int
    rho: float
    line: fits.Line | None


def scatter_plot(x: np.ndarray, y: np.ndarray, *, rho: float, verdict: str | None = None,
                 token_counts: np.ndarray | None = None, xlabel: str = "IC(w) (nats)",
                 ylabel: str = "‖e(w)‖²", seed: int = 0, log_y: bool = False,
                 line: fits.Line | None = None) -> Scatter:
    """‖e‖² against information: the points, the OLS line, and ρ (with the verdict) above.

    More than :data:`MAX_POINTS` points are subsampled (seeded) for drawing; the line is fitted
    on all of them (``line``: that fit, when the caller has it already). With ``token_counts``
    single- and multi-token words get different colours. With ``log_y`` (every y positive) the
    y axis is logarithmic and the line is the least-squares line of ln y on x, straight on that
    axis (:attr:`Scatter.line` is then that line). The points are one PNG inside the SVG.
    """
    n = int(x.size)
    if n == 0:
        raise NormtestError("a scatter plot needs at least one point")
    if log_y and not bool(np.all(y > 0)):
        raise NormtestError("a logarithmic axis needs every value positive")
    shown = np.arange(n)
    if n > MAX_POINTS:
        shown = np.sort(np.random.default_rng(seed).choice(n, MAX_POINTS, replace=False))
    if line is None:
        line = fits.ols(x, np.log(y) if log_y else y)
    xs, ys = x[shown], y[shown]
    grid = np.linspace(float(x.min()), float(x.max()), 50)
    fitted = (np.exp(line(grid)) if log_y else line(grid)) if line is not None else np.empty(0)
    xlim = canvas.autoscale([xs, grid if line is not None else xs])
    ylim = canvas.autoscale([ys, fitted], log=log_y)
    picture = canvas.Canvas(252.0, 190.8)  # 3.5 × 2.65 in
    top, bottom = canvas.PAD + 1.2 * canvas.TITLE_SIZE + 5.0, 190.8 - canvas.PAD - canvas.BELOW
    minor: list[float] = []
    if log_y:
        yticks, minor = canvas.log_ticks(*ylim)
        ylabels = [canvas.log_label(v) for v in yticks]
    else:
        yticks = canvas.linear_ticks(*ylim, bottom - top, vertical=True)
        ylabels = canvas.tick_labels(yticks)
    ax = _box(picture, canvas.left_margin(ylabels), top, bottom, xlim, ylim, log_y)
    xticks = canvas.linear_ticks(*xlim, ax.right - ax.left)
    counts = None if token_counts is None else token_counts[shown]
    several = counts is not None and np.unique(counts).size > 1
    groups = (counts > 1).astype(np.intp) if several and counts is not None else np.zeros(
        shown.size, dtype=np.intp)
    ax.cloud(xs, ys, groups, (POINTS[0], POINTS[1]) if several else (POINTS[0],))
    if line is not None:
        ax.line(grid, fitted, TEXT, 1.2)
    if several:
        ax.legend([canvas.Entry(label, colour, line=False, marker=5.0, opacity=0.55)
                   for label, colour in zip(("one token", "several tokens"), POINTS,
                                            strict=True)], "lower right", textpad=0.2)
    label = f"Spearman ρ = {_number(rho)}" + (f"   {verdict}" if verdict else "")
    ax.title([label], COLOURS.get(verdict or "", TEXT))
    ax.frame(xticks, canvas.tick_labels(xticks), yticks, ylabels, xlabel=xlabel, ylabel=ylabel,
             yminor=minor)
    return Scatter(picture.svg(), n, int(shown.size), rho, line)


def _box(picture: canvas.Canvas, left: float, top: float, bottom: float,
         xlim: tuple[float, float], ylim: tuple[float, float], log_y: bool = False) -> canvas.Axes:
    """Axes from ``left`` to near the right edge, drawn in so the last x tick label fits."""
    right = picture.width - canvas.PAD - 4.0
    xticks = canvas.linear_ticks(*xlim, right - left)
    if xticks:
        half = canvas.text_width(canvas.tick_labels(xticks)[-1], canvas.TICK_SIZE) / 2
        at = left + (xticks[-1] - xlim[0]) / (xlim[1] - xlim[0]) * (right - left)
        right -= max(0.0, at + half - (picture.width - 1.0))
    return canvas.Axes(picture, (left, top, right, bottom), xlim, ylim, log_y)


# -- CER curves ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Curves:
    """What a CER plot drew, for its caption."""

    svg: str
    documents: int
    line: fits.Line | None
    saturating: fits.Saturating | None
    max_length: float


def cer_plot(lengths: np.ndarray, values: np.ndarray, documents: np.ndarray, *,
             ratio: Result | None = None, fit: fits.CurveFit | None = None) -> Curves:
    """s(L) per document (faint), their mean, a linear and a saturating fit of the mean.

    ``ratio`` is the ``cer.linear`` result of this composition: its late/early slope ratio and
    interval are written above (≈ 1 linear growth, ≈ 0 a fixed point, > 1 superlinear). A
    saturating fit that levels off inside the observed range draws its plateau. ``fit``: the
    fits of these curves (:func:`fits.fit_curves`), when the caller has them already.
    """
    if lengths.size == 0:
        raise NormtestError("a CER plot needs at least one prefix")
    if fit is None:
        fit = fits.fit_curves(lengths, values, documents)
    grid, mean, line, curve = fit.grid, fit.mean, fit.line, fit.saturating
    top = float(lengths.max())
    xs = np.linspace(float(grid.min()), top, 80) if grid.size else np.empty(0)
    drawn = [values, mean]
    if line is not None:
        drawn.append(line(xs))
    if curve is not None:
        drawn.append(curve(xs))
    plateau = curve is not None and grid.size > 0 and curve.tau < top / 2
    if plateau and curve is not None:
        drawn.append(np.array([curve.plateau]))
    title: list[str] = []
    if ratio is not None and math.isfinite(ratio.estimate):
        title = [f"late/early slope ratio {_number(ratio.estimate)} {_interval(ratio)}",
                 f"{ratio.claim or 'cer.linear'}: {ratio.verdict.value}"]
    xlim, ylim = (0.0, top * 1.03 if top > 0 else 1.0), canvas.autoscale(drawn)
    picture = canvas.Canvas(252.0, 190.8)
    upper = canvas.PAD + (1.2 * 7.5 * len(title) + 5.0 if title else 4.0)
    bottom = 190.8 - canvas.PAD - canvas.BELOW
    yticks = canvas.linear_ticks(*ylim, bottom - upper, vertical=True)
    ylabels = canvas.tick_labels(yticks)
    ax = _box(picture, canvas.left_margin(ylabels), upper, bottom, xlim, ylim)
    for doc in np.unique(documents):
        at = documents == doc
        order = np.argsort(lengths[at], kind="stable")
        ax.line(lengths[at][order], values[at][order], "#8c959f", 0.7, opacity=0.45)
    entries = [canvas.Entry("mean over documents", TEXT, marker=3.5, width=1.4)]
    if xs.size and line is not None:
        ax.line(xs, line(xs), "#0969da", 1.1, "--")
        entries.append(canvas.Entry("linear fit", "#0969da", width=1.1, dash="--"))
    if xs.size and curve is not None:
        ax.line(xs, curve(xs), "#bc4c00", 1.1, ":")
        entries.append(canvas.Entry("saturating fit", "#bc4c00", width=1.1, dash=":"))
        if plateau:
            ax.rule(curve.plateau, "#bc4c00", 0.6, vertical=False, opacity=0.6)
            entries.append(canvas.Entry("its plateau", "#bc4c00", width=0.6, opacity=0.6))
    ax.line(grid, mean, TEXT, 1.4)  # the mean over the fits
    ax.circles(grid, mean, TEXT, 3.5)
    if title and ratio is not None:
        ax.title(title, COLOURS.get(ratio.verdict.value, TEXT), 7.5)
    xticks = canvas.linear_ticks(*xlim, ax.right - ax.left)
    ax.frame(xticks, canvas.tick_labels(xticks), yticks, ylabels,
             xlabel="prefix length L (model tokens)", ylabel="s(L) = ‖e(prefix)‖²")
    ax.legend(entries, "best", 6.5)
    return Curves(picture.svg(), int(np.unique(documents).size), line, curve, top)


# -- the beyond reading, stratum by stratum ----------------------------------------------------
def strata_plot(labels: Sequence[str], rhos: Sequence[float | None], *, pooled: float,
                interval: tuple[float, float], threshold: float | None,
                verdict: str | None = None, xlabel: str = "stratum of the baseline") -> str:
    """The beyond reading of a row: Spearman's ρ of norm and information *within* each stratum
    of its baseline (a dot per stratum: one token count, one length band), the pooled
    within-strata ρ with its interval (a band) and the attenuated threshold it is held to
    (dashed). A norm that carries the information beyond the baseline sits above the threshold
    in every stratum; one that only follows the baseline sits near 0."""
    values = np.array([math.nan if v is None else float(v) for v in rhos], dtype=np.float64)
    if values.size == 0:
        raise NormtestError("a strata plot needs at least one stratum")
    xs = np.arange(values.size, dtype=np.float64)
    drawn = [values[np.isfinite(values)], np.array([pooled, *interval, 0.0])]
    if threshold is not None:
        drawn.append(np.array([threshold]))
    xlim, ylim = (-0.6, values.size - 0.4), canvas.autoscale(drawn)
    picture = canvas.Canvas(252.0, 190.8)
    top, bottom = canvas.PAD + 1.2 * canvas.TITLE_SIZE + 5.0, 190.8 - canvas.PAD - canvas.BELOW
    yticks = canvas.linear_ticks(*ylim, bottom - top, vertical=True)
    ylabels = canvas.tick_labels(yticks)
    ax = _box(picture, canvas.left_margin(ylabels), top, bottom, xlim, ylim)
    colour = COLOURS.get(verdict or "", TEXT)
    ax.span(interval[0], interval[1], colour, 0.15, vertical=False)
    ax.rule(pooled, colour, 1.2, vertical=False)
    ax.rule(0.0, EDGE, 0.6, vertical=False)
    entries = [canvas.Entry("within-strata ρ and interval", colour, width=1.2)]
    if threshold is not None:
        ax.rule(threshold, TEXT, 0.9, "--", vertical=False)
        entries.append(canvas.Entry("threshold it is held to", TEXT, width=0.9, dash="--"))
    ax.circles(xs, values, TEXT, 5.0)
    entries.append(canvas.Entry("ρ within one stratum", TEXT, line=False, marker=5.0))
    ax.title([f"beyond: ρ = {_number(pooled)}" + (f"   {verdict}" if verdict else "")],
             colour)
    ax.frame(list(xs), [str(v) for v in labels], yticks, ylabels, xlabel=xlabel,
             ylabel="Spearman ρ within the stratum")
    ax.legend(entries, "best", 6.5)
    return picture.svg()


# -- power against sample size -----------------------------------------------------------------
def power_plot(sizes: np.ndarray, powers: np.ndarray, *, now: int, chosen: int | None,
               setting: str, target: float = 0.9) -> str:
    """The power curve of an undecided row: the chance that a sample of each size decides it,
    its estimate taken as the truth (:func:`normtest.scorecard.power.power_at`), with the
    audit's sample and the size the rerun command picks marked, and the target power dashed."""
    if sizes.size == 0 or sizes.size != powers.size:
        raise NormtestError("a power curve needs as many powers as sizes, at least one")
    top = float(max(sizes.max(), chosen or 0, now))
    xlim, ylim = (0.0, top * 1.04), (0.0, 1.02)
    picture = canvas.Canvas(252.0, 190.8)
    upper, bottom = canvas.PAD + 1.2 * canvas.TITLE_SIZE + 5.0, 190.8 - canvas.PAD - canvas.BELOW
    yticks = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    ylabels = canvas.tick_labels(yticks)
    ax = _box(picture, canvas.left_margin(ylabels), upper, bottom, xlim, ylim)
    ax.rule(target, TEXT, 0.9, "--", vertical=False)
    ax.line(sizes, powers, "#0969da", 1.4)
    entries = [canvas.Entry("power at that sample", "#0969da", width=1.4),
               canvas.Entry(f"power {target:g}", TEXT, width=0.9, dash="--")]
    ax.rule(float(now), EDGE, 1.0, ":")
    entries.append(canvas.Entry(f"this audit: {now:,}", EDGE, width=1.0, dash=":"))
    if chosen is not None:
        ax.rule(float(chosen), COLOURS["PASS"], 1.1)
        entries.append(canvas.Entry(f"the rerun: {chosen:,}", COLOURS["PASS"], width=1.1))
    ax.title([f"power against --{setting}"], TEXT)
    xticks = canvas.linear_ticks(*xlim, ax.right - ax.left)
    ax.frame(xticks, canvas.tick_labels(xticks), yticks, ylabels, xlabel=f"--{setting}",
             ylabel="power")
    ax.legend(entries, "lower right", 6.5)
    return picture.svg()
