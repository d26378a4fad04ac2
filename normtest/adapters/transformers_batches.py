"""Running a transformers model in batches, and the protocol methods built on it.

``_BatchedAdapter`` extends ``_TransformersAdapter`` (:mod:`normtest.adapters.transformers_base`:
loading, identity, tokenisation) with what encoders and decoders share once the model runs:
checking lengths, batching sequences by length under ``max_tokens_per_batch``, the reference
path (``_run_states``: Python lists, one sequence per row) and the fast path (``_token_rows``:
whole lists as numpy arrays, batches of one length), the input-embedding rows of
``layer="input"``, and the protocol methods on top (``token_vectors``, ``special_states``,
``prefix_vectors_many``) with the checks, memo keys and memory-bounded compositions of prefixes.
How a text is wrapped (``_wrap``, ``_layout``, ``_state_sequence``) and how prefixes run
(``_prefix_many``) are left to :mod:`normtest.adapters.encoder` and
:mod:`normtest.adapters.decoder`.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Hashable, Sequence
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from normtest.adapters.layer_stash import LayerStash
from normtest.adapters.protocol import (
    SPECIAL_STATE_NAMES,
    Layer,
    TokenBatch,
    check_layer,
    leading_ids,
)
from normtest.adapters.transformers_base import FloatRows, _TransformersAdapter
from normtest.errors import NormtestError
from normtest.geometry.compose import MODEL_STATES, compose_batch, get_composition

# isort: split
# torch after transformers_base, whose import turns its absence into the install hint
import torch

from normtest.base import progress

#: Upper bound on float64 elements handed to one ``compose_batch`` call for prefixes (512 MiB).
_COMPOSE_ELEMENTS = 1 << 26


class _BatchedAdapter(_TransformersAdapter):
    """What encoders and decoders share when the model runs: batches and the protocol methods."""

    # -- running the model -----------------------------------------------------------------------
    def _check_lengths(self, seqs: Sequence[Sequence[int]]) -> None:
        """Raise when a sequence (with its special tokens) is longer than the model takes."""
        self._check_sizes(np.fromiter(map(len, seqs), dtype=np.intp, count=len(seqs)))

    def _check_sizes(self, sizes: NDArray[np.intp]) -> None:
        """Raise when a sequence of ``sizes[i]`` positions is longer than the model takes."""
        if self._max_length is None or sizes.size == 0:
            return
        too_long = np.flatnonzero(sizes > self._max_length)
        if too_long.size:
            i = int(too_long[0])
            raise NormtestError(
                f"item {i} needs {int(sizes[i])} positions with its special tokens, but "
                f"{self._name} takes at most {self._max_length}; shorten or split the text"
            )

    def _batches(self, lengths: Sequence[int], max_tokens: int) -> list[list[int]]:
        """Indices grouped longest first: rows × longest ≤ ``max_tokens``, padding bounded."""
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        batches: list[list[int]] = []
        current: list[int] = []
        for i in order:
            if current:
                longest = lengths[current[0]]
                too_many = (len(current) + 1) * longest > max_tokens
                too_short = longest - lengths[i] > self._max_padding * longest
                if too_many or too_short:
                    batches.append(current)
                    current = []
            current.append(i)
        if current:
            batches.append(current)
        return batches

    def _progress_bar(self, total: int, n_batches: int, what: str) -> Any:
        """A bar over tokens: on normtest's display when it is on (the command line on a
        terminal), else a tqdm bar shown only for several batches on a terminal."""

        if progress.active():
            return progress.task(f"{self._name} {what}", total=total, unit="tokens")
        from tqdm.auto import tqdm

        show = self._progress and n_batches > 1 and sys.stderr.isatty()
        return tqdm(total=total, desc=f"{self._name} {what}", unit="tok", disable=not show,
                    leave=False)

    def _padded(self, seqs: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Right-padded ids and attention mask for a batch."""
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for row, seq in enumerate(seqs):
            ids[row, :len(seq)] = torch.tensor(seq, dtype=torch.long)
            mask[row, :len(seq)] = 1
        return ids.to(self._device), mask.to(self._device)

    def _base_model(self) -> Any:
        """The module that returns hidden states (the causal LM's body for decoders)."""
        return self._model

    @property
    def layer_stash(self) -> LayerStash:
        """The hidden states of a layer profile kept between calls (:mod:`.layer_stash`)."""
        stash = self.__dict__.get("_layer_stash")
        if stash is None:
            stash = self.__dict__["_layer_stash"] = LayerStash()
        return stash

    def keep_layers(self, layers: Sequence[Layer]) -> None:
        """Keep ``layers`` (hidden-state indices and ``"last"``) from every forward pass, so a
        layer profile runs each batch once (``()`` stops keeping and frees them)."""
        self.layer_stash.keep([check_layer(x, self._n_layers) for x in layers])

    def _hidden(self, chosen: Layer, **inputs: Any) -> torch.Tensor:
        """The ``chosen`` hidden states of the model on ``inputs`` (one forward pass, or none
        when a layer profile's earlier pass kept them)."""
        return self.layer_stash.run(self._base_model(), chosen, **inputs)

    def _run_states(
        self, seqs: Sequence[Sequence[int]], layer: Layer, keep: Sequence[slice], what: str
    ) -> list[FloatRows]:
        """The chosen representation at positions ``keep[i]`` of each sequence (float32)."""
        chosen = check_layer(layer, self._n_layers)
        if chosen == "input":
            return self._input_rows(seqs, keep)
        self._check_lengths(seqs)
        results: list[FloatRows | None] = [None] * len(seqs)
        lengths = [len(s) for s in seqs]
        batches = self._batches(lengths, self._max_tokens)
        with self._progress_bar(sum(lengths), len(batches), what) as bar, torch.inference_mode():
            for batch in batches:
                ids, mask = self._padded([seqs[i] for i in batch])
                hidden = self._hidden(chosen, input_ids=ids, attention_mask=mask)
                for row, i in enumerate(batch):
                    results[i] = hidden[row, keep[i]].float().cpu().numpy()
                bar.update(sum(lengths[i] for i in batch))
        return [cast(FloatRows, r) for r in results]

    def _input_rows(self, seqs: Sequence[Sequence[int]], keep: Sequence[slice]) -> list[FloatRows]:
        """Rows of the input embedding matrix for the kept token ids (no forward pass)."""
        picked = [list(seq[k]) for seq, k in zip(seqs, keep, strict=True)]
        if not picked:
            return []
        flat = np.fromiter(itertools.chain.from_iterable(picked), dtype=np.int64)
        rows = self._embedding_rows(flat)
        bounds = np.cumsum([len(p) for p in picked])[:-1]
        return list(np.split(rows, bounds))

    def _embedding_rows(self, ids: NDArray[np.int64]) -> FloatRows:
        """Rows of the input embedding matrix for ``ids`` (float32, no forward pass)."""
        if int(self._embedding.weight.shape[1]) != self._dim:
            raise NormtestError(
                f"{self._name}'s input embeddings have {int(self._embedding.weight.shape[1])} "
                f"dimensions, not its hidden size {self._dim}; layer='input' is not available"
            )
        with torch.inference_mode():
            index = torch.as_tensor(ids, dtype=torch.long, device=self._embedding.weight.device)
            rows: FloatRows = self._embedding.weight[index].float().cpu().numpy()
        return rows

    # -- fast paths: whole lists as numpy arrays, batched by length ------------------------------
    def _batch_index(self, sizes: NDArray[np.intp]) -> list[NDArray[np.intp]]:
        """``_batches`` as index arrays; vectorised for equal-length batches (``max_padding=0``)."""
        if self._max_padding > 0:
            return [np.asarray(b, dtype=np.intp)
                    for b in self._batches(sizes.tolist(), self._max_tokens)]
        order = np.argsort(-sizes, kind="stable")
        cuts = np.flatnonzero(np.diff(sizes[order])) + 1
        batches: list[NDArray[np.intp]] = []
        for group in np.split(order, cuts):
            rows = max(1, self._max_tokens // int(sizes[group[0]]))
            batches.extend(group[a:a + rows] for a in range(0, group.size, rows))
        return batches

    def _layout(self, special_tokens: bool) -> tuple[list[int], list[int]]:
        """Token ids run before and after an item's own tokens."""
        raise NotImplementedError

    def _token_rows(
        self, flat: NDArray[np.int64], lengths: NDArray[np.intp], layer: Layer,
        special_tokens: bool, what: str,
    ) -> TokenBatch:
        """Token vectors of many items, flat: batches of one length, numpy gathers and scatters.

        Item i's tokens are ``flat[o_i:o_i + lengths[i]]``; it runs wrapped as ``_layout`` says,
        and its own rows are kept (all rows, special tokens included, with ``special_tokens``).
        """
        chosen = check_layer(layer, self._n_layers)
        before, after = self._layout(special_tokens)
        nb, na = len(before), len(after)
        sizes = lengths + nb + na
        kept = sizes if special_tokens else lengths
        out_offsets = np.zeros(lengths.size + 1, dtype=np.intp)
        np.cumsum(kept, out=out_offsets[1:])
        in_offsets = np.zeros(lengths.size + 1, dtype=np.intp)
        np.cumsum(lengths, out=in_offsets[1:])
        if lengths.size == 0:
            return TokenBatch(np.empty((0, self._dim), dtype=np.float32), out_offsets)
        if chosen == "input":
            if not special_tokens:
                return TokenBatch(self._embedding_rows(flat), out_offsets)
            full = np.empty(int(out_offsets[-1]), dtype=np.int64)
            starts = out_offsets[:-1]
            for j, token in enumerate(before):
                full[starts + j] = token
            full[np.repeat(starts + nb - in_offsets[:-1], lengths) + np.arange(flat.size)] = flat
            for j, token in enumerate(after):
                full[starts + nb + lengths + j] = token
            return TokenBatch(self._embedding_rows(full), out_offsets)
        self._check_sizes(sizes)
        out = np.empty((int(out_offsets[-1]), self._dim), dtype=np.float32)
        batches = self._batch_index(sizes)
        first = 0 if special_tokens else nb
        with self._progress_bar(int(sizes.sum()), len(batches), what) as bar, \
                torch.inference_mode():
            for idx in batches:
                n_item = lengths[idx]
                cols = np.arange(int(n_item.max()))
                full_rows = bool((n_item == cols.size).all())
                valid = cols[None, :] < n_item[:, None]
                src = in_offsets[idx][:, None] + cols[None, :]
                ids = np.full((idx.size, cols.size + nb + na), self._pad_id, dtype=np.int64)
                ids[:, :nb] = before
                if full_rows:
                    ids[:, nb:nb + cols.size] = flat[src]
                else:
                    ids[:, nb:nb + cols.size][valid] = flat[src[valid]]
                for j, token in enumerate(after):
                    ids[np.arange(idx.size), nb + n_item + j] = token
                mask = np.arange(ids.shape[1])[None, :] < sizes[idx][:, None]
                attention = torch.from_numpy(mask.astype(np.int64)).to(self._device)
                hidden = self._hidden(chosen, input_ids=torch.from_numpy(ids).to(self._device),
                                      attention_mask=attention)
                width = int(kept[idx].max())
                keep_cols = np.arange(width)
                keep = keep_cols[None, :] < kept[idx][:, None]
                block = hidden[:, first:first + width]
                if keep.all():
                    rows = block.reshape(-1, self._dim)
                else:
                    rows = block[torch.from_numpy(keep).to(self._device)]
                dst = out_offsets[idx][:, None] + keep_cols[None, :]
                out[dst[keep]] = rows.float().cpu().numpy()
                bar.update(int(sizes[idx].sum()))
        return TokenBatch(out, out_offsets)

    # -- protocol methods ------------------------------------------------------------------------
    def _wrap(self, ids: list[int]) -> tuple[list[int], int]:
        """The sequence the model runs for ``ids`` and where ``ids`` start in it."""
        raise NotImplementedError

    def _wrap_full(self, ids: list[int]) -> list[int]:
        """The sequence with every special token (``special_tokens=True``)."""
        raise NotImplementedError

    def token_vectors(
        self, texts: Sequence[str], *, layer: Layer = "last", special_tokens: bool = False,
        words: bool = False,
    ) -> TokenBatch:
        """Token vectors of each text (each word's tokens with ``words=True``), caller's order.

        One tokenizer call for the whole list, batches of one sequence length, rows gathered and
        scattered with numpy (``fast=False``: the reference path, one item at a time).
        """
        if not self._fast:
            return self._token_vectors_simple(texts, layer=layer, special_tokens=special_tokens,
                                              words=words)
        flat, lengths = self._flat_ids(texts, words)
        return self._token_rows(flat, lengths, layer, bool(special_tokens), "token vectors")

    def _token_vectors_simple(
        self, texts: Sequence[str], *, layer: Layer = "last", special_tokens: bool = False,
        words: bool = False,
    ) -> TokenBatch:
        """The reference path: per-item tokenisation, sequences and results as Python lists."""
        id_lists = self._item_ids(texts, words)
        seqs: list[list[int]] = []
        keep: list[slice] = []
        for ids in id_lists:
            if special_tokens:
                seq = self._wrap_full(ids)
                seqs.append(seq)
                keep.append(slice(0, len(seq)))
            else:
                seq, start = self._wrap(ids)
                seqs.append(seq)
                keep.append(slice(start, start + len(ids)))
        rows = self._run_states(seqs, layer, keep, "token vectors")
        return TokenBatch.from_list(rows, self._dim)

    def _check_state(self, state: str) -> None:
        """Raise unless this model produces ``state``."""
        if state not in self.states:
            have = ", ".join(self.states) or "none"
            kind = "special state" if state in SPECIAL_STATE_NAMES else "state name"
            raise NormtestError(
                f"{self._name} does not produce the {kind} {state!r} (it produces: {have})"
            )

    def _state_sequence(self, ids: list[int], state: str) -> tuple[list[int], int]:
        """The sequence to run for ``state`` and the position to read it at."""
        raise NotImplementedError

    def special_states(
        self, texts: Sequence[str], state: str, *, layer: Layer = "last"
    ) -> NDArray[np.floating]:
        """The named state of each text: (len(texts), dim) float32."""
        self._check_state(state)
        check_layer(layer, self._n_layers)
        id_lists = self._item_ids(texts, words=False)
        if not id_lists:
            return np.empty((0, self._dim), dtype=np.float32)
        pairs = [self._state_sequence(ids, state) for ids in id_lists]
        rows = self._run_states([p[0] for p in pairs], layer,
                                [slice(p[1], p[1] + 1) for p in pairs], f"{state} states")
        return np.concatenate(rows)

    def _prefix_setup(
        self, text: str, prefix_lengths: Sequence[int], pooling: str, layer: Layer
    ) -> tuple[list[int], list[int]]:
        """Validate a prefix request and return (text ids, prefix lengths)."""
        check_layer(layer, self._n_layers)
        if isinstance(prefix_lengths, (str, bytes)):
            raise NormtestError("prefix_lengths must be a sequence of token counts")
        for value in prefix_lengths:
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise NormtestError(f"prefix lengths must be integers, got {value!r}")
        longest = max((int(v) for v in prefix_lengths), default=0)
        ids, _ = self._leading_ids(text, longest)
        n = len(ids)
        lengths: list[int] = []
        for value in prefix_lengths:
            if not 1 <= int(value) <= n:
                raise NormtestError(
                    f"prefix length {int(value)} is out of range: the text has {n} tokens for "
                    f"{self._name}, so lengths must lie in 1..{n}"
                )
            lengths.append(int(value))
        if not isinstance(pooling, str):
            raise NormtestError(f"pooling must be a state or composition name, got {pooling!r}")
        if pooling not in self.states:
            if pooling in ("cls", "eos", *MODEL_STATES):
                self._check_state(pooling)  # a state this model lacks
            get_composition(pooling)  # raises NormtestError with suggestions when unknown
        return ids[:longest], lengths

    def _leading_ids(self, text: str, at_least: int) -> tuple[list[int], bool]:
        """The ids of the start of ``text`` holding more than ``at_least`` tokens, or all of
        them (:func:`~normtest.adapters.protocol.leading_ids`), kept per text: the audit asks
        for every pooling of a document in turn, and a document may run to 14,000 tokens."""
        found = self._text_ids.get(text)
        if found is None or (not found[1] and len(found[0]) <= at_least):
            found = leading_ids(self._ids, text, at_least)
            if not found[0]:
                raise NormtestError(
                    f"text {text!r} has no tokens for {self._name}; pass non-empty text"
                )
            self._text_ids.put(text, found, 1)  # counted in texts, not bytes
        return found

    def prefix_vectors_many(
        self, texts: Sequence[str], prefix_lengths: Sequence[Sequence[int]], pooling: str, *,
        layer: Layer = "last",
    ) -> list[NDArray[np.floating]]:
        """``prefix_vectors`` of several documents at once: one (len(lengths_i), dim) array each.

        Equal to one ``prefix_vectors`` call per document. Encoders batch the prefixes of every
        document by length (all prefixes of length L, whatever their document, run together).
        """
        if isinstance(texts, str):
            raise NormtestError("pass a list of texts, not a single string")
        texts, grids = list(texts), list(prefix_lengths)
        if len(texts) != len(grids):
            raise NormtestError(
                f"{len(texts)} texts but {len(grids)} prefix-length lists; give one list per text"
            )
        setups = [self._prefix_setup(t, g, pooling, layer) for t, g in zip(texts, grids,
                                                                              strict=True)]
        return self._prefix_many(setups, pooling, layer)

    def _prefix_many(
        self, setups: Sequence[tuple[list[int], list[int]]], pooling: str, layer: Layer
    ) -> list[NDArray[np.floating]]:
        """Prefix vectors of validated (ids, lengths) pairs (subclasses batch them)."""
        raise NotImplementedError

    def clear_prefix_memo(self) -> None:
        """Forget the prefix states kept between calls (they serve every pooling of a text)."""
        self._memo.clear()

    def _memo_key(self, kind: str, ids: Sequence[int], grid: tuple[int, ...],
                  layer: Layer) -> tuple[Hashable, ...]:
        """Everything that decides a document's prefix states (options fixed per adapter)."""
        chosen = check_layer(layer, self._n_layers)
        plain = chosen if isinstance(chosen, str) else int(chosen)
        return (kind, tuple(ids[:grid[-1]]), grid, plain, *self._revision_extras())

    def _compose_prefixes(
        self, token_rows: Sequence[FloatRows], pooling: str
    ) -> NDArray[np.float32]:
        """Compose each prefix's own token states, in memory-bounded compose_batch calls."""
        out = np.empty((len(token_rows), self._dim), dtype=np.float32)
        budget = max(1, _COMPOSE_ELEMENTS // self._dim)
        start = 0
        while start < len(token_rows):
            stop, rows = start, 0
            while stop < len(token_rows) and (stop == start or rows + len(token_rows[stop])
                                              <= budget):
                rows += len(token_rows[stop])
                stop += 1
            chunk = token_rows[start:stop]
            offsets = np.concatenate([[0], np.cumsum([len(c) for c in chunk])]).astype(np.intp)
            out[start:stop] = compose_batch(np.concatenate(chunk), offsets, pooling)
            start = stop
        return out
