"""The small protocol every model adapter implements (structural typing, no inheritance).

A model declares what it can produce as a set of :class:`Capability` values and implements the
methods that go with them (:data:`CAPABILITY_METHODS`). Claims ask :func:`supports` or
:func:`require` before they measure, so a model without a capability is skipped with a reason, never
crashed into. Real models (transformers encoders and decoders, static vectors) and the synthetic
reference models of :mod:`normtest.synthetic` speak the same protocol.

Naming, so later capabilities extend it without renaming: ``word_*`` methods take words, ``token_*``
methods take a word or a text and return one row per model token, every vector method returns a
float ``(rows, dim)`` array. Capabilities without a method protocol here (``SPECIAL_STATES`` for
``cls``/``eos`` states, ``PREFIX_VECTORS``, ``TOKEN_LOGPROBS``, and a representation such as the
``input`` embeddings or a hidden ``layer``) are declared now and receive their methods with the
transformers adapters.

Importing this module imports numpy only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from types import MappingProxyType
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from normtest.errors import NormtestError

__all__ = [
    "CAPABILITY_METHODS",
    "Capability",
    "ModelAdapter",
    "TokenVectorModel",
    "WordVectorModel",
    "require",
    "supports",
]


class Capability(StrEnum):
    """What a model can produce; a model declares the set it supports."""

    WORD_VECTORS = "word_vectors"  # one vector per word, looked up whole (static or synthetic)
    WORD_TOKENS = "word_tokens"  # a word's split into the model's subword tokens
    TOKEN_VECTORS = "token_vectors"  # one vector per model token of a word or text
    SPECIAL_STATES = "special_states"  # the cls / eos states of a text
    PREFIX_VECTORS = "prefix_vectors"  # vectors of every prefix of a text
    TOKEN_LOGPROBS = "token_logprobs"  # log P(t_i | t_<i) of each token of a text (causal LMs)


@runtime_checkable
class ModelAdapter(Protocol):
    """Identity and declared capabilities: what every model offers."""

    @property
    def name(self) -> str:
        """Short model name used in results, e.g. ``glove-6b-50d`` or ``oracle``."""
        ...

    @property
    def revision(self) -> str:
        """Revision, file hash or generating parameters: part of every cache key."""
        ...

    @property
    def capabilities(self) -> frozenset[Capability]:
        """The capabilities this model supports."""
        ...


@runtime_checkable
class WordVectorModel(ModelAdapter, Protocol):
    """A model with ``Capability.WORD_VECTORS``."""

    def word_vectors(self, words: Sequence[str]) -> NDArray[np.floating]:
        """Vectors of the given words, one row each: shape (len(words), dim)."""
        ...


@runtime_checkable
class TokenVectorModel(ModelAdapter, Protocol):
    """A model with ``Capability.WORD_TOKENS`` and ``Capability.TOKEN_VECTORS``."""

    def word_tokens(self, word: str) -> list[str]:
        """The model's subword tokens of one word, in order."""
        ...

    def token_vectors(self, text: str) -> NDArray[np.floating]:
        """Vectors of the model tokens of a word or text, one row per token: (n_tokens, dim)."""
        ...


#: The methods a model must have for each capability it declares (empty: added by later adapters).
CAPABILITY_METHODS: Mapping[Capability, tuple[str, ...]] = MappingProxyType(
    {
        Capability.WORD_VECTORS: ("word_vectors",),
        Capability.WORD_TOKENS: ("word_tokens",),
        Capability.TOKEN_VECTORS: ("token_vectors",),
        Capability.SPECIAL_STATES: (),
        Capability.PREFIX_VECTORS: (),
        Capability.TOKEN_LOGPROBS: (),
    }
)


def supports(model: object, capability: Capability | str) -> bool:
    """Whether ``model`` declares ``capability`` and has the methods it needs."""
    cap = Capability(capability)
    if not isinstance(model, ModelAdapter) or cap not in model.capabilities:
        return False
    return all(callable(getattr(model, m, None)) for m in CAPABILITY_METHODS[cap])


def require(model: object, capability: Capability | str) -> None:
    """Raise NormtestError unless ``model`` supports ``capability``."""
    cap = Capability(capability)
    if not isinstance(model, ModelAdapter):
        raise NormtestError(
            f"{type(model).__name__} is not a model adapter: it needs name, revision and "
            "capabilities (see normtest.adapters.ModelAdapter)"
        )
    if cap not in model.capabilities:
        have = ", ".join(sorted(c.value for c in model.capabilities)) or "none"
        raise NormtestError(
            f"model {model.name!r} does not provide {cap.value} (it declares: {have}); "
            "choose a claim variant that needs only those, or another model"
        )
    missing = [m for m in CAPABILITY_METHODS[cap] if not callable(getattr(model, m, None))]
    if missing:
        raise NormtestError(
            f"model {model.name!r} declares {cap.value} but lacks {', '.join(missing)}(); "
            "implement the method or drop the capability"
        )
