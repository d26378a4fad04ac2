"""normtest: hypothesis tests for the squared-norm / information-content correspondence.

Importing ``normtest`` is light (numpy only); statistics, models and reports load on use.

The package is laid out by stage, each importing only those below it (docs/architecture.md):
``base`` → ``verdict`` → ``stats`` → ``geometry`` → ``adapters`` → ``models`` → ``data`` →
``claims`` → ``normtest.checks`` → ``scorecard`` → ``audit`` → ``gate`` → ``render`` →
``testing`` → ``cli`` and ``pytest``.
"""

from __future__ import annotations

from typing import Any

from normtest.base.version import VERSION as __version__
from normtest.errors import NormtestError

__all__ = ["NormtestError", "__version__", "load"]


def load(name_or_path: str, kind: str | None = None, **options: Any) -> Any:
    """Load a model adapter by embedded name, local path or hub id
    (see :mod:`normtest.models.registry`)."""
    from normtest.models.registry import load as _load

    return _load(name_or_path, kind, **options)
