"""The specification curve of a scorecard line (Simonsohn, Simmons & Nelson 2020), as SVG.

One column per specification of the line (:mod:`normtest.scorecard.robustness`), in one order for
every part of the figure: the line's status under it (a strip of coloured cells, the audit's own
specification marked), then one panel per deciding row — its estimate (dot) and interval (bar) under
each specification, coloured by verdict, the stated threshold or margin dashed — and beneath, the
matrix of choices: a dot where the specification takes that value. Columns are sorted by status (the
headline's first), then by the first row's estimate, so the specifications that flip the line stand
together.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from normtest.errors import NormtestError
from normtest.render import canvas
from normtest.render.canvas import EDGE
from normtest.render.plots import COLOURS

__all__ = ["STATUS_COLOURS", "specification_curve"]

#: A line's status, coloured as the verdict that makes it.
STATUS_COLOURS = {"replicated": COLOURS["PASS"], "contradicted": COLOURS["FAIL"],
                  "undecided": COLOURS["INCONCLUSIVE"], "not tested": COLOURS["SKIPPED"],
                  "invalid": COLOURS["ERROR"]}
PANEL = 58.0  # the height of one row's panel
GAP = 14.0  # between panels (a panel's name sits in it)
CELL = 7.0  # the height of a status cell and of a matrix row
LABEL = 7.0


def _order(robustness: Any) -> list[int]:
    """Column order: the headline's status first, then by the first row's estimate."""
    def key(i: int) -> tuple[int, float]:
        spec = robustness.specifications[i]
        first = spec.rows[0].get("estimate") if spec.rows else None
        value = float(first) if isinstance(first, int | float) else math.inf
        return (0 if spec.status == robustness.status else 1, value)

    return sorted(range(len(robustness.specifications)), key=key)


def specification_curve(robustness: Any) -> str:
    """The figure of one line's :class:`~normtest.scorecard.robustness.LineRobustness`
    (module doc)."""
    specs = robustness.specifications
    if not specs:
        raise NormtestError(f"no specification of line {robustness.line!r} was assessed")
    order = _order(robustness)
    n = len(order)
    reference = dict(robustness.reference)
    own = next((s for s in specs if dict(s.choices) == reference), specs[0])
    # one panel per deciding row, named by its id under the audit's own specification
    panels = {int(r.get("row", k)): str(r.get("of", r["id"])) for k, r in enumerate(own.rows)}
    choices: dict[str, list[str]] = {}
    for s in specs:
        for name, value in s.choices.items():
            values = choices.setdefault(name, [])
            if value not in values:
                values.append(value)
    matrix = [(name, value) for name, values in choices.items() for value in values]
    labels = [f"{name}={value}" for name, value in matrix] + ["line status"]
    left = canvas.left_margin(labels, ylabel=False, tick=0.0) + 8.0
    width = max(576.0, left + 3.2 * n + 40.0)
    height = (canvas.PAD + 12.0 + CELL + 8.0 + len(panels) * (PANEL + GAP)
              + len(matrix) * CELL + 32.0 + canvas.PAD)
    picture = canvas.Canvas(width, height)
    right = width - canvas.PAD - 8.0
    step = (right - left) / max(n, 1)
    xs = left + step * (np.arange(n) + 0.5)
    top = canvas.PAD + 10.0
    picture.text(left, top - 2.0, f"{robustness.line}: {robustness.short()}", LABEL + 1,
                 bold=True)
    # the status strip
    y = top + 4.0
    for column, i in enumerate(order):
        spec = specs[i]
        colour = STATUS_COLOURS.get(spec.status, EDGE)
        x = left + step * column
        picture.add(f'<rect x="{x:.2f}" y="{y:.2f}" width="{max(step - 0.6, 0.6):.2f}" '
                    f'height="{CELL:.2f}" fill="{colour}"/>')
        if dict(spec.choices) == reference:
            picture.add(f'<rect x="{x - 0.6:.2f}" y="{y - 1.4:.2f}" width="{step + 0.6:.2f}" '
                        f'height="{CELL + 2.8:.2f}" fill="none" stroke="#24292f" '
                        'stroke-width="1.2"/>')
    picture.text(left - 4.0, y + CELL - 1.0, "line status", LABEL, anchor="end")
    y += CELL + GAP
    for position, name in panels.items():
        threshold = next((r.get("threshold") for r in own.rows
                          if int(r.get("row", -1)) == position), None)
        _panel(picture, position, name, threshold, [specs[i] for i in order], xs,
               (left, y, right, y + PANEL))
        y += PANEL + GAP
    # the matrix of choices
    for r, (name, value) in enumerate(matrix):
        cy = y + CELL * r + CELL / 2
        ours = reference.get(name) == value
        picture.text(left - 4.0, cy + 0.36 * LABEL, f"{name}={value}", LABEL, anchor="end",
                     bold=ours)
        picture.add(f'<path d="M{left:.2f} {cy:.2f}H{right:.2f}" stroke="#eaeef2" '
                    'stroke-width="0.6"/>')
        taken = [xs[c] for c, i in enumerate(order) if specs[i].choices.get(name) == value]
        if taken:
            dots = "".join(f'<circle cx="{x:.2f}" cy="{cy:.2f}" r="1.5"/>' for x in taken)
            picture.add(f'<g fill="#24292f">{dots}</g>')
    y += CELL * len(matrix) + 12.0
    legend = "; ".join(f"{status}" for status in STATUS_COLOURS if any(
        s.status == status for s in specs))
    picture.text(left, y, f"{n} specifications (columns), the audit's own boxed; status: "
                 f"{legend}", LABEL)
    return picture.svg()


def _short(row_id: str) -> str:
    """A row id without the axes every deciding row shares at the reference."""
    return row_id.replace(",representation=last", "").replace("[representation=last,", "[") \
        .replace("[representation=last]", "")


def _panel(picture: canvas.Canvas, position: int, name: str, threshold: Any,
           specs: Sequence[Any], xs: np.ndarray, box: tuple[float, float, float, float]) -> None:
    """One deciding row's estimates and intervals across the specifications (in column
    order), with the threshold or margin the audit's own specification held it to."""
    rows: list[Mapping[str, Any] | None] = [
        next((r for r in s.rows if int(r.get("row", -1)) == position), None) for s in specs]
    values = [v for r in rows if r is not None for v in (r.get("estimate"),)
              if isinstance(v, int | float)]
    marks = list(threshold) if isinstance(threshold, list) else (
        [threshold] if isinstance(threshold, int | float) else [])
    if not values:
        picture.text(box[0], (box[1] + box[3]) / 2, f"{_short(name)}: not estimated", LABEL)
        return
    # the range of the estimates and the threshold, widened by half: an interval reaching
    # beyond it is cut at the edge (a ratio's can be thousands wide where it is unstable)
    low, high = canvas.autoscale([np.array(values + marks, dtype=np.float64)], margin=0.5)
    left, top, right, bottom = box
    ax = canvas.Axes(picture, (left, top, right, bottom), (0.0, 1.0), (low, high))
    ticks = canvas.linear_ticks(low, high, bottom - top, vertical=True)
    for mark in marks:
        ax.rule(float(mark), EDGE, 0.8, "--", vertical=False)
    width = float(xs[1] - xs[0]) if len(xs) > 1 else 4.0
    fraction = (xs - left) / (right - left)
    for x, r in zip(fraction, rows, strict=True):
        if r is None:
            continue
        colour = COLOURS.get(str(r.get("verdict")), EDGE)
        ci = r.get("ci") or [None, None]
        if all(isinstance(v, int | float) for v in ci):
            ax.line([x, x], [max(ci[0], low), min(ci[1], high)], colour,
                    min(max(width * 0.3, 0.8), 2.5))
        estimate = r.get("estimate")
        if isinstance(estimate, int | float):
            ax.circles([x], [estimate], colour, 3.0, edge="#fff", edge_width=0.5)
    ax.frame([], [], ticks, canvas.tick_labels(ticks), ytick_length=canvas.TICK)
    picture.text(left, top - 2.5, _short(name), LABEL, bold=True)
