"""The audit stage: run the catalogue on a model and keep what it found.

``run`` (``run_audit``, ``AuditSettings``), ``report`` (the report and its digest),
``report_schema``, ``several_models`` (one audit per model), ``sequential`` (stopping early when the
verdict is settled), ``compare`` (two reports, or two models, side by side), ``explain`` (why a row
or line reads as it does), ``selection`` and ``samples`` (which claims, and which sample a report
measured) and ``demo`` (the engine on synthetic models with a known truth).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from normtest.base.lazy import lazy_exports

_EXPORTS = {
    "normtest.audit.run": (
        "SCOPES", "AuditSettings", "applicable_axes", "plot_data", "run_audit", "skip_reason",
        "variant_key", "variants",
    ),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, fallback="normtest.audit.run")

if TYPE_CHECKING:  # what the names above are, for type checkers
    from normtest.audit.run import (
        SCOPES,
        AuditSettings,
        applicable_axes,
        plot_data,
        run_audit,
        skip_reason,
        variant_key,
        variants,
    )


__all__ = ["SCOPES", "AuditSettings", "applicable_axes", "plot_data", "run_audit", "skip_reason",
           "variant_key", "variants"]
