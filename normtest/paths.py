"""Where normtest keeps what it caches: the cache root and the variable that moves it.

The root holds the embedding database (:mod:`normtest.cache`) and SmolLM2's float32 copy
(``<root>/models/``). It is ``$NORMTEST_CACHE_DIR`` when set, otherwise the user's cache
directory for normtest (``~/.cache/normtest`` on Linux). This module imports nothing from
normtest, so the cache and the model adapters can both use it without importing each other.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CACHE_ENV", "default_cache_dir"]

CACHE_ENV = "NORMTEST_CACHE_DIR"


def default_cache_dir() -> Path:
    """``$NORMTEST_CACHE_DIR``, else the platform's user cache directory for normtest."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    try:
        from platformdirs import user_cache_dir

        return Path(user_cache_dir("normtest"))
    except ImportError:  # pragma: no cover - platformdirs is a core dependency
        return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "normtest"
