"""Static and precomputed vectors: the embedded GloVe, gensim formats, .npy + vocabulary."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from normtest.adapters.precomputed import load_precomputed
from normtest.adapters.protocol import Capability, supports
from normtest.adapters.static import (
    StaticVectors,
    detect_format,
    load_keyed_vectors,
    load_npy,
)
from normtest.base.progress import without_progress
from normtest.errors import NormtestError
from normtest.testing.conformance import check_adapter


def test_glove_maps_words_to_the_right_rows(glove: StaticVectors) -> None:
    # docs/models.md: WordSim353 Spearman ≈ 0.50 for GloVe-50d; a row mix-up destroys it
    from gensim.test.utils import datapath

    pairs = []
    for line in Path(datapath("wordsim353.tsv")).read_text().splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and not line.startswith("#"):
            pairs.append((parts[0].lower(), parts[1].lower(), float(parts[2])))
    known = [p for p in pairs if glove.represents([p[0], p[1]]).all()]
    a = glove.word_vectors([p[0] for p in known]).astype(np.float64)
    b = glove.word_vectors([p[1] for p in known]).astype(np.float64)
    cosine = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    rho = sps.spearmanr(cosine, [p[2] for p in known]).statistic
    assert len(known) > 300
    assert 0.45 < rho < 0.55, rho
    assert glove.vocabulary[:3] == ("the", ",", ".")


def test_glove_conforms(glove: StaticVectors) -> None:
    outcomes = check_adapter(glove)
    assert [o.name for o in outcomes] == ["identity", "word_vectors"]
    assert glove.dim == 50 and len(glove.vocabulary) == 400_000
    assert supports(glove, Capability.WORD_VECTORS)
    assert not supports(glove, Capability.TOKEN_VECTORS)


def test_missing_word_is_a_clear_error(glove: StaticVectors) -> None:
    assert list(glove.represents(["cat", "qzxvbn-not-a-word"])) == [True, False]
    with pytest.raises(NormtestError, match=r"no vector for 1 word\(s\): 'qzxvbn-not-a-word'"):
        glove.word_vectors(["cat", "qzxvbn-not-a-word"])


def _write_formats(tmp: Path) -> dict[str, Path]:
    from gensim.models import KeyedVectors

    words = ["alpha", "beta", "gamma", "delta"]
    vectors = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
    kv = KeyedVectors(vector_size=3)
    kv.add_vectors(words, vectors)
    paths = {"word2vec": tmp / "v.txt", "word2vec-binary": tmp / "v.bin",
             "fasttext": tmp / "v.vec", "glove": tmp / "glove.txt"}
    kv.save_word2vec_format(str(paths["word2vec"]))
    kv.save_word2vec_format(str(paths["word2vec-binary"]), binary=True)
    kv.save_word2vec_format(str(paths["fasttext"]))
    paths["glove"].write_text(
        "".join(f"{w} {' '.join(str(v) for v in row)}\n" for w, row in zip(words, vectors,
                                                                          strict=True))
    )
    np.save(tmp / "m.npy", vectors)
    (tmp / "vocab.txt").write_text("\n".join(words) + "\n")
    return paths


def test_every_format_reads_the_same_vectors(tmp_path: Path) -> None:
    paths = _write_formats(tmp_path)
    expected = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
    for fmt, path in paths.items():
        model = load_keyed_vectors(path)
        assert model.vocabulary == ("alpha", "beta", "gamma", "delta"), fmt
        np.testing.assert_allclose(model.word_vectors(["gamma"]), expected[2:3], rtol=1e-6)
        check_adapter(model, words=["alpha", "beta", "delta"])
    assert detect_format(paths["glove"]) == "glove"
    assert detect_format(paths["word2vec"]) == "word2vec"
    npy = load_npy(tmp_path / "m.npy", tmp_path / "vocab.txt")
    np.testing.assert_array_equal(npy.word_vectors(["beta"]), expected[1:2])


def test_bad_vector_files_are_clear_errors(tmp_path: Path) -> None:
    paths = _write_formats(tmp_path)
    with pytest.raises(NormtestError, match="not found"):
        load_keyed_vectors(tmp_path / "missing.vec")
    truncated = tmp_path / "cut.txt"
    truncated.write_text(paths["word2vec"].read_text()[:-25])
    with pytest.raises(NormtestError, match="could not read"):
        load_keyed_vectors(truncated)
    with pytest.raises(NormtestError, match="could not read"):
        load_keyed_vectors(paths["word2vec-binary"], format="glove")
    (tmp_path / "short_vocab.txt").write_text("alpha\nbeta\n")
    with pytest.raises(NormtestError, match="4 rows"):
        load_npy(tmp_path / "m.npy", tmp_path / "short_vocab.txt")
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(NormtestError, match="vocabulary is empty"):
        load_npy(tmp_path / "m.npy", tmp_path / "empty.txt")
    (tmp_path / "not.npy").write_bytes(b"not a numpy file")
    with pytest.raises(NormtestError, match=r"not a readable \.npy"):
        load_npy(tmp_path / "not.npy", tmp_path / "vocab.txt")
    nan = np.ones((4, 3), dtype=np.float32)
    nan[1, 1] = np.nan
    np.save(tmp_path / "nan.npy", nan)
    with pytest.raises(NormtestError, match="NaN"):
        load_npy(tmp_path / "nan.npy", tmp_path / "vocab.txt").word_vectors(["beta"])


def test_precomputed_vectors(tmp_path: Path) -> None:
    keys = ["a whole text.", "word"]
    vectors = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.savez(tmp_path / "p.npz", keys=np.array(keys), vectors=vectors)
    (tmp_path / "p.jsonl").write_text(
        "\n".join(json.dumps({"key": k, "vector": list(v)}) for k, v in zip(keys, vectors,
                                                                            strict=True))
    )
    for name in ("p.npz", "p.jsonl"):
        model = load_precomputed(tmp_path / name)
        np.testing.assert_array_equal(model.word_vectors(["a whole text."]), vectors[:1])
        check_adapter(model, words=keys)
    (tmp_path / "bad.jsonl").write_text(
        '{"key": "x", "vector": [1, 2]}\n{"key": "y", "vector": [1]}'
    )
    with pytest.raises(NormtestError, match="dimension 1"):
        load_precomputed(tmp_path / "bad.jsonl")
    np.savez(tmp_path / "wrong.npz", words=np.array(keys), vectors=vectors)
    with pytest.raises(NormtestError, match="'keys' and 'vectors'"):
        load_precomputed(tmp_path / "wrong.npz")
    np.savez(tmp_path / "obj.npz", keys=np.array(keys, dtype=object), vectors=vectors)
    with pytest.raises(NormtestError, match="without pickles"):
        load_precomputed(tmp_path / "obj.npz")


def test_lowercase_and_limit_are_part_of_the_cache_key(tmp_path: Path) -> None:
    from normtest.models.cache.adapter import CachedAdapter
    from normtest.models.cache.embeddings import EmbeddingCache

    path = tmp_path / "v.txt"
    path.write_text("3 3\nParis 1 0 0\nparis 0 5 0\nLondon 0 0 2\n")
    cased = load_keyed_vectors(path, lowercase=False)
    folded = load_keyed_vectors(path, lowercase=True)
    limited = load_keyed_vectors(path, limit=2)
    assert len({cased.revision, folded.revision, limited.revision}) == 3
    assert all(isinstance(a.revision, str) for a in (cased, folded, limited))
    cache = EmbeddingCache(tmp_path / "cache")
    try:
        first = CachedAdapter(cased, cache).word_vectors(["Paris"])
        second = CachedAdapter(folded, cache).word_vectors(["Paris"])
        np.testing.assert_array_equal(first, [[1, 0, 0]])
        np.testing.assert_array_equal(second, [[0, 5, 0]])
        # a fresh handle on the same folder still tells them apart
        again = EmbeddingCache(tmp_path / "cache")
        try:
            np.testing.assert_array_equal(
                CachedAdapter(load_keyed_vectors(path, lowercase=True), again)
                .word_vectors(["Paris"]), [[0, 5, 0]])
        finally:
            again.close()
        assert not CachedAdapter(limited, cache).represents(["London"]).any()
    finally:
        cache.close()


def _header_files(tmp: Path) -> dict[str, tuple[Path, str]]:
    """The three damaged word2vec files of issue 15, each with what its error must say."""
    rng = np.random.default_rng(0)
    empty = tmp / "empty.vec"
    empty.write_bytes(b"")
    huge = tmp / "huge.vec"
    huge.write_text("1000000000000 50\nthe " + " ".join(["0.5"] * 50) + "\n")
    short = tmp / "short_header.vec"
    short.write_text("100 20\n" + "".join(
        f"w{i} " + " ".join(f"{x:.4f}" for x in rng.normal(size=20)) + "\n" for i in range(1500)
    ))
    return {
        "empty": (empty, r"empty\.vec is empty \(0 bytes\)"),
        "huge": (huge, r"header claims 1,000,000,000,000 rows of 50 numbers.*the file has "
                       r"\d+ bytes"),
        "short": (short, r"header says 100 rows but the file has 1,500; correct the first line "
                         r"to '1500 20', or delete it and read the file as GloVe"),
    }


@pytest.mark.parametrize("case", ["empty", "huge", "short"])
def test_damaged_word2vec_headers_are_refused(tmp_path: Path, case: str) -> None:
    from normtest.models.registry import load

    path, message = _header_files(tmp_path)[case]
    with pytest.raises(NormtestError, match=message):
        load(path, cache=False)


@pytest.mark.parametrize("case", ["empty", "huge", "short"])
def test_damaged_word2vec_headers_on_the_command_line(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from normtest.cli.main import main

    path, message = _header_files(tmp_path)[case]
    code = main(["audit", "--model", str(path), "--suite", "word", "--words", "10"])
    err = without_progress(capsys.readouterr().err)
    assert code == 2, err
    assert "Traceback" not in err
    assert err.startswith("normtest: error: ") and err.count("\n") == 1, err
    assert re.search(message, err), err


def test_binary_header_must_match_the_rows(tmp_path: Path) -> None:
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=3)
    kv.add_vectors(["alpha", "beta", "gamma", "delta"], np.ones((4, 3), dtype=np.float32))
    good = tmp_path / "v.bin"
    kv.save_word2vec_format(str(good), binary=True)
    body = good.read_bytes().split(b"\n", 1)[1]
    for header, message in [
        (b"2 3\n", r"header says 2 rows but the file has 4; correct the first line to '4 3'"),
        (b"5 3\n", r"header says 5 rows but the file has 4"),
        (b"6 3\n", r"header claims 6 rows of 3 float32 numbers, which need at least 84 bytes"),
        (b"1000000000000 3\n", r"header claims 1,000,000,000,000 rows of 3 float32 numbers"),
        (b"0 3\n", r"header says 0 rows but the file has 4"),
        (b"4 0\n", r"dimension 0"),
        (b"not a header\n", r"first line should be 'count dim'"),
    ]:
        (tmp_path / "bad.bin").write_bytes(header + body)
        with pytest.raises(NormtestError, match=message):
            load_keyed_vectors(tmp_path / "bad.bin")
    (tmp_path / "cut.bin").write_bytes(good.read_bytes()[:-5])
    with pytest.raises(NormtestError, match="row 4 is cut short"):
        load_keyed_vectors(tmp_path / "cut.bin")


def test_text_vector_files_with_holes(tmp_path: Path) -> None:
    cases = {
        "gap.vec": ("2 2\na 1 2\n\nb 3 4\n", "line 3 is empty but vectors follow"),
        "tail.txt": ("a 1 2\nb 3 4\n\n", "line 3 is empty; delete the empty lines"),
        "words.txt": ("a\nb\n", "holds a word and no numbers"),
        "blank.txt": ("\n\n  \n", "holds no vectors"),
        "digits.vec": ("99999999999999999999 3\n", "claims more rows or numbers than any file"),
        "nan.vec": ("2 2\na 1 nan\nb 3 4\n", "NaN or infinite"),
        "bytes.vec": ("2 2\na 1 2\nb 3 4\n".replace("b", "\udcff"), "could not read"),
    }
    for name, (text, message) in cases.items():
        path = tmp_path / name
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        with pytest.raises(NormtestError, match=message):
            load_keyed_vectors(path)
    (tmp_path / "ok.vec").write_text("2 2\na 1 2\nb 3 4\n\n")  # a trailing empty line is fine
    assert load_keyed_vectors(tmp_path / "ok.vec").vocabulary == ("a", "b")
    with pytest.raises(NormtestError, match="limit must be a positive"):
        load_keyed_vectors(tmp_path / "ok.vec", limit=0)


def test_precomputed_files_are_checked_before_use(tmp_path: Path) -> None:
    keys = np.array(["a", "b"])
    np.save(tmp_path / "obj.npy", np.array([[1, "x"]], dtype=object), allow_pickle=True)
    (tmp_path / "vocab.txt").write_text("a\n")
    with pytest.raises(NormtestError, match=r"Python objects.*unpickling"):
        load_npy(tmp_path / "obj.npy", tmp_path / "vocab.txt")
    (tmp_path / "empty.npy").write_bytes(b"")
    with pytest.raises(NormtestError, match="the file is empty"):
        load_npy(tmp_path / "empty.npy", tmp_path / "vocab.txt")
    np.save(tmp_path / "text.npy", np.array([["1", "2"]]))
    with pytest.raises(NormtestError, match="must be numbers"):
        load_npy(tmp_path / "text.npy", tmp_path / "vocab.txt")
    np.savez(tmp_path / "big.npz", keys=keys, vectors=np.array([[1e300, 0], [1, 2]]))
    with pytest.raises(NormtestError, match=r"out-of-float32-range.*first 'a'"):
        load_precomputed(tmp_path / "big.npz")
    np.savez(tmp_path / "bytes.npz", keys=np.array([b"a", b"b"]), vectors=np.eye(2))
    assert load_precomputed(tmp_path / "bytes.npz").vocabulary == ("a", "b")
    np.savez(tmp_path / "numbers.npz", keys=np.arange(2), vectors=np.eye(2))
    with pytest.raises(NormtestError, match="'keys' must be strings"):
        load_precomputed(tmp_path / "numbers.npz")
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(NormtestError, match=r"not a readable .npz"):
        load_precomputed(tmp_path / "bad.npz")
    for line, message in [
        ('{"key": "x", "vector": [1, 2', "not JSON"),
        ("[" * 100_000, "nested too deeply"),
        ('{"key": "x", "vector": "12"}', "expected"),
        ('{"key": 3, "vector": [1, 2]}', "expected"),
        ('{"key": "x", "vector": [true, 2]}', "expected"),
        ('{"key": "x", "vector": [NaN, 2]}', "NaN"),
        ('{"key": "x", "vector": [1e39, 2]}', "out-of-float32-range"),
        ('{"key": "x", "vector": [1' + "0" * 400 + ', 2]}', "out-of-float32-range"),
        ("\n\n", "holds no vectors"),
    ]:
        (tmp_path / "v.jsonl").write_text(line)
        with pytest.raises(NormtestError, match=message):
            load_precomputed(tmp_path / "v.jsonl")
    (tmp_path / "v.jsonl").write_bytes(b'\xef\xbb\xbf{"key": "x", "vector": [1, 2]}\n')
    assert load_precomputed(tmp_path / "v.jsonl").vocabulary == ("x",)
