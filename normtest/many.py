"""Many models in one command: ``normtest audit --model A --model B ...``.

Each model is audited on its own — its own sample draws, its own report folder — one after the
other with ``executor = "local"``, or each as its own Ray task with ``executor = "ray"`` (the
task loads the model and runs its audit in one worker process; the cluster runs several at
once). A Ray task's report is the report a local audit gives: the same code runs in it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from normtest.report import Report

__all__ = ["audit_models"]


def audit_one(spec: str, values: Mapping[str, Any], claims: Sequence[str] | None,
              suite: str) -> Report:
    """One model's audit, with every setting but the executor (the model is the unit)."""
    from normtest.audit import run_audit
    from normtest.models import load
    from normtest.settings import audit_settings, load_checks_of, load_options

    load_checks_of(values)
    adapter = load(spec, **load_options(spec, values))
    settings = audit_settings({**values, "executor": "local"})
    return run_audit(adapter, claim_ids=claims, suite=suite, settings=settings)


def _audit_json(spec: str, values: Mapping[str, Any], claims: Sequence[str] | None,
                suite: str) -> str:
    """:func:`audit_one` as JSON: what a Ray task sends back to the driver."""
    return audit_one(spec, values, claims, suite).to_json()


def audit_models(specs: Sequence[str], values: Mapping[str, Any],
                 claims: Sequence[str] | None = None, suite: str = "all",
                 on_report: Callable[[str, Report], None] | None = None) -> list[Report]:
    """Audit each model of ``specs``: one after the other, or as Ray tasks when
    ``values["executor"] == "ray"``. ``on_report(spec, report)`` is called for each, in the
    order given, as soon as its report is in."""
    chosen = list(claims) if claims else None
    reports = []
    if values.get("executor") == "ray":
        from normtest.ray_extraction import connect, unwrap

        ray = connect(values.get("ray_address"), values.get("workers"))
        task = ray.remote(num_cpus=1)(_audit_json)
        futures = [task.remote(spec, dict(values), chosen, suite) for spec in specs]
        for spec, future in zip(specs, futures, strict=True):
            report = Report.from_json(unwrap(ray, lambda f=future: ray.get(f)))
            if on_report is not None:
                on_report(spec, report)
            reports.append(report)
        return reports
    for spec in specs:
        report = audit_one(spec, values, chosen, suite)
        if on_report is not None:
            on_report(spec, report)
        reports.append(report)
    return reports
