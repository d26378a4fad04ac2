"""Many models in one command: ``normtest audit --model A --model B ...``.

Each model is audited on its own — its own sample draws, its own report folder — one after the
other with ``executor = "local"``, or each as its own Ray task with ``executor = "ray"`` (the
task loads the model and runs its audit in one worker process; the cluster runs several at
once). A Ray task's report is the report a local audit gives: the same code runs in it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from normtest.audit.report import Report
from normtest.audit.run import run_audit
from normtest.base.settings import audit_settings
from normtest.claims.loading import load_checks_of
from normtest.models.ray import connect, unwrap
from normtest.models.registry import load, load_options

__all__ = ["audit_models"]


def audit_one(spec: str, values: Mapping[str, Any], claims: Sequence[str] | None,
              suite: str) -> Report:
    """One model's audit, with every setting but the executor (the model is the unit)."""

    load_checks_of(values)
    adapter = load(spec, **load_options(spec, values))
    settings = audit_settings({**values, "executor": "local"})
    return run_audit(adapter, claim_ids=claims, suite=suite, settings=settings)


def _audit_json(spec: str, values: Mapping[str, Any], claims: Sequence[str] | None,
                suite: str) -> str:
    """:func:`audit_one` as JSON: what a Ray task sends back to the driver."""
    return audit_one(spec, values, claims, suite).to_json()


def audit_models(specs: Sequence[str], values: Mapping[str, Any],
                 claims: Sequence[str] | None = None, suite: str = "all") -> list[Report]:
    """Audit each model of ``specs`` (reports in the order given): one after the other, or as
    Ray tasks when ``values["executor"] == "ray"``."""
    chosen = list(claims) if claims else None
    if values.get("executor") != "ray":
        return [audit_one(spec, values, chosen, suite) for spec in specs]

    ray = connect(values.get("ray_address"), values.get("workers"))
    task = ray.remote(num_cpus=1)(_audit_json)
    futures = [task.remote(spec, dict(values), chosen, suite) for spec in specs]
    return [Report.from_json(unwrap(ray, lambda f=future: ray.get(f))) for future in futures]
