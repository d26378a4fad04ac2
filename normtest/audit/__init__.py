"""The audit stage: run the catalogue on a model and keep what it found.

``run`` (``run_audit``, ``AuditSettings``), ``api`` (:func:`normtest.audit.api.audit`, the
one-call Python API, which ``normtest.audit(model)`` calls), ``report`` (the report and its
digest), ``report_schema``, ``several_models`` (one audit per model), ``sequential`` (stopping
early when the verdict is settled), ``compare`` (two reports, or two models, side by side),
``explain`` and ``explain_report`` (how a line is decided, and why a report's line came out so),
``next_steps`` (what would decide an undecided line), ``selection`` and ``samples`` (which
claims, and which sample a report measured) and ``demo`` (the engine on synthetic models with a
known truth).
"""
