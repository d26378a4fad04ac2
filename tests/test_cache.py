"""The embedding cache: hits read from disk, keys separate what changes a vector, damage heals."""

from __future__ import annotations

import sqlite3
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from normtest.adapters.protocol import Layer, TokenBatch
from normtest.base.paths import default_cache_dir
from normtest.models.cache.adapter import CachedAdapter
from normtest.models.cache.embeddings import CacheWarning, EmbeddingCache
from normtest.models.synthetic import OracleModel, make_oracle


class Counting:
    """A real synthetic model that counts how often each method reaches it."""

    def __init__(self, model: OracleModel, fail_on: str | None = None) -> None:
        self.model = model
        self.calls: dict[str, int] = {}
        self.fail_on = fail_on
        self.name, self.revision, self.dim = model.name, model.revision, model.dim
        self.capabilities = model.capabilities

    def _count(self, method: str, items: Sequence[str]) -> None:
        self.calls[method] = self.calls.get(method, 0) + 1
        if self.fail_on is not None and self.fail_on in items:
            raise RuntimeError("simulated crash in the middle of an audit")

    def word_vectors(self, words: Sequence[str]) -> np.ndarray:
        self._count("word_vectors", words)
        return self.model.word_vectors(words)

    def represents(self, words: Sequence[str]) -> np.ndarray:
        return self.model.represents(words)

    def tokenize(self, text: str) -> Any:
        return self.model.tokenize(text)

    def word_tokens(self, word: str) -> Any:
        return self.model.word_tokens(word)

    def token_vectors(self, texts: Sequence[str], *, layer: Layer = "last",
                      special_tokens: bool = False, words: bool = False) -> TokenBatch:
        self._count("token_vectors", texts)
        return self.model.token_vectors(texts, layer=layer)


@pytest.fixture(scope="module")
def oracle() -> OracleModel:
    return make_oracle(30, seed=1)


def test_second_request_reads_from_disk(tmp_path: Path, oracle: OracleModel) -> None:
    words = list(oracle.words[:10])
    first = Counting(oracle)
    a = CachedAdapter(first, EmbeddingCache(tmp_path)).word_vectors(words)
    assert first.calls == {"word_vectors": 1}
    second = Counting(oracle)  # a new process: a fresh model and a fresh connection
    b = CachedAdapter(second, EmbeddingCache(tmp_path)).word_vectors(words)
    assert second.calls == {}
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(b, oracle.word_vectors(words))
    # an overlapping request computes only the new words, in one call
    CachedAdapter(second, EmbeddingCache(tmp_path)).word_vectors([*words, oracle.words[20]])
    assert second.calls == {"word_vectors": 1}


def test_keys_separate_everything_that_changes_a_vector(tmp_path: Path, oracle: OracleModel
                                                         ) -> None:
    model = Counting(oracle)
    cached = CachedAdapter(model, EmbeddingCache(tmp_path))
    text = " ".join(oracle.words[:4])
    batch = cached.token_vectors([text])
    cached.token_vectors([text])
    assert model.calls["token_vectors"] == 1
    cached.token_vectors([text], layer="input")
    cached.token_vectors([text], special_tokens=True)
    cached.token_vectors([text + " "])  # the exact text is part of the key
    assert model.calls["token_vectors"] == 4
    np.testing.assert_array_equal(batch[0], oracle.token_vectors([text])[0])
    other = make_oracle(30, seed=2)  # same name, another revision
    assert other.revision != oracle.revision
    moved = Counting(other)
    CachedAdapter(moved, EmbeddingCache(tmp_path)).token_vectors([text])
    assert moved.calls["token_vectors"] == 1


def test_corrupt_entry_is_recomputed_with_a_warning(tmp_path: Path, oracle: OracleModel) -> None:
    words = list(oracle.words[:3])
    CachedAdapter(Counting(oracle), EmbeddingCache(tmp_path)).word_vectors(words)
    with sqlite3.connect(tmp_path / "embeddings.sqlite") as db:
        key, data = db.execute("SELECT key, data FROM entries LIMIT 1").fetchone()
        damaged = bytes(data[:-4]) + b"\x00\x01\x02\x03"
        db.execute("UPDATE entries SET data = ? WHERE key = ?", (damaged, key))
    model = Counting(oracle)
    with pytest.warns(CacheWarning, match="corrupt"):
        again = CachedAdapter(model, EmbeddingCache(tmp_path)).word_vectors(words)
    assert model.calls == {"word_vectors": 1}
    np.testing.assert_array_equal(again, oracle.word_vectors(words))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # healed: no warning the next time
        CachedAdapter(Counting(oracle), EmbeddingCache(tmp_path)).word_vectors(words)


def test_unreadable_cache_file_is_moved_aside(tmp_path: Path, oracle: OracleModel) -> None:
    (tmp_path / "embeddings.sqlite").write_bytes(b"this is not a database" * 100)
    with pytest.warns(CacheWarning, match="unreadable"):
        cache = EmbeddingCache(tmp_path)
    assert len(cache) == 0
    assert list(tmp_path.glob("embeddings.corrupt-*"))
    CachedAdapter(Counting(oracle), cache).word_vectors(list(oracle.words[:2]))
    assert len(cache) == 2


def test_interrupted_run_resumes_from_what_was_cached(tmp_path: Path, oracle: OracleModel
                                                       ) -> None:
    first_half, second_half = list(oracle.words[:5]), list(oracle.words[5:10])
    crashing = Counting(oracle, fail_on=second_half[0])
    cached = CachedAdapter(crashing, EmbeddingCache(tmp_path))
    cached.word_vectors(first_half)
    with pytest.raises(RuntimeError, match="simulated crash"):
        cached.word_vectors(first_half + second_half)
    resumed = Counting(oracle)
    out = CachedAdapter(resumed, EmbeddingCache(tmp_path)).word_vectors(first_half + second_half)
    assert resumed.calls == {"word_vectors": 1}  # only the second half was computed
    assert len(EmbeddingCache(tmp_path)) == 10
    np.testing.assert_array_equal(out, oracle.word_vectors(first_half + second_half))


def test_cache_folder_follows_the_environment(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(tmp_path / "here"))
    assert default_cache_dir() == tmp_path / "here"
    assert EmbeddingCache().path.parent == tmp_path / "here"


def test_locked_cache_raises_and_is_left_in_place(tmp_path: Path) -> None:
    from normtest.errors import NormtestError

    cache = EmbeddingCache(tmp_path)
    cache.put_many({"k": np.ones(3, np.float32)})
    cache.close()
    holder = sqlite3.connect(tmp_path / "embeddings.sqlite", isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no CacheWarning: a lock is not damage
            with pytest.raises(NormtestError, match="another process") as info:
                EmbeddingCache(tmp_path, timeout=0.1)
        assert "NORMTEST_CACHE_DIR" in str(info.value)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["embeddings.sqlite"]
        # an open cache whose writer stays blocked computes on without keeping (one warning)
        reader = EmbeddingCache.__new__(EmbeddingCache)
        reader.timeout, reader.folder, reader.path = 0.1, tmp_path, tmp_path / "embeddings.sqlite"
        reader._db = sqlite3.connect(reader.path, timeout=0.1)
        with pytest.warns(Warning, match="locked.*without keeping them"):
            reader.put_many({"j": np.zeros(2)})
        reader.put_many({"i": np.zeros(2)})  # said once
        reader.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    reopened = EmbeddingCache(tmp_path)
    assert len(reopened) == 1 and set(reopened.get_many(["k"])) == {"k"}
    reopened.close()


@pytest.mark.parametrize(("column", "value"), [("shape", "[3, 2]"), ("dtype", "<i4")])
def test_damaged_dtype_or_shape_is_detected(tmp_path: Path, oracle: OracleModel, column: str,
                                            value: str) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.put_many({"k": np.arange(6, dtype=np.float32).reshape(2, 3)})
    with sqlite3.connect(tmp_path / "embeddings.sqlite") as db:
        db.execute(f"UPDATE entries SET {column} = ? WHERE key = 'k'", (value,))
    with pytest.warns(CacheWarning, match="corrupt"):
        assert cache.get_many(["k"]) == {}
    assert len(cache) == 0  # dropped, so the next request recomputes it
    words = list(oracle.words[:2])
    CachedAdapter(Counting(oracle), cache).word_vectors(words)
    with sqlite3.connect(tmp_path / "embeddings.sqlite") as db:
        db.execute(f"UPDATE entries SET {column} = ?", (value,))
    model = Counting(oracle)
    with pytest.warns(CacheWarning, match="corrupt"):
        again = CachedAdapter(model, cache).word_vectors(words)
    assert model.calls == {"word_vectors": 1}
    np.testing.assert_array_equal(again, oracle.word_vectors(words))
    cache.close()


def test_numpy_integer_layer_keys_like_a_plain_int(tmp_path: Path, oracle: OracleModel) -> None:
    model = Counting(oracle)
    cached = CachedAdapter(model, EmbeddingCache(tmp_path))
    texts = [" ".join(oracle.words[:3])]
    first = cached.token_vectors(texts, layer=np.int64(0))  # the oracle's only hidden state
    second = cached.token_vectors(texts, layer=0)
    assert model.calls == {"token_vectors": 1}
    np.testing.assert_array_equal(first[0], second[0])


def test_entries_from_the_old_checksum_scheme_are_dropped_quietly(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    cache.put_many({"k": np.ones(2)})
    cache.close()
    with sqlite3.connect(tmp_path / "embeddings.sqlite") as db:
        db.execute("UPDATE meta SET value = '1' WHERE name = 'schema'")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reopened = EmbeddingCache(tmp_path)
    assert len(reopened) == 0
    reopened.close()


def test_keys_are_the_hash_of_the_whole_description(tmp_path: Path, oracle: OracleModel) -> None:
    """Keys built per batch equal the documented form, so earlier caches stay valid."""
    import hashlib
    import json

    cached = CachedAdapter(oracle, EmbeddingCache(tmp_path))
    document = 'A "long" Zürich document.\n' * 400  # its hash state is kept between calls
    items = ["cat", 'say "hi"', "Zürich naïve", "back\\slash", "tab\there", "", document]
    for pooling in ("mean", "sum", "mean"):
        params = {"layer": "last", "lengths": [1, 16, 32], "pooling": pooling, "words": True}
        for item, key in zip(items, cached._keys("prefix_vectors", items, **params),
                             strict=True):
            whole = json.dumps({"model": oracle.name, "revision": oracle.revision,
                                "method": "prefix_vectors", "params": params, "item": item},
                               sort_keys=True, ensure_ascii=False)
            assert key == hashlib.sha256(whole.encode("utf-8")).hexdigest()
            assert key == cached._key("prefix_vectors", item, **params)
