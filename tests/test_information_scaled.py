"""Corpora at scale: readers, block counting restricted to a vocabulary, merging, executors,
the store, and an audit with --corpus on local processes and on Ray (docs/information.md)."""

from __future__ import annotations

import bz2
import gzip
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from normtest.data.information import readers, scaled
from normtest.data.information.corpus import CorpusStatistics
from normtest.data.information.samples import default_word_sample
from normtest.data.information.texts import lee_texts, read_text_file, split_documents
from normtest.data.information.vocabulary_counts import CorpusCounts
from normtest.errors import NormtestError
from normtest.models.cache.embeddings import CacheWarning

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

N_FILES, PER_FILE = 20, 15
MIN = 3  # min_count of the pair questions (the Lee corpus is small)


def file_texts() -> list[str]:
    """The 300 Lee documents as 20 texts of 15 paragraphs (blank lines between them)."""
    docs = [t.text for t in lee_texts()]
    return ["\n\n".join(docs[i * PER_FILE : (i + 1) * PER_FILE]) + "\n"
            for i in range(N_FILES)]


@pytest.fixture(scope="module")
def lee_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("lee") / "plain"
    folder.mkdir()
    for i, text in enumerate(file_texts()):
        (folder / f"part{i:02d}.txt").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def full(lee_folder: Path) -> CorpusStatistics:
    return CorpusStatistics.from_files(lee_folder, split="paragraph")


@pytest.fixture(scope="module")
def words() -> list[str]:
    return [*default_word_sample(size=300, seed=0), "zzzznotaword"]


def assert_same_counts(a: CorpusCounts, b: CorpusCounts) -> None:
    assert a.vocabulary == b.vocabulary and a.rows == b.rows
    assert np.array_equal(a.unigram_counts, b.unigram_counts)
    assert np.array_equal(a.marginals, b.marginals)
    assert (a.cooccurrence != b.cooccurrence).nnz == 0
    assert (a.n_documents, a.n_empty_documents, a.n_replaced_bytes) == (
        b.n_documents, b.n_empty_documents, b.n_replaced_bytes)


def assert_equals_full(counts: CorpusCounts, full: CorpusStatistics, words: list[str]) -> None:
    """Every question the audit asks has the full statistics' answer, bit for bit."""
    assert counts.vocabulary == full.vocabulary
    assert np.array_equal(counts.unigram_counts, full.unigram_counts)
    assert np.array_equal(counts.marginals, full.marginals)
    assert (counts.n_tokens, counts.n_pairs, counts.n_documents) == (
        full.n_tokens, full.n_pairs, full.n_documents)
    assert [counts.count(w) for w in words] == [full.count(w) for w in words]
    for alpha in (None, 0.75):
        a, b = full.kl(words, smoothing_alpha=alpha), counts.kl(words, smoothing_alpha=alpha)
        assert a.words == b.words and a.missing == b.missing and "zzzznotaword" in a.missing
        assert np.array_equal(a.values, b.values) and np.array_equal(a.counts, b.counts)
    pairs = full.cooccurring_pairs(words, min_count=MIN)
    assert len(pairs) > 500 and counts.cooccurring_pairs(words, min_count=MIN) == pairs
    asked = [*pairs, ("the", "zzzznotaword"), ("house", "the")]
    for alpha in (None, 0.75):
        a = full.pmi(asked, min_count=MIN, smoothing_alpha=alpha)
        b = counts.pmi(asked, min_count=MIN, smoothing_alpha=alpha)
        assert a.pairs == b.pairs and a.missing == b.missing
        assert (a.n_absent, a.n_rare) == (b.n_absent, b.n_rare)
        assert np.array_equal(a.values, b.values) and np.array_equal(a.counts, b.counts)
    ic_a, ic_b = full.information_content(words), counts.information_content(words)
    assert np.array_equal(ic_a.values, ic_b.values)
    rows = full.word_ids([w for w in counts.rows if full.count(w)])
    present = [i for i, w in enumerate(counts.rows) if full.count(w)]
    assert (full.cooccurrence[rows] != counts.cooccurrence[present]).nnz == 0


def test_counts_equal_the_full_statistics(lee_folder: Path, full: CorpusStatistics,
                                          words: list[str]) -> None:
    counts = scaled.corpus_counts(lee_folder, words, store=False)
    assert_equals_full(counts, full, words)
    assert counts.source == full.source == "20 files (split by paragraph)"
    outside = next(w for w in full.vocabulary if w not in words)
    with pytest.raises(NormtestError, match="outside the vocabulary"):
        counts.kl([outside])
    with pytest.raises(NormtestError, match="outside the vocabulary"):
        counts.pmi([(outside, outside)])


def test_byte_ranges_of_one_large_file(tmp_path: Path, words: list[str]) -> None:
    text = "".join(file_texts()).replace("\n\n", "\n \n", 40).replace("\n\n", "\r\n\r\n", 40)
    one = tmp_path / "one.txt"
    one.write_bytes(("\ufeff" + text).encode("utf-8"))
    for split in ("paragraph", "line"):
        blocks = readers.plan_blocks(readers.corpus_files(one), split, 8192)
        assert len(blocks) > 20  # cut at document boundaries inside one file
        counts = scaled.corpus_counts(one, words, split=split, block_bytes=8192, store=False)
        assert_equals_full(counts, CorpusStatistics.from_files(one, split=split), words)
        assert counts.source == f"one.txt (split by {split})"


@pytest.fixture(scope="module")
def other_forms(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same 20 texts as gzip files, bzip2 files, and a Parquet file of 20 rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = tmp_path_factory.mktemp("forms")
    texts = file_texts()
    for kind, opener in (("gz", gzip.open), ("bz2", bz2.open)):
        (root / kind).mkdir()
        for i, text in enumerate(texts):
            with opener(root / kind / f"part{i:02d}.txt.{kind}", "wb") as out:
                out.write(text.encode("utf-8"))
    table = pa.table({"id": list(range(N_FILES)), "body": texts})
    pq.write_table(table, root / "lee.parquet", row_group_size=3)
    pq.write_table(table.rename_columns(["id", "text"]), root / "default.parquet")
    return {"gz": root / "gz", "bz2": root / "bz2", "parquet": root / "lee.parquet",
            "default": root / "default.parquet"}


def test_readers_give_the_same_counts(lee_folder: Path, other_forms: dict[str, Path],
                                      words: list[str]) -> None:
    plain = scaled.corpus_counts(lee_folder, words, store=False)
    for spec, column in ((other_forms["gz"], "text"), (other_forms["bz2"], "text"),
                         (str(lee_folder / "part*.txt"), "text"),
                         (str(lee_folder.parent / "**" / "*.txt"), "text"),
                         (other_forms["parquet"], "body"), (other_forms["default"], "text")):
        counts = scaled.corpus_counts(spec, words, text_column=column, block_bytes=20_000,
                                      store=False)
        assert_same_counts(counts, plain)
    blocks = readers.plan_blocks(readers.corpus_files(other_forms["parquet"]), "paragraph",
                                 20_000, "body")
    assert len(blocks) > 1 and all(p.kind == "parquet" for b in blocks for p in b.parts)
    docs = [d for _, _, d in readers.iter_documents(other_forms["gz"])]
    assert docs == [d for t in file_texts() for d in split_documents(t, "paragraph")]


@given(data=st.lists(st.sampled_from([b"The cat sat.", b"\n", b"\n\n", b"\r\n", b" ", b"\t",
                                      b"caf\xc3\xa9", b"\xe9", b"\xef\xbb\xbf", b"A dog ran",
                                      b"\n \n", b"\xe2\x80\xa8"]), max_size=60).map(b"".join),
       split=st.sampled_from(["file", "line", "paragraph"]),
       read=st.integers(1, 9))
def test_streamed_pieces_make_the_same_documents(tmp_path_factory: pytest.TempPathFactory,
                                                 data: bytes, split: Any, read: int) -> None:
    """Pieces read a few bytes at a time, and byte ranges, cut nowhere but between documents."""
    path = tmp_path_factory.getbasetemp() / "stream.txt"
    path.write_bytes(data)
    whole = read_text_file(path)
    expected = split_documents(whole.text, split)
    saved = readers.READ_BYTES, readers.SCAN_BYTES
    readers.READ_BYTES = readers.SCAN_BYTES = read
    try:
        got = [d for _, _, d in readers.iter_documents(path, split)]
        blocks = readers.plan_blocks(readers.corpus_files(path), split, read)
        pieces = [p for b in blocks for part in b.parts for p in readers.read_part(part, split)]
    finally:
        readers.READ_BYTES, readers.SCAN_BYTES = saved
    assert got == expected
    assert [d for p in pieces for d in split_documents(p.text, split)] == expected
    assert sum(p.n_replaced for p in pieces) == whole.n_replaced_bytes
    assert sum(p.n_bytes for p in pieces) == len(data)


def test_rows_are_bounded_by_the_vocabulary(lee_folder: Path, full: CorpusStatistics) -> None:
    hundred = default_word_sample(size=100, seed=1)
    block = readers.plan_blocks(readers.corpus_files(lee_folder), "paragraph", 1 << 30)[0]
    counted = scaled.count_block(block, sorted(hundred))
    assert counted.indptr.size == 101 and len(counted.words) == len(full.vocabulary)
    counts = scaled.corpus_counts(lee_folder, hundred, store=False)
    assert counts.cooccurrence.shape == (100, len(full.vocabulary))
    assert counts.cooccurrence.nnz < full.cooccurrence.nnz / 4


def test_two_workers_one_worker_and_ray_agree(lee_folder: Path, full: CorpusStatistics,
                                              words: list[str], ray_cluster: Any) -> None:
    one = scaled.corpus_counts(lee_folder, words, workers=1, block_bytes=20_000, store=False)
    two = scaled.corpus_counts(lee_folder, words, workers=2, block_bytes=20_000, store=False)
    on_ray = scaled.corpus_counts(lee_folder, words, executor="ray", workers=2,
                                  block_bytes=20_000, store=False)
    assert_same_counts(one, two)
    assert_same_counts(one, on_ray)
    assert_equals_full(on_ray, full, words)
    broken = [lee_folder / f"part{i:02d}.txt" for i in range(4)] + [lee_folder.parent / "x.gz"]
    broken[-1].write_bytes(b"not gzip")  # an error in a worker reaches the caller as it was
    for executor in ("local", "ray"):
        with pytest.raises(NormtestError, match=r"x\.gz as gzip"):
            scaled.corpus_counts(broken, words, executor=executor, workers=2, block_bytes=20_000,
                                 store=False)


def test_the_store_is_read_instead_of_counting(
        tmp_path: Path, lee_folder: Path, full: CorpusStatistics, words: list[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(tmp_path / "cache"))
    store = tmp_path / "cache" / "corpora"
    first = scaled.corpus_counts(lee_folder, words)
    stored = list(store.iterdir())
    assert [p.suffix for p in stored] == [".npz"]  # one file, no temporary left
    outside = next(w for w in full.vocabulary if w not in words)

    def no_counting(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("counted again")

    with monkeypatch.context() as m:
        m.setattr(scaled, "count_block", no_counting)
        m.setattr(scaled, "count_corpus", no_counting)
        again = scaled.corpus_counts(lee_folder, list(reversed(words)))
        subset = scaled.corpus_counts(lee_folder, words[:50])
        with pytest.raises(AssertionError, match="counted again"):  # another window
            scaled.corpus_counts(lee_folder, words, window=4)
        with pytest.raises(AssertionError, match="counted again"):  # a word not counted
            scaled.corpus_counts(lee_folder, [*words, outside])
    assert_same_counts(first, again)
    assert subset.rows == first.rows
    with np.load(stored[0], allow_pickle=False) as z:  # no pickles in the file
        assert set(z.files) >= {"meta", "unigram", "marginals", "indptr", "indices", "data"}
    wider = scaled.corpus_counts(lee_folder, [outside, *words[:5]])  # counted for the union
    assert set(wider.rows) == {*words, outside} and list(store.iterdir()) == stored
    assert np.array_equal(wider.kl(words[:20]).values, first.kl(words[:20]).values)
    stored[0].write_bytes(b"not an npz")  # a damaged file is counted again, then replaced
    with pytest.warns(CacheWarning, match="recomputing it"):
        fresh = scaled.corpus_counts(lee_folder, words[:10])
    assert fresh.rows == tuple(sorted(set(words[:10])))
    assert np.array_equal(fresh.kl(words[:10]).values, first.kl(words[:10]).values)
    assert CorpusCounts.load(stored[0])[0].rows == fresh.rows
    touched = lee_folder / "part03.txt"
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 10**9))
    with monkeypatch.context() as m, pytest.raises(AssertionError, match="counted again"):
        m.setattr(scaled, "count_corpus", no_counting)  # a changed file is counted again
        scaled.corpus_counts(lee_folder, words[:10])


def test_bad_input_says_what_to_do(tmp_path: Path, other_forms: dict[str, Path],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    words = ["the", "house"]
    with pytest.raises(NormtestError, match="does not exist; check the path"):
        scaled.corpus_counts(tmp_path / "absent.txt", words, store=False)
    with pytest.raises(NormtestError, match="matches no file"):
        scaled.corpus_counts(str(tmp_path / "none" / "*.txt.gz"), words, store=False)
    (tmp_path / "empty").mkdir()
    with pytest.raises(NormtestError, match=r"holds no corpus files \(\*\.txt"):
        scaled.corpus_counts(tmp_path / "empty", words, store=False)
    with pytest.raises(NormtestError, match="no column 'text'; its columns are 'id', 'body'"):
        scaled.corpus_counts(other_forms["parquet"], words, store=False)
    (tmp_path / "bad.txt.gz").write_bytes(b"this is not gzip at all\n\nreally")
    with pytest.raises(NormtestError, match=r"cannot read .*bad\.txt\.gz as gzip"):
        scaled.corpus_counts(tmp_path / "bad.txt.gz", words, store=False)
    whole = gzip.compress(b"The house stands.\n\nThe tree grows.\n" * 200)
    (tmp_path / "cut.txt.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(NormtestError, match="complete"):
        scaled.corpus_counts(tmp_path / "cut.txt.gz", words, store=False)
    (tmp_path / "latin.txt").write_bytes("The caf\u00e9 house.\n\nThe house.".encode("latin-1"))
    latin = scaled.corpus_counts(tmp_path / "latin.txt", words, store=False)
    assert latin.n_replaced_bytes == 1 and latin.count("house") == 2
    with pytest.raises(NormtestError, match="no word tokens"):
        (tmp_path / "blank.txt").write_text("...\n\n!!!\n")
        scaled.corpus_counts(tmp_path / "blank.txt", words, store=False)
    with pytest.raises(NormtestError, match="unknown executor"):
        scaled.corpus_counts(tmp_path / "latin.txt", words, executor="dask", store=False)
    monkeypatch.setitem(sys.modules, "ray", None)  # Ray not installed
    with pytest.raises(NormtestError, match=r"pip install 'normtest\[ray\]'"):
        scaled.corpus_counts(tmp_path / "latin.txt", words, executor="ray", store=False)


def test_audit_with_a_corpus_is_the_same_locally_and_on_ray(
        tmp_path: Path, lee_folder: Path, monkeypatch: pytest.MonkeyPatch,
        ray_cluster: Any) -> None:
    """glove-6b-50d with --corpus on 20 files: the default run, two local worker processes
    and Ray give the same report (each counts the corpus and its halves: a store of its
    own)."""
    import normtest
    from normtest.audit.run import run_audit
    from normtest.base.settings import AuditSettings

    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(tmp_path / "cache"))  # embedding cache shared
    glove = normtest.load("glove-6b-50d")
    ran: list[str] = []
    run_ray, run_local = scaled._run_ray, scaled._run_local
    monkeypatch.setattr(scaled, "_run_ray", lambda *a: (ran.append("ray"), run_ray(*a))[1])
    monkeypatch.setattr(scaled, "_run_local",
                        lambda b, args, n: (ran.append(f"local {n}"), run_local(b, args, n))[1])

    def audit(executor: str, workers: int | None) -> list[str]:
        monkeypatch.setattr(scaled, "store_dir", lambda: tmp_path / f"corpora-{executor}-{workers}")
        settings = AuditSettings(words=300, resamples=200, corpus=(str(lee_folder),),
                                 min_pair_count=MIN, min_word_count=5, executor=executor,
                                 workers=workers)
        report = run_audit(glove, claim_ids=["word.norm_kl", "cond.inner_pmi"],
                           settings=settings)
        return [repr((r.claim, sorted(r.variant.items()), r.verdict.value, r.estimate, r.ci,
                      r.p_value, r.p_adjusted)) for r in report.results]

    default = audit("local", None)
    assert len(default) >= 2 and not any("'ERROR'" in r or "'SKIPPED'" in r for r in default)
    assert audit("local", 2) == default
    assert audit("ray", None) == default
    # each audit counts the corpus, then its two halves (PMI's split-half reliability, for
    # cond.inner_pmi) in one more reading, on the same executor
    assert ran == ["local 1", "local 1", "local 2", "local 2", "ray", "ray"]
