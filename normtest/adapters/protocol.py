"""The small protocol every model adapter implements (structural typing, no inheritance).

A model declares what it can produce as a set of :class:`Capability` values and implements the
methods that go with them (:data:`CAPABILITY_METHODS`). Claims ask :func:`supports` or
:func:`require` before they measure, so a model without a capability is skipped with a reason,
never crashed into. Real models (static vectors, transformers encoders and decoders, precomputed
vectors) and the synthetic reference models of :mod:`normtest.models.synthetic` speak the same
protocol.

capability → methods (what they return):

- ``word_vectors`` → ``word_vectors(words)``, ``represents(words)`` (one vector per whole word);
- ``word_tokens`` → ``tokenize(text)``, ``word_tokens(word)`` (model token ids and strings);
- ``token_vectors`` → ``token_vectors(texts, layer=, special_tokens=, words=)`` (a TokenBatch);
- ``special_states`` → ``special_states(texts, state, layer=)``, ``states`` (cls / eos / last);
- ``prefix_vectors`` → ``prefix_vectors(text, prefix_lengths, pooling, layer=)`` (row per prefix);
- ``token_logprobs`` → ``token_logprobs(texts)`` (log P(t_i | t_<i) per token; causal LMs);
- ``text_vectors`` → ``text_vectors(texts)`` (one vector per text, the model's own pooling: what
  a sentence-transformers model's ``encode`` returns), and ``states`` = ``(pooling,)``, the name
  of that pooling (``mean``, ``cls``, ``sqrt_n`` …, or ``pooled`` when unknown).

A model whose only vectors are ``text_vectors`` is a *sentence encoder*: its words are
``text_vectors([word])``, its texts and prefixes are encoded whole, and its pooling is the one
composition its claims run under (docs/adapters.md).

Representations (``layer``): ``"input"`` is the row of the input embedding matrix of each token
(context-free); an integer k is hidden state k as transformers numbers them (0 = the embedding
layer's output, 1..L = the blocks); ``"last"`` (the default) is the final hidden state.

Texts versus words: ``tokenize(text)`` and ``token_vectors(texts)`` take text literally. A word
is a unit of running text, and some tokenizers mark the word boundary (byte-level BPE spells
" cat" with its leading space); ``word_tokens(word)`` and ``token_vectors(words, words=True)``
apply the model's own convention for a word, so claims never need to know it.

Optional batch forms an adapter may add for speed, used when present: ``word_token_counts(words)``
(``len(word_tokens(w))`` of every word in one call) and ``prefix_vectors_many(texts,
prefix_lengths, pooling, layer=)`` (``prefix_vectors`` of several documents at once;
:func:`prefix_vectors_of` calls it, or ``prefix_vectors`` per text when a model lacks it).

Optional attributes an adapter may have, read in one place, :func:`adapter_info` (the audit and
every front end read the :class:`AdapterInfo` it returns, never the attributes): ``states`` (the
special states it produces, or a sentence encoder's pooling), ``n_layers`` (hidden layers, for a
layer profile), ``max_tokens`` (the longest text it encodes), ``architecture`` (transformers'
``model_type``: bert, modernbert, llama …) and ``texts`` (precomputed text vectors: the only
texts it has vectors of). Optional methods (:data:`OPTIONAL_METHODS`, read with
:func:`optional_method`): ``word_token_counts`` and ``prefix_vectors_many`` above,
``count_tokens(text)`` (a sentence encoder's token count, to keep prefixes within
``max_tokens``), ``keep_layers(layers)`` (which hidden layers a forward pass keeps for a
layer profile) and ``expect_poolings(poolings)`` (the prefix poolings an audit will ask for, which
the embedding cache computes in the pass of the first).

Every vector method returns float arrays (float32 is fine) of the model's dimension ``dim``.
Importing this module imports numpy only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from normtest.errors import NormtestError

__all__ = [
    "CAPABILITY_METHODS",
    "OPTIONAL_METHODS",
    "SPECIAL_STATE_NAMES",
    "AdapterInfo",
    "Capability",
    "Family",
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
    "adapter_info",
    "check_layer",
    "family_of",
    "leading_ids",
    "optional_method",
    "prefix_vectors_of",
    "require",
    "supports",
]

#: A representation: the input embedding rows, a hidden layer index, or the last hidden layer.
Layer = int | Literal["input", "last"]
#: The model states an adapter may produce (docs/theory.md §4); ``last`` is the last real token.
SPECIAL_STATE_NAMES = ("cls", "eos", "last")


class Capability(StrEnum):
    """What a model can produce; a model declares the set it supports."""

    WORD_VECTORS = "word_vectors"  # one vector per word, looked up whole (static or synthetic)
    WORD_TOKENS = "word_tokens"  # a word's or text's split into the model's subword tokens
    TOKEN_VECTORS = "token_vectors"  # one vector per model token of a word or text
    SPECIAL_STATES = "special_states"  # the cls / eos / last states of a text
    PREFIX_VECTORS = "prefix_vectors"  # vectors of every prefix of a text
    TOKEN_LOGPROBS = "token_logprobs"  # log P(t_i | t_<i) of each token of a text (causal LMs)
    TEXT_VECTORS = "text_vectors"  # one vector per text, pooled by the model (encode(texts))


@dataclass(frozen=True)
class Tokenization:
    """A text's model tokens (no special tokens): ids and their strings, aligned."""

    ids: tuple[int, ...]
    tokens: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True, eq=False)
class TokenBatch:
    """Token vectors of many texts, flat: rows ``offsets[i]:offsets[i+1]`` belong to text i.

    The layout is the one :func:`normtest.geometry.compose.compose_batch` takes.
    """

    vectors: NDArray[np.floating]
    offsets: NDArray[np.intp]

    def __len__(self) -> int:
        return int(self.offsets.size - 1)

    def __getitem__(self, i: int) -> NDArray[np.floating]:
        return self.vectors[self.offsets[i]:self.offsets[i + 1]]

    @property
    def lengths(self) -> NDArray[np.intp]:
        """Number of token vectors of each text."""
        return np.diff(self.offsets)

    @classmethod
    def from_list(cls, items: Sequence[NDArray[np.floating]], dim: int) -> TokenBatch:
        """Pack a list of (n_i, dim) arrays."""
        lengths = np.array([len(a) for a in items], dtype=np.intp)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.intp)
        vectors = np.concatenate(items) if items else np.empty((0, dim), dtype=np.float32)
        return cls(vectors=vectors, offsets=offsets)


@runtime_checkable
class ModelAdapter(Protocol):
    """Identity and declared capabilities: what every model offers."""

    @property
    def name(self) -> str:
        """Short model name used in results, e.g. ``glove-6b-50d`` or ``oracle``."""
        ...

    @property
    def revision(self) -> str:
        """Revision, file hash or generating parameters (and dtype): part of every cache key."""
        ...

    @property
    def capabilities(self) -> frozenset[Capability]:
        """The capabilities this model supports."""
        ...

    @property
    def dim(self) -> int:
        """Dimension of every vector the model returns."""
        ...


@runtime_checkable
class WordVectorModel(ModelAdapter, Protocol):
    """A model with ``Capability.WORD_VECTORS``."""

    def word_vectors(self, words: Sequence[str]) -> NDArray[np.floating]:
        """Vectors of the given words, one row each: (len(words), dim); unknown words raise."""
        ...

    def represents(self, words: Sequence[str]) -> NDArray[np.bool_]:
        """Which of ``words`` the model has a vector for (so callers can drop and count)."""
        ...


@runtime_checkable
class TokenVectorModel(ModelAdapter, Protocol):
    """A model with ``Capability.WORD_TOKENS`` and ``Capability.TOKEN_VECTORS``."""

    def tokenize(self, text: str) -> Tokenization:
        """The model tokens of ``text`` taken literally, without special tokens."""
        ...

    def word_tokens(self, word: str) -> Tokenization:
        """The model tokens of one word as it stands in running text."""
        ...

    def token_vectors(
        self, texts: Sequence[str], *, layer: Layer = "last", special_tokens: bool = False,
        words: bool = False,
    ) -> TokenBatch:
        """Token vectors of each text (each word's tokens with ``words=True``)."""
        ...


@runtime_checkable
class SpecialStateModel(ModelAdapter, Protocol):
    """A model with ``Capability.SPECIAL_STATES``."""

    @property
    def states(self) -> tuple[str, ...]:
        """The special states this model produces, a subset of ``SPECIAL_STATE_NAMES``."""
        ...

    def special_states(
        self, texts: Sequence[str], state: str, *, layer: Layer = "last"
    ) -> NDArray[np.floating]:
        """The named state of each text: (len(texts), dim)."""
        ...


@runtime_checkable
class PrefixVectorModel(ModelAdapter, Protocol):
    """A model with ``Capability.PREFIX_VECTORS``."""

    def prefix_vectors(
        self, text: str, prefix_lengths: Sequence[int], pooling: str, *, layer: Layer = "last"
    ) -> NDArray[np.floating]:
        """One vector per prefix of ``text`` (lengths in model tokens): (len(lengths), dim).

        ``pooling`` is a composition name of :mod:`normtest.geometry.compose` (applied to the
        prefix's own token states) or a special state name the model produces.
        """
        ...


@runtime_checkable
class LogProbModel(ModelAdapter, Protocol):
    """A model with ``Capability.TOKEN_LOGPROBS`` (a causal language model)."""

    def token_logprobs(self, texts: Sequence[str]) -> list[NDArray[np.floating]]:
        """log P(t_i | t_<i) for every token of each text, from the model's start of context."""
        ...


@runtime_checkable
class TextVectorModel(ModelAdapter, Protocol):
    """A model with ``Capability.TEXT_VECTORS`` (a sentence encoder: ``encode(texts)``)."""

    @property
    def states(self) -> tuple[str, ...]:
        """``(pooling,)``: the name of the model's own pooling of a text's tokens."""
        ...

    def text_vectors(self, texts: Sequence[str]) -> NDArray[np.floating]:
        """One vector per text, taken literally (a word is a one-word text): (len(texts), dim).
        An empty text raises NormtestError."""
        ...


#: The methods a model must have for each capability it declares.
CAPABILITY_METHODS: Mapping[Capability, tuple[str, ...]] = MappingProxyType(
    {
        Capability.WORD_VECTORS: ("word_vectors", "represents"),
        Capability.WORD_TOKENS: ("tokenize", "word_tokens"),
        Capability.TOKEN_VECTORS: ("token_vectors",),
        Capability.SPECIAL_STATES: ("special_states",),
        Capability.PREFIX_VECTORS: ("prefix_vectors",),
        Capability.TOKEN_LOGPROBS: ("token_logprobs",),
        Capability.TEXT_VECTORS: ("text_vectors",),
    }
)


def supports(model: object, capability: Capability | str) -> bool:
    """Whether ``model`` declares ``capability`` and has the methods it needs."""
    cap = Capability(capability)
    if not isinstance(model, ModelAdapter) or cap not in model.capabilities:
        return False
    return all(callable(getattr(model, m, None)) for m in CAPABILITY_METHODS[cap])


def prefix_vectors_of(
    model: Any, texts: Sequence[str], prefix_lengths: Sequence[Sequence[int]], pooling: str,
    *, layer: Layer | str = "last",
) -> list[NDArray[np.floating]]:
    """``prefix_vectors`` of several texts: the model's ``prefix_vectors_many`` when it has that
    batch form, else one ``prefix_vectors`` call per text."""
    many = optional_method(model, "prefix_vectors_many")
    if many is not None:
        return list(many(texts, prefix_lengths, pooling, layer=layer))
    return [model.prefix_vectors(t, g, pooling, layer=layer)
            for t, g in zip(texts, prefix_lengths, strict=True)]


#: Characters first tokenised per token wanted when only a text's start is needed.
_CHARS_PER_TOKEN = 16


def leading_ids(
    ids_of: Callable[[str], Sequence[int]], text: str, at_least: int
) -> tuple[list[int], bool]:
    """The token ids of the start of ``text``: (ids, whether they are the whole text's).

    Tokenises only as much of a long text as it takes to hold more than ``at_least`` tokens:
    a start of the text cut at whitespace holds the same leading tokens as the whole
    (tokenizers split into words before they split words into tokens); its last token is one
    more than asked for, so a token the cut might end early is never among the first
    ``at_least``. A text too short for that is tokenised whole (complete = True).
    """
    chars = _CHARS_PER_TOKEN * (at_least + 2)
    while chars < len(text):
        cut = chars
        while cut > 0 and not text[cut].isspace():
            cut -= 1
        if cut > 0 and text[:cut].strip():
            ids = list(ids_of(text[:cut]))
            if len(ids) > at_least:
                return ids, False
        chars *= 4
    return list(ids_of(text)), True


def require(model: object, capability: Capability | str) -> None:
    """Raise NormtestError unless ``model`` supports ``capability``."""
    cap = Capability(capability)
    if not isinstance(model, ModelAdapter):
        raise NormtestError(
            f"{type(model).__name__} is not a model adapter: it needs name, revision, dim and "
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


def check_layer(layer: object, n_layers: int | None = None) -> Layer:
    """Validate a representation name: "input", "last" or a hidden-layer index."""
    if layer in ("input", "last"):
        return layer
    if isinstance(layer, (int, np.integer)) and not isinstance(layer, bool):
        index = int(layer)
        if index < 0 or (n_layers is not None and index > n_layers):
            top = "" if n_layers is None else f" (this model has hidden states 0..{n_layers})"
            raise NormtestError(f"layer {index} does not exist{top}")
        return index
    raise NormtestError(
        f"layer must be 'input', 'last' or a hidden-layer index, got {layer!r}"
    )


# -- what the audit reads about a model besides its vectors ---------------------------------------
class Family(StrEnum):
    """Which claims and expectations apply to a model: ``static`` (whole-word vectors),
    ``encoder``, ``decoder`` (a causal LM) or ``sentence`` (whole texts to vectors only, as
    ``encode(texts)``). It compares equal to its name (``Family.STATIC == "static"``)."""

    STATIC = "static"
    ENCODER = "encoder"
    DECODER = "decoder"
    SENTENCE = "sentence"


#: The optional methods an adapter may have (see the module doc), read by name through
#: :func:`optional_method`.
OPTIONAL_METHODS = ("word_token_counts", "prefix_vectors_many", "count_tokens", "keep_layers",
                    "expect_poolings")


@dataclass(frozen=True)
class AdapterInfo:
    """What the audit and the front ends know of a model besides its vectors, typed: its
    identity, :class:`Family`, capabilities and the optional attributes of the protocol."""

    name: str
    revision: str
    dim: int
    family: Family
    capabilities: frozenset[Capability]
    #: the special states it produces (``cls``, ``eos``, ``last``), or a sentence encoder's
    #: pooling (``mean``, ``cls`` …)
    states: tuple[str, ...] = ()
    #: hidden layers (a layer profile's ``all``); None when unknown
    n_layers: int | None = None
    #: the longest text it encodes, in its tokens; None when unbounded or unknown
    max_tokens: int | None = None
    #: transformers' ``model_type`` (bert, modernbert, llama …); None for other models
    architecture: str | None = None
    #: precomputed text vectors: the only texts it has vectors of (None: any text)
    own_texts: tuple[str, ...] | None = None
    #: where a torch model runs (``cpu``, ``cuda``, ``cuda:1``); None for other models
    device: str | None = None


def family_of(model: object) -> Family:
    """The model's :class:`Family`, from its capabilities: the one place it is derived."""
    if supports(model, Capability.WORD_VECTORS):
        return Family.STATIC
    if supports(model, Capability.TOKEN_LOGPROBS):
        return Family.DECODER
    if supports(model, Capability.TEXT_VECTORS) and not supports(model, Capability.TOKEN_VECTORS):
        return Family.SENTENCE
    return Family.ENCODER


def _positive_int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | np.integer) and not isinstance(value, bool) \
        and value > 0 else None


def adapter_info(model: ModelAdapter) -> AdapterInfo:
    """The model's :class:`AdapterInfo`: the one place the protocol's optional attributes are
    read (an attribute that is missing, or of the wrong type, is left at its default)."""
    states = getattr(model, "states", ())
    texts = getattr(model, "texts", None)
    architecture = getattr(model, "architecture", None)
    device = getattr(model, "device", None)
    return AdapterInfo(
        name=str(model.name), revision=str(model.revision), dim=int(model.dim),
        family=family_of(model), capabilities=frozenset(model.capabilities),
        states=tuple(str(s) for s in states) if isinstance(states, Sequence)
        and not isinstance(states, str) else (),
        n_layers=_positive_int(getattr(model, "n_layers", None)),
        max_tokens=_positive_int(getattr(model, "max_tokens", None)),
        architecture=architecture if isinstance(architecture, str) else None,
        own_texts=tuple(texts) if isinstance(texts, Sequence) and not isinstance(texts, str)
        else None,
        device=device if isinstance(device, str) else None,
    )


def optional_method(model: object, name: str) -> Callable[..., Any] | None:
    """One of :data:`OPTIONAL_METHODS` of the model, or None when it lacks it."""
    if name not in OPTIONAL_METHODS:
        raise ValueError(f"{name!r} is not an optional method of the protocol")
    found = getattr(model, name, None)
    return found if callable(found) else None
