"""Corpus statistics: unigram counts, windowed co-occurrence, PMI, information gain KL(w).

**Tokens** and **counting**: :mod:`normtest.data.information.corpus_counting`.

**Co-occurrence.** Within one document (windows never cross a document boundary), the tokens at
positions i and j co-occur when 1 ≤ |i − j| ≤ h (the window, default ±5). The count n(x, y) is
the number of *ordered* position pairs (i, j) with t_i = x, t_j = y at such a distance: each
co-occurrence of two positions counts once in n(x, y) and once in n(y, x), so n is symmetric, and
two positions holding the same word x add 2 to n(x, x). With T = Σ_{x,y} n(x, y) and the
marginal m(x) = Σ_y n(x, y) (the number of window neighbours of all occurrences of x: 2h·c(x)
except within h tokens of a document's ends):

- P(x, y) = n(x, y) / T and P(x) = m(x) / T (the marginal of the pair distribution, ≈ c(x)/N);
- PMI(x, y) = log P(x, y) − log P(x) − log P(y) (docs/theory.md §2);
- with context-distribution smoothing α (Levy, Goldberg & Dagan 2015; α = 0.75 is the usual
  value), the context side uses P_α(y) = m(y)^α / Σ_c m(c)^α:
  PMI_α(x, y) = log P(x, y) − log P(x) − log P_α(y);
- KL_α(w) = Σ_c P(c | w) log(P(c | w) / P_α(c)) with P(c | w) = n(w, c) / m(w), the divergence of
  w's context distribution from the (smoothed) context distribution (Oyama et al. 2023; α = None
  is the unsmoothed KL). Because P(c | w) = P(w, c)/P(w), KL_α(w) = Σ_c P(c | w) PMI_α(w, c)
  holds exactly, with or without smoothing.

A pair never seen together (or seen fewer than ``min_count`` times) and a word absent from the
corpus have no PMI: they are reported as missing with a count, never given −∞ or 0.

**Shuffled baseline** (:meth:`CorpusStatistics.shuffled`): the same tokens in a random order
(over the whole corpus, or within each document), document lengths kept. Unigram counts are
unchanged and every association beyond frequency is destroyed, so the PMI of frequent pairs falls
to about 0; what remains for rare pairs is the frequency confound (selection bias of small counts).

**Halves** (:meth:`CorpusStatistics.halves`): the documents split in two by a seeded coin,
each half recounted; PMI's reliability is measured on them
(:mod:`normtest.data.information.reliability`).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from os import PathLike
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from normtest.data.information import corpus_counting as counting
from normtest.data.information.corpus_counting import _StreamCounter, tokenize
from normtest.data.information.frequency import InformationContent, check_words, information_content
from normtest.data.information.readers import MAX_REPLACED_SHARE, CorpusEncoding, corpus_encoding
from normtest.data.information.texts import (
    LEE_FILE,
    DocumentSplit,
    lee_texts,
    package_version,
    read_text_file,
    split_documents,
    text_files,
    wiki_articles,
)
from normtest.errors import NormtestError

__all__ = [
    "CDS_ALPHA",
    "DEFAULT_WINDOW",
    "MAX_REPLACED_SHARE",
    "CorpusEncoding",
    "CorpusStatistics",
    "PairPMI",
    "WordKL",
    "corpus_encoding",
    "lee_corpus",
    "tokenize",
    "wiki_sample",
]

#: The co-occurrence window ±h used unless told otherwise.
DEFAULT_WINDOW = 5
#: The usual context-distribution smoothing exponent (Levy, Goldberg & Dagan 2015).
CDS_ALPHA = 0.75
ShuffleScope = Literal["corpus", "document"]


@dataclass(frozen=True, eq=False)
class PairPMI:
    """PMI of the pairs the corpus supports, and the pairs it does not (missing, with counts)."""

    pairs: tuple[tuple[str, str], ...]
    values: NDArray[np.float64]  # nats
    counts: NDArray[np.int64]  # n(x, y) of each kept pair
    missing: tuple[tuple[str, str], ...]
    n_absent: int  # missing because a word is not in the corpus
    n_rare: int  # missing because n(x, y) < min_count (including never seen together)
    smoothing_alpha: float | None
    min_count: int
    source: str


@dataclass(frozen=True, eq=False)
class WordKL:
    """Information gain KL(w) of the words the corpus has contexts for, and the missing ones."""

    words: tuple[str, ...]
    values: NDArray[np.float64]  # nats
    counts: NDArray[np.int64]  # unigram count c(w) of each kept word
    missing: tuple[str, ...]
    smoothing_alpha: float | None
    source: str


def _check_window(window: int) -> int:
    if isinstance(window, bool) or not isinstance(window, int | np.integer) or window < 1:
        raise NormtestError(f"the window must be a positive integer h (±h tokens), got {window!r}")
    return int(window)


def _check_alpha(alpha: float | None) -> float | None:
    if alpha is None:
        return None
    if not (math.isfinite(alpha) and 0.0 < alpha <= 1.0):
        raise NormtestError(
            f"smoothing_alpha must lie in (0, 1] (0.75 is usual) or be None, got {alpha}"
        )
    return float(alpha)


def _check_min_count(min_count: int) -> int:
    if isinstance(min_count, bool) or not isinstance(min_count, int | np.integer) or min_count < 1:
        raise NormtestError(f"min_count must be a positive integer, got {min_count!r}")
    return int(min_count)


def _readonly(a: NDArray[Any]) -> NDArray[Any]:
    a.setflags(write=False)
    return a


class _Quantities:
    """The information quantities of window counts — IC, the context distribution, PMI and KL —
    written once for :class:`CorpusStatistics` (every row counted) and
    :class:`~normtest.data.information.vocabulary_counts.CorpusCounts` (the rows of a vocabulary). A
    subclass holds ``_index`` (type → id), ``_unigram``, ``_marginals`` (per type), ``_cooc`` (the
    rows), ``source``, and says where a word's row is (:meth:`_context_rows`) and what a pair counts
    (``pair_counts``)."""

    _index: dict[str, int]
    _unigram: NDArray[np.int64]
    _marginals: NDArray[np.int64]
    _cooc: sparse.csr_array
    source: str

    def pair_counts(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.int64]:
        """n(x, y) of each pair (0 when never together or a word is absent)."""
        raise NotImplementedError

    def _context_rows(self, words: Sequence[str], ids: NDArray[np.int64]) -> NDArray[np.int64]:
        """The row of ``_cooc`` of each word (its type id where every row is counted)."""
        return ids

    @property
    def n_tokens(self) -> int:
        """N: the number of tokens in the corpus."""
        return int(self._unigram.sum())

    @property
    def n_pairs(self) -> int:
        """T = Σ n(x, y): the number of ordered co-occurring position pairs."""
        return int(self._marginals.sum())

    def word_ids(self, words: Sequence[str]) -> NDArray[np.int64]:
        """Vocabulary ids of the words (−1 for a word absent from the corpus)."""
        return np.array([self._index.get(w, -1) for w in words], dtype=np.int64)

    def count(self, word: str) -> int:
        """c(word), 0 when absent."""
        i = self._index.get(word, -1)
        return int(self._unigram[i]) if i >= 0 else 0

    def information_content(self, words: Sequence[str]) -> InformationContent:
        """Corpus IC(w) = −log(c(w)/N) in nats; absent words are missing."""
        ws = check_words(words)
        c = np.array([self.count(w) for w in ws], dtype=np.float64)
        return information_content(c / self.n_tokens, ws, f"{self.source} unigram counts")

    def context_distribution(self, smoothing_alpha: float | None = None) -> NDArray[np.float64]:
        """P_α(c) = m(c)^α / Σ m^α over the vocabulary (α = None: m(c)/T)."""
        alpha = _check_alpha(smoothing_alpha)
        m = self._marginals.astype(np.float64)
        if alpha is not None:
            m = np.where(m > 0, m**alpha, 0.0)
        total = m.sum()
        return m / total if total > 0 else m

    def _log_context(self, alpha: float | None) -> NDArray[np.float64]:
        p = self.context_distribution(alpha)
        with np.errstate(divide="ignore"):
            return np.log(p)

    def pmi(
        self,
        pairs: Sequence[tuple[str, str]],
        *,
        smoothing_alpha: float | None = None,
        min_count: int = 1,
    ) -> PairPMI:
        """PMI(x,y) = log P(x,y) − log P(x) − log P_α(y) of pairs seen ≥ ``min_count`` times."""
        alpha = _check_alpha(smoothing_alpha)
        min_count = _check_min_count(min_count)
        ps = _check_pairs(pairs)
        x = self.word_ids([a for a, _ in ps])
        y = self.word_ids([b for _, b in ps])
        n = self.pair_counts(ps)
        absent = (x < 0) | (y < 0)
        keep = ~absent & (n >= min_count)
        t = float(self.n_pairs)
        log_p_xy = np.log(n[keep] / t)
        log_p_x = np.log(self._marginals[x[keep]] / t)
        log_p_y = self._log_context(alpha)[y[keep]]
        return PairPMI(
            pairs=tuple(p for p, k in zip(ps, keep, strict=True) if k),
            values=log_p_xy - log_p_x - log_p_y,
            counts=n[keep],
            missing=tuple(p for p, k in zip(ps, keep, strict=True) if not k),
            n_absent=int(absent.sum()),
            n_rare=int((~absent & ~keep).sum()),
            smoothing_alpha=alpha,
            min_count=min_count,
            source=self.source,
        )

    def kl(self, words: Sequence[str], *, smoothing_alpha: float | None = None) -> WordKL:
        """KL_α(w) = Σ_c P(c|w) log(P(c|w)/P_α(c)) in nats; words without contexts are missing."""
        alpha = _check_alpha(smoothing_alpha)
        ws = check_words(words)
        ids = self.word_ids(ws)
        rows = self._context_rows(ws, ids)
        known = ids >= 0
        known[known] = self._marginals[ids[known]] > 0
        ids_of, rows_of = ids[known], rows[known]
        sub = self._cooc[rows_of]  # CSR rows of the kept words, in order
        row = np.repeat(np.arange(len(rows_of)), np.diff(sub.indptr))
        p_cw = sub.data / self._marginals[ids_of][row].astype(np.float64)
        terms = p_cw * (np.log(p_cw) - self._log_context(alpha)[sub.indices])
        values = np.bincount(row, weights=terms, minlength=len(rows_of)).astype(np.float64)
        return WordKL(
            words=tuple(w for w, k in zip(ws, known, strict=True) if k),
            values=values,
            counts=self._unigram[ids_of].copy(),
            missing=tuple(w for w, k in zip(ws, known, strict=True) if not k),
            smoothing_alpha=alpha,
            source=self.source,
        )


class CorpusStatistics(_Quantities):
    """Unigram and ±h window co-occurrence counts of a corpus, with PMI and KL (module doc)."""

    def __init__(
        self,
        *,
        vocabulary: Sequence[str],
        unigram_counts: NDArray[np.int64],
        cooccurrence: sparse.csr_array,
        window: int,
        lang: str,
        source: str,
        n_documents: int,
        n_empty_documents: int = 0,
        n_replaced_bytes: int = 0,
        token_ids: NDArray[np.int32] | None = None,
        document_lengths: NDArray[np.int64] | None = None,
        index: dict[str, int] | None = None,
    ) -> None:
        """Wrap counts already made (the ``from_*`` constructors and ``shuffled`` build them)."""
        self._vocabulary = tuple(vocabulary)
        if index is None or len(index) != len(self._vocabulary):
            index = {w: i for i, w in enumerate(self._vocabulary)}
        self._index = index
        self._unigram = _readonly(np.asarray(unigram_counts, dtype=np.int64))
        self._cooc = cooccurrence
        self._cooc.data.setflags(write=False)
        self._marginals = _readonly(np.asarray(cooccurrence.sum(axis=1), dtype=np.int64).ravel())
        self.window = window
        self.lang = lang
        self.source = source
        self.n_documents = n_documents
        self.n_empty_documents = n_empty_documents
        self.n_replaced_bytes = n_replaced_bytes
        self._token_ids = None if token_ids is None else _readonly(token_ids)
        self._lengths = None if document_lengths is None else _readonly(document_lengths)
        self._halves: tuple[int, tuple[CorpusStatistics, CorpusStatistics]] | None = None

    # -- construction --------------------------------------------------------------------------

    @classmethod
    def _from_counter(
        cls, counter: _StreamCounter, lang: str, source: str, n_replaced_bytes: int
    ) -> CorpusStatistics:
        counter.flush()
        if counter.unigram.sum() == 0:
            raise NormtestError(
                f"the corpus ({source}) has no word tokens: {counter.n_documents} documents read, "
                f"{counter.n_empty} empty; give texts that contain words"
            )
        size = len(counter.vocab)
        keep = counter.keep_tokens
        return cls(
            vocabulary=list(counter.vocab),
            index=counter.vocab,
            unigram_counts=counter.unigram,
            cooccurrence=counter.pairs.symmetric(size),
            window=counter.window,
            lang=lang,
            source=source,
            n_documents=counter.n_documents,
            n_empty_documents=counter.n_empty,
            n_replaced_bytes=n_replaced_bytes,
            token_ids=np.concatenate(counter.kept) if keep else None,
            document_lengths=np.array(counter.lengths, dtype=np.int64) if keep else None,
        )

    @classmethod
    def from_token_lists(
        cls,
        documents: Iterable[Sequence[str]],
        window: int = DEFAULT_WINDOW,
        *,
        lang: str = "en",
        source: str = "token lists",
        keep_tokens: bool = True,
    ) -> CorpusStatistics:
        """Statistics of documents already tokenised (each a sequence of token strings)."""
        counter = _StreamCounter(_check_window(window), keep_tokens)
        for doc in documents:
            if isinstance(doc, str):
                raise NormtestError(
                    "from_token_lists takes one list of tokens per document; for raw text use "
                    "from_texts"
                )
            counter.add(doc)
        return cls._from_counter(counter, lang, source, 0)

    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        window: int = DEFAULT_WINDOW,
        *,
        lang: str = "en",
        source: str = "texts",
        keep_tokens: bool = True,
    ) -> CorpusStatistics:
        """Statistics of raw texts (one document each, streamed), tokenised by :func:`tokenize`."""
        if isinstance(texts, str):
            raise NormtestError("pass an iterable of documents, not one string (e.g. [text])")

        def tokens() -> Iterable[list[str]]:
            for i, t in enumerate(texts):
                if not isinstance(t, str):
                    raise NormtestError(f"document {i} is {type(t).__name__}, not a string")
                yield tokenize(t, lang)

        return cls.from_token_lists(
            tokens(), window, lang=lang, source=source, keep_tokens=keep_tokens
        )

    @classmethod
    def from_files(
        cls,
        paths: str | PathLike[str] | Iterable[str | PathLike[str]],
        window: int = DEFAULT_WINDOW,
        *,
        split: DocumentSplit = "file",
        pattern: str = "*.txt",
        lang: str = "en",
        keep_tokens: bool = True,
    ) -> CorpusStatistics:
        """Statistics of text files and folders (searched for ``pattern``), streamed file by file.

        ``split`` makes each file one document, each line one document, or each blank-line
        separated paragraph one document. Bytes that are not UTF-8 are replaced by U+FFFD and
        counted in ``n_replaced_bytes``.
        """
        files = text_files(paths, pattern)
        counter = _StreamCounter(_check_window(window), keep_tokens)
        replaced = 0
        for f in files:
            tf = read_text_file(f)
            replaced += tf.n_replaced_bytes
            for doc in split_documents(tf.text, split):
                counter.add(tokenize(doc, lang))
        names = files[0].name if len(files) == 1 else f"{len(files)} files"
        return cls._from_counter(counter, lang, f"{names} (split by {split})", replaced)

    # -- the counts ---------------------------------------------------------------------------

    @property
    def vocabulary(self) -> tuple[str, ...]:
        """The word types, in order of first appearance (their ids)."""
        return self._vocabulary

    @property
    def unigram_counts(self) -> NDArray[np.int64]:
        """c(w) for every word type, aligned with :attr:`vocabulary`."""
        return self._unigram

    @property
    def cooccurrence(self) -> sparse.csr_array:
        """The symmetric window counts n(x, y) (int64, CSR, rows/columns = vocabulary ids)."""
        return self._cooc

    @property
    def marginals(self) -> NDArray[np.int64]:
        """m(x) = Σ_y n(x, y): the window neighbours of all occurrences of x."""
        return self._marginals

    def pair_counts(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.int64]:
        """n(x, y) of each pair (0 when never together or a word is absent)."""
        ps = _check_pairs(pairs)
        x = self.word_ids([a for a, _ in ps])
        y = self.word_ids([b for _, b in ps])
        out = np.zeros(len(ps), dtype=np.int64)
        ok = (x >= 0) & (y >= 0)
        if ok.any():
            out[ok] = np.asarray(self._cooc[x[ok], y[ok]]).ravel()
        return out

    def __repr__(self) -> str:
        return (
            f"CorpusStatistics({self.source}: {self.n_documents} documents, {self.n_tokens} "
            f"tokens, {len(self._vocabulary)} types, window ±{self.window})"
        )

    # -- information quantities --------------------------------------------------------------

    def pmi_matrix(
        self, *, smoothing_alpha: float | None = None, min_count: int = 1
    ) -> sparse.csr_array:
        """PMI of every pair seen ≥ ``min_count`` times, as CSR (stored entries = those pairs).

        A PMI of exactly 0 is kept as an explicit stored entry; unstored entries have no PMI.
        """
        alpha = _check_alpha(smoothing_alpha)
        min_count = _check_min_count(min_count)
        c = self._cooc
        rows = np.repeat(np.arange(c.shape[0]), np.diff(c.indptr))
        keep = c.data >= min_count
        r, k, n = rows[keep], c.indices[keep], c.data[keep].astype(np.float64)
        t = float(self.n_pairs)
        vals = np.log(n / t) - np.log(self._marginals[r] / t) - self._log_context(alpha)[k]
        return sparse.csr_array((vals, (r, k)), shape=c.shape)

    def cooccurring_pairs(
        self, words: Sequence[str] | None = None, *, min_count: int = 5
    ) -> list[tuple[str, str]]:
        """Distinct pairs (x, y), x before y alphabetically, seen together ≥ ``min_count`` times.

        Restricted to ``words`` when given (words absent from the corpus are ignored).
        """
        min_count = _check_min_count(min_count)
        c = self._cooc
        if words is not None:
            ids = np.unique(self.word_ids(check_words(words)))
            ids = ids[ids >= 0]
            mask = np.zeros(c.shape[0], dtype=bool)
            mask[ids] = True
        else:
            mask = np.ones(c.shape[0], dtype=bool)
        rows = np.repeat(np.arange(c.shape[0]), np.diff(c.indptr))
        keep = (c.data >= min_count) & mask[rows] & mask[c.indices] & (rows != c.indices)
        voc = self._vocabulary
        found: set[tuple[str, str]] = set()
        for a, b in zip(rows[keep].tolist(), c.indices[keep].tolist(), strict=True):
            x, y = voc[a], voc[b]
            found.add((x, y) if x <= y else (y, x))
        return sorted(found)

    # -- the frequency-confound baseline -------------------------------------------------------

    def shuffled(self, seed: int = 0, scope: ShuffleScope = "corpus") -> CorpusStatistics:
        """The same statistics after shuffling the tokens (over the corpus or within documents)."""
        if self._token_ids is None or self._lengths is None:
            raise NormtestError(
                "this CorpusStatistics was built with keep_tokens=False; rebuild it with "
                "keep_tokens=True to compute a shuffled baseline"
            )
        if scope not in ("corpus", "document"):
            raise NormtestError(f"unknown shuffle scope {scope!r}; use 'corpus' or 'document'")
        rng = np.random.default_rng(seed)
        ids = self._token_ids.astype(np.int64)
        if scope == "corpus":
            ids = rng.permutation(ids)
        else:
            doc = np.repeat(np.arange(len(self._lengths)), self._lengths)
            ids = ids[np.lexsort((rng.random(ids.size), doc))]
        _, cooc = counting.count_documents(ids, self._lengths, self.window, len(self._vocabulary))
        return CorpusStatistics(
            vocabulary=self._vocabulary,
            unigram_counts=self._unigram.copy(),
            cooccurrence=cooc,
            window=self.window,
            lang=self.lang,
            source=f"{self.source}, shuffled over the {scope} (seed {seed})",
            n_documents=self.n_documents,
            n_empty_documents=self.n_empty_documents,
            n_replaced_bytes=self.n_replaced_bytes,
            token_ids=ids.astype(np.int32),
            document_lengths=self._lengths.copy(),
            index=self._index,
        )

    def halves(self, seed: int = 0) -> tuple[CorpusStatistics, CorpusStatistics]:
        """The statistics of the two halves of the documents under the seeded coin
        :func:`~normtest.data.information.corpus_counting.document_half` (windows never cross
        documents, so the halves' counts add up exactly to these), recounted from the kept token
        ids; the vocabulary (ids) is this corpus's. The last seed's halves are kept."""
        seed = counting.check_seed(seed)
        if self._halves is not None and self._halves[0] == seed:
            return self._halves[1]
        if self._token_ids is None or self._lengths is None:
            raise NormtestError(
                "this CorpusStatistics was built with keep_tokens=False; rebuild it with "
                "keep_tokens=True to split its documents in halves"
            )
        ids, lengths = self._token_ids.astype(np.int64), self._lengths
        bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
        words = np.asarray(self._vocabulary, dtype=object)
        side = np.array([counting.document_half(words[ids[a:b]].tolist(), seed)
                         for a, b in itertools.pairwise(bounds)], dtype=np.int64)
        empty_side = counting.document_half([], seed)  # every empty document hashes alike
        out = []
        for half in (0, 1):
            keep = side == half
            kept_ids = ids[np.repeat(keep, lengths)]
            unigram, cooc = counting.count_documents(kept_ids, lengths[keep], self.window,
                                                     len(self._vocabulary))
            empty = self.n_empty_documents if half == empty_side else 0
            out.append(CorpusStatistics(
                vocabulary=self._vocabulary, unigram_counts=unigram, cooccurrence=cooc,
                window=self.window, lang=self.lang,
                source=f"{self.source}, half {half + 1} of 2 (seed {seed})",
                n_documents=int(keep.sum()) + empty, n_empty_documents=empty,
                n_replaced_bytes=self.n_replaced_bytes, token_ids=kept_ids.astype(np.int32),
                document_lengths=lengths[keep].copy(), index=self._index))
        self._halves = (seed, (out[0], out[1]))
        return self._halves[1]


def _check_pairs(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    out = list(pairs)
    if not out:
        raise NormtestError("the pair list is empty; give at least one (word, word) pair")
    for i, p in enumerate(out):
        if not (isinstance(p, tuple | list) and len(p) == 2 and all(isinstance(w, str) for w in p)):
            raise NormtestError(f"pair {i} ({p!r}) is not a (word, word) tuple of two strings")
    return [(str(a), str(b)) for a, b in out]


@functools.lru_cache(maxsize=4)
def lee_corpus(window: int = DEFAULT_WINDOW) -> CorpusStatistics:
    """Statistics of the Lee news corpus bundled with gensim (300 documents, ~60k tokens)."""

    return CorpusStatistics.from_texts(
        (d.text for d in lee_texts()),
        window,
        source=f"gensim {package_version('gensim')} {LEE_FILE}",
    )


@functools.lru_cache(maxsize=4)
def wiki_sample(window: int = DEFAULT_WINDOW) -> CorpusStatistics:
    """Statistics of the Wikipedia sample bundled with gensim (106 articles, ~480k tokens)."""
    return CorpusStatistics.from_texts(
        (d.text for d in wiki_articles()),
        window,
        source=f"gensim {package_version('gensim')} Wikipedia sample",
    )
