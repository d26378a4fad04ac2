"""Re-judging a stored report under other thresholds (``--threshold CLAIM=VALUE``)::

    from normtest.render.thresholds import with_thresholds

    with_thresholds(report, ["word.norm_ic=0.5", "cer.linear=0.8:1.25"])   # re-judged copy
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from normtest.errors import NormtestError

if TYPE_CHECKING:
    from normtest.audit.report import Report


def parse_threshold(spec: str) -> tuple[str, float | tuple[float, float]]:
    """``CLAIM=VALUE`` (a one-sided threshold) or ``CLAIM=LOW:HIGH`` (an equivalence margin)."""
    claim, sep, value = spec.partition("=")
    claim, value = claim.strip(), value.strip()
    if not sep or not claim or not value:
        raise NormtestError(
            f"--threshold {spec!r}: write CLAIM=VALUE (e.g. word.norm_ic=0.5) or CLAIM=LOW:HIGH "
            "for an equivalence margin (e.g. cer.linear=0.8:1.25)"
        )
    try:
        if ":" in value:
            low_text, high_text = value.split(":", 1)
            low, high = float(low_text), float(high_text)
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise ValueError(value)
            return claim, (low, high)
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(value)
        return claim, number
    except ValueError:
        raise NormtestError(
            f"--threshold {spec!r}: {value!r} is not a finite number nor a margin LOW:HIGH with "
            "LOW < HIGH"
        ) from None


def with_thresholds(report: Report, specs: Sequence[str]) -> Report:
    """A copy of ``report`` re-judged under new thresholds, Holm again within each family.

    ``specs`` are ``CLAIM=VALUE`` or ``CLAIM=LOW:HIGH`` (see :meth:`Report.with_thresholds`).
    """
    parsed = dict(parse_threshold(s) for s in specs)
    if parsed and report.slim_note:
        raise NormtestError(f"--threshold: {report.slim_note} cannot be re-judged; re-judge the "
                            "full report it was made from")
    try:
        return report.with_thresholds(parsed)
    except NormtestError as exc:
        raise NormtestError(
            f"--threshold: {exc} (write CLAIM=VALUE for one threshold, e.g. word.norm_ic=0.5, "
            "or CLAIM=LOW:HIGH for a margin, e.g. cer.linear=0.8:1.25)"
        ) from exc
