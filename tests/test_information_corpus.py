"""Corpus statistics: counts, PMI by hand, the KL identity, the shuffled baseline, bad input."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import wordfreq

from normtest.data.information import corpus_counting as corpus_module
from normtest.data.information.corpus import CorpusStatistics, lee_corpus, tokenize, wiki_sample
from normtest.data.information.texts import lee_texts
from normtest.errors import NormtestError

# Two documents; window ±2. Position pairs 1..2 apart inside each document:
#   doc 1 "a b a c": (a,b) (a,a) (b,a) (b,c) (a,c)     doc 2 "b c": (b,c)
# Symmetric counts n: aa 2, ab 2, ac 1, bc 2, bb 0, cc 0; T = 12; m(a) 5, m(b) 4, m(c) 3.
TOY = ["A b, a c.", "b c"]
N_TOY = {("a", "a"): 2, ("a", "b"): 2, ("a", "c"): 1, ("b", "c"): 2, ("b", "b"): 0, ("c", "c"): 0}
M_TOY = {"a": 5, "b": 4, "c": 3}
T_TOY = 12


def exact_log(q: Fraction) -> float:
    return math.log(q.numerator) - math.log(q.denominator)


@pytest.fixture(scope="module")
def toy() -> CorpusStatistics:
    return CorpusStatistics.from_texts(TOY, window=2)


def counter_reference(docs: Sequence[Sequence[str]], window: int) -> Counter[tuple[str, str]]:
    """Plain-Python window counts: one update per ordered co-occurring position pair."""
    counts: Counter[tuple[str, str]] = Counter()
    for doc in docs:
        for i, x in enumerate(doc):
            for j in range(i + 1, min(i + window + 1, len(doc))):
                counts[(x, doc[j])] += 1
                counts[(doc[j], x)] += 1
    return counts


def as_counter(stats: CorpusStatistics) -> Counter[tuple[str, str]]:
    c = stats.cooccurrence.tocoo()
    v = stats.vocabulary
    return Counter(
        {
            (v[r], v[k]): n
            for r, k, n in zip(c.row.tolist(), c.col.tolist(), c.data.tolist(), strict=True)
        }
    )


def test_toy_counts(toy: CorpusStatistics) -> None:
    assert toy.vocabulary == ("a", "b", "c")  # lower-cased, punctuation dropped
    assert toy.unigram_counts.tolist() == [2, 2, 2] and toy.n_tokens == 6
    assert toy.n_pairs == T_TOY and toy.marginals.tolist() == [5, 4, 3]
    for (x, y), n in N_TOY.items():
        assert toy.pair_counts([(x, y), (y, x)]).tolist() == [n, n]
    assert (toy.cooccurrence != toy.cooccurrence.T).nnz == 0


def test_pmi_equals_hand_computed_values(toy: CorpusStatistics) -> None:
    pairs = [("a", "b"), ("a", "c"), ("b", "c"), ("a", "a"), ("c", "b")]
    got = toy.pmi(pairs)
    assert got.pairs == tuple(pairs) and got.missing == ()
    expected = [
        exact_log(Fraction(N_TOY[tuple(sorted(p))] * T_TOY, M_TOY[p[0]] * M_TOY[p[1]]))
        for p in pairs
    ]  # PMI = log n·T/(m(x)·m(y)): log 1.2, log 0.8, log 2, log 0.96
    np.testing.assert_allclose(got.values, expected, rtol=1e-13, atol=1e-15)
    assert got.counts.tolist() == [2, 1, 2, 2, 2]


def test_smoothed_pmi_equals_hand_computed_values(toy: CorpusStatistics) -> None:
    alpha = 0.75
    z = sum(m**alpha for m in M_TOY.values())
    pairs = [("a", "b"), ("b", "a"), ("c", "a")]
    got = toy.pmi(pairs, smoothing_alpha=alpha).values
    expected = [
        math.log(N_TOY[tuple(sorted((x, y)))] / T_TOY)
        - math.log(M_TOY[x] / T_TOY)
        - math.log(M_TOY[y] ** alpha / z)
        for x, y in pairs
    ]
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    assert got[0] != got[1]  # smoothing acts on the context side only


def test_unseen_and_absent_pairs_are_missing_never_infinite(toy: CorpusStatistics) -> None:
    got = toy.pmi([("a", "b"), ("b", "b"), ("a", "zebra"), ("a", "c")], min_count=2)
    assert got.pairs == (("a", "b"),)
    assert got.missing == (("b", "b"), ("a", "zebra"), ("a", "c"))
    assert got.n_absent == 1 and got.n_rare == 2
    assert np.all(np.isfinite(got.values))
    kl = toy.kl(["a", "zebra"])
    assert kl.words == ("a",) and kl.missing == ("zebra",)
    ic = toy.information_content(["b", "zebra"])
    assert ic.words == ("b",) and ic.missing == ("zebra",)
    np.testing.assert_allclose(ic.values, [math.log(3)], rtol=1e-15)
    with pytest.raises(NormtestError, match="pair 0"):
        toy.pmi([("a",)])  # type: ignore[list-item]
    with pytest.raises(NormtestError, match="smoothing_alpha"):
        toy.pmi([("a", "b")], smoothing_alpha=0.0)


def test_kl_by_hand(toy: CorpusStatistics) -> None:
    # P(c|a) = 2/5, 2/5, 1/5 over a, b, c; P(c) = m(c)/T = 5/12, 4/12, 3/12
    p_ca = [Fraction(2, 5), Fraction(2, 5), Fraction(1, 5)]
    p_c = [Fraction(5, 12), Fraction(4, 12), Fraction(3, 12)]
    expected = sum(float(p) * exact_log(p / q) for p, q in zip(p_ca, p_c, strict=True))
    assert toy.kl(["a"]).values[0] == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize("alpha", [None, 0.75])
def test_kl_is_the_expected_pmi_of_a_word_with_its_contexts(alpha: float | None) -> None:
    lee = lee_corpus()
    order = np.argsort(-lee.unigram_counts, kind="stable")
    words = [lee.vocabulary[i] for i in order[[0, 5, 50, 300, 1500, 4000]]]
    kl = lee.kl(words, smoothing_alpha=alpha)
    assert kl.words == tuple(words)
    pmi = lee.pmi_matrix(smoothing_alpha=alpha)
    for w, value in zip(words, kl.values, strict=True):
        i = lee.word_ids([w])[0]
        contexts = [lee.vocabulary[k] for k in lee.cooccurrence[[i]].indices]
        per_pair = lee.pmi([(w, c) for c in contexts], smoothing_alpha=alpha)
        assert per_pair.missing == ()
        p_cw = per_pair.counts / lee.marginals[i]
        assert p_cw.sum() == pytest.approx(1.0, rel=1e-12)
        assert value == pytest.approx(float(np.sum(p_cw * per_pair.values)), rel=1e-10)
        np.testing.assert_allclose(  # the matrix form agrees with the pair form
            pmi[[i]].toarray().ravel()[lee.word_ids(contexts)], per_pair.values, rtol=1e-12
        )
        assert value >= 0.0 if alpha is None else np.isfinite(value)


@pytest.mark.slow
def test_vectorised_counts_equal_a_plain_counter_on_real_text() -> None:
    docs = [tokenize(d.text) for d in lee_texts()]
    for window in (1, 3, 5):
        stats = CorpusStatistics.from_token_lists(docs, window)
        assert as_counter(stats) == counter_reference(docs, window)
    assert stats.n_tokens == sum(map(len, docs))
    assert Counter(dict(zip(stats.vocabulary, stats.unigram_counts.tolist(), strict=True))) == (
        Counter(t for d in docs for t in d)
    )


def test_chunked_streaming_gives_the_same_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = lee_corpus()
    monkeypatch.setattr(corpus_module, "_CHUNK_TOKENS", 997)
    chunked = CorpusStatistics.from_texts(d.text for d in lee_texts())
    assert chunked.vocabulary == whole.vocabulary
    np.testing.assert_array_equal(chunked.unigram_counts, whole.unigram_counts)
    assert (chunked.cooccurrence != whole.cooccurrence).nnz == 0
    shuffled_small = whole.shuffled(3)  # the shuffled recount runs in chunks too
    monkeypatch.undo()
    assert (shuffled_small.cooccurrence != whole.shuffled(3).cooccurrence).nnz == 0


def test_wide_vocabularies_use_wide_pair_codes() -> None:
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 50, size=400)
    lengths = np.array([150, 1, 249])
    narrow = corpus_module._window_pair_counts(ids, lengths, 4, 50)  # uint32 codes
    wide = corpus_module._window_pair_counts(ids, lengths, 4, 70_000)  # (V+1)² > 2³²: int64
    for a, b in zip(narrow, wide, strict=True):
        np.testing.assert_array_equal(a, b)
    assert narrow[2].sum() == sum(min(4, n - 1 - i) for n in lengths for i in range(n))


def test_windows_do_not_cross_documents() -> None:
    joined = CorpusStatistics.from_texts(["x y z w"], window=5)
    split = CorpusStatistics.from_texts(["x y", "z w"], window=5)
    assert joined.pair_counts([("y", "z"), ("x", "w")]).tolist() == [1, 1]
    assert split.pair_counts([("y", "z"), ("x", "w"), ("x", "y")]).tolist() == [0, 0, 1]
    near = CorpusStatistics.from_texts(["x y z"], window=1)
    assert near.pair_counts([("x", "z"), ("x", "y"), ("y", "x")]).tolist() == [0, 1, 1]
    same = CorpusStatistics.from_texts(["x x"], window=1)  # (0, 1) and (1, 0) are both (x, x)
    assert same.pair_counts([("x", "x")]).tolist() == [2] and same.n_pairs == 2


def test_tokens_use_the_frequency_source_normalisation() -> None:
    text = "Don't STOP: the Café's naïve résumé (3.14)!"
    stats = CorpusStatistics.from_texts([text])
    assert list(stats.vocabulary) == list(dict.fromkeys(wordfreq.tokenize(text, "en")))


def test_shuffled_baseline_brings_pmi_of_frequent_pairs_to_zero() -> None:
    wiki = wiki_sample()
    shuffled = wiki.shuffled(seed=0)
    np.testing.assert_array_equal(shuffled.unigram_counts, wiki.unigram_counts)
    assert shuffled.n_pairs == wiki.n_pairs and shuffled.vocabulary == wiki.vocabulary
    top = [wiki.vocabulary[i] for i in np.argsort(-wiki.unigram_counts, kind="stable")[:30]]
    pairs = [(a, b) for a in top for b in top if a <= b]
    real = np.abs(wiki.pmi(pairs, min_count=100).values)
    base = np.abs(shuffled.pmi(pairs, min_count=100).values)
    assert base.size > 250
    assert np.median(base) < 0.06 and np.quantile(base, 0.9) < 0.2
    assert np.median(real) > 3 * np.median(base)
    in_docs = wiki.shuffled(seed=0, scope="document")
    np.testing.assert_array_equal(in_docs.unigram_counts, wiki.unigram_counts)
    assert in_docs.n_pairs == wiki.n_pairs
    with pytest.raises(NormtestError, match="scope"):
        wiki.shuffled(scope="sentence")  # type: ignore[arg-type]


def test_shuffled_needs_the_tokens() -> None:
    lean = CorpusStatistics.from_texts(TOY, keep_tokens=False)
    with pytest.raises(NormtestError, match="keep_tokens=True"):
        lean.shuffled()


def test_cooccurring_pairs() -> None:
    lee = lee_corpus()
    pairs = lee.cooccurring_pairs(["the", "of", "fire", "bushfire", "qqqzzz"], min_count=5)
    assert ("of", "the") in pairs and all(a < b for a, b in pairs)
    assert lee.pmi(pairs).missing == ()
    assert all(n >= 5 for n in lee.pair_counts(pairs))


def test_wiki_sample_is_the_bundled_dump() -> None:
    wiki = wiki_sample()
    assert wiki.n_documents > 90 and wiki.n_tokens > 400_000
    assert wiki.count("anarchism") > 100 and "gensim" in wiki.source


# -- bad input -----------------------------------------------------------------------------------


def test_empty_corpus_raises(tmp_path: Path) -> None:
    with pytest.raises(NormtestError, match="no word tokens"):
        CorpusStatistics.from_texts([])
    with pytest.raises(NormtestError, match=r"3 documents read, 3 empty"):
        CorpusStatistics.from_texts(["", "  ", "!!! ..."])
    (tmp_path / "empty.txt").write_bytes(b"")
    with pytest.raises(NormtestError, match="no word tokens"):
        CorpusStatistics.from_files(tmp_path / "empty.txt")
    (tmp_path / "sub").mkdir()
    with pytest.raises(NormtestError, match="holds no files"):
        CorpusStatistics.from_files(tmp_path / "sub")
    with pytest.raises(NormtestError, match="not one string"):
        CorpusStatistics.from_texts("just one text")


def test_unreadable_file_raises(tmp_path: Path) -> None:
    with pytest.raises(NormtestError, match=r"cannot read .*absent\.txt.*exists and is readable"):
        CorpusStatistics.from_files([tmp_path / "absent.txt"])
    with pytest.raises(NormtestError, match="positive integer"):
        CorpusStatistics.from_texts(TOY, window=0)


def test_non_utf8_bytes_are_replaced_and_counted(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"the caf\xe9 is open\nthe cr\xe8me \xff\xfe is sweet\n")
    (folder / "b.txt").write_bytes(b"the shop is open\n")
    (folder / "skip.md").write_bytes(b"not a corpus file")
    stats = CorpusStatistics.from_files(folder, window=2, split="line")
    assert stats.n_replaced_bytes == 4
    assert stats.n_documents == 3
    assert "\ufffd" not in "".join(stats.vocabulary)
    assert stats.count("caf") == 1 and stats.count("the") == 3 and stats.count("not") == 0
    assert stats.pair_counts([("is", "open")]).tolist() == [2]


def test_document_splits(tmp_path: Path) -> None:
    f = tmp_path / "doc.txt"
    f.write_text("one two\nthree\n\nfour five\n", encoding="utf-8")
    assert CorpusStatistics.from_files(f, split="file").n_documents == 1
    assert CorpusStatistics.from_files(f, split="line").n_documents == 3
    para = CorpusStatistics.from_files(f, split="paragraph")
    assert para.n_documents == 2
    assert para.pair_counts([("two", "three"), ("three", "four")]).tolist() == [1, 0]
    with pytest.raises(NormtestError, match="unknown document split"):
        CorpusStatistics.from_files(f, split="sentence")  # type: ignore[arg-type]
