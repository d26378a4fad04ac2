"""normtest: hypothesis tests for the squared-norm / information-content correspondence.

Importing ``normtest`` is light (numpy only); statistics, models and reports load on use.
"""

from __future__ import annotations

from typing import Any

from normtest.errors import NormtestError

__version__ = "0.1.0"

__all__ = ["NormtestError", "__version__", "load"]


def load(name_or_path: str, kind: str | None = None, **options: Any) -> Any:
    """Load a model adapter by embedded name, local path or hub id (see :mod:`normtest.models`)."""
    from normtest.models import load as _load

    return _load(name_or_path, kind, **options)
