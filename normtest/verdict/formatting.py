"""The numbers, intervals and thresholds every rendering writes — the terminal, Markdown, HTML,
the scorecard's reasons, a failing check's message and the JUnit properties — formatted one way.

:func:`number` is the one number formatter (three significant digits, a true minus sign, — when
missing; ``digits`` and ``minus`` for the few places that need more digits or ASCII);
:func:`threshold` the one threshold formatter; the variant key is
:func:`normtest.verdict.result.variant_key`."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from normtest.verdict.result import Result

__all__ = ["MISSING", "beside", "bounds", "general", "interval", "number", "stored_bounds",
           "threshold"]

#: What a missing or non-finite number is written as.
MISSING = "—"


def number(value: Any, digits: int = 3, minus: str = "−") -> str:
    """``digits`` significant digits with ``minus`` as the minus sign (a true minus by default;
    ``"-"`` where the text is grepped or parsed), and — for a missing or non-finite value."""
    if value is None or isinstance(value, bool):
        return MISSING
    try:
        x = float(value)
    except (TypeError, ValueError):
        return MISSING
    if not math.isfinite(x):
        return MISSING
    return f"{x:.{digits}g}".replace("-", minus)


def general(value: float) -> str:
    """A threshold as it was declared (``%g``: 0.3, 1e-05), for machine-read text."""
    return f"{value:g}"


def bounds(pair: tuple[float, float], digits: Callable[[Any], str] = number) -> str:
    """``[low, high]``, or — when an end is missing."""
    low, high = pair
    if not (math.isfinite(low) and math.isfinite(high)):
        return MISSING
    return f"[{digits(low)}, {digits(high)}]"


def interval(result: Result) -> str:
    """``[low, high]`` of the result's two-sided interval, or — when there is none."""
    return bounds(result.ci)


def threshold(result: Result, digits: Callable[[Any], str] = number, bare: bool = False) -> str:
    """``> 0.3``, ``< 0.5`` or ``inside [0.5, 2]``; — without a criterion. ``digits`` writes
    the numbers (default :func:`number`); ``bare`` leaves out the direction (``0.3``,
    ``[0.5, 2]``; empty without a criterion), for a value another field qualifies."""
    t, c = result.threshold, result.criterion
    if t is None or c is None:
        return "" if bare else MISSING
    if isinstance(t, tuple):
        inside = f"[{digits(t[0])}, {digits(t[1])}]"
        return inside if bare else f"inside {inside}"
    if bare:
        return digits(t)
    return f"{'>' if c.direction == 'greater' else '<'} {digits(t)}"


#: How a beyond contrast of two compositions that rank every stratum alike reads: no
#: difference to measure (:func:`normtest.stats.baseline.measure_baseline_contrast`).
BY_IDENTITY = "0 by identity"


#: The readings beside a row that declares a baseline, in the order a table shows them, with the
#: heading each takes: ρ(information, baseline); the paired difference ρ(information, norm) −
#: ρ(information, baseline); the within-strata ρ (the beyond reading, judged); the partial
#: ρ(norm, baseline | information) (the artefact reading).
BESIDE: tuple[tuple[str, str], ...] = (
    ("baseline", "baseline ρ"), ("difference", "ρ − baseline ρ"),
    ("beyond", "beyond baseline"), ("artefact", "ρ(norm, baseline | IC)"))


def beside(result: Result, part: str, digits: Callable[[Any], str] = number) -> str:
    """A row's ``baseline``, ``difference``, ``beyond`` or ``artefact`` component as one cell:
    ``0.749 [0.74, 0.758]``; the difference says which predicts the information better where its
    interval excludes 0 (``-0.27 [-0.3, -0.24] baseline better``); the beyond one its verdict,
    the threshold it was held to and, for a few strata, each stratum's ρ (``0.22 [0.197, 0.241]
    INCONCLUSIVE (> 0.208; by stratum 1: 0.298, 2: 0.004)``), for texts each source's and the
    within-document reading; — where the row has none."""
    m = None if result.measurement is None else result.measurement.components.get(part)
    if m is None:
        return MISSING
    alpha = result.criterion.alpha if result.criterion is not None else 0.05
    low, high = m.interval(1 - 2 * alpha)
    text = f"{digits(m.estimate)} {bounds((low, high), digits)}" if m.sampling is not None \
        else f"{MISSING} ({m.reason or 'not estimable'})" if part == "baseline" else MISSING
    if part == "difference" and m.sampling is not None:
        text += " baseline better" if high < 0 else " norm better" if low > 0 else ""
    if part == "beyond":
        if m.sampling is None and m.reason and BY_IDENTITY in m.reason:
            return f"{BY_IDENTITY} (one composition within every stratum)"
        judged = result.details.get("beyond")
        verdict = judged.get("verdict") if isinstance(judged, dict) else None
        held = judged.get("threshold") if isinstance(judged, dict) else None
        text += f" {verdict}" if verdict else ""
        notes = [f"> {digits(held)}"] if isinstance(held, int | float) else []
        strata = m.settings.get("strata") if isinstance(m.settings, dict) else None
        if isinstance(strata, list) and 1 < len(strata) <= 6:
            notes.append("by stratum " + ", ".join(
                f"{s.get('baseline')}: "
                f"{MISSING if s.get('rho') is None else digits(s.get('rho'))}" for s in strata
                if isinstance(s, dict)))
        sources = m.settings.get("by_source") if isinstance(m.settings, dict) else None
        if isinstance(sources, list) and len(sources) > 1:
            notes.append("by source " + ", ".join(
                f"{s.get('source')}: "
                f"{MISSING if s.get('rho') is None else digits(s.get('rho'))}" for s in sources
                if isinstance(s, dict)))
        within = result.measurement.components.get("within_documents") \
            if result.measurement is not None else None
        if within is not None and within.sampling is not None:
            notes.append(f"within documents {digits(within.estimate)} "
                         f"{bounds(within.interval(1 - 2 * alpha), digits)}")
        text += f" ({'; '.join(notes)})" if notes else ""
    return text


def stored_bounds(ci: Any) -> str:
    """``[low, high]`` of an interval as a report stores it (a list of two numbers or nulls),
    or — when an end is missing."""
    if not isinstance(ci, list | tuple) or len(ci) != 2:
        return MISSING
    ends = [math.nan if v is None else float(v) for v in ci]
    return bounds((ends[0], ends[1]))
