"""Text information content from a causal language model: IC_LM(t) = −Σ_i log P(t_i | t_<i).

docs/theory.md §2. The model adapter (``Capability.TOKEN_LOGPROBS``) returns, for each text, log
P(t_i | t_<i) for every token of the text's own tokenisation (no special tokens); the first token is
conditioned on the model's start-of-context (SmolLM2: token id 0, ``<|endoftext|>``, which the
adapter prepends). This module checks what the adapter returns (one finite, non-positive value per
token) and sums. Natural logarithms: nats; :meth:`TextSurprisal.bits` converts.

The surprisal of a set of texts is an information source like word frequencies: computed once
per surprisal model and text set, then read back by every audit of any model
(:func:`stored_surprisal`; one file per model revision and text set under
``<cache root>/surprisal``, read without pickle, with a SHA-256 of its arrays and key, checked with
the tokenizer's token counts, and computed again, with one warning, when it fails).

Imports numpy only; the model is whatever adapter is passed (duck-typed, no torch here).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from normtest.adapters.protocol import Capability, LogProbModel, require
from normtest.base.fingerprint import json_sha256
from normtest.base.paths import default_cache_dir, file_lock
from normtest.data.information.checked_files import (
    read_checked,
    unusable,
    warn_recomputed,
    write_checked,
)
from normtest.errors import NormtestError

__all__ = [
    "TextSurprisal",
    "store_dir",
    "stored_surprisal",
    "surprisal",
    "text_information",
    "token_surprisal",
]

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
    adapter: LogProbModel, texts: Sequence[str], batch_size: int | None = None
) -> list[NDArray[np.float64]]:
    """−log P(t_i | t_<i) of every model token of each text (nats), checked for sanity.

    Each array must be 1-D, finite and ≤ 0 (up to float32 rounding, clipped to 0), and, when the
    adapter can ``tokenize``, hold one value per token of the text. The adapter gets every text
    in one ``token_logprobs`` call, as every other protocol method gets its whole list (normtest's
    transformers adapters batch it by length under a token budget); ``batch_size`` hands it at
    most that many at a time instead, for an adapter that cannot bound its own memory.
    """
    require(adapter, Capability.TOKEN_LOGPROBS)
    scorer = adapter.token_logprobs
    if batch_size is not None and (isinstance(batch_size, bool) or batch_size < 1):
        raise NormtestError(f"batch_size must be positive, got {batch_size}")
    items = _check_texts(texts)
    batch_size = batch_size or len(items)
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


def surprisal(adapter: LogProbModel, texts: Sequence[str],
              batch_size: int | None = None) -> TextSurprisal:
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
    adapter: LogProbModel, texts: Sequence[str], batch_size: int | None = None
) -> NDArray[np.float64]:
    """IC_LM(t) = −Σ_i log P(t_i | t_<i) of each text, in nats."""
    return surprisal(adapter, texts, batch_size).information


# ---------------------------------------------------------------------------- the store

#: The stored files' format; part of their key (and so of their name): a file of another format
#: is never read. 2: the file carries a SHA-256 of its arrays, key included.
STORE_FORMAT = 2

_WHAT = "stored surprisal"


def store_dir() -> Path:
    """Where sentence surprisal is stored: ``<cache root>/surprisal``."""
    return default_cache_dir() / "surprisal"


def _texts_digest(texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        encoded = text.encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "little"))
        digest.update(encoded)
    return digest.hexdigest()


def _token_counts(adapter: object, texts: Sequence[str]) -> list[int] | None:
    """Each text's number of tokens under the model's tokenizer (None without ``tokenize``)."""
    tokenizer = getattr(adapter, "tokenize", None)
    return [len(tokenizer(t).ids) for t in texts] if callable(tokenizer) else None


def _read(path: Path, key: dict[str, object], texts: tuple[str, ...],
          counts: list[int] | None) -> TextSurprisal:
    """The surprisal stored at ``path``, checked: its checksum, its key, one positive-length run
    of finite, non-negative values per text, and, given ``counts`` (the tokenizer's), as many
    values as tokens in each text. NormtestError naming the file when any check fails."""
    arrays = read_checked(path, _WHAT, ("key", "values", "offsets"))
    try:
        if json.loads(str(arrays["key"])) != key:  # the name is the key's digest
            raise unusable(path, _WHAT, "it was stored for another model, revision or texts")
        values = np.asarray(arrays["values"], dtype=np.float64)
        offsets = np.asarray(arrays["offsets"], dtype=np.int64)
    except (KeyError, ValueError, TypeError, RecursionError) as exc:
        raise unusable(path, _WHAT, f"{type(exc).__name__}: {exc}") from None
    if values.ndim != 1 or offsets.shape != (len(texts) + 1,) or offsets[0] != 0 \
            or offsets[-1] != values.size or np.any(np.diff(offsets) < 1) \
            or not np.all(np.isfinite(values)) or np.any(values < 0):
        raise unusable(path, _WHAT, "it does not hold one run of finite, non-negative values "
                                    "per text")
    if counts is not None and not np.array_equal(np.diff(offsets), counts):
        raise unusable(path, _WHAT, "its token counts differ from the model's tokenizer's")
    return TextSurprisal(texts=texts, tokens=tuple(np.split(values, offsets[1:-1])),
                         model=str(key["model"]), revision=str(key["revision"]))


def _write(path: Path, key: dict[str, object], result: TextSurprisal) -> None:
    """Store ``result`` with its checksum, atomically (a temporary file renamed into place); a
    folder that cannot be written leaves the result used, not kept."""
    sizes = [t.size for t in result.tokens]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    with contextlib.suppress(OSError):
        write_checked(path, {"key": np.array(json.dumps(key, sort_keys=True)),
                             "values": np.concatenate(result.tokens), "offsets": offsets})


def stored_surprisal(
    adapter: LogProbModel, texts: Sequence[str], batch_size: int | None = None, *,
    store: bool = True, directory: str | os.PathLike[str] | None = None,
) -> TextSurprisal:
    """:func:`surprisal`, read from the store when this model (its name and revision) scored
    exactly these texts before, else computed and stored (``store=False``: neither read nor
    written; ``directory``: another store folder). A model without a revision is never stored.
    A stored file that fails a check (:func:`_read`) is computed again and replaced, with one
    warning naming it; a missing one silently.
    """
    items = tuple(_check_texts(texts))
    revision = str(getattr(adapter, "revision", "") or "")
    if not store or not revision:
        return surprisal(adapter, items, batch_size)
    key: dict[str, object] = {"format": STORE_FORMAT, "model": _model_name(adapter),
                              "revision": revision, "texts": _texts_digest(items),
                              "count": len(items)}
    folder = Path(directory) if directory is not None else store_dir()
    path = folder / f"{json_sha256(key)[:40]}.npz"
    damaged = False
    if os.path.lexists(path):
        try:
            return _read(path, key, items, _token_counts(adapter, items))
        except NormtestError as exc:
            warn_recomputed(exc)
            damaged = True
    # two audits at once on the same texts (two test workers, two jobs): one scores them, the
    # other waits and reads what it stored
    with file_lock(folder.parent / "locks" / f"surprisal-{path.stem}.lock"):
        if not damaged and os.path.lexists(path):
            with contextlib.suppress(NormtestError):
                return _read(path, key, items, _token_counts(adapter, items))
        result = surprisal(adapter, items, batch_size)
        _write(path, key, result)
    return result
