"""Counting a corpus: tokens, ids, unigram counts and ±h window pair counts, in chunks.

**Tokens.** Every text is tokenised with ``wordfreq.tokenize(text, lang)``: the normalisation of
the frequency source (:mod:`normtest.data.information.frequency`): Unicode NFC, case folding, words
split by the Unicode word-break rules, punctuation dropped, apostrophes inside words kept
(``don't``); tokens made only of U+FFFD (undecodable bytes, counted when read) are dropped. Token
strings are mapped to integer ids as they stream in.

**Counting** is vectorised: per chunk of documents, for each offset k in 1..h the aligned id
arrays ``(ids[:-k], ids[k:])`` (masked where they straddle a document boundary) are summed into a
``scipy.sparse`` matrix; chunks are merged as sparse triplets. ``benchmarks/bench_cooccurrence.py``
compares it with a plain ``collections.Counter``.

**Halves.** :func:`document_half` is the seeded coin that splits a corpus's documents in two
for PMI's split-half reliability (:mod:`normtest.data.information.reliability`): a keyed hash of the
document's tokens, so that the same document falls on the same side however the corpus is read
(whole, in blocks, on any number of workers) and for both kinds of corpus statistics.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from normtest.errors import NormtestError

_CHUNK_TOKENS = 1 << 20  # tokens per counting chunk
_REPLACEMENT = "\ufffd"
#: The version of :func:`document_half` (part of the key of stored halves).
COIN_VERSION = 1


def tokenize(text: str, lang: str = "en") -> list[str]:
    """The corpus tokens of a text: ``wordfreq.tokenize`` (NFC, case-folded, no punctuation).

    Tokens made only of U+FFFD (bytes that were not UTF-8, replaced when the file was read) are
    dropped: they are counted as replaced bytes, not as words.
    """
    from wordfreq import tokenize as wf_tokenize

    tokens = wf_tokenize(text, lang)
    if _REPLACEMENT in text:
        tokens = [t for t in tokens if t.strip(_REPLACEMENT)]
    return tokens


def _window_pair_counts(
    ids: NDArray[np.int64], lengths: NDArray[np.int64], window: int, size: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Unordered counts u(x, y), x ≤ y, of position pairs i < j ≤ i + window within documents.

    ``ids`` holds whole documents of the given ``lengths`` back to back. Each is followed by
    ``window`` sentinel ids (``size``) so that no pair crosses a document; for each offset k the
    pair (t_i, t_{i+k}) is encoded as min·(size+1) + max, the codes are sorted and run-length
    counted, and pairs that touch a sentinel are dropped. Returns
    (x, y, count) sorted by (x, y); the symmetric counts are n = U + Uᵀ (the diagonal doubles).
    """
    base = size + 1
    dtype = np.uint32 if base * base <= 2**32 else np.int64  # narrow codes sort faster
    n, n_docs = ids.size, lengths.size
    pad = np.full(n + window * n_docs, size, dtype=dtype)
    pad[np.arange(n) + np.repeat(np.arange(n_docs) * window, lengths)] = ids
    m = pad.size - window
    codes = np.empty((window, max(m, 0)), dtype=dtype)
    left = pad[:m]
    for k in range(1, window + 1):
        right = pad[k : k + m]
        np.add(np.minimum(left, right) * dtype(base), np.maximum(left, right), out=codes[k - 1])
    keys = codes.ravel()
    keys.sort()
    if keys.size == 0:
        empty = np.empty(0, np.int64)
        return empty, empty, empty
    first = np.empty(keys.size, dtype=bool)
    first[0] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, keys.size))
    unique = keys[starts]
    rows = unique // dtype(base)
    cols = unique - rows * dtype(base)
    real = cols < size  # the larger id is a sentinel exactly when the pair touches one
    return rows[real].astype(np.int64), cols[real].astype(np.int64), counts[real].astype(np.int64)


class _PairAccumulator:
    """Sums unordered pair counts chunk by chunk as sparse (row ≤ col, count) triplets."""

    def __init__(self) -> None:
        self._parts: list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]] = []
        self._merged_nnz = 0
        self._pending_nnz = 0

    def add(
        self, rows: NDArray[np.int64], cols: NDArray[np.int64], counts: NDArray[np.int64], size: int
    ) -> None:
        """Add one chunk's deduplicated triplets (sorted by row, col)."""
        if rows.size == 0:
            return
        self._parts.append((rows, cols, counts))
        self._pending_nnz += rows.size
        if len(self._parts) > 1 and self._pending_nnz > max(self._merged_nnz, _CHUNK_TOKENS):
            self._merge(size)

    def _merge(self, size: int) -> None:
        if len(self._parts) < 2:
            return
        row = np.concatenate([p[0] for p in self._parts])
        col = np.concatenate([p[1] for p in self._parts])
        data = np.concatenate([p[2] for p in self._parts])
        merged = sparse.coo_array((data, (row, col)), shape=(size, size)).tocsr()
        merged.sum_duplicates()
        merged.sort_indices()
        rows = np.repeat(np.arange(size, dtype=np.int64), np.diff(merged.indptr))
        self._parts = [(rows, merged.indices.astype(np.int64), merged.data.astype(np.int64))]
        self._merged_nnz, self._pending_nnz = merged.nnz, 0

    def symmetric(self, size: int) -> sparse.csr_array:
        """n = U + Uᵀ from the upper-triangular counts U (the diagonal doubles), canonical CSR."""
        self._merge(size)
        if not self._parts:
            return sparse.csr_array((size, size), dtype=np.int64)
        rows, cols, counts = self._parts[0]
        indptr = np.searchsorted(rows, np.arange(size + 1))
        upper = sparse.csr_array((counts, cols, indptr), shape=(size, size))
        out = (upper + upper.T).tocsr()
        out.sum_duplicates()
        out.sort_indices()
        return out


def assign_ids(vocab: dict[str, int],
               tokens: Sequence[str]) -> tuple[list[str], NDArray[np.int64]]:
    """Give the words of ``tokens`` new to ``vocab`` the next ids (in order of appearance) and
    return them with every token's id: one hash lookup per token (never per pair), in C."""
    new = [w for w in dict.fromkeys(tokens) if w not in vocab]
    vocab.update(zip(new, range(len(vocab), len(vocab) + len(new)), strict=True))
    return new, np.fromiter(map(vocab.__getitem__, tokens), dtype=np.int64, count=len(tokens))


class DocumentQueue:
    """Tokenised documents queued until about ``chunk`` tokens wait, then mapped to ids of one
    growing vocabulary (:func:`assign_ids`) and counted together by the subclass's
    :meth:`count_chunk`; ``flush`` counts what is left."""

    def __init__(self, chunk: int) -> None:
        self.vocab: dict[str, int] = {}
        self.n_documents = 0
        self.n_empty = 0
        self._chunk = chunk
        self._buffer: list[str] = []
        self._buffer_lengths: list[int] = []

    def add(self, tokens: Sequence[str]) -> None:
        """Queue one document's tokens; count when a chunk is full."""
        self.n_documents += 1
        if not tokens:
            self.n_empty += 1
            return
        self._buffer.extend(tokens)
        self._buffer_lengths.append(len(tokens))
        if len(self._buffer) >= self._chunk:
            self.flush()

    def flush(self) -> None:
        """Map the queued tokens to ids (new words get the next ids) and count them."""
        if not self._buffer:
            return
        new, ids = assign_ids(self.vocab, self._buffer)
        lengths = np.array(self._buffer_lengths, dtype=np.int64)
        self._buffer, self._buffer_lengths = [], []
        self.count_chunk(new, ids, lengths)

    def count_chunk(self, new: list[str], ids: NDArray[np.int64],
                    lengths: NDArray[np.int64]) -> None:
        """Count one chunk: ``new`` words took the vocabulary's last ids; ``ids`` are whole
        documents of ``lengths`` tokens."""
        raise NotImplementedError


class _StreamCounter(DocumentQueue):
    """Streams tokenised documents into ids, unigram counts and window pair counts."""

    def __init__(self, window: int, keep_tokens: bool) -> None:
        super().__init__(_CHUNK_TOKENS)
        self.window = window
        self.keep_tokens = keep_tokens
        self.unigram = np.zeros(0, dtype=np.int64)
        self.pairs = _PairAccumulator()
        self.kept: list[NDArray[np.int32]] = []
        self.lengths: list[int] = []

    def count_chunk(self, new: list[str], ids: NDArray[np.int64],
                    lengths: NDArray[np.int64]) -> None:
        self.count_ids(ids, lengths, len(self.vocab))

    def count_ids(self, ids: NDArray[np.int64], lengths: NDArray[np.int64], size: int) -> None:
        """Count one chunk of ids (whole documents of the given lengths)."""
        counts = np.bincount(ids, minlength=size)
        counts[: self.unigram.size] += self.unigram
        self.unigram = counts
        self.pairs.add(*_window_pair_counts(ids, lengths, self.window, size), size)
        if self.keep_tokens:
            self.kept.append(ids.astype(np.int32))
        self.lengths.extend(lengths.tolist())


def check_seed(seed: int) -> int:
    """A seed for the document coin: an integer in [0, 2⁶³)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**63:
        raise NormtestError(f"the seed must be an integer in [0, 2**63), got {seed!r}")
    return int(seed)


def document_half(tokens: Sequence[str], seed: int) -> int:
    """The side (0 or 1) of a document under the coin of ``seed``: the low bit of a BLAKE2b
    hash of its tokens keyed by the seed. Deterministic for a seed, about 50:50 and independent
    across distinct documents and seeds; a document's side depends on its tokens only (not on
    its position, its file or the block it is counted in), so identical documents share a side."""
    key = str(check_seed(seed)).encode("ascii")
    text = "\x1f".join(tokens).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(text, digest_size=8, key=key).digest()[0] & 1


def count_documents(ids: NDArray[np.int64], lengths: NDArray[np.int64], window: int,
                    size: int) -> tuple[NDArray[np.int64], sparse.csr_array]:
    """Unigram counts and the symmetric window counts n of whole documents of ``lengths``
    tokens (ids below ``size``) held back to back in ``ids``, counted in chunks of whole
    documents."""
    counter = _StreamCounter(window, keep_tokens=False)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    start = 0
    while start < len(lengths):
        stop = int(np.searchsorted(bounds, bounds[start] + _CHUNK_TOKENS, side="right"))
        stop = max(stop - 1, start + 1)
        counter.count_ids(ids[bounds[start] : bounds[stop]], lengths[start:stop], size)
        start = stop
    unigram = np.zeros(size, dtype=np.int64)
    unigram[: counter.unigram.size] += counter.unigram
    return unigram, counter.pairs.symmetric(size)
