"""normtest: hypothesis tests for the squared-norm / information-content correspondence.

Importing ``normtest`` is light (numpy only); statistics, models and reports load on use.
``normtest.audit(model, **settings)`` audits a model and returns its report; ``normtest.load``
loads a model adapter.

The package is laid out by stage, each importing only those below it (docs/architecture.md):
``base`` → ``verdict`` → ``stats`` → ``geometry`` → ``adapters`` → ``models`` → ``data`` →
``claims`` → ``normtest.checks`` → ``scorecard`` → ``audit`` → ``gate`` → ``render`` →
``testing`` → ``cli`` and ``pytest``.
"""

from __future__ import annotations

import types
from typing import Any

import normtest.audit as audit  # its package's docstring only: light
from normtest.base.version import VERSION as __version__
from normtest.errors import NormtestError

__all__ = ["NormtestError", "__version__", "audit", "compare", "load", "plan"]


def load(name_or_path: str, kind: str | None = None, **options: Any) -> Any:
    """Load a model adapter by embedded name, local path or hub id
    (see :mod:`normtest.models.registry`)."""
    from normtest.models.registry import load as _load

    return _load(name_or_path, kind, **options)


def compare(models: Any, **options: Any) -> Any:
    """Audit several models on one sample and compare them, as ``normtest compare`` does
    (:func:`normtest.audit.api.compare`)."""
    from normtest.audit.api import compare as run

    return run(models, **options)


def plan(model: Any, **options: Any) -> Any:
    """A pilot audit and the sample each hypothesis needs, as ``normtest plan`` does
    (:func:`normtest.audit.api.plan`)."""
    from normtest.audit.api import plan as run

    return run(model, **options)


class _CallableAudit(types.ModuleType):
    """The ``normtest.audit`` package, callable as the one-call API: ``normtest.audit(model,
    **settings)`` is :func:`normtest.audit.api.audit` (imported when called)."""

    def __call__(self, model: Any, **options: Any) -> Any:
        from normtest.audit.api import audit as run

        return run(model, **options)


audit.__class__ = _CallableAudit


def __dir__() -> list[str]:
    """The public names only (``dir(normtest)``)."""
    return sorted(__all__)
