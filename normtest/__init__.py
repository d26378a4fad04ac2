"""normtest: hypothesis tests for the squared-norm / information-content correspondence.

Importing ``normtest`` is light (numpy only); statistics, models and reports load on use.
"""

from __future__ import annotations

from normtest.errors import NormtestError

__version__ = "0.1.0"

__all__ = ["NormtestError", "__version__"]
