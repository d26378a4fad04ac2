"""The encoder adapter: a bidirectional transformers model (BERT family) read with ``AutoModel``.

:class:`EncoderAdapter` (BERT, RoBERTa, ModernBERT, MiniLM, …; the embedded ``minilm-l6`` via
:meth:`EncoderAdapter.minilm_l6`) always runs a text the way the model is used, wrapped in its
special tokens (``[CLS] … [SEP]``, ``<s> … </s>``), and after ``text_prefix`` when the model
was trained with an instruction before its texts (nomic-embed: ``[CLS] search_document: …
[SEP]``); ``special_tokens=False`` drops those rows afterwards. ``cls`` is the state at position
0. Encoders attend both ways, so a prefix is run on its own, wrapped the same way: one forward
pass per prefix, batched by length, and ``prefix_vectors_many`` batches the prefixes of many
texts together (all prefixes of length L, whatever their text). The shared conventions (words,
layers, batches, revision) are in
:mod:`normtest.adapters.transformers_base`.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from normtest.adapters.embedded import minilm_folder
from normtest.adapters.protocol import Layer, TokenBatch
from normtest.adapters.transformers_base import DEFAULT_MAX_TOKENS_PER_BATCH, _grid
from normtest.adapters.transformers_batches import _BatchedAdapter
from normtest.errors import NormtestError
from normtest.geometry.compose import compose_segments

if TYPE_CHECKING:
    import torch

__all__ = ["EncoderAdapter"]


#: What a prefix's token sum is divided by for each pooling built on it (as compose_batch does).
_SUM_SCALES: dict[str, Any] = {"sum": lambda n: np.ones(n.size), "mean": lambda n: n,
                               "sqrt_n": np.sqrt}


class EncoderAdapter(_BatchedAdapter):
    """A bidirectional encoder (BERT, RoBERTa, ModernBERT, MiniLM…) read with ``AutoModel``.

    Texts run wrapped in the tokenizer's special tokens; ``cls`` is the state at position 0.
    Options: ``name``, ``device`` ("cpu"/"cuda"), ``dtype`` ("float32"/"bfloat16"/"float16"),
    ``max_tokens_per_batch`` (memory bound), ``max_padding`` (0: batch equal lengths only),
    ``progress`` (tqdm bar on a terminal),
    ``allow_network`` (hub ids), ``word_prefix`` (force the word convention), ``fast`` (False:
    the reference paths, one forward pass per prefix and per-item lists; see
    :mod:`normtest.adapters.transformers_base`),
    ``trust_remote_code`` (let a folder whose configuration names its own Python modules run
    them; refused otherwise, never asked on standard input), ``text_prefix`` (an instruction put
    before every text, after the leading special tokens, such as nomic-embed's
    ``"search_document: "``; its tokens count as special tokens, and it is part of the
    revision).
    """

    _auto_class = "AutoModel"

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        name: str | None = None,
        device: str | torch.device = "cpu",
        dtype: str | torch.dtype = "float32",
        max_tokens_per_batch: int = DEFAULT_MAX_TOKENS_PER_BATCH,
        max_padding: float = 0.0,
        progress: bool = True,
        allow_network: bool = False,
        word_prefix: str | None = None,
        fast: bool = True,
        trust_remote_code: bool = False,
        text_prefix: str = "",
    ) -> None:
        """Load the encoder and its tokenizer from a folder (or a hub id with allow_network)."""
        self._text_prefix_option = text_prefix
        super().__init__(model, name=name, device=device, dtype=dtype,
                         max_tokens_per_batch=max_tokens_per_batch, max_padding=max_padding,
                         progress=progress, allow_network=allow_network, word_prefix=word_prefix,
                         fast=fast, trust_remote_code=trust_remote_code)

    def _configure(self, options: dict[str, Any]) -> None:
        """Apply the run options, including the text prefix (its tokens join the leading
        special tokens)."""
        options = {"text_prefix": self._text_prefix_option, **options}
        prefix = options["text_prefix"]
        if not isinstance(prefix, str):
            raise NormtestError(f"text_prefix must be a str, got {prefix!r}")
        super()._configure(options)
        self._text_prefix = prefix
        before, self._after = self._special_layout()
        self._has_cls = bool(before)
        self._before = [*before, *(self._ids(prefix) if prefix.strip() else [])]

    def _revision_extras(self) -> list[str]:
        return [f"text_prefix={self._text_prefix!r}"] if self._text_prefix else []

    @property
    def text_prefix(self) -> str:
        """What is put before every text and word the model runs (its tokens are not part of
        the text: dropped from token vectors and prefix compositions, like [CLS])."""
        return self._text_prefix

    @classmethod
    def minilm_l6(cls, **options: Any) -> EncoderAdapter:
        """The embedded ``minilm-l6`` model (all-MiniLM-L6-v2: BERT, 6 layers, 384)."""
        options.setdefault("name", "minilm-l6")
        return cls(minilm_folder(), **options)

    def _special_layout(self) -> tuple[list[int], list[int]]:
        """Special token ids the tokenizer puts before and after a text ([CLS] / [SEP])."""
        bare = self._ids("a b")
        full = [int(i) for i in self._tokenizer("a b", add_special_tokens=True)["input_ids"]]
        for start in range(len(full) - len(bare) + 1):
            if full[start:start + len(bare)] == bare:
                return full[:start], full[start + len(bare):]
        raise NormtestError(
            f"cannot tell where {self._name}'s tokenizer puts its special tokens; "
            "this tokenizer is not supported by EncoderAdapter"
        )

    @property
    def n_special_tokens(self) -> int:
        """How many special tokens the tokenizer adds around a text ([CLS] and [SEP]: 2), and
        the text prefix's tokens."""
        return len(self._before) + len(self._after)

    @property
    def states(self) -> tuple[str, ...]:
        """("cls",) when the tokenizer puts a special token first, else ()."""
        return ("cls",) if self._has_cls else ()

    def _wrap(self, ids: list[int]) -> tuple[list[int], int]:
        return [*self._before, *ids, *self._after], len(self._before)

    def _wrap_full(self, ids: list[int]) -> list[int]:
        return [*self._before, *ids, *self._after]

    def _state_sequence(self, ids: list[int], state: str) -> tuple[list[int], int]:
        return self._wrap_full(ids), 0

    def _layout(self, special_tokens: bool) -> tuple[list[int], list[int]]:
        return list(self._before), list(self._after)

    def prefix_vectors(
        self, text: str, prefix_lengths: Sequence[int], pooling: str, *, layer: Layer = "last"
    ) -> NDArray[np.floating]:
        """One vector per prefix; each prefix runs on its own (batched by length).

        The token states of a text's prefixes are kept (``clear_prefix_memo``), so asking for
        another pooling of the same text and lengths runs no model.
        """
        setup = self._prefix_setup(text, prefix_lengths, pooling, layer)
        return self._prefix_many([setup], pooling, layer)[0]

    def _prefix_many(
        self, setups: Sequence[tuple[list[int], list[int]]], pooling: str, layer: Layer
    ) -> list[NDArray[np.floating]]:
        """Every document's prefixes run together, batched by length, then pooled per document."""
        if not self._fast:
            return [self._prefix_vectors_simple(ids, lengths, pooling, layer)
                    for ids, lengths in setups]
        keys = [self._memo_key("encoder", ids, _grid(lengths), layer) if lengths else None
                for ids, lengths in setups]
        states: dict[Hashable, TokenBatch] = {}
        todo: dict[Hashable, tuple[list[int], tuple[int, ...]]] = {}
        for key, (ids, lengths) in zip(keys, setups, strict=True):
            if key is None or key in states or key in todo:
                continue
            found = self._memo.get(key)
            if found is not None:
                states[key] = found
            else:
                todo[key] = (ids, _grid(lengths))
        if todo:
            states.update(self._prefix_states(todo, layer))
        present = [k for k in keys if k is not None]
        grids = [np.asarray(k[2], dtype=np.intp) for k in present]
        pooled = iter(self._pool_sequences(present, [states[k] for k in present], grids,
                                           pooling))
        out: list[NDArray[np.floating]] = []
        grid_of = iter(grids)
        for key, (_, lengths) in zip(keys, setups, strict=True):
            if key is None:
                out.append(np.empty((0, self._dim), dtype=np.float32))
                continue
            out.append(next(pooled)[np.searchsorted(next(grid_of), lengths)])
        return out

    def _prefix_states(
        self, todo: dict[Hashable, tuple[list[int], tuple[int, ...]]], layer: Layer
    ) -> dict[Hashable, TokenBatch]:
        """Token states of every prefix (special tokens included) of each document, memoised."""
        pieces: list[NDArray[np.int64]] = []
        lengths: list[int] = []
        for ids, grid in todo.values():
            array = np.asarray(ids, dtype=np.int64)
            pieces.extend(array[:n] for n in grid)
            lengths.extend(grid)
        flat = np.concatenate(pieces)
        batch = self._token_rows(flat, np.asarray(lengths, dtype=np.intp), layer, True,
                                 "prefixes")
        found: dict[Hashable, TokenBatch] = {}
        item = 0
        for key, (_, grid) in todo.items():
            lo, hi = batch.offsets[item], batch.offsets[item + len(grid)]
            doc = TokenBatch(batch.vectors[lo:hi], batch.offsets[item:item + len(grid) + 1] - lo)
            self._memo.put(key, doc, doc.vectors.nbytes)
            found[key] = doc
            item += len(grid)
        return found

    def _pool_sequences(
        self, keys: Sequence[Hashable], batches: Sequence[TokenBatch],
        grids: Sequence[NDArray[np.intp]], pooling: str,
    ) -> list[NDArray[np.float32]]:
        """Pool each prefix's wrapped sequence, for every document at once: ``cls`` at position
        0, else its own tokens, composed in one batch across documents (a fold then steps
        through the longest prefix once, not once per document). ``sum``, ``mean`` and
        ``sqrt_n`` share each document's token sums, kept beside its states."""
        if pooling in self.states:  # cls
            return [np.ascontiguousarray(b.vectors[b.offsets[:-1]], dtype=np.float32)
                    for b in batches]
        if not batches:
            return []
        if pooling in _SUM_SCALES:
            out = []
            for key, batch, grid in zip(keys, batches, grids, strict=True):
                sums = self._memo.get((key, "sums"))
                if sums is None:
                    sums = compose_segments(np.asarray(batch.vectors),
                                            batch.offsets[:-1] + len(self._before), grid, "sum")
                    self._memo.put((key, "sums"), sums, sums.nbytes)
                out.append((sums / _SUM_SCALES[pooling](grid)[:, None]).astype(np.float32))
            return out
        # every document's prefix sequences in one array; each prefix's own tokens are the
        # rows after its leading special tokens, composed where they stand (no gather)
        states = np.concatenate([np.asarray(b.vectors) for b in batches])
        shift = np.cumsum([0] + [len(b.vectors) for b in batches[:-1]])
        starts = np.concatenate([b.offsets[:-1] + s for b, s in zip(batches, shift, strict=True)])
        pooled = compose_segments(states, starts + len(self._before), np.concatenate(grids),
                                  pooling).astype(np.float32)
        return np.split(pooled, np.cumsum([g.size for g in grids])[:-1])

    def _prefix_vectors_simple(
        self, ids: list[int], lengths: list[int], pooling: str, layer: Layer
    ) -> NDArray[np.floating]:
        """The reference path: each prefix run on its own, token rows as Python lists."""
        if not lengths:
            return np.empty((0, self._dim), dtype=np.float32)
        seqs = [self._wrap_full(ids[:n]) for n in lengths]
        first = len(self._before)
        if pooling in self.states:
            rows = self._run_states(seqs, layer, [slice(0, 1)] * len(seqs), "prefixes")
            return np.concatenate(rows)
        keep = [slice(first, first + n) for n in lengths]
        token_rows = self._run_states(seqs, layer, keep, "prefixes")
        return self._compose_prefixes(token_rows, pooling)
