"""A small SVG writer for the report's figures: axes, ticks, lines, markers, text, a point cloud.

The page's forest plots, scatter plots and CER curves are rows of intervals, a few lines and a
cloud of points; drawing them through matplotlib cost about 0.1–0.25 s a figure (text laid out
glyph by glyph, every figure drawn twice by its layout engine), so they are written here as SVG
directly, in a few milliseconds each (``benchmarks/bench_render.py``). The layer profile and the
comparison's leaderboard (one figure a page, also written to PNG/PDF files) stay on matplotlib.

- **Text stays text** (``<text>``), in a font every browser has: DejaVu Sans first, then
  Verdana, Arial, Helvetica, any sans-serif. Widths for the layout come from DejaVu Sans's
  advance widths (a table here), the widest of those fonts but Verdana, so labels fit.
- **Every string is escaped** (:func:`xml`): ``& < > " '`` as entities, characters XML forbids
  as U+FFFD, so a label from the data can neither add markup nor break the document.
- **A point cloud is one PNG** inside the SVG (:meth:`Axes.cloud`): each point a disc, alpha
  compositing as if drawn one by one (overlaps darken), at 144 dpi (two pixels a point), so the page
  stays small however many points a plot has.
- **Deterministic**: no ids but the fixed clip path's, no date; the same figure gives the same
  bytes.

Coordinates are points (1/72 in): the SVG's width and height are given in ``pt`` with a viewBox
in the same units, so a figure keeps matplotlib's sizes (a scatter is 3.5 × 2.65 in).
"""

from __future__ import annotations

import base64
import functools
import html
import itertools
import math
import re
import struct
import unicodedata
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["BELOW", "FONT", "PAD", "Axes", "Canvas", "Entry", "autoscale", "left_margin",
           "linear_ticks", "log_label", "log_ticks", "text_width", "tick_labels", "xml"]

#: The font family the SVG names (DejaVu Sans's widths lay the text out).
FONT = "'DejaVu Sans', 'Bitstream Vera Sans', Verdana, Arial, Helvetica, sans-serif"
TICK_SIZE, LABEL_SIZE, TITLE_SIZE = 7.5, 8.0, 9.0
TEXT = "#24292f"
EDGE = "#57606a"
TICK = 3.5  # tick length
TICK_PAD = 3.0  # between a tick and its label
PAD = 4.0  # around the figure
Values = np.ndarray | Sequence[float] | float
#: the height under a box's bottom edge: ticks, their labels, the axis label
BELOW = TICK + TICK_PAD + TICK_SIZE + TICK_PAD + LABEL_SIZE

# DejaVu Sans advance widths, in 1/2048 em, of the characters 32–126 (regular, bold)
_REGULAR = (
    651, 821, 942, 1716, 1303, 1946, 1597, 563, 799, 799, 1024, 1716, 651, 739, 651, 690, 1303,
    1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 690, 690, 1716, 1716, 1716, 1087, 2048,
    1401, 1405, 1430, 1577, 1294, 1178, 1587, 1540, 604, 604, 1343, 1141, 1767, 1532, 1612, 1235,
    1612, 1423, 1300, 1251, 1499, 1401, 2025, 1403, 1251, 1403, 799, 690, 799, 1716, 1024, 1024,
    1255, 1300, 1126, 1300, 1260, 721, 1300, 1298, 569, 569, 1186, 569, 1995, 1298, 1253, 1300,
    1300, 842, 1067, 803, 1298, 1212, 1675, 1212, 1212, 1075, 1303, 690, 1303, 1716)
_BOLD = (
    713, 934, 1067, 1716, 1425, 2052, 1786, 627, 936, 936, 1071, 1716, 778, 850, 778, 748, 1425,
    1425, 1425, 1425, 1425, 1425, 1425, 1425, 1425, 1425, 819, 819, 1716, 1716, 1716, 1188, 2048,
    1585, 1561, 1503, 1700, 1399, 1399, 1681, 1714, 762, 762, 1587, 1305, 2038, 1714, 1741, 1501,
    1741, 1577, 1475, 1397, 1663, 1585, 2259, 1579, 1483, 1485, 936, 748, 936, 1716, 1024, 1024,
    1382, 1466, 1214, 1466, 1389, 891, 1466, 1458, 702, 702, 1362, 702, 2134, 1458, 1407, 1466,
    1466, 1010, 1219, 979, 1458, 1335, 1892, 1321, 1335, 1192, 1458, 748, 1458, 1716)
_OTHER = {"‖": (1024, 1024), "²": (821, 897), "³": (821, 897), "⁴": (821, 897), "ρ": (1300, 1466),
          "τ": (1233, 1307), "μ": (1303, 1507), "−": (1716, 1716), "—": (2048, 2048),
          "–": (1024, 1024), "·": (651, 778), "…": (2048, 2048), "≈": (1716, 1716),
          "×": (1716, 1716), "≥": (1716, 1716), "≤": (1716, 1716), "’": (651, 778)}
#: characters XML 1.0 forbids (even escaped), and lone surrogates (not encodable)
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml(value: object) -> str:
    """Text for SVG content or an attribute: escaped, forbidden characters as U+FFFD."""
    return html.escape(_FORBIDDEN.sub("\ufffd", str(value)), quote=True)


def text_width(text: str, size: float, bold: bool = False) -> float:
    """The width of ``text`` in points at ``size`` in DejaVu Sans (an estimate past its table)."""
    table = _BOLD if bold else _REGULAR
    total = 0
    for ch in text:
        code = ord(ch)
        if 32 <= code < 127:
            total += table[code - 32]
        elif ch in _OTHER:
            total += _OTHER[ch][bold]
        elif unicodedata.east_asian_width(ch) in ("W", "F"):
            total += 2048
        elif not unicodedata.combining(ch):
            total += 1430 if bold else 1300
    return total * size / 2048


def left_margin(ylabels: Sequence[str], ylabel: bool = True, tick: float = TICK,
                bold: Sequence[bool] = ()) -> float:
    """The width left of a box: the figure's pad, the axis label, tick labels and ticks."""
    width = max((text_width(t, TICK_SIZE, bool(bold) and bold[i])
                 for i, t in enumerate(ylabels)), default=0.0)
    return PAD + (LABEL_SIZE + TICK_PAD if ylabel else 0.0) + width + TICK_PAD + tick


def _f(value: float) -> str:
    """A coordinate: two decimals at most, no trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


# -- ticks -----------------------------------------------------------------------------------------
def autoscale(values: Sequence[np.ndarray | float], margin: float = 0.05,
              log: bool = False) -> tuple[float, float]:
    """The range of every finite value, widened by ``margin`` of it each side (in log10 space
    when ``log``; positive values only then). A single value gets a range around it."""
    parts = [np.ravel(np.asarray(v, dtype=np.float64)) for v in values]
    data = np.concatenate(parts) if parts else np.empty(0)
    data = data[np.isfinite(data) & ((data > 0) if log else True)]
    if log:
        data = np.log10(data)
    if data.size == 0:
        lo, hi = (0.0, 1.0)
    else:
        lo, hi = float(data.min()), float(data.max())
    if hi <= lo:
        half = 0.5 if log else max(abs(lo) * 0.05, 0.5)
        lo, hi = lo - half, hi + half
    pad = margin * (hi - lo)
    lo, hi = lo - pad, hi + pad
    return (10.0 ** lo, 10.0 ** hi) if log else (lo, hi)


def linear_ticks(lo: float, hi: float, length: float, size: float = TICK_SIZE,
                 vertical: bool = False) -> list[float]:
    """Round ticks inside [lo, hi]: steps 1, 2, 2.5 or 5 × 10ᵏ, as many as fit an axis of
    ``length`` points (a label every three font sizes across, two up), at most ten."""
    bins = int(min(9, max(2, length // (size * (2 if vertical else 3)))))
    span = hi - lo
    if not (math.isfinite(span) and span > 0):
        return [lo] if math.isfinite(lo) else []
    scale = 10.0 ** math.floor(math.log10(span / bins))
    for mantissa in (1, 2, 2.5, 5, 10, 20, 25, 50, 100):
        step = mantissa * scale
        # as matplotlib's MaxNLocator: the steps that enclose the range must be few enough
        if math.ceil(hi / step - 1e-9) - math.floor(lo / step + 1e-9) <= bins:
            first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
            return [k * step for k in range(first, last + 1)]
    return [lo, hi]  # pragma: no cover - 100 × scale always fits


def tick_labels(ticks: Sequence[float]) -> list[str]:
    """Labels with the decimals their spacing needs: ``0.20 0.25``, ``1,000 2,000``, ``−5``."""
    if not ticks:
        return []
    step = min((abs(b - a) for a, b in itertools.pairwise(ticks)), default=0.0)
    top = max(abs(t) for t in ticks)
    if top and (top >= 1e7 or (step and step < 1e-4)):
        return [(f"{t:.2g}" if t else "0").replace("-", "−") for t in ticks]
    decimals = 0
    if step:
        decimals = max(0, -math.floor(math.log10(step) + 1e-9))
        if abs(step / 10.0 ** -decimals - round(step / 10.0 ** -decimals)) > 1e-6:
            decimals += 1  # a step of 2.5 or 0.25 needs one more digit
    return [f"{0.0 if abs(t) < step * 1e-6 else t:,.{decimals}f}".replace("-", "−")
            for t in ticks]


def log_ticks(lo: float, hi: float) -> tuple[list[float], list[float]]:
    """(labelled, minor) ticks of a logarithmic axis over [lo, hi]: the powers of ten and, as
    minor ticks, 2–9 times each. Where fewer than two powers fall inside, 2 and 5 times them
    are labelled too (and every multiple, where that is still too few)."""
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    inside = [(m, m * 10.0 ** k) for k in range(first, last + 1) for m in range(1, 10)
              if lo <= m * 10.0 ** k <= hi]
    for labelled in ((1,), (1, 2, 5), tuple(range(1, 10))):
        major = [v for m, v in inside if m in labelled]
        if len(major) >= 2:
            return major, [v for _, v in inside if v not in major]
    return linear_ticks(lo, hi, 120.0, vertical=True), []  # less than one step of a decade


def log_label(value: float) -> str:
    """A tick label on a logarithmic axis: ``0.1``, ``10``, ``32.5``, ``10,000``, ``1e+06``."""
    if value >= 1e6:
        return f"{value:.0e}"
    return f"{value:,.0f}" if value >= 1 and value == round(value) else f"{value:g}"


# -- the canvas ------------------------------------------------------------------------------------
class Canvas:
    """An SVG picture ``width`` × ``height`` points on white; elements in the order added."""

    def __init__(self, width: float, height: float) -> None:
        self.width, self.height = width, height
        self.parts: list[str] = []
        self.clips = 0

    def add(self, element: str) -> None:
        self.parts.append(element)

    def text(self, x: float, y: float, text: str, size: float = TICK_SIZE, *,
             colour: str = TEXT, anchor: str = "start", bold: bool = False,
             rotate: bool = False) -> None:
        """``text`` with its baseline at ``y`` (``rotate``: reading upwards, baseline at
        ``x``), anchored at its ``start``, ``middle`` or ``end``."""
        attrs = f'x="{_f(x)}" y="{_f(y)}" font-size="{_f(size)}"'
        if rotate:
            attrs = f'transform="translate({_f(x)} {_f(y)}) rotate(-90)" font-size="{_f(size)}"'
        if anchor != "start":
            attrs += f' text-anchor="{anchor}"'
        if colour != TEXT:
            attrs += f' fill="{colour}"'
        if bold:
            attrs += ' font-weight="bold"'
        if "  " in text:
            attrs += ' xml:space="preserve"'
        self.parts.append(f"<text {attrs}>{xml(text)}</text>")

    def svg(self) -> str:
        w, h = _f(self.width), _f(self.height)
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}pt" height="{h}pt" '
                f'viewBox="0 0 {w} {h}" font-family="{FONT}" fill="{TEXT}">'
                f'<rect width="{w}" height="{h}" fill="#fff"/>' + "".join(self.parts) + "</svg>")


def _dash(style: str | None, width: float) -> str:
    """matplotlib's dash patterns, scaled by the line width."""
    if style == "--":
        return f' stroke-dasharray="{_f(3.7 * width)} {_f(1.6 * width)}"'
    if style == ":":
        return f' stroke-dasharray="{_f(width)} {_f(1.65 * width)}"'
    return ""


@dataclass(frozen=True)
class Entry:
    """One legend entry: a line (``dash``), a marker (``marker``), or both."""

    label: str
    colour: str
    line: bool = True
    marker: float = 0.0  # diameter, 0 for none
    width: float = 1.2
    dash: str | None = None
    opacity: float = 1.0


class Axes:
    """A plotting box on a canvas: data coordinates to points, and what is drawn in them."""

    def __init__(self, canvas: Canvas, box: tuple[float, float, float, float],
                 xlim: tuple[float, float], ylim: tuple[float, float], log_y: bool = False):
        self.canvas = canvas
        self.left, self.top, self.right, self.bottom = box
        self.xlim, self.ylim, self.log_y = xlim, ylim, log_y
        self.clip = f"c{canvas.clips}"
        canvas.clips += 1
        canvas.add(f'<clipPath id="{self.clip}"><rect x="{_f(self.left)}" y="{_f(self.top)}" '
                   f'width="{_f(self.right - self.left)}" '
                   f'height="{_f(self.bottom - self.top)}"/></clipPath>')
        self.vertices: list[tuple[np.ndarray, np.ndarray]] = []  # what a legend should avoid

    # coordinates
    def px(self, x: Values) -> np.ndarray:
        x0, x1 = self.xlim
        return np.asarray(self.left + (np.asarray(x, dtype=np.float64) - x0) / (x1 - x0)
                          * (self.right - self.left))

    def py(self, y: Values) -> np.ndarray:
        values = np.asarray(y, dtype=np.float64)
        y0, y1 = self.ylim
        if self.log_y:
            with np.errstate(divide="ignore", invalid="ignore"):
                values = np.log10(values)
            y0, y1 = math.log10(y0), math.log10(y1)
        return np.asarray(self.bottom - (values - y0) / (y1 - y0) * (self.bottom - self.top))

    def _clip(self, clip: bool) -> str:
        return f' clip-path="url(#{self.clip})"' if clip else ""

    # drawing
    def line(self, xs: Values, ys: Values,
             colour: str, width: float = 1.0, dash: str | None = None,
             opacity: float | None = None, clip: bool = True) -> None:
        """A polyline through the points (broken where a value is missing)."""
        px, py = self.px(xs), self.py(ys)
        self.vertices.append((px, py))
        pieces, move = [], True
        for x, y in zip(px.tolist(), py.tolist(), strict=True):
            if not (math.isfinite(x) and math.isfinite(y)):
                move = True
                continue
            pieces.append(f"{'M' if move else 'L'}{_f(x)} {_f(y)}")
            move = False
        if not pieces:
            return
        extra = _dash(dash, width) + (f' stroke-opacity="{opacity:g}"' if opacity else "")
        self.canvas.add(f'<path d="{"".join(pieces)}" fill="none" stroke="{colour}" '
                        f'stroke-width="{_f(width)}"{extra}{self._clip(clip)}/>')

    def circles(self, xs: Values, ys: Values,
                colour: str, diameter: float, edge: str | None = None, edge_width: float = 0.0,
                clip: bool = True) -> None:
        """Filled circles (``edge``: their outline's colour)."""
        px, py = self.px(xs), self.py(ys)
        self.vertices.append((px, py))
        outline = f' stroke="{edge}" stroke-width="{_f(edge_width)}"' if edge else ""
        dots = "".join(f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(diameter / 2)}"/>'
                       for x, y in zip(px.tolist(), py.tolist(), strict=True)
                       if math.isfinite(x) and math.isfinite(y))
        if dots:
            self.canvas.add(f'<g fill="{colour}"{outline}{self._clip(clip)}>{dots}</g>')

    def triangle(self, x: float, y: float, pointing: str, colour: str, size: float = 5.0) -> None:
        """A triangle marker of ``size`` points pointing ``<`` or ``>`` (not clipped)."""
        cx, cy = float(self.px(x)), float(self.py(y))
        h = size / 2
        tip = -h if pointing == "<" else h
        self.canvas.add(f'<path d="M{_f(cx + tip)} {_f(cy)}L{_f(cx - tip)} {_f(cy - h)}'
                        f'L{_f(cx - tip)} {_f(cy + h)}Z" fill="{colour}"/>')

    def span(self, low: float, high: float, colour: str, opacity: float,
             vertical: bool = True) -> None:
        """A shaded band from ``low`` to ``high`` across the box (x when ``vertical``)."""
        if vertical:
            a, b = sorted((float(self.px(low)), float(self.px(high))))
            a, b = max(a, self.left), min(b, self.right)
            rect = (a, self.top, b - a, self.bottom - self.top)
        else:
            a, b = sorted((float(self.py(low)), float(self.py(high))))
            a, b = max(a, self.top), min(b, self.bottom)
            rect = (self.left, a, self.right - self.left, b - a)
        if rect[2] > 0 and rect[3] > 0:
            x, y, w, h = (_f(v) for v in rect)
            self.canvas.add(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{colour}" '
                            f'fill-opacity="{opacity:g}"/>')

    def rule(self, value: float, colour: str, width: float, dash: str | None = None,
             vertical: bool = True, opacity: float | None = None) -> None:
        """A line across the box at ``value`` (an x when ``vertical``, else a y)."""
        if vertical:
            x = float(self.px(value))
            if not self.left - 0.01 <= x <= self.right + 0.01:
                return
            d = f"M{_f(x)} {_f(self.top)}V{_f(self.bottom)}"
        else:
            y = float(self.py(value))
            if not self.top - 0.01 <= y <= self.bottom + 0.01:
                return
            d = f"M{_f(self.left)} {_f(y)}H{_f(self.right)}"
            self.vertices.append((np.linspace(self.left, self.right, 40), np.full(40, y)))
        extra = _dash(dash, width) + (f' stroke-opacity="{opacity:g}"' if opacity else "")
        self.canvas.add(f'<path d="{d}" stroke="{colour}" stroke-width="{_f(width)}"{extra}/>')

    def cloud(self, xs: np.ndarray, ys: np.ndarray, groups: np.ndarray, colours: Sequence[str],
              diameter: float = 2.0, alpha: float = 0.55, density: float = 2.0) -> None:
        """Points as discs of ``diameter`` points, coloured by ``groups`` (indices into
        ``colours``, drawn in that order), composited with ``alpha`` into one PNG image of
        ``density`` pixels a point."""
        width = max(1, math.ceil((self.right - self.left) * density))
        height = max(1, math.ceil((self.bottom - self.top) * density))
        px = np.rint((self.px(xs) - self.left) * density).astype(np.int64)
        py = np.rint((self.py(ys) - self.top) * density).astype(np.int64)
        self.vertices.append((self.px(xs), self.py(ys)))
        offsets, cover = _disc(round(diameter * density / 2, 3))
        # per colour, the log of the light let through: a sum of ln(1 − alpha·coverage)
        through = np.zeros((len(colours), height * width))
        for g in range(len(colours)):
            mine = groups == g
            ox = px[mine][:, None] + offsets[:, 1][None, :]
            oy = py[mine][:, None] + offsets[:, 0][None, :]
            ok = (ox >= 0) & (ox < width) & (oy >= 0) & (oy < height)
            weights = np.broadcast_to(np.log1p(-alpha * cover)[None, :], ok.shape)[ok]
            through[g] = np.bincount((oy * width + ox)[ok], weights=weights,
                                     minlength=height * width)
        touched = np.flatnonzero(through.any(axis=0))
        light = np.exp(through[:, touched])
        premultiplied = np.zeros((touched.size, 3))
        kept = np.ones(touched.size)  # light through every colour drawn after this one
        for g in reversed(range(len(colours))):
            premultiplied += (kept * (1 - light[g]))[:, None] * _rgb(colours[g])[None, :]
            kept *= light[g]
        cover_all = 1 - kept  # > 0 wherever a point reaches
        pixels = np.zeros((height * width, 4), dtype=np.uint8)
        pixels[touched, :3] = np.rint(np.clip(premultiplied / cover_all[:, None], 0, 1) * 255)
        pixels[touched, 3] = np.rint(cover_all * 255)
        image = pixels.reshape(height, width, 4)
        uri = "data:image/png;base64," + base64.b64encode(_png(image)).decode("ascii")
        self.canvas.add(f'<image x="{_f(self.left)}" y="{_f(self.top)}" '
                        f'width="{_f(width / density)}" height="{_f(height / density)}" '
                        f'preserveAspectRatio="none" href="{uri}"/>')

    # the frame
    def frame(self, xticks: Sequence[float], xlabels: Sequence[str], yticks: Sequence[float],
              ylabels: Sequence[str], *, xlabel: str = "", ylabel: str = "",
              ytick_length: float = TICK, bold: Sequence[bool] = (),
              yminor: Sequence[float] = ()) -> None:
        """The left and bottom spines, ticks and their labels, and the axis labels."""
        c = self.canvas
        marks = [f"M{_f(x)} {_f(self.bottom)}v{_f(TICK)}" for x in self.px(xticks).tolist()]
        if ytick_length:
            marks += [f"M{_f(self.left)} {_f(y)}h{_f(-ytick_length)}"
                      for y in self.py(yticks).tolist()]
        marks += [f"M{_f(self.left)} {_f(y)}h{_f(-TICK / 2)}" for y in self.py(yminor).tolist()]
        c.add(f'<path d="M{_f(self.left)} {_f(self.top)}V{_f(self.bottom)}H{_f(self.right)}'
              f'{"".join(marks)}" fill="none" stroke="{EDGE}" stroke-width="0.8"/>')
        below = self.bottom + TICK + TICK_PAD + 0.76 * TICK_SIZE  # the tick labels' baseline
        for x, label in zip(self.px(xticks).tolist(), xlabels, strict=True):
            c.text(x, below, label, TICK_SIZE, anchor="middle")
        at = self.left - ytick_length - TICK_PAD
        for i, (y, label) in enumerate(zip(self.py(yticks).tolist(), ylabels, strict=True)):
            c.text(at, y + 0.36 * TICK_SIZE, label, TICK_SIZE, anchor="end",
                   bold=bool(bold) and bold[i])
        width = max((text_width(t, TICK_SIZE, bool(bold) and bold[i])
                     for i, t in enumerate(ylabels)), default=0.0)
        if xlabel:
            c.text((self.left + self.right) / 2,
                   below + 0.24 * TICK_SIZE + TICK_PAD + 0.76 * LABEL_SIZE, xlabel, LABEL_SIZE,
                   anchor="middle")
        if ylabel:
            c.text(at - width - TICK_PAD - 0.24 * LABEL_SIZE, (self.top + self.bottom) / 2,
                   ylabel, LABEL_SIZE, anchor="middle", rotate=True)

    def grid(self, ticks: Sequence[float], vertical: bool = True) -> None:
        """Light grid lines at ``ticks`` (x positions when ``vertical``)."""
        if vertical:
            d = "".join(f"M{_f(x)} {_f(self.top)}V{_f(self.bottom)}"
                        for x in self.px(ticks).tolist())
        else:
            d = "".join(f"M{_f(self.left)} {_f(y)}H{_f(self.right)}"
                        for y in self.py(ticks).tolist())
        if d:
            self.canvas.add(f'<path d="{d}" stroke="#d0d7de" stroke-width="0.5"/>')

    def title(self, lines: Sequence[str], colour: str = TEXT, size: float = TITLE_SIZE) -> None:
        """A title over the box, flush left, one or more lines."""
        y = self.top - 5.0 - 0.24 * size - 1.2 * size * (len(lines) - 1)
        for line in lines:
            self.canvas.text(self.left, y, line, size, colour=colour)
            y += 1.2 * size

    def legend(self, entries: Sequence[Entry], where: str = "best", size: float = 7.0,
               textpad: float = 0.8) -> None:
        """Entries stacked in a corner (``best``: the one covering the fewest drawn points)."""
        if not entries:
            return
        handle = 2.0 * size
        row = 1.25 * size
        width = handle + textpad * size + max(text_width(e.label, size) for e in entries)
        height = row * len(entries)
        pad = 0.5 * size
        spots = {
            "upper right": (self.right - pad - width, self.top + pad),
            "upper left": (self.left + pad, self.top + pad),
            "lower left": (self.left + pad, self.bottom - pad - height),
            "lower right": (self.right - pad - width, self.bottom - pad - height),
            "center left": (self.left + pad, (self.top + self.bottom - height) / 2),
            "center right": (self.right - pad - width, (self.top + self.bottom - height) / 2),
            "lower center": ((self.left + self.right - width) / 2, self.bottom - pad - height),
            "upper center": ((self.left + self.right - width) / 2, self.top + pad),
            "center": ((self.left + self.right - width) / 2, (self.top + self.bottom - height) / 2),
        }  # matplotlib's order: the first of equally good spots wins
        if where == "best":
            ox, oy = self._obstacles()

            def covered(spot: str) -> int:
                x, y = spots[spot]
                return int(np.count_nonzero((ox >= x) & (ox <= x + width)
                                            & (oy >= y) & (oy <= y + height)))

            where = min(spots, key=covered)
        x, y = spots[where]
        for i, e in enumerate(entries):
            middle = y + row * (i + 0.5)
            if e.line:
                extra = _dash(e.dash, e.width) + (f' stroke-opacity="{e.opacity:g}"'
                                                  if e.opacity < 1 else "")
                self.canvas.add(f'<path d="M{_f(x)} {_f(middle)}h{_f(handle)}" '
                                f'stroke="{e.colour}" stroke-width="{_f(e.width)}"{extra}/>')
            if e.marker:
                opacity = f' fill-opacity="{e.opacity:g}"' if e.opacity < 1 else ""
                self.canvas.add(f'<circle cx="{_f(x + handle / 2)}" cy="{_f(middle)}" '
                                f'r="{_f(e.marker / 2)}" fill="{e.colour}"{opacity}/>')
            self.canvas.text(x + handle + textpad * size, middle + 0.36 * size, e.label, size)

    def _obstacles(self) -> tuple[np.ndarray, np.ndarray]:
        """Every drawn point, and points along every drawn line (eight a segment)."""
        xs, ys = [], []
        step = np.linspace(0.0, 1.0, 8, endpoint=False)[None, :]
        for px, py in self.vertices:
            if 1 < px.size < 400:  # a line: along its segments too
                xs.append((px[:-1, None] + np.diff(px)[:, None] * step).ravel())
                ys.append((py[:-1, None] + np.diff(py)[:, None] * step).ravel())
            xs.append(px)
            ys.append(py)
        return (np.concatenate(xs), np.concatenate(ys)) if xs else (np.empty(0), np.empty(0))


def _rgb(colour: str) -> np.ndarray:
    return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=np.float64) / 255


@functools.lru_cache(maxsize=8)
def _disc(radius: float) -> tuple[np.ndarray, np.ndarray]:
    """(pixel offsets, coverage) of a disc of ``radius`` pixels centred on a pixel centre."""
    reach = math.ceil(radius + 0.5)
    sub = (np.arange(4) + 0.5) / 4 - 0.5  # 4 × 4 samples a pixel
    offsets, cover = [], []
    for dy in range(-reach, reach + 1):
        for dx in range(-reach, reach + 1):
            sy, sx = np.meshgrid(dy + sub, dx + sub)
            share = float(np.mean(sx ** 2 + sy ** 2 <= radius ** 2))
            if share > 0:
                offsets.append((dy, dx))
                cover.append(share)
    return np.asarray(offsets, dtype=np.int64), np.asarray(cover)


def _png(image: np.ndarray) -> bytes:
    """An RGBA image (height × width × 4, uint8) as PNG bytes (no filter, zlib level 6)."""
    height, width, _ = image.shape
    raw = np.zeros((height, 1 + 4 * width), dtype=np.uint8)
    raw[:, 1:] = image.reshape(height, 4 * width)

    def chunk(tag: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + chunk(b"IEND", b""))
