"""The scorecard: a report's rows read as one line per claim.

``lines`` (the lines and their status, ``build``), ``power`` (what a line could detect),
``robustness`` (the line over analyses and samples) and ``controls`` (the line's planted
controls, judged).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from normtest.base.lazy import lazy_exports

_EXPORTS = {
    "normtest.scorecard.lines": (
        "STATUSES", "Reading", "Line", "beyond_words", "beyond_reading", "decide_line",
        "sensitivity", "build", "counts", "titles_of",
    ),
}

__getattr__, __dir__ = lazy_exports(
    __name__, _EXPORTS, fallback="normtest.scorecard.lines",
    renamed={"decide": ("normtest.scorecard.lines", "decide_line")})

if TYPE_CHECKING:  # what the names above are, for type checkers
    from normtest.scorecard.lines import (
        STATUSES,
        Line,
        Reading,
        beyond_reading,
        beyond_words,
        build,
        counts,
        decide_line,
        sensitivity,
        titles_of,
    )


__all__ = ["STATUSES", "Line", "Reading", "beyond_reading", "beyond_words", "build", "counts",
           "decide_line", "sensitivity", "titles_of"]
