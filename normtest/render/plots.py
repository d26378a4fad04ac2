"""The report's figures, drawn with matplotlib's Agg canvas and returned as SVG text.

matplotlib is imported on first use (``import normtest`` stays light) and only through its
object-oriented API: each figure is a :class:`matplotlib.figure.Figure` attached to an explicit
``FigureCanvasAgg``, so no GUI backend is ever loaded, pyplot's global state is never touched
and rendering works headless. Text is drawn as glyph outlines (``svg.fonttype = path``) so the
page needs no font; scatter points are rasterised inside the SVG (a PNG) to keep the page small
however many words there are; ids are seeded (``svg.hashsalt``) and the date left out, so the
same report gives the same bytes. Labels that come from data are shown literally (mathtext is
off) and matplotlib escapes its SVG text; the page embeds each SVG as an image
(``data:`` URI), where nothing in it can run.
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

from normtest.errors import NormtestError
from normtest.render import _format as fmt
from normtest.render import fits
from normtest.result import Result, Verdict

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
    """Whether matplotlib can be imported (the plots need it)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


@contextmanager
def _figure(width: float, height: float) -> Iterator[Figure]:
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
    """Write a figure to a file (PNG, SVG or PDF by the suffix) in the report's style."""
    import matplotlib

    path.parent.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context(_STYLE):
        fig.savefig(path, dpi=130, metadata={"Date": None} if path.suffix == ".svg" else None)
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
    """
    rows = [r for r in rows if math.isfinite(r.estimate)]
    if not rows:
        raise NormtestError("a forest plot needs at least one result with an estimate")
    n = len(rows)
    with _figure(8.0, 0.75 + 0.27 * n) as fig:
        ax = fig.add_subplot()
        x0, x1 = limits(rows)
        ax.set_xlim(x0, x1)
        ax.set_ylim(-0.7, n - 0.3)
        shaded: set[Any] = set()
        for r in rows:
            t, c = r.threshold, r.criterion
            if t is None or c is None or (c.direction, t) in shaded:
                continue
            shaded.add((c.direction, t))
            if isinstance(t, tuple):
                ax.axvspan(t[0], t[1], color=COLOURS["PASS"], alpha=0.07, lw=0)
                for edge in t:
                    ax.axvline(edge, color="#57606a", lw=0.9, ls="--")
            else:
                side = (t, x1) if c.direction == "greater" else (x0, t)
                ax.axvspan(*side, color=COLOURS["PASS"], alpha=0.07, lw=0)
                ax.axvline(t, color="#57606a", lw=0.9, ls="--")
        for i, r in enumerate(rows):
            y = n - 1 - i
            colour = COLOURS.get(r.verdict.value, "#57606a")
            low, high = r.ci
            if math.isfinite(low) and math.isfinite(high):
                ax.hlines(y, max(low, x0), min(high, x1), color=colour, lw=2.2)
                if low < x0:
                    ax.plot([x0], [y], marker="<", color=colour, ms=5, clip_on=False)
                if high > x1:
                    ax.plot([x1], [y], marker=">", color=colour, ms=5, clip_on=False)
            ax.plot([r.estimate], [y], marker="o", color=colour, ms=5, mec="white", mew=0.6)
            note = r.verdict.value
            if r.expected is not None and r.expected is not r.verdict:
                note += f"  (paper: {r.expected.value})"
            ax.annotate(note, xy=(1.0, y), xycoords=("axes fraction", "data"),
                        xytext=(6, 0), textcoords="offset points", va="center",
                        color=colour, fontsize=7.5, annotation_clip=False)
        labels, _ = fmt.row_labels(rows)
        ax.set_yticks(range(n), list(reversed(labels)))
        for tick, r in zip(ax.get_yticklabels(), reversed(rows), strict=True):
            if r.confirmatory:  # the rows the scorecard counts, in bold
                tick.set_fontweight("bold")
        ax.tick_params(axis="y", length=0)
        ax.grid(axis="x", color="#d0d7de", lw=0.5)
        ax.set_axisbelow(True)
        ax.set_xlabel(statistic or "estimate"
                      + f" — estimate and {fmt.confidence(rows[0])} interval")
        return _svg(fig)


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
                 ylabel: str = "‖e(w)‖²", seed: int = 0, log_y: bool = False) -> Scatter:
    """‖e‖² against information: the points, the OLS line, and ρ (with the verdict) in a corner.

    More than :data:`MAX_POINTS` points are subsampled (seeded) for drawing; the line is fitted
    on all of them. With ``token_counts`` single- and multi-token words get different colours.
    With ``log_y`` (every y positive) the y axis is logarithmic and the line is the least-squares
    line of ln y on x, straight on that axis (:attr:`Scatter.line` is then that line).
    """
    n = int(x.size)
    if n == 0:
        raise NormtestError("a scatter plot needs at least one point")
    if log_y and not bool(np.all(y > 0)):
        raise NormtestError("a logarithmic axis needs every value positive")
    shown = np.arange(n)
    if n > MAX_POINTS:
        shown = np.sort(np.random.default_rng(seed).choice(n, MAX_POINTS, replace=False))
    line = fits.ols(x, np.log(y) if log_y else y)
    with _figure(3.5, 2.65) as fig:
        ax = fig.add_subplot()
        counts = None if token_counts is None else token_counts[shown]
        if counts is not None and np.unique(counts).size > 1:
            single = counts <= 1
            ax.scatter(x[shown][single], y[shown][single], s=4, lw=0, alpha=0.55,
                       color="#4c72b0", label="one token", rasterized=True)
            ax.scatter(x[shown][~single], y[shown][~single], s=4, lw=0, alpha=0.55,
                       color="#dd8452", label="several tokens", rasterized=True)
            ax.legend(loc="lower right", frameon=False, markerscale=2.5, handletextpad=0.2)
        else:
            ax.scatter(x[shown], y[shown], s=4, lw=0, alpha=0.55, color="#4c72b0",
                       rasterized=True)
        if line is not None:
            grid = np.linspace(float(x.min()), float(x.max()), 50)
            ax.plot(grid, np.exp(line(grid)) if log_y else line(grid), color="#24292f", lw=1.2,
                    label="OLS")
        if log_y:  # plain tick labels (1,000 and 10,000): mathtext is off, so no 10^{n}
            from matplotlib.ticker import FuncFormatter, NullFormatter

            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(FuncFormatter(_plain))
            ax.yaxis.set_minor_formatter(NullFormatter())
        label = f"Spearman ρ = {fmt.number(rho)}" + (f"   {verdict}" if verdict else "")
        ax.set_title(label, loc="left", color=COLOURS.get(verdict or "", "#24292f"))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        return Scatter(_svg(fig), n, int(shown.size), rho, line)


def _plain(value: float, _position: Any = None) -> str:
    """A tick label on a logarithmic axis: ``0.1``, ``10``, ``10,000``, ``1e+06`` beyond."""
    if value >= 1e6:
        return f"{value:.0e}"
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


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
             ratio: Result | None = None) -> Curves:
    """s(L) per document (faint), their mean, a linear and a saturating fit of the mean.

    ``ratio`` is the ``cer.linear`` result of this composition: its late/early slope ratio and
    interval are written in the corner (≈ 1 linear growth, ≈ 0 a fixed point, > 1 superlinear).
    A saturating fit that levels off inside the observed range draws its plateau.
    """
    if lengths.size == 0:
        raise NormtestError("a CER plot needs at least one prefix")
    grid, mean, _ = fits.mean_curve(lengths, values, documents)
    line = fits.ols(grid, mean)
    curve = fits.saturating(grid, mean)
    top = float(lengths.max())
    with _figure(3.5, 2.65) as fig:
        ax = fig.add_subplot()
        for doc in np.unique(documents):
            at = documents == doc
            order = np.argsort(lengths[at])
            ax.plot(lengths[at][order], values[at][order], color="#8c959f", lw=0.7, alpha=0.45)
        ax.plot(grid, mean, "o-", color="#24292f", lw=1.4, ms=3.5, label="mean over documents",
                zorder=3)
        if grid.size:
            xs = np.linspace(float(grid.min()), top, 80)
            if line is not None:
                ax.plot(xs, line(xs), color="#0969da", lw=1.1, ls="--", label="linear fit")
            if curve is not None:
                ax.plot(xs, curve(xs), color="#bc4c00", lw=1.1, ls=":", label="saturating fit")
                if curve.tau < top / 2:
                    ax.axhline(curve.plateau, color="#bc4c00", lw=0.6, alpha=0.6,
                               label="its plateau")
        if ratio is not None and math.isfinite(ratio.estimate):
            ax.set_title(f"late/early slope ratio {fmt.number(ratio.estimate)} "
                         f"{fmt.interval(ratio)}\n{ratio.claim or 'cer.linear'}: "
                         f"{ratio.verdict.value}", loc="left", fontsize=7.5,
                         color=COLOURS.get(ratio.verdict.value, "#24292f"))
        ax.set_xlim(0, top * 1.03)
        ax.set_xlabel("prefix length L (model tokens)")
        ax.set_ylabel("s(L) = ‖e(prefix)‖²")
        ax.legend(loc="best", frameon=False, fontsize=6.5)
        return Curves(_svg(fig), int(np.unique(documents).size), line, curve, top)
