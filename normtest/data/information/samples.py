"""Word samples for the word-level claims: a stratified default or the user's own list.

The default sample draws from wordfreq's frequency-ranked list of a language, down to rank
``max_rank`` (100,000 by default), keeping alphabetic words only (for English: ``[a-z]+``). The
ranks are cut into ``n_bins`` log-spaced bins, ``[1, r_1), [r_1, r_2), …`` with r_j ≈
max_rank^(j/n_bins), and the sample takes the same number of words from every bin (a bin with
fewer eligible words gives all it has and the rest is shared by the larger bins). Log-spaced bins
give every order of magnitude of frequency equal weight, so the very frequent words (mostly one
subword token in any model) and the rare ones (mostly several subword tokens) are both well
represented. Within a bin the words are drawn uniformly without replacement with
``numpy.random.default_rng(seed)``: the same arguments give the same sample.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from normtest.data.information.frequency import check_words
from normtest.data.information.texts import package_version
from normtest.errors import NormtestError

__all__ = [
    "WordSample",
    "default_word_sample",
    "rank_bins",
    "stratified_word_sample",
    "user_word_sample",
]

_ASCII_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True, eq=False)
class WordSample:
    """A stratified word sample with each word's frequency rank and rank bin, ordered by rank."""

    words: tuple[str, ...]
    ranks: NDArray[np.int64]  # 1-based rank in wordfreq's list
    bins: NDArray[np.int64]  # index of the rank bin each word was drawn from
    bin_edges: NDArray[np.int64]  # bin b holds ranks in [bin_edges[b], bin_edges[b + 1])
    source: str


def _is_alphabetic(word: str, lang: str) -> bool:
    if lang == "en":
        return _ASCII_WORD.fullmatch(word) is not None
    return word.isalpha() and word == word.lower()


@functools.lru_cache(maxsize=4)
def _eligible(lang: str, max_rank: int) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Ranks and words of the alphabetic words within ``max_rank``, once per process (filtering
    100,000 words takes ~0.2 s; wordfreq memoises its lists the same way)."""
    import wordfreq

    ranked = wordfreq.top_n_list(lang, max_rank)
    pairs = [(r, w) for r, w in enumerate(ranked, start=1) if _is_alphabetic(w, lang)]
    return tuple(r for r, _ in pairs), tuple(w for _, w in pairs)


def rank_bins(max_rank: int, n_bins: int) -> NDArray[np.int64]:
    """Log-spaced integer rank edges from 1 to ``max_rank + 1`` (duplicates merged)."""
    if max_rank < 1 or n_bins < 1:
        raise NormtestError(f"max_rank and n_bins must be positive, got {max_rank}, {n_bins}")
    edges = np.round(np.logspace(0.0, np.log10(max_rank + 1), n_bins + 1)).astype(np.int64)
    edges[0], edges[-1] = 1, max_rank + 1
    return np.unique(edges)


def _allocate(size: int, capacity: NDArray[np.int64]) -> NDArray[np.int64]:
    """Equal shares per bin, capped by each bin's capacity, the remainder to the larger bins."""
    quota = np.zeros_like(capacity)
    remaining = size
    order = np.argsort(capacity, kind="stable")
    for j, b in enumerate(order):
        share = -(-remaining // (len(order) - j))  # ceiling
        quota[b] = min(int(capacity[b]), share)
        remaining -= int(quota[b])
    return quota


def stratified_word_sample(
    size: int = 3000, seed: int = 0, max_rank: int = 100_000, lang: str = "en", n_bins: int = 16
) -> WordSample:
    """A deterministic sample of alphabetic words stratified over log-spaced frequency-rank bins."""
    import wordfreq


    if size < 1:
        raise NormtestError(f"the sample size must be positive, got {size}")
    if lang not in wordfreq.available_languages():
        raise NormtestError(f"wordfreq has no word list for {lang!r}; choose another language")
    eligible_ranks, eligible_words = _eligible(lang, max_rank)
    if size > len(eligible_words):
        raise NormtestError(
            f"only {len(eligible_words)} alphabetic words lie within rank {max_rank} for "
            f"{lang!r}; ask for at most that many, or raise max_rank"
        )
    ranks = np.array(eligible_ranks, dtype=np.int64)
    edges = rank_bins(max_rank, n_bins)
    bin_of = np.searchsorted(edges, ranks, side="right") - 1
    capacity = np.bincount(bin_of, minlength=len(edges) - 1).astype(np.int64)
    quota = _allocate(size, capacity)
    rng = np.random.default_rng(seed)
    chosen = [
        np.sort(rng.choice(np.flatnonzero(bin_of == b), size=int(q), replace=False))
        for b, q in enumerate(quota)
        if q > 0
    ]
    picked = np.sort(np.concatenate(chosen))
    return WordSample(
        words=tuple(eligible_words[i] for i in picked),
        ranks=ranks[picked],
        bins=bin_of[picked].astype(np.int64),
        bin_edges=edges,
        source=(
            f"wordfreq {package_version('wordfreq')} ({lang}) top {max_rank}, {n_bins} log rank "
            f"bins, size {size}, seed {seed}"
        ),
    )


def default_word_sample(
    size: int = 3000, seed: int = 0, max_rank: int = 100_000, lang: str = "en", n_bins: int = 16
) -> list[str]:
    """The words of :func:`stratified_word_sample`, most frequent first."""
    return list(stratified_word_sample(size, seed, max_rank, lang, n_bins).words)


def user_word_sample(words: Sequence[str]) -> list[str]:
    """The user's words, stripped and de-duplicated (first occurrence kept, order preserved)."""
    out: dict[str, None] = {}
    for i, w in enumerate(check_words(words)):
        word = w.strip()
        if any(ch.isspace() for ch in word):
            raise NormtestError(
                f"entry {i} ({word!r}) holds whitespace; give single words, one per entry"
            )
        out.setdefault(word, None)
    return list(out)
