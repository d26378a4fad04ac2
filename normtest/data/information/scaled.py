"""Corpus statistics at scale: counted in parallel blocks, merged, stored.

:func:`corpus_counts` counts a corpus spec (:mod:`normtest.data.information.readers`: files,
folders, globs; plain, gzip, bz2, Parquet) for a **vocabulary** (the audit's sample words) and
returns :class:`~normtest.data.information.vocabulary_counts.CorpusCounts`, which answers ``count``,
``kl``, ``pmi`` and ``cooccurring_pairs`` with exactly the numbers of
:meth:`CorpusStatistics.from_files <normtest.data.information.corpus.CorpusStatistics.from_files>`.

**Blocks.** The corpus is cut into blocks (:func:`~normtest.data.information.readers.plan_blocks`)
and each is counted by :func:`count_block`: tokens as ``CorpusStatistics`` makes them, then

- c(w) for every type (bounded by the corpus's types, which grow slowly);
- m(w) = Σ_c n(w, c) for every type, exactly: each occurrence of w adds the number of its
  window neighbours inside its document, min(i, h) + min(L − 1 − i, h) at position i of a
  document of L tokens — the row sum of the full symmetric matrix;
- n(x, c) for the words x of the vocabulary and every context c (sparse): the co-occurrence
  part, bounded by the vocabulary.

**Merge.** Blocks are added as they finish (integer sums: any order gives the same counts). Each
type keeps the (block, position) where it was first seen, and the merged types are ordered by it:
the order of first appearance in the whole corpus, as ``CorpusStatistics`` numbers them, so that
floating-point sums run in the same order and the results are equal bit for bit.

**Executors.** ``"local"``: ``workers`` processes (:class:`concurrent.futures.ProcessPoolExecutor`,
``forkserver``), or this process for one worker; default: one worker below
:data:`LOCAL_PARALLEL_BYTES` of text, else one per CPU. ``"ray"``: one Ray task per block (one
CPU each, at most ``workers`` at a time; default: the cluster's CPUs) on the cluster at
``ray_address`` (or ``$RAY_ADDRESS``), else one started here; a cluster that was already running
is joined and left running.

**Store.** The merged counts are written under ``<cache root>/corpora/`` (``$NORMTEST_CACHE_DIR``
or the user cache folder; :func:`store_dir`), one ``.npz`` per corpus and settings: the key hashes
every file's absolute path, kind, size and modification time (ns), the window, language, split,
text column and format version. The vocabulary is not in the key: the file holds rows for a set
of words, and a later call whose vocabulary is a subset reads it instead of counting; otherwise
the corpus is counted again for the union of both vocabularies (for at most
:data:`MAX_STORED_ROWS` words; beyond, for the new vocabulary alone) and the file replaced.
Changing a file (size or mtime) changes the key; old files are left for the user to delete. The
file carries its key and a SHA-256 of its arrays, checked on read with the counts' consistency
(:meth:`CorpusCounts.load`); a file that fails is counted again and replaced, with one warning.

**Halves** (:func:`corpus_halves`, :meth:`CorpusCounts.halves`): the documents split in two by a
seeded coin (:func:`~normtest.data.information.corpus_counting.document_half`), both counted in one
reading (:func:`count_block_halves`) on the same executor and stored with the seed and side in the
key; their counts add up exactly to the whole corpus's. For PMI's reliability.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import functools
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from normtest.base.fingerprint import json_sha256
from normtest.base.parallel import may_start_processes
from normtest.base.paths import default_cache_dir
from normtest.data.information.checked_files import unusable, warn_recomputed
from normtest.data.information.corpus import DEFAULT_WINDOW, _check_window
from normtest.data.information.corpus_counting import (
    COIN_VERSION,
    DocumentQueue,
    check_seed,
    document_half,
    tokenize,
)
from normtest.data.information.frequency import check_words
from normtest.data.information.readers import (
    COMPRESSION_RATIO,
    CorpusBlock,
    CorpusFile,
    CorpusSpec,
    corpus_files,
    plan_blocks,
    read_part,
)
from normtest.data.information.texts import DocumentSplit, split_documents
from normtest.data.information.vocabulary_counts import FORMAT, CorpusCounts
from normtest.errors import NormtestError
from normtest.models.ray import connect, unwrap

__all__ = [
    "DEFAULT_BLOCK_BYTES",
    "LOCAL_PARALLEL_BYTES",
    "MAX_STORED_ROWS",
    "BlockCounts",
    "corpus_counts",
    "corpus_halves",
    "count_block",
    "count_block_halves",
    "count_corpus",
    "store_dir",
]

#: Largest block (bytes of text); blocks are smaller when that gives each worker four.
DEFAULT_BLOCK_BYTES = 8 << 20
MIN_BLOCK_BYTES = 64 << 10
#: Below this much text, ``executor="local"`` with ``workers=None`` counts in this process.
LOCAL_PARALLEL_BYTES = 16 << 20
#: Tokens per counting chunk of a block (whole documents): the worker's working memory.
CHUNK_TOKENS = 1 << 18
#: Most vocabulary rows a stored file accumulates across calls.
MAX_STORED_ROWS = 50_000
_SHIFT = np.int64(1 << 32)  # first-seen key: block index · 2³² + position in the block


@dataclass
class BlockCounts:
    """One block's counts: its types (first appearance order) with c and m, and the rows n(x, ·)
    of the vocabulary (CSR over the block's type ids)."""

    index: int
    words: list[str]
    unigram: NDArray[np.int64]
    marginals: NDArray[np.int64]
    indptr: NDArray[np.int64]
    indices: NDArray[np.int64]
    data: NDArray[np.int64]
    n_documents: int
    n_empty: int
    n_replaced_bytes: int


def _grow(a: NDArray[np.int64], size: int) -> NDArray[np.int64]:
    out = np.zeros(size, dtype=np.int64)
    out[: a.size] = a
    return out


class _RowCounter(DocumentQueue):
    """Streams one block's documents into c(w), m(w) and the vocabulary's rows n(x, ·)."""

    def __init__(self, rows: Sequence[str], window: int) -> None:
        super().__init__(CHUNK_TOKENS)
        self.window = window
        self.row_of = {w: i for i, w in enumerate(rows)}
        self.n_rows = len(rows)
        self.row_of_id = np.zeros(0, dtype=np.int64)
        self.unigram = np.zeros(0, dtype=np.int64)
        self.marginals = np.zeros(0, dtype=np.int64)
        self.parts: list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]] = []
        self._pending = self._merged = 0

    def count_chunk(self, new: list[str], ids: NDArray[np.int64],
                    lengths: NDArray[np.int64]) -> None:
        """c(w), m(w) and the rows' window counts of one chunk of documents."""
        self.row_of_id = np.concatenate(
            [self.row_of_id, np.array([self.row_of.get(w, -1) for w in new], dtype=np.int64)])
        size, h = len(self.vocab), self.window
        self.unigram = _grow(self.unigram, size) + np.bincount(ids, minlength=size)
        doc_len = np.repeat(lengths, lengths)
        pos = np.arange(ids.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        neighbours = np.minimum(pos, h) + np.minimum(doc_len - 1 - pos, h)
        m = np.bincount(ids, weights=neighbours, minlength=size)  # exact: integers below 2⁵³
        self.marginals = _grow(self.marginals, size) + np.rint(m).astype(np.int64)
        self._add_rows(ids, lengths, size)

    def _add_rows(self, ids: NDArray[np.int64], lengths: NDArray[np.int64], size: int) -> None:
        """Add one chunk's rows n(x, ·); merge the chunks' triplets when they pile up."""
        triplets = _row_pairs(ids, lengths, self.row_of_id, self.window, self.n_rows, size)
        if triplets[0].size == 0:
            return
        self.parts.append(triplets)
        self._pending += triplets[0].size
        if len(self.parts) > 1 and self._pending > max(self._merged, CHUNK_TOKENS):
            self.parts = [_merge_triplets(self.parts, self.n_rows, size)]
            self._merged, self._pending = self.parts[0][0].size, 0

    def result(self, index: int, n_replaced_bytes: int) -> BlockCounts:
        """The block's counts (rows as CSR over its type ids, columns sorted)."""
        self.flush()
        size = len(self.vocab)
        rows, cols, data = (_merge_triplets(self.parts, self.n_rows, size) if self.parts else
                            (np.zeros(0, np.int64),) * 3)
        indptr = np.searchsorted(rows, np.arange(self.n_rows + 1)).astype(np.int64)
        return BlockCounts(index, list(self.vocab), _grow(self.unigram, size),
                           _grow(self.marginals, size), indptr, cols, data, self.n_documents,
                           self.n_empty, n_replaced_bytes)


def _row_pairs(ids: NDArray[np.int64], lengths: NDArray[np.int64], row_of_id: NDArray[np.int64],
               window: int, n_rows: int,
               size: int) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """(row, col, count) of n(x, c) for the row words x in a chunk of whole documents: for each
    offset k, (t_i, t_{i+k}) where t_i is a row word and (t_{i+k}, t_i) where t_{i+k} is; each
    document is followed by ``window`` sentinels (id ``size``), and pairs with one are dropped.
    Sorted by (row, col)."""
    h, n, n_docs = window, ids.size, lengths.size
    pad = np.full(n + h * n_docs, size, dtype=np.int64)
    pad[np.arange(n) + np.repeat(np.arange(n_docs) * h, lengths)] = ids
    row_pad = np.append(row_of_id, -1)[pad]
    m = pad.size - h
    left, row_left = pad[:m], row_pad[:m]
    left_real = left != size
    base = np.int64(size + 1)
    narrow = n_rows * int(base) < 2**32  # narrow keys take half the memory and sort faster
    codes = []
    for k in range(1, h + 1):
        right, row_right = pad[k : k + m], row_pad[k : k + m]
        sel = (row_left >= 0) & (right != size)
        forward = row_left[sel] * base + right[sel]
        sel = (row_right >= 0) & left_real
        backward = row_right[sel] * base + left[sel]
        codes += [forward.astype(np.uint32), backward.astype(np.uint32)] if narrow else [
            forward, backward]
    del pad, row_pad, left, row_left, left_real, sel, forward, backward
    keys = np.concatenate(codes)
    del codes
    keys.sort()
    if keys.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    first = np.empty(keys.size, dtype=bool)
    first[0] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    del first
    counts = np.diff(np.append(starts, keys.size)).astype(np.int64)
    unique = keys[starts].astype(np.int64)
    return unique // base, unique % base, counts


def _merge_triplets(parts: Sequence[tuple[NDArray[np.int64], ...]], n_rows: int,
                    size: int) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Summed (row, col, count) triplets, sorted by row then column (one sort of row·size + col
    codes: about five integers per triplet at the peak)."""
    codes = np.concatenate([p[0] * np.int64(size) + p[1] for p in parts])
    order = np.argsort(codes, kind="stable")
    codes = codes[order]
    counts = np.concatenate([p[2] for p in parts])[order]
    del order
    if codes.size == 0:
        return codes, codes, counts
    first = np.empty(codes.size, dtype=bool)
    first[0] = True
    np.not_equal(codes[1:], codes[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    del first
    summed = np.add.reduceat(counts, starts)
    unique = codes[starts]
    return unique // size, unique % size, summed


def count_block(block: CorpusBlock, rows: Sequence[str], window: int = DEFAULT_WINDOW,
                split: DocumentSplit = "paragraph", lang: str = "en") -> BlockCounts:
    """Count one block (the function every executor runs): c and m of every type, the rows
    n(x, ·) of the words ``rows`` (module doc)."""
    counter = _RowCounter(rows, window)
    replaced = 0
    for part in block.parts:
        for piece in read_part(part, split):
            replaced += piece.n_replaced
            for doc in split_documents(piece.text, split):
                counter.add(tokenize(doc, lang))
    return counter.result(block.index, replaced)


def count_block_halves(block: CorpusBlock, rows: Sequence[str], window: int = DEFAULT_WINDOW,
                       split: DocumentSplit = "paragraph", lang: str = "en",
                       seed: int = 0) -> tuple[BlockCounts, BlockCounts]:
    """Count one block's documents in two halves by the seeded coin
    :func:`~normtest.data.information.corpus_counting.document_half` (one reading, two counters);
    both halves carry the block's replaced bytes (they are a property of the files read)."""
    counters = (_RowCounter(rows, window), _RowCounter(rows, window))
    replaced = 0
    for part in block.parts:
        for piece in read_part(part, split):
            replaced += piece.n_replaced
            for doc in split_documents(piece.text, split):
                tokens = tokenize(doc, lang)
                counters[document_half(tokens, seed)].add(tokens)
    return counters[0].result(block.index, replaced), counters[1].result(block.index, replaced)


class _Merger:
    """Adds block counts in any order; orders the types by first appearance at the end."""

    def __init__(self, n_rows: int) -> None:
        self.n_rows = n_rows
        self.index: dict[str, int] = {}
        self.words: list[str] = []
        self.first = np.zeros(0, dtype=np.int64)
        self.unigram = np.zeros(0, dtype=np.int64)
        self.marginals = np.zeros(0, dtype=np.int64)
        self.parts: list[tuple[NDArray[np.int64], ...]] = []
        self._pending = self._merged = 0
        self.n_documents = self.n_empty = self.n_replaced = 0

    def add(self, b: BlockCounts) -> None:
        """Add one block's counts (integer sums)."""
        index = self.index
        new = [w for w in b.words if w not in index]
        index.update(zip(new, range(len(self.words), len(self.words) + len(new)), strict=True))
        self.words.extend(new)
        size = len(self.words)
        gids = np.fromiter(map(index.__getitem__, b.words), dtype=np.int64, count=len(b.words))
        first = np.full(size, np.iinfo(np.int64).max, dtype=np.int64)
        first[: self.first.size] = self.first
        first[gids] = np.minimum(first[gids], np.int64(b.index) * _SHIFT + np.arange(gids.size))
        self.first = first
        self.unigram = _grow(self.unigram, size)
        self.unigram[gids] += b.unigram
        self.marginals = _grow(self.marginals, size)
        self.marginals[gids] += b.marginals
        self.n_documents += b.n_documents
        self.n_empty += b.n_empty
        self.n_replaced += b.n_replaced_bytes
        if b.data.size:
            rows = np.repeat(np.arange(self.n_rows, dtype=np.int64), np.diff(b.indptr))
            self.parts.append((rows, gids[b.indices], b.data))
            self._pending += b.data.size
            if len(self.parts) > 1 and self._pending > max(self._merged, CHUNK_TOKENS):
                self.parts = [_merge_triplets(self.parts, self.n_rows, size)]
                self._merged, self._pending = self.parts[0][0].size, 0

    def finish(self, rows: Sequence[str], window: int, lang: str, source: str,
               empty: bool = False) -> CorpusCounts:
        """The merged counts, types in order of first appearance in the corpus (``empty``: no
        word tokens is allowed, as in a half of a tiny corpus)."""
        if int(self.unigram.sum()) == 0 and not empty:
            raise NormtestError(
                f"the corpus ({source}) has no word tokens: {self.n_documents} documents read, "
                f"{self.n_empty} empty; give texts that contain words"
            )
        order = np.argsort(self.first, kind="stable")
        renumber = np.empty_like(order)
        renumber[order] = np.arange(order.size)
        size = len(self.words)
        if self.parts:
            r, c, d = _merge_triplets([(p[0], renumber[p[1]], p[2]) for p in self.parts],
                                      self.n_rows, size)
            matrix = sparse.csr_array(
                (d, c, np.searchsorted(r, np.arange(self.n_rows + 1))), shape=(self.n_rows, size))
        else:
            matrix = sparse.csr_array((self.n_rows, size), dtype=np.int64)
        return CorpusCounts(
            types=[self.words[i] for i in order.tolist()], unigram_counts=self.unigram[order],
            marginals=self.marginals[order], rows=rows, cooccurrence=matrix, window=window,
            lang=lang, source=source, n_documents=self.n_documents,
            n_empty_documents=self.n_empty, n_replaced_bytes=self.n_replaced)


# ---------------------------------------------------------------------------- executors


def _block_task(args: tuple[Any, ...]) -> Callable[..., Any]:
    """What counts a block: :func:`count_block` for (rows, window, split, lang), and
    :func:`count_block_halves` when a seed follows."""
    return count_block if len(args) == 4 else count_block_halves


def _run_local(blocks: list[CorpusBlock], args: tuple[Any, ...], workers: int) -> Iterator[Any]:

    task = _block_task(args)
    if workers <= 1 or len(blocks) <= 1 or not may_start_processes():  # never nested pools
        for block in blocks:
            yield task(block, *args)
        return
    context = multiprocessing.get_context("forkserver")  # safe beside threads (torch, Ray)
    context.set_forkserver_preload([__name__])
    pool = cf.ProcessPoolExecutor(max_workers=min(workers, len(blocks)), mp_context=context)
    todo = iter(blocks)
    pending: set[cf.Future[Any]] = set()
    try:
        for block in todo:  # at most two blocks per worker in flight: results are merged as
            pending.add(pool.submit(task, block, *args))  # they come, memory stays flat
            if len(pending) >= 2 * workers:
                break
        while pending:
            done, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for future in done:
                try:
                    counted = future.result()
                except cf.process.BrokenProcessPool as exc:
                    raise NormtestError(
                        f"the corpus counting processes stopped ({exc}). A script that counts "
                        "with several workers must start under if __name__ == '__main__': (its "
                        "workers import it); or count with workers=1"
                    ) from None
                yield counted
                nxt = next(todo, None)
                if nxt is not None:
                    pending.add(pool.submit(task, nxt, *args))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _connect_ray(address: str | None, workers: int | None) -> Any:
    """The Ray cluster (joined, or started locally); without Ray, an error naming the extra."""

    return connect(address, workers)


def _run_ray(blocks: list[CorpusBlock], args: tuple[Any, ...], workers: int,
             ray: Any) -> Iterator[Any]:

    task = ray.remote(num_cpus=1, max_retries=0)(_block_task(args))
    shared = [ray.put(a) for a in args]  # the vocabulary goes to the object store once
    todo = iter(blocks)
    pending = []
    for block in todo:
        pending.append(task.remote(block, *shared))
        if len(pending) >= workers:
            break
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield unwrap(ray, lambda ref=done[0]: ray.get(ref))
            nxt = next(todo, None)
            if nxt is not None:
                pending.append(task.remote(nxt, *shared))
    finally:
        for ref in pending:
            ray.cancel(ref)


def _block_bytes(total: int, workers: int) -> int:
    if workers <= 1:
        return DEFAULT_BLOCK_BYTES
    return int(min(DEFAULT_BLOCK_BYTES, max(MIN_BLOCK_BYTES, -(-total // (4 * workers)))))


def _text_bytes(files: Sequence[CorpusFile]) -> int:
    return sum(f.size * (COMPRESSION_RATIO if f.kind in ("gzip", "bz2") else 1) for f in files)


def _count(files: Sequence[CorpusFile], rows: Sequence[str], window: int, seed: int | None, *,
           split: DocumentSplit, lang: str, text_column: str, executor: str, workers: int | None,
           ray_address: str | None, block_bytes: int | None) -> list[CorpusCounts]:
    """The whole corpus (``seed`` None) or its two halves, counted in blocks and merged."""
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise NormtestError(f"workers must be a positive number, got {workers!r}")
    total = _text_bytes(files)
    args: tuple[Any, ...] = (list(rows), window, split, lang)
    if seed is not None:
        args = (*args, check_seed(seed))
    ray = None
    if executor == "local":
        n = workers or (1 if total < LOCAL_PARALLEL_BYTES else len(os.sched_getaffinity(0)))
    elif executor == "ray":
        ray = _connect_ray(ray_address, workers)
        n = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    else:
        raise NormtestError(f"unknown executor {executor!r}; use 'local' or 'ray'")
    blocks = plan_blocks(list(files), split, block_bytes or _block_bytes(total, n), text_column)
    mergers = [_Merger(len(rows)) for _ in range(1 if seed is None else 2)]
    for counted in (_run_local(blocks, args, n) if ray is None else
                    _run_ray(blocks, args, n, ray)):
        for merger, block in zip(mergers, counted if seed is not None else (counted,),
                                 strict=True):
            merger.add(block)
    names = files[0].path.name if len(files) == 1 else f"{len(files)} files"
    source = f"{names} (split by {split})"
    if seed is None:
        return [mergers[0].finish(rows, window, lang, source)]
    return [m.finish(rows, window, lang, f"{source}, half {i + 1} of 2 (seed {seed})", True)
            for i, m in enumerate(mergers)]


def count_corpus(files: Sequence[CorpusFile], rows: Sequence[str], window: int = DEFAULT_WINDOW,
                 *, split: DocumentSplit = "paragraph", lang: str = "en",
                 text_column: str = "text", executor: str = "local", workers: int | None = None,
                 ray_address: str | None = None, block_bytes: int | None = None) -> CorpusCounts:
    """Count ``files`` in blocks for the vocabulary ``rows`` and merge (no store: see
    :func:`corpus_counts`)."""
    return _count(files, rows, window, None, split=split, lang=lang, text_column=text_column,
                  executor=executor, workers=workers, ray_address=ray_address,
                  block_bytes=block_bytes)[0]


# ---------------------------------------------------------------------------- the store


def store_dir() -> Path:
    """Where counted corpora are stored: ``<cache root>/corpora`` (module doc)."""

    return default_cache_dir() / "corpora"


def _stored(path: Path, key: dict[str, Any]) -> CorpusCounts | None:
    """The counts stored for ``key``; None when absent, or when unusable (with one warning)."""
    if not os.path.lexists(path):
        return None
    try:
        counts, stored_key = CorpusCounts.load(path)
        if stored_key != key:  # the name is the key's digest: another key is damage
            raise unusable(path, "corpus counts", "they were stored for another key")
    except NormtestError as exc:
        warn_recomputed(exc)
        return None
    return counts


def _key(files: Sequence[CorpusFile], window: int, lang: str, split: DocumentSplit,
         text_column: str) -> dict[str, Any]:
    if split not in ("file", "line", "paragraph"):
        raise NormtestError(f"unknown document split {split!r}; use 'file', 'line' or 'paragraph'")
    return {"format": FORMAT, "files": [f.fingerprint() for f in files], "window": window,
            "lang": lang, "split": split, "text_column": text_column}


def _store_path(key: dict[str, Any], directory: str | os.PathLike[str] | None) -> Path:
    folder = Path(directory) if directory is not None else store_dir()
    return folder / f"{json_sha256(key)[:40]}.npz"


def _save(counts: CorpusCounts, path: Path, key: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):  # a read-only cache folder: the counts are used, not kept
        counts.save(path, key)


def corpus_counts(spec: CorpusSpec, vocabulary: Sequence[str], window: int = DEFAULT_WINDOW, *,
                  split: DocumentSplit = "paragraph", lang: str = "en",
                  text_column: str = "text", executor: str = "local",
                  workers: int | None = None, ray_address: str | None = None,
                  block_bytes: int | None = None, store: bool = True,
                  directory: str | os.PathLike[str] | None = None) -> CorpusCounts:
    """Counts of a corpus spec for ``vocabulary``: read from the store when counted before with
    the same files and settings, else counted in blocks (``executor``, ``workers``) and stored
    (``store=False``: neither read nor written; ``directory``: another store folder). The
    counts know how to count their halves (:meth:`CorpusCounts.halves`) with the same settings."""
    words = sorted(set(check_words(vocabulary)))
    window = _check_window(window)
    files = corpus_files(spec)
    key = _key(files, window, lang, split, text_column)
    path = _store_path(key, directory)
    counts = None
    if store:
        found = _stored(path, key)
        if found is not None:
            if set(words) <= set(found.rows):
                counts = found
            elif len(union := sorted(set(words) | set(found.rows))) <= MAX_STORED_ROWS:
                words = union
    if counts is None:
        counts = count_corpus(files, words, window, split=split, lang=lang,
                              text_column=text_column, executor=executor, workers=workers,
                              ray_address=ray_address, block_bytes=block_bytes)
        if store:
            _save(counts, path, key)
    counts.halves_counter = functools.partial(
        _halves_of, tuple(files), key, executor=executor, workers=workers,
        ray_address=ray_address, block_bytes=block_bytes, store=store, directory=directory)
    return counts


def _halves_of(files: tuple[CorpusFile, ...], key: dict[str, Any], vocabulary: Sequence[str],
               seed: int, *, executor: str, workers: int | None, ray_address: str | None,
               block_bytes: int | None, store: bool,
               directory: str | os.PathLike[str] | None) -> tuple[CorpusCounts, CorpusCounts]:
    """The halves of the corpus whose ``files`` (unchanged since) gave the counts of ``key``:
    from the store (seed and side in the key), else counted in one reading and stored."""
    if [f.fingerprint() for f in corpus_files([f.path for f in files])] != key["files"]:
        raise NormtestError("the corpus files changed since they were counted (size or "
                            "modification time); count the corpus again to split it in halves")
    words, seed = sorted(set(vocabulary)), check_seed(seed)
    keys = [{**key, "half": [seed, side, COIN_VERSION]} for side in (0, 1)]
    paths = [_store_path(k, directory) for k in keys]
    if store:
        first, second = (_stored(p, k) for p, k in zip(paths, keys, strict=True))
        if first is not None and second is not None:
            rows = set(first.rows) & set(second.rows)
            if set(words) <= rows:
                return first, second
            if len(union := sorted(set(words) | rows)) <= MAX_STORED_ROWS:
                words = union
    halves = _count(files, words, key["window"], seed, split=key["split"], lang=key["lang"],
                    text_column=key["text_column"], executor=executor, workers=workers,
                    ray_address=ray_address, block_bytes=block_bytes)
    if store:
        for counts, path, k in zip(halves, paths, keys, strict=True):
            _save(counts, path, k)
    return halves[0], halves[1]


def corpus_halves(spec: CorpusSpec, vocabulary: Sequence[str], window: int = DEFAULT_WINDOW, *,
                  seed: int = 0, split: DocumentSplit = "paragraph", lang: str = "en",
                  text_column: str = "text", executor: str = "local",
                  workers: int | None = None, ray_address: str | None = None,
                  block_bytes: int | None = None, store: bool = True,
                  directory: str | os.PathLike[str] | None = None,
                  ) -> tuple[CorpusCounts, CorpusCounts]:
    """The counts of the two halves of a corpus spec's documents under the seeded coin
    (:func:`~normtest.data.information.corpus_counting.document_half`), for ``vocabulary``: their
    counts add up exactly to :func:`corpus_counts`'s. Stored beside the whole corpus's counts with
    the seed and side in the key (read back when counted before), counted in one reading on the
    same executors."""
    files = corpus_files(spec)
    key = _key(files, _check_window(window), lang, split, text_column)
    return _halves_of(tuple(files), key, check_words(vocabulary), seed, executor=executor,
                      workers=workers, ray_address=ray_address, block_bytes=block_bytes,
                      store=store, directory=directory)
