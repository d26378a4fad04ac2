"""The embedding cache under damage, read-only files and racing writers: nothing crashes, nothing
the audit needs is lost (at worst it is recomputed). Real SQLite files throughout."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from normtest.adapters.static import StaticVectors
from normtest.errors import NormtestError
from normtest.models.cache.adapter import CachedAdapter
from normtest.models.cache.embeddings import CacheWarning, EmbeddingCache

N_ENTRIES, DIM = 300, 384  # 1.5 KB a vector: two a page, ~160 pages of 4 KB


def _vector(key: str) -> np.ndarray:
    """A deterministic vector per key, so two writers of one key write the same value."""
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    return np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)


ENTRIES = {f"entry-{i}": _vector(f"entry-{i}") for i in range(N_ENTRIES)}
EXTRA = {f"extra-{i}": _vector(f"extra-{i}") for i in range(5)}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, int, int]:
    """The bytes of a healthy cache holding ENTRIES, its page size and the meta table's root."""
    folder = tmp_path_factory.mktemp("built")
    cache = EmbeddingCache(folder)
    keys = list(ENTRIES)
    for start in range(0, N_ENTRIES, 50):  # several batches, as an audit writes them
        cache.put_many({k: ENTRIES[k] for k in keys[start:start + 50]})
    cache.close()
    path = folder / "embeddings.sqlite"
    with sqlite3.connect(path) as db:
        (page_size,) = db.execute("PRAGMA page_size").fetchone()
        (pages,) = db.execute("PRAGMA page_count").fetchone()
        (meta_root,) = db.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'meta'").fetchone()
    db.close()
    data = path.read_bytes()
    assert len(data) == page_size * pages and pages > 100
    return data, page_size, meta_root


def _random(n: int, seed: int) -> bytes:
    return np.random.default_rng(seed).bytes(n)


Damage = Callable[[bytes, int, int], bytes]  # (file bytes, page size, meta root) -> damaged


def _overwrite_page(page: Callable[[int, int], int]) -> Damage:
    """Random bytes over one whole page, ``page(pages, meta_root)``, numbered from 1 (page 1,
    the header, is never hit: that case is in test_cache.py)."""
    def damage(data: bytes, page_size: int, meta_root: int) -> bytes:
        number = page(len(data) // page_size, meta_root)
        assert 2 <= number <= len(data) // page_size
        start = (number - 1) * page_size
        return data[:start] + _random(page_size, number) + data[start + page_size:]
    return damage


MIDDLE_PAGE = _overwrite_page(lambda pages, meta_root: pages // 2)


def _partial(data: bytes, page_size: int, meta_root: int) -> bytes:
    """500 random bytes in the middle of a middle page: inside the cells, not the page header."""
    start = (len(data) // page_size // 2) * page_size + 1000
    return data[:start] + _random(500, 7) + data[start + 500:]


# damage → where it is noticed: "open" (moved aside while opening), "query" (moved aside by the
# first get_many), "entries" (SQLite notices nothing; the entry checksums catch the bad vectors)
DAMAGE: dict[str, tuple[Damage, str]] = {
    "page 2 (the entries table's root)": (_overwrite_page(lambda pages, meta: 2), "query"),
    "the meta table's root page": (_overwrite_page(lambda pages, meta: meta), "open"),
    "a middle page": (MIDDLE_PAGE, "query"),
    "the last page": (_overwrite_page(lambda pages, meta: pages), "query"),
    "part of a middle page": (_partial, "entries"),
    "truncated in the middle": (lambda data, size, meta: data[:len(data) // 2 + 123], "open"),
}


@pytest.fixture
def record() -> Iterator[list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def _cache_warnings(caught: list[warnings.WarningMessage], entry: bool) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, CacheWarning)
            and ("embedding cache entry" in str(w.message)) == entry]


def _file_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    """Warnings about the whole file (moved aside, read-only, another schema)."""
    return _cache_warnings(caught, entry=False)


def _entry_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    """Warnings about single entries (checksum mismatch)."""
    return _cache_warnings(caught, entry=True)


def _assert_correct(found: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> None:
    for key, array in found.items():
        np.testing.assert_array_equal(array, expected[key])


@pytest.mark.parametrize("where", list(DAMAGE))
def test_damage_anywhere_is_survived(tmp_path: Path, built: tuple[bytes, int, int], where: str,
                                     record: list[warnings.WarningMessage]) -> None:
    damage, noticed = DAMAGE[where]
    data, page_size, meta_root = built
    path = tmp_path / "embeddings.sqlite"
    path.write_bytes(damage(data, page_size, meta_root))

    cache = EmbeddingCache(tmp_path)
    at_open = len(_file_warnings(record))
    found = cache.get_many(list(ENTRIES))
    length = len(cache)
    cache.put_many(EXTRA)
    again = cache.get_many([*ENTRIES, *EXTRA])

    _assert_correct(found, ENTRIES)
    _assert_correct(again, {**ENTRIES, **EXTRA})
    assert set(EXTRA) <= set(again)  # the fresh (or surviving) cache takes new vectors
    moved = _file_warnings(record)
    asides = sorted(tmp_path.glob("embeddings.corrupt-*"))
    observed = ("open" if at_open else "query") if moved else "entries" if found else "intact"
    assert observed == noticed
    if noticed in ("open", "query"):
        assert len(moved) == 1 and len(asides) == 1, moved  # warned once, however many queries
        assert str(path) in moved[0] and str(asides[0]) in moved[0]
        assert asides[0].read_bytes() == damage(data, page_size, meta_root)  # kept for a look
        assert found == {} and length == 0
        assert set(again) == set(EXTRA)
        assert not _entry_warnings(record)
    else:
        bad = _entry_warnings(record)
        assert not moved and not asides
        assert 1 <= len(bad) <= 3 and len(found) == N_ENTRIES - len(bad)
        assert length == N_ENTRIES - len(bad)  # the bad entries were dropped, to be recomputed
        assert set(again) == set(found) | set(EXTRA)
    # the caller recomputes what was missing; from then on everything is served again
    cache.put_many({k: v for k, v in ENTRIES.items() if k not in found})
    cache.close()
    record.clear()
    reopened = EmbeddingCache(tmp_path)
    everything = reopened.get_many([*ENTRIES, *EXTRA])
    assert set(everything) == {*ENTRIES, *EXTRA} and not record
    _assert_correct(everything, {**ENTRIES, **EXTRA})
    reopened.close()


def test_most_damage_is_noticed_by_sqlite() -> None:
    """The damage cases are not vacuous: SQLite itself notices all but the partial overwrite."""
    noticed = [n for _, n in DAMAGE.values()]
    assert noticed.count("entries") == 1 and "intact" not in noticed


def test_a_zero_length_file_is_an_empty_cache(tmp_path: Path,
                                              record: list[warnings.WarningMessage]) -> None:
    (tmp_path / "embeddings.sqlite").write_bytes(b"")
    cache = EmbeddingCache(tmp_path)
    assert cache.get_many(list(ENTRIES)) == {} and len(cache) == 0
    cache.put_many(EXTRA)
    _assert_correct(cache.get_many(list(EXTRA)), EXTRA)
    assert len(cache) == len(EXTRA)
    assert not record  # SQLite reads an empty file as an empty database: nothing to report
    assert not list(tmp_path.glob("embeddings.corrupt-*"))
    cache.close()


def test_damage_noticed_later_moves_the_journal_aside_too(
        tmp_path: Path, built: tuple[bytes, int, int],
        record: list[warnings.WarningMessage]) -> None:
    data, page_size, meta_root = built
    path = tmp_path / "embeddings.sqlite"
    path.write_bytes(MIDDLE_PAGE(data, page_size, meta_root))
    journal = tmp_path / "embeddings.sqlite-journal"
    journal.write_bytes(b"")  # an empty journal is not hot: SQLite opens the file regardless
    cache = EmbeddingCache(tmp_path)
    assert not record
    assert cache.get_many(list(ENTRIES)) == {}
    (aside,) = tmp_path.glob("embeddings.corrupt-*[0-9]")
    assert (tmp_path / (aside.name + "-journal")).exists() and not journal.exists()
    assert len(_file_warnings(record)) == 1
    cache.close()


def test_damage_noticed_by_a_write_first(tmp_path: Path, built: tuple[bytes, int, int],
                                         record: list[warnings.WarningMessage]) -> None:
    data, page_size, meta_root = built
    (tmp_path / "embeddings.sqlite").write_bytes(
        _overwrite_page(lambda pages, meta: 2)(data, page_size, meta_root))
    cache = EmbeddingCache(tmp_path)
    assert not record
    cache.put_many(EXTRA)  # the write notices the damage and goes to the fresh cache
    assert len(_file_warnings(record)) == 1
    assert len(list(tmp_path.glob("embeddings.corrupt-*"))) == 1
    _assert_correct(cache.get_many([*ENTRIES, *EXTRA]), EXTRA)
    assert set(cache.get_many([*ENTRIES, *EXTRA])) == set(EXTRA) and len(cache) == len(EXTRA)
    assert len(_file_warnings(record)) == 1
    cache.close()


def test_messages_say_what_to_do_from_the_command_line_and_from_python(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    with pytest.raises(NormtestError) as cannot_create:
        EmbeddingCache(tmp_path / "a-file" / "cache")  # not a folder, even for root
    with pytest.raises(NormtestError) as cannot_open:
        EmbeddingCache(tmp_path / "empty", read_only=True)  # nothing there to read
    for error in (cannot_create, cannot_open):
        message = str(error.value)
        assert "\n" not in message and "Traceback" not in message
        for advice in ("--no-cache", "cache=False", "NORMTEST_CACHE_DIR"):
            assert advice in message, message


# -- racing writers ------------------------------------------------------------------------------
WRITER = r"""
import hashlib, sys, time, warnings
from pathlib import Path
import numpy as np
warnings.simplefilter("error")
from normtest.models.cache.embeddings import EmbeddingCache

folder, me, other = Path(sys.argv[1]), sys.argv[2], sys.argv[3]

def vector(key):
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    return np.random.default_rng(seed).standard_normal(384).astype(np.float32)

(folder / f"ready-{me}").touch()
while not (folder / f"ready-{other}").exists():
    time.sleep(0.001)
cache = EmbeddingCache(folder, timeout=30)
began = time.time()
for batch in range(40):
    keys = [f"{me}-{batch}-{i}" for i in range(3)] + [f"shared-{batch}-{i}" for i in range(3)]
    cache.put_many({k: vector(k) for k in keys})
    got = cache.get_many(keys)
    assert set(got) == set(keys), batch
(folder / f"span-{me}").write_text(f"{began} {time.time()}")
cache.close()
"""


@pytest.mark.slow
def test_racing_writers_lose_nothing(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root),
                                                                    os.environ.get("PYTHONPATH")]))}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), me, other],
                                env=env, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for me, other in (("a", "b"), ("b", "a"))]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0 and not err, err.decode()
    spans = [[float(t) for t in (tmp_path / f"span-{w}").read_text().split()] for w in "ab"]
    assert max(s[0] for s in spans) < min(s[1] for s in spans)  # they did write at once
    cache = EmbeddingCache(tmp_path)
    keys = [f"{who}-{b}-{i}" for who in ("a", "b", "shared") for b in range(40) for i in range(3)]
    found = cache.get_many(keys)
    assert set(found) == set(keys) and len(cache) == len(keys)
    _assert_correct(found, {k: _vector(k) for k in keys})
    assert not list(tmp_path.glob("embeddings.corrupt-*"))
    cache.close()


# -- read-only caches ----------------------------------------------------------------------------
def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}


@pytest.fixture
def full(tmp_path: Path, built: tuple[bytes, int, int]) -> Path:
    """A folder holding a healthy cache with every vector of ENTRIES."""
    (tmp_path / "embeddings.sqlite").write_bytes(built[0])
    return tmp_path


def _serves_everything_and_stores_nothing(cache: EmbeddingCache, folder: Path,
                                          record: list[warnings.WarningMessage]) -> None:
    before = _snapshot(folder)
    assert cache.read_only
    found = cache.get_many(list(ENTRIES))
    assert set(found) == set(ENTRIES) and len(cache) == N_ENTRIES
    _assert_correct(found, ENTRIES)
    assert not record  # a read-only cache that holds everything needs no word
    cache.put_many(EXTRA)
    cache.put_many({"more": np.ones(3, np.float32)})
    (message,) = _file_warnings(record)  # once, not per batch
    assert "read-only" in message and str(cache.path) in message
    assert cache.get_many(list(EXTRA)) == {}
    cache.close()
    assert _snapshot(folder) == before  # not a byte written, no journal left behind


def test_read_only_cache_serves_every_vector(full: Path,
                                             record: list[warnings.WarningMessage]) -> None:
    _serves_everything_and_stores_nothing(EmbeddingCache(full, read_only=True), full, record)


@pytest.mark.parametrize("unwritable", ["file", "folder"])
def test_unwritable_file_or_folder_opens_read_only(full: Path, monkeypatch: pytest.MonkeyPatch,
                                                   record: list[warnings.WarningMessage],
                                                   unwritable: str) -> None:
    # root writes through permission bits, so the check that runs in production (os.access)
    # is told the truth a normal user would get
    real = os.access
    target = full / "embeddings.sqlite" if unwritable == "file" else full

    def access(path: object, mode: int, *args: object, **kwargs: object) -> bool:
        if Path(str(path)) == target and mode & os.W_OK:
            return False
        return real(path, mode, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", access)
    _serves_everything_and_stores_nothing(EmbeddingCache(full), full, record)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes through permission bits")
def test_read_only_permissions_open_read_only(full: Path,
                                              record: list[warnings.WarningMessage]) -> None:
    path = full / "embeddings.sqlite"
    path.chmod(0o444)
    full.chmod(0o555)
    try:
        _serves_everything_and_stores_nothing(EmbeddingCache(full), full, record)
    finally:
        full.chmod(0o755)
        path.chmod(0o644)


def test_a_write_refused_by_sqlite_turns_the_cache_read_only(
        full: Path, record: list[warnings.WarningMessage]) -> None:
    cache = EmbeddingCache(full)
    assert not cache.read_only
    # the file turns read-only under an open cache ("attempt to write a readonly database")
    cache._db.close()
    cache._db = sqlite3.connect((full / "embeddings.sqlite").as_uri() + "?mode=ro", uri=True)
    cache.put_many(EXTRA)
    (message,) = _file_warnings(record)
    assert "read-only" in message and cache.read_only
    assert set(cache.get_many([*ENTRIES, *EXTRA])) == set(ENTRIES)
    cache.put_many(EXTRA)
    assert len(_file_warnings(record)) == 1
    cache.close()


def test_read_only_cache_of_another_schema_serves_nothing(
        full: Path, record: list[warnings.WarningMessage]) -> None:
    with sqlite3.connect(full / "embeddings.sqlite") as db:
        db.execute("UPDATE meta SET value = '1' WHERE name = 'schema'")
    db.close()
    before = _snapshot(full)
    cache = EmbeddingCache(full, read_only=True)
    (message,) = _file_warnings(record)
    assert "another version" in message and str(cache.path) in message
    assert cache.get_many(list(ENTRIES)) == {} and len(cache) == 0
    cache.put_many(EXTRA)  # already said that nothing is stored
    assert len(_file_warnings(record)) == 1
    cache.close()
    assert _snapshot(full) == before


def test_damaged_read_only_cache_is_left_alone(full: Path, built: tuple[bytes, int, int],
                                               record: list[warnings.WarningMessage]) -> None:
    data, page_size, meta_root = built
    (full / "embeddings.sqlite").write_bytes(
        MIDDLE_PAGE(data, page_size, meta_root))
    before = _snapshot(full)
    cache = EmbeddingCache(full, read_only=True)
    assert cache.get_many(list(ENTRIES)) == {}
    cache.put_many(EXTRA)
    (message,) = _file_warnings(record)
    assert "damaged" in message and "read-only" in message
    cache.close()
    assert _snapshot(full) == before


# -- through an adapter --------------------------------------------------------------------------
def test_cached_adapter_over_a_damaged_cache_gives_the_models_vectors(
        tmp_path: Path, record: list[warnings.WarningMessage]) -> None:
    words = [f"w{i}" for i in range(N_ENTRIES)]
    model = StaticVectors("tiny", words, np.stack([ENTRIES[f"entry-{i}"]
                                                   for i in range(N_ENTRIES)]), "rev1")
    first = CachedAdapter(model, EmbeddingCache(tmp_path))
    first.word_vectors(words)
    first.cache.close()
    path = tmp_path / "embeddings.sqlite"
    data = path.read_bytes()
    with sqlite3.connect(path) as db:
        (page_size,) = db.execute("PRAGMA page_size").fetchone()
    db.close()
    path.write_bytes(MIDDLE_PAGE(data, page_size, 0))
    cached = CachedAdapter(model, EmbeddingCache(tmp_path))
    np.testing.assert_array_equal(cached.word_vectors(words), model.word_vectors(words))
    assert len(_file_warnings(record)) == 1
    np.testing.assert_array_equal(cached.word_vectors(words[::-1]),
                                  model.word_vectors(words[::-1]))
    assert len(cached.cache) == N_ENTRIES  # recomputed and stored in the fresh cache
    cached.cache.close()


# -- the cache file (or its folder) removed or replaced while an audit runs ---------------------
def _fresh(folder: Path) -> EmbeddingCache:
    """A cache in ``folder`` holding ENTRIES, written batch by batch."""
    cache = EmbeddingCache(folder)
    keys = list(ENTRIES)
    for start in range(0, N_ENTRIES, 100):
        cache.put_many({k: ENTRIES[k] for k in keys[start:start + 100]})
    return cache


def _on_disk(folder: Path) -> set[str]:
    """The keys the cache file in ``folder`` holds, read by a connection of its own."""
    with sqlite3.connect(folder / "embeddings.sqlite") as db:
        keys = {k for (k,) in db.execute("SELECT key FROM entries")}
    db.close()
    return keys


def test_a_folder_removed_mid_run_is_made_again_with_every_vector(
        tmp_path: Path, record: list[warnings.WarningMessage]) -> None:
    import shutil

    folder = tmp_path / "cache"
    cache = _fresh(folder)
    shutil.rmtree(folder)  # what `rm -rf ~/.cache/normtest` does under a running audit
    cache.put_many(EXTRA)  # SQLite: "attempt to write a readonly database"
    (message,) = _file_warnings(record)
    assert "was removed during the run; made it again" in message
    assert f"the {N_ENTRIES:,} vectors it held were copied over" in message
    assert str(cache.path) in message and "\n" not in message
    assert not cache.read_only
    found = cache.get_many([*ENTRIES, *EXTRA])
    assert set(found) == {*ENTRIES, *EXTRA}
    _assert_correct(found, {**ENTRIES, **EXTRA})
    assert _on_disk(folder) == {*ENTRIES, *EXTRA}  # on disk again, not only in this process
    cache.put_many({"more": np.ones(3, np.float32)})  # carries on writing, with no more words
    assert len(_file_warnings(record)) == 1 and "more" in _on_disk(folder)
    cache.close()


def test_a_file_removed_before_the_first_write_is_made_again(
        tmp_path: Path, record: list[warnings.WarningMessage]) -> None:
    folder = tmp_path / "cache"
    cache = EmbeddingCache(folder)
    (folder / "embeddings.sqlite").unlink()
    cache.put_many(EXTRA)
    (message,) = _file_warnings(record)
    assert "made it again (it held no vectors yet)" in message
    assert _on_disk(folder) == set(EXTRA)
    cache.close()


def test_a_file_replaced_mid_run_is_joined_and_given_this_runs_vectors(
        tmp_path: Path, record: list[warnings.WarningMessage]) -> None:
    folder = tmp_path / "cache"
    cache = _fresh(folder)
    os.replace(folder / "embeddings.sqlite", tmp_path / "elsewhere.sqlite")
    other = EmbeddingCache(folder)  # another process makes a new cache there
    other.put_many({"theirs": np.zeros(2, np.float32)})
    cache.put_many(EXTRA)
    (message,) = _file_warnings(record)
    assert "was replaced by another file during the run" in message
    assert _on_disk(folder) == {*ENTRIES, *EXTRA, "theirs"}  # theirs kept, ours added
    cache.close()
    other.close()


def test_a_folder_that_cannot_be_made_again_keeps_the_vectors_in_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        record: list[warnings.WarningMessage]) -> None:
    import shutil

    folder = tmp_path / "cache"
    cache = _fresh(folder)
    shutil.rmtree(folder)
    real = Path.mkdir

    def refused(self: Path, *args: object, **kwargs: object) -> None:
        if self == folder:
            raise PermissionError(13, "Permission denied", str(self))
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", refused)
    cache.put_many(EXTRA)
    cache.put_many({"more": np.ones(3, np.float32)})
    (message,) = _file_warnings(record)
    assert "could not be made again (Permission denied)" in message
    assert "keeps its vectors in memory" in message and "none is lost" in message
    found = cache.get_many([*ENTRIES, *EXTRA, "more"])
    assert set(found) == {*ENTRIES, *EXTRA, "more"}
    _assert_correct(found, {**ENTRIES, **EXTRA, "more": np.ones(3, np.float32)})
    assert not folder.exists()
    cache.close()


def test_a_cached_adapter_whose_folder_is_removed_computes_each_vector_once(
        tmp_path: Path, record: list[warnings.WarningMessage]) -> None:
    import shutil

    words = [f"w{i}" for i in range(40)]
    calls: list[list[str]] = []

    class Counting(StaticVectors):
        def word_vectors(self, batch: object) -> np.ndarray:
            calls.append(list(batch))  # type: ignore[call-overload]
            return super().word_vectors(batch)  # type: ignore[arg-type]

    matrix = np.random.default_rng(0).standard_normal((40, 8)).astype(np.float32)
    folder = tmp_path / "cache"
    adapter = CachedAdapter(Counting("counting", words, matrix, "r1"), EmbeddingCache(folder))
    first = adapter.word_vectors(words[:20])
    shutil.rmtree(folder)
    second = adapter.word_vectors(words[10:])
    assert len(_file_warnings(record)) == 1
    np.testing.assert_array_equal(first[10:], second[:10])
    again = adapter.word_vectors(words)  # all 40 cached: nothing computed again
    np.testing.assert_array_equal(again, matrix)
    assert [len(c) for c in calls] == [20, 20]
    assert len(_on_disk(folder)) == 40
