"""Corpus counts restricted to a vocabulary: the questions an audit asks, answered exactly.

:class:`CorpusCounts` holds what :mod:`normtest.data.information.scaled` counts: the unigram count
c(w) and the marginal m(w) = Σ_c n(w, c) of *every* word type of the corpus, but co-occurrence
rows n(x, ·) only for the words x of a vocabulary (the audit's sample). Memory is then bounded by
the vocabulary (its rows) and the corpus's types (two integers each), not by the corpus's pairs.

Every quantity it answers — ``count``, ``information_content``, ``kl``, ``pmi``,
``pair_counts``, ``cooccurring_pairs`` — is computed with the same formulas, in the same order, as
:class:`~normtest.data.information.corpus.CorpusStatistics` (word types are kept in order of first
appearance, the contexts of a row in that order too), so the numbers equal the full statistics'
bit for bit for words of the vocabulary. A question about a word outside the vocabulary that the
corpus holds raises a NormtestError (its row was not counted); a word absent from the corpus is
missing, as there.

Stored as ``.npz`` (``allow_pickle=False``): strings as UTF-8 bytes with offsets, counts as
integers, the description and the key they were counted from as JSON, and a SHA-256 of all of it
(:mod:`~normtest.data.information.checked_files`). :meth:`CorpusCounts.load` checks the
checksum, then that the counts agree with themselves (each row adds up to its word's marginal, rows
are symmetric between counted words): a file that fails is one NormtestError naming it, never a
traceback.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from normtest.data.information.checked_files import read_checked, unusable, write_checked
from normtest.data.information.corpus import _check_min_count, _check_pairs, _Quantities, _readonly
from normtest.data.information.corpus_counting import check_seed
from normtest.data.information.frequency import check_words
from normtest.errors import NormtestError

__all__ = ["FORMAT", "CorpusCounts"]

#: The stored format's version (a file of another version is counted again). 2: a SHA-256 of
#: the arrays, checked on read.
FORMAT = 2


def _pack(words: Sequence[str]) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    encoded = [w.encode("utf-8") for w in words]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


def _unpack(blob: NDArray[np.uint8], offsets: NDArray[np.int64]) -> list[str]:
    """The strings :func:`_pack` packed (ValueError when the offsets do not cut the bytes)."""
    raw = blob.tobytes()
    ends = offsets.tolist() if offsets.ndim == 1 and offsets.dtype.kind in "iu" else [-1]
    if ends[0] != 0 or ends[-1] != len(raw) or any(b < a for a, b in itertools.pairwise(ends)):
        raise ValueError("the offsets of the stored words do not cut their bytes")
    return [raw[a:b].decode("utf-8") for a, b in itertools.pairwise(ends)]


class CorpusCounts(_Quantities):
    """Unigram counts and marginals of every type, co-occurrence rows of a vocabulary (module
    doc); answers as :class:`~normtest.data.information.corpus.CorpusStatistics` does, with the same
    formulas (:class:`~normtest.data.information.corpus._Quantities`)."""

    def __init__(
        self,
        *,
        types: Sequence[str],
        unigram_counts: NDArray[np.int64],
        marginals: NDArray[np.int64],
        rows: Sequence[str],
        cooccurrence: sparse.csr_array,
        window: int,
        lang: str,
        source: str,
        n_documents: int,
        n_empty_documents: int = 0,
        n_replaced_bytes: int = 0,
    ) -> None:
        """Wrap merged counts: ``cooccurrence`` has one row per word of ``rows`` and one column
        per type of ``types`` (n(x, c), columns sorted)."""
        self._types = tuple(types)
        self._index = {w: i for i, w in enumerate(self._types)}
        self._unigram = _readonly(np.asarray(unigram_counts, dtype=np.int64))
        self._marginals = _readonly(np.asarray(marginals, dtype=np.int64))
        self._rows = tuple(rows)
        self._row_of = {w: i for i, w in enumerate(self._rows)}
        if cooccurrence.shape != (len(self._rows), len(self._types)):
            raise NormtestError(f"co-occurrence rows of shape {cooccurrence.shape} do not match "
                                f"{len(self._rows)} rows and {len(self._types)} types")
        self._cooc = cooccurrence
        self._cooc.data.setflags(write=False)
        self.window = window
        self.lang = lang
        self.source = source
        self.n_documents = n_documents
        self.n_empty_documents = n_empty_documents
        self.n_replaced_bytes = n_replaced_bytes
        #: Counts the two halves of the corpus's documents for a vocabulary and a seed; set by
        #: ``corpus_counts`` (from the files, same settings and executor, stored), else None.
        self.halves_counter: Callable[[Sequence[str], int],
                                      tuple[CorpusCounts, CorpusCounts]] | None = None
        self._halves: tuple[int, tuple[CorpusCounts, CorpusCounts]] | None = None

    # -- the counts ---------------------------------------------------------------------------

    @property
    def vocabulary(self) -> tuple[str, ...]:
        """Every word type of the corpus, in order of first appearance."""
        return self._types

    @property
    def rows(self) -> tuple[str, ...]:
        """The words whose co-occurrence rows were counted (sorted)."""
        return self._rows

    @property
    def unigram_counts(self) -> NDArray[np.int64]:
        """c(w) for every type, aligned with :attr:`vocabulary`."""
        return self._unigram

    @property
    def marginals(self) -> NDArray[np.int64]:
        """m(w) = Σ_c n(w, c) for every type: the window neighbours of all occurrences of w."""
        return self._marginals

    @property
    def cooccurrence(self) -> sparse.csr_array:
        """n(x, c): one row per word of :attr:`rows`, one column per type (int64 CSR)."""
        return self._cooc

    def _context_rows(self, words: Sequence[str],
                      ids: NDArray[np.int64]) -> NDArray[np.int64]:
        """Row of each word present in the corpus (−1 where absent); refuses uncounted rows."""
        rows = np.array([self._row_of.get(w, -1) for w in words], dtype=np.int64)
        outside = [w for w, r, i in zip(words, rows, ids, strict=True) if r < 0 and i >= 0]
        if outside:
            raise NormtestError(
                f"{len(outside)} words (e.g. {outside[0]!r}) are in the corpus but outside the "
                f"vocabulary whose co-occurrences were counted ({len(self._rows)} words); count "
                "the corpus with a vocabulary that includes them"
            )
        return rows

    def pair_counts(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.int64]:
        """n(x, y) of each pair (0 when never together or a word is absent); x or y must be in
        the vocabulary (n is symmetric)."""
        ps = _check_pairs(pairs)
        x = self.word_ids([a for a, _ in ps])
        y = self.word_ids([b for _, b in ps])
        rx = np.array([self._row_of.get(a, -1) for a, _ in ps], dtype=np.int64)
        ry = np.array([self._row_of.get(b, -1) for _, b in ps], dtype=np.int64)
        present = (x >= 0) & (y >= 0)
        by_x = present & (rx >= 0)
        by_y = present & (rx < 0) & (ry >= 0)
        if (present & (rx < 0) & (ry < 0)).any():
            k = int(np.flatnonzero(present & (rx < 0) & (ry < 0))[0])
            self._context_rows([ps[k][0]], x[k : k + 1])  # raises: neither word's row was counted
        out = np.zeros(len(ps), dtype=np.int64)
        if by_x.any():
            out[by_x] = np.asarray(self._cooc[rx[by_x], y[by_x]]).ravel()
        if by_y.any():
            out[by_y] = np.asarray(self._cooc[ry[by_y], x[by_y]]).ravel()
        return out

    def __repr__(self) -> str:
        return (
            f"CorpusCounts({self.source}: {self.n_documents} documents, {self.n_tokens} tokens, "
            f"{len(self._types)} types, {len(self._rows)} rows, window ±{self.window})"
        )

    def cooccurring_pairs(self, words: Sequence[str] | None = None, *,
                          min_count: int = 5) -> list[tuple[str, str]]:
        """Distinct pairs (x, y), x before y alphabetically, of ``words`` (default: the whole
        vocabulary) seen together ≥ ``min_count`` times."""
        min_count = _check_min_count(min_count)
        ws = list(self._rows) if words is None else check_words(words)
        ids = self.word_ids(ws)
        rows = self._context_rows(ws, ids)
        present = ids >= 0
        ids, rows = ids[present], rows[present]
        mask = np.zeros(len(self._types), dtype=bool)
        mask[ids] = True
        c = self._cooc
        row_index = np.repeat(np.arange(c.shape[0]), np.diff(c.indptr))
        row_type = np.full(c.shape[0], -1, dtype=np.int64)
        row_type[rows] = ids
        chosen = np.zeros(c.shape[0], dtype=bool)
        chosen[rows] = True
        keep = ((c.data >= min_count) & chosen[row_index] & mask[c.indices]
                & (row_type[row_index] != c.indices))
        voc = self._types
        found: set[tuple[str, str]] = set()
        for a, b in zip(row_type[row_index[keep]].tolist(), c.indices[keep].tolist(),
                        strict=True):
            x, y = voc[a], voc[b]
            found.add((x, y) if x <= y else (y, x))
        return sorted(found)

    def halves(self, seed: int = 0) -> tuple[CorpusCounts, CorpusCounts]:
        """The counts of the two halves of the documents under the seeded coin, for the same
        rows (they add up exactly to these); the last seed's halves are kept."""
        seed = check_seed(seed)
        if self._halves is None or self._halves[0] != seed:
            if self.halves_counter is None:
                raise NormtestError(
                    "these counts do not know their files (loaded or built by hand); count the "
                    "corpus with corpus_counts(...) or corpus_halves(...) to split it in halves")
            self._halves = (seed, self.halves_counter(self._rows, seed))
        return self._halves[1]

    # -- storage -------------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str], key: dict[str, Any] | None = None) -> None:
        """Write the counts and ``key`` (what they were counted from) to ``path`` (``.npz``, no
        pickles, with the SHA-256 of every array: :func:`~normtest.data.information.checked_files.
        write_checked`) atomically: a temporary file in the same folder, then ``os.replace``."""
        c = self._cooc
        meta = {"format": FORMAT, "window": self.window, "lang": self.lang,
                "source": self.source, "n_documents": self.n_documents,
                "n_empty_documents": self.n_empty_documents,
                "n_replaced_bytes": self.n_replaced_bytes, "key": key or {}}
        types_blob, types_offsets = _pack(self._types)
        rows_blob, rows_offsets = _pack(self._rows)
        index_type = np.int32 if len(self._types) < 2**31 else np.int64
        data_type = np.uint32 if c.data.size == 0 or c.data.max() < 2**32 else np.int64
        write_checked(Path(path), {
            "meta": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8),
            "types_blob": types_blob, "types_offsets": types_offsets,
            "rows_blob": rows_blob, "rows_offsets": rows_offsets,
            "unigram": self._unigram, "marginals": self._marginals,
            "indptr": c.indptr.astype(np.int64), "indices": c.indices.astype(index_type),
            "data": c.data.astype(data_type),
        })

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> tuple[CorpusCounts, dict[str, Any]]:
        """Counts written by :meth:`save`, and the key stored with them. NormtestError naming the
        file when it is not such counts: unreadable, truncated, another format, a checksum that
        does not match, or counts that contradict themselves (:func:`_check_stored`)."""
        z = read_checked(path, _WHAT, _MEMBERS)
        try:
            meta = json.loads(z["meta"].tobytes().decode("utf-8"))
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                found = meta.get("format") if isinstance(meta, dict) else None
                raise ValueError(f"it holds counts of format {found}, not {FORMAT}")
            types = _unpack(z["types_blob"], z["types_offsets"])
            rows = _unpack(z["rows_blob"], z["rows_offsets"])
            matrix = sparse.csr_array(
                (_integers(z["data"]), _integers(z["indices"]), _integers(z["indptr"])),
                shape=(len(rows), len(types)))
            counts = cls(types=types, unigram_counts=_integers(z["unigram"]),
                         marginals=_integers(z["marginals"]), rows=rows, cooccurrence=matrix,
                         window=int(meta["window"]), lang=str(meta["lang"]),
                         source=str(meta["source"]), n_documents=int(meta["n_documents"]),
                         n_empty_documents=int(meta["n_empty_documents"]),
                         n_replaced_bytes=int(meta["n_replaced_bytes"]))
            _check_stored(counts)
            key = meta.get("key") or {}
            if not isinstance(key, dict):
                raise ValueError(f"its key is {type(key).__name__}, not an object")
        except (NormtestError, ValueError, KeyError, TypeError, IndexError, OverflowError,
                MemoryError, AttributeError, RecursionError) as exc:
            plain = isinstance(exc, NormtestError | ValueError) and str(exc)
            raise unusable(path, _WHAT, str(exc) if plain else
                           f"{type(exc).__name__}: {exc}") from None
        return counts, dict(key)


_WHAT = "corpus counts"
_MEMBERS = ("meta", "types_blob", "types_offsets", "rows_blob", "rows_offsets", "unigram",
            "marginals", "indptr", "indices", "data")


def _integers(array: NDArray[Any]) -> NDArray[np.int64]:
    """A stored 1-D array of integers as int64 (ValueError for anything else)."""
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise ValueError(f"an array of {array.dtype} and shape {array.shape}, not 1-D integers")
    return array.astype(np.int64)


def _check_stored(counts: CorpusCounts) -> None:
    """Refuse read-back counts that contradict themselves (ValueError): unique types and rows, c and
    m of every type, non-negative counts, a well-formed matrix, and each counted row equal to what
    the marginals and the other rows say of it: its sum is m(x) (every window neighbour of every
    occurrence of x, as :mod:`~normtest.data.information.scaled` counts them; a row of a word absent
    from the corpus is empty), and n(x, y) = n(y, x) between rows."""
    types, rows, c = counts.vocabulary, counts.rows, counts.cooccurrence
    n = len(types)
    if len(set(types)) != n or len(set(rows)) != len(rows):
        raise ValueError("a word is stored twice")
    if counts.unigram_counts.shape != (n,) or counts.marginals.shape != (n,):
        raise ValueError("the unigram counts or marginals do not match the types")
    if (counts.unigram_counts < 0).any() or (counts.marginals < 0).any() or (c.data < 0).any():
        raise ValueError("a count is negative")
    c.check_format(full_check=True)
    ids = counts.word_ids(list(rows))
    present = ids >= 0
    sums = np.asarray(c.sum(axis=1)).ravel()
    if not np.array_equal(sums[present], counts.marginals[ids[present]]) or sums[~present].any():
        raise ValueError("a co-occurrence row does not add up to its word's marginal")
    among = c[np.flatnonzero(present)][:, ids[present]]
    if (among != among.T).nnz:
        raise ValueError("the co-occurrence counts between counted words are not symmetric")
