"""Model adapters: the protocol models implement (light: imports numpy only, never torch)."""

from __future__ import annotations

from normtest.adapters.protocol import (
    CAPABILITY_METHODS,
    Capability,
    Layer,
    LogProbModel,
    ModelAdapter,
    PrefixVectorModel,
    SpecialStateModel,
    TextVectorModel,
    TokenBatch,
    Tokenization,
    TokenVectorModel,
    WordVectorModel,
    check_layer,
    require,
    supports,
)

__all__ = [
    "CAPABILITY_METHODS",
    "Capability",
    "Layer",
    "LogProbModel",
    "ModelAdapter",
    "PrefixVectorModel",
    "SpecialStateModel",
    "TextVectorModel",
    "TokenBatch",
    "TokenVectorModel",
    "Tokenization",
    "WordVectorModel",
    "check_layer",
    "require",
    "supports",
]
