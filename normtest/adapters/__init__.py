"""Model adapters: the protocol models implement (light: imports numpy only, never torch)."""

from __future__ import annotations

from normtest.adapters.protocol import (
    CAPABILITY_METHODS,
    Capability,
    ModelAdapter,
    TokenVectorModel,
    WordVectorModel,
    require,
    supports,
)

__all__ = [
    "CAPABILITY_METHODS",
    "Capability",
    "ModelAdapter",
    "TokenVectorModel",
    "WordVectorModel",
    "require",
    "supports",
]
