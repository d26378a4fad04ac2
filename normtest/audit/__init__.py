"""The audit stage: run the catalogue on a model and keep what it found.

``run`` (``run_audit``, ``AuditSettings``), ``report`` (the report and its digest),
``report_schema``, ``several_models`` (one audit per model), ``sequential`` (stopping early when the
verdict is settled), ``compare`` (two reports, or two models, side by side), ``explain`` (why a row
or line reads as it does), ``selection`` and ``samples`` (which claims, and which sample a report
measured) and ``demo`` (the engine on synthetic models with a known truth).
"""
