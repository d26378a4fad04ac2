"""Text information content from a causal language model: IC_LM(t) = −Σ_i log P(t_i | t_<i).

docs/theory.md §2. The model adapter (``Capability.TOKEN_LOGPROBS``) returns, for each text, log
P(t_i | t_<i) for every token of the text's own tokenisation (no special tokens); the first token is
conditioned on the model's start-of-context (SmolLM2: token id 0, ``<|endoftext|>``, which the
adapter prepends). This module checks what the adapter returns (one finite, non-positive value per
token) and sums. Natural logarithms: nats; :meth:`TextSurprisal.bits` converts.

Imports numpy only; the model is whatever adapter is passed (duck-typed, no torch here).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from normtest.adapters import Capability, require
from normtest.adapters.protocol import LogProbModel
from normtest.errors import NormtestError

__all__ = ["TextSurprisal", "surprisal", "text_information", "token_surprisal"]

_LOGPROB_SLACK = 1e-4  # float32 log-softmax can round a certain token's log P to a hair above 0


@dataclass(frozen=True, eq=False)
class TextSurprisal:
    """Per-token surprisal −log P(t_i | t_<i) of each text and their sums (nats)."""

    texts: tuple[str, ...]
    tokens: tuple[NDArray[np.float64], ...]  # per text: surprisal of each model token
    model: str
    revision: str

    @property
    def information(self) -> NDArray[np.float64]:
        """IC_LM(t) = Σ_i −log P(t_i | t_<i) of each text, in nats."""
        return np.array([float(np.sum(s)) for s in self.tokens], dtype=np.float64)

    @property
    def n_tokens(self) -> NDArray[np.int64]:
        """The number of model tokens of each text."""
        return np.array([s.size for s in self.tokens], dtype=np.int64)

    def bits(self) -> NDArray[np.float64]:
        """IC_LM of each text in bits."""
        return self.information / math.log(2.0)


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise NormtestError("pass a list of texts, not a single string (e.g. [text])")
    out = list(texts)
    if not out:
        raise NormtestError("the text list is empty; give at least one text")
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise NormtestError(f"text {i} is {type(t).__name__}, not a string")
        if not t:
            raise NormtestError(f"text {i} is empty; an empty text has no tokens to score")
    return out


def _model_name(adapter: object) -> str:
    return str(getattr(adapter, "name", type(adapter).__name__))


def token_surprisal(
    adapter: LogProbModel, texts: Sequence[str], batch_size: int = 16
) -> list[NDArray[np.float64]]:
    """−log P(t_i | t_<i) of every model token of each text (nats), checked for sanity.

    Each array must be 1-D, finite and ≤ 0 (up to float32 rounding, clipped to 0), and, when the
    adapter can ``tokenize``, hold one value per token of the text.
    """
    require(adapter, Capability.TOKEN_LOGPROBS)
    scorer = adapter.token_logprobs
    if batch_size < 1:
        raise NormtestError(f"batch_size must be positive, got {batch_size}")
    items = _check_texts(texts)
    tokenizer = getattr(adapter, "tokenize", None)
    out: list[NDArray[np.float64]] = []
    for start in range(0, len(items), batch_size):
        batch = items[start : start + batch_size]
        scored = list(scorer(batch))
        if len(scored) != len(batch):
            raise NormtestError(
                f"model {_model_name(adapter)!r} returned {len(scored)} log-probability arrays for "
                f"{len(batch)} texts; token_logprobs must return one array per text"
            )
        for j, lp in enumerate(scored):
            arr = np.asarray(lp, dtype=np.float64)
            i = start + j
            if arr.ndim != 1 or arr.size == 0:
                raise NormtestError(
                    f"model {_model_name(adapter)!r} gave text {i} log-probabilities of shape "
                    f"{arr.shape}; expected one value per token (1-D, non-empty)"
                )
            if not np.all(np.isfinite(arr)) or np.any(arr > _LOGPROB_SLACK):
                raise NormtestError(
                    f"model {_model_name(adapter)!r} gave text {i} log-probabilities that are not "
                    "finite and ≤ 0; fix the adapter's token_logprobs"
                )
            if callable(tokenizer) and len(tokenizer(batch[j]).ids) != arr.size:
                raise NormtestError(
                    f"model {_model_name(adapter)!r} gave text {i} {arr.size} log-probabilities "
                    f"but tokenizes it into {len(tokenizer(batch[j]).ids)} tokens; token_logprobs "
                    "must score exactly the text's tokens (no start-of-context or special tokens)"
                )
            out.append(-np.minimum(arr, 0.0))
    return out


def surprisal(adapter: LogProbModel, texts: Sequence[str], batch_size: int = 16) -> TextSurprisal:
    """Per-token surprisal and text IC of each text under a causal LM adapter."""
    items = _check_texts(texts)
    values = token_surprisal(adapter, items, batch_size)
    return TextSurprisal(
        texts=tuple(items),
        tokens=tuple(values),
        model=_model_name(adapter),
        revision=str(getattr(adapter, "revision", "")),
    )


def text_information(
    adapter: LogProbModel, texts: Sequence[str], batch_size: int = 16
) -> NDArray[np.float64]:
    """IC_LM(t) = −Σ_i log P(t_i | t_<i) of each text, in nats."""
    return surprisal(adapter, texts, batch_size).information
