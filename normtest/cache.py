"""The embedding cache: a second audit reads vectors from disk instead of running the model.

Entries live in one SQLite file (``embeddings.sqlite`` under the cache folder). A key is the
SHA-256 of everything that changes a vector: the model's name and revision (which include the
weight-file hash and dtype), the method, every argument (layer, special-token handling, pooling or
composition, state, prefix lengths) and the exact text; numpy scalars among the arguments (a layer
given as ``np.int64(2)``) are turned into plain Python values first, so they key like their
equals. Each value is the array's bytes with its dtype, shape and a SHA-256 checksum that covers
all three.

- Writes are atomic: each batch is one SQLite transaction, so a crash keeps every finished batch
  and a re-run resumes from them.
- A corrupt entry (checksum mismatch, unreadable bytes, a damaged dtype or shape) is reported with
  a warning and recomputed; a cache file that is not a database at all is moved aside with a
  warning and started afresh.
- A cache that another process holds locked is waited for (``timeout`` seconds, 60 by default),
  then refused with a :class:`~normtest.errors.NormtestError`; it is never treated as corrupt.

The folder is ``$NORMTEST_CACHE_DIR`` when set, otherwise the user's cache directory
(``~/.cache/normtest`` on Linux).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from normtest.adapters.protocol import (
    Capability,
    Layer,
    TokenBatch,
    Tokenization,
    check_layer,
    prefix_vectors_of,
)
from normtest.errors import NormtestError

CACHE_ENV = "NORMTEST_CACHE_DIR"
_SCHEMA = 2  # 2: the checksum covers dtype and shape as well as the bytes


class CacheWarning(UserWarning):
    """A cache entry or file was damaged and has been recomputed or replaced."""


def default_cache_dir() -> Path:
    """``$NORMTEST_CACHE_DIR``, else the platform's user cache directory for normtest."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    try:
        from platformdirs import user_cache_dir

        return Path(user_cache_dir("normtest"))
    except ImportError:  # pragma: no cover - platformdirs is a core dependency
        return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "normtest"


def _checksum(dtype: str, shape: str, payload: bytes) -> str:
    digest = hashlib.sha256()
    for part in (dtype.encode("utf-8"), shape.encode("utf-8")):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    digest.update(payload)
    return digest.hexdigest()


class EmbeddingCache:
    """Key → array store in one SQLite file, safe against crashes and corruption."""

    def __init__(
        self, folder: str | os.PathLike[str] | None = None, *, timeout: float = 60.0
    ) -> None:
        """Open (or create) the cache in ``folder`` (default: :func:`default_cache_dir`).

        ``timeout`` is how many seconds to wait for another process that holds the cache locked.
        """
        self.timeout = float(timeout)
        self.folder = Path(folder) if folder is not None else default_cache_dir()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise NormtestError(
                f"cannot create the cache folder {self.folder} ({exc.strerror}); "
                f"set {CACHE_ENV} to a writable folder or disable the cache"
            ) from exc
        self.path = self.folder / "embeddings.sqlite"
        self._db = self._open()

    def _unavailable(self, exc: sqlite3.OperationalError) -> NormtestError:
        """The error for a cache that cannot be used right now (locked, read-only, …)."""
        text = str(exc)
        if "locked" in text or "busy" in text:
            return NormtestError(
                f"the embedding cache {self.path} is locked: another process holds it and did "
                f"not release it within {self.timeout:g} s ({text}). Wait for that process to "
                f"finish, or give this run its own cache folder (cache_dir=..., or set "
                f"{CACHE_ENV}), or disable the cache"
            )
        return NormtestError(
            f"cannot use the embedding cache {self.path} ({text}); check that the file and "
            f"folder are writable, or use another cache folder (cache_dir=..., or set "
            f"{CACHE_ENV}), or disable the cache"
        )

    def _open(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = None
        try:
            db = sqlite3.connect(self.path, timeout=self.timeout)
            db.execute(
                "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, dtype TEXT, "
                "shape TEXT, checksum TEXT, data BLOB)"
            )
            db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)")
            db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(_SCHEMA),))
            (schema,) = db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
            if schema != str(_SCHEMA):
                # entries written under another checksum scheme: drop them (they are recomputed)
                db.execute("DELETE FROM entries")
                db.execute("UPDATE meta SET value = ? WHERE name = 'schema'", (str(_SCHEMA),))
            db.commit()
            return db
        except sqlite3.OperationalError as exc:
            # locked, read-only, cannot open: the file is not known to be damaged, so keep it
            if db is not None:
                db.close()
            raise self._unavailable(exc) from exc
        except sqlite3.DatabaseError as exc:
            if db is not None:
                db.close()
            aside = self.path.with_suffix(f".corrupt-{int(time.time())}")
            os.replace(self.path, aside)
            warnings.warn(
                f"the embedding cache {self.path} was unreadable ({exc}); moved it to {aside} "
                "and started an empty cache",
                CacheWarning,
                stacklevel=3,
            )
            return self._open()

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached arrays among ``keys``; damaged entries are dropped with a warning."""
        found: dict[str, np.ndarray] = {}
        damaged: list[str] = []
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            chunk = unique[start:start + 500]
            marks = ",".join("?" * len(chunk))
            try:
                rows = self._db.execute(
                    f"SELECT key, dtype, shape, checksum, data FROM entries WHERE key IN ({marks})",
                    chunk,
                ).fetchall()
            except sqlite3.OperationalError as exc:
                raise self._unavailable(exc) from exc
            for key, dtype, shape, checksum, data in rows:
                try:
                    if (not isinstance(dtype, str) or not isinstance(shape, str)
                            or _checksum(dtype, shape, bytes(data)) != checksum):
                        raise ValueError("checksum mismatch")
                    array = np.frombuffer(data, dtype=np.dtype(dtype)).reshape(json.loads(shape))
                except (ValueError, TypeError) as exc:
                    damaged.append(key)
                    warnings.warn(
                        f"embedding cache entry {key[:12]}… is corrupt ({exc}); recomputing it",
                        CacheWarning,
                        stacklevel=2,
                    )
                    continue
                found[key] = array.copy()
        if damaged:
            try:
                with self._db:
                    self._db.executemany("DELETE FROM entries WHERE key = ?",
                                         [(k,) for k in damaged])
            except sqlite3.OperationalError as exc:
                raise self._unavailable(exc) from exc
        return found

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        """Store arrays in one transaction (all or nothing)."""
        rows = []
        for key, array in items.items():
            arr = np.ascontiguousarray(array)
            payload = arr.tobytes()
            dtype, shape = arr.dtype.str, json.dumps([int(n) for n in arr.shape])
            rows.append((key, dtype, shape, _checksum(dtype, shape, payload), payload))
        try:
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?)",
                                     rows)
        except sqlite3.OperationalError as exc:
            raise self._unavailable(exc) from exc

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0])


class CachedAdapter:
    """Wraps an adapter: the same protocol, with every vector read through the cache.

    Cheap methods (tokenisation, ``represents``) pass straight through. Each item (word, text,
    prefix request) is cached on its own, so a request that overlaps an earlier one computes only
    the new items, in one batched call to the model.
    """

    def __init__(self, adapter: Any, cache: EmbeddingCache) -> None:
        """Wrap ``adapter`` (any object speaking the protocol)."""
        self.adapter = adapter
        self.cache = cache

    # -- identity passes through -----------------------------------------------------------------
    @property
    def name(self) -> str:
        """The wrapped model's name."""
        return str(self.adapter.name)

    @property
    def revision(self) -> str:
        """The wrapped model's revision."""
        return str(self.adapter.revision)

    @property
    def capabilities(self) -> frozenset[Capability]:
        """The wrapped model's capabilities."""
        return frozenset(self.adapter.capabilities)

    @property
    def dim(self) -> int:
        """The wrapped model's dimension."""
        return int(self.adapter.dim)

    @property
    def states(self) -> tuple[str, ...]:
        """The wrapped model's special states."""
        return tuple(getattr(self.adapter, "states", ()))

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.adapter, attribute)

    def variant(self, **changes: Any) -> CachedAdapter:
        """The wrapped adapter's ``variant(...)``, still read through this cache."""
        return CachedAdapter(self.adapter.variant(**changes), self.cache)

    # -- keys ------------------------------------------------------------------------------------
    def _key(self, method: str, item: str, **params: Any) -> str:
        return self._keys(method, [item], **params)[0]

    def _keys(self, method: str, items: Sequence[str], **params: Any) -> list[str]:
        """sha256 of the JSON of {model, revision, method, params, item} (sorted keys) per item.

        params arrive normalised to plain Python values (see _layer and the methods below). The
        part shared by every item is serialised once: "item" sorts first, so each description
        is ``{"item": <item>, `` followed by the rest, exactly as json.dumps writes the whole.
        """
        rest = json.dumps({"model": self.name, "revision": self.revision, "method": method,
                           "params": params}, sort_keys=True, ensure_ascii=False)
        tail = (", " + rest[1:]).encode("utf-8")
        return [hashlib.sha256(b'{"item": ' + json.dumps(item, ensure_ascii=False).encode("utf-8")
                               + tail).hexdigest() for item in items]

    def _through(
        self, method: str, items: Sequence[str], compute: Callable[[list[str]], list[np.ndarray]],
        **params: Any,
    ) -> list[np.ndarray]:
        keys = self._keys(method, items, **params)
        found = self.cache.get_many(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        todo_items = list(dict.fromkeys(items[i] for i in todo))
        if todo_items:
            fresh = compute(todo_items)
            new = dict(zip(self._keys(method, todo_items, **params), fresh, strict=True))
            self.cache.put_many(new)
            found.update(new)
        return [found[k] for k in keys]

    @staticmethod
    def _layer(layer: object) -> Layer:
        """The layer as a plain ``int`` or name (``np.int64(2)`` keys like ``2``)."""
        checked = check_layer(layer)
        return checked if isinstance(checked, str) else int(checked)

    # -- cached methods --------------------------------------------------------------------------
    def word_vectors(self, words: Sequence[str]) -> NDArray[np.floating]:
        """Word vectors through the cache."""
        rows = self._through("word_vectors", list(words),
                             lambda todo: list(self.adapter.word_vectors(todo)))
        return np.stack(rows) if rows else np.empty((0, self.dim), dtype=np.float32)

    def represents(self, words: Sequence[str]) -> NDArray[np.bool_]:
        """Passes through (cheap)."""
        return np.asarray(self.adapter.represents(words), dtype=bool)

    def tokenize(self, text: str) -> Tokenization:
        """Passes through (cheap)."""
        result: Tokenization = self.adapter.tokenize(text)
        return result

    def word_tokens(self, word: str) -> Tokenization:
        """Passes through (cheap)."""
        result: Tokenization = self.adapter.word_tokens(word)
        return result

    def token_vectors(
        self, texts: Sequence[str], *, layer: Layer = "last", special_tokens: bool = False,
        words: bool = False,
    ) -> TokenBatch:
        """Token vectors through the cache, one entry per text."""
        layer = self._layer(layer)
        special_tokens, words = bool(special_tokens), bool(words)

        def compute(todo: list[str]) -> list[np.ndarray]:
            batch = self.adapter.token_vectors(todo, layer=layer, special_tokens=special_tokens,
                                               words=words)
            return [batch[i] for i in range(len(batch))]

        rows = self._through("token_vectors", list(texts), compute, layer=layer,
                             special_tokens=special_tokens, words=words)
        return TokenBatch.from_list(rows, self.dim)

    def special_states(
        self, texts: Sequence[str], state: str, *, layer: Layer = "last"
    ) -> NDArray[np.floating]:
        """Special states through the cache."""
        layer, state = self._layer(layer), str(state)
        rows = self._through(
            "special_states", list(texts),
            lambda todo: list(self.adapter.special_states(todo, state, layer=layer)),
            state=state, layer=layer,
        )
        return np.stack(rows) if rows else np.empty((0, self.dim), dtype=np.float32)

    def prefix_vectors(
        self, text: str, prefix_lengths: Sequence[int], pooling: str, *, layer: Layer = "last"
    ) -> NDArray[np.floating]:
        """Prefix vectors through the cache (one entry per text and length grid)."""
        lengths = [int(n) for n in prefix_lengths]
        layer, pooling = self._layer(layer), str(pooling)
        (matrix,) = self._through(
            "prefix_vectors", [text],
            lambda todo: [self.adapter.prefix_vectors(todo[0], lengths, pooling, layer=layer)],
            lengths=lengths, pooling=pooling, layer=layer,
        )
        return matrix

    def prefix_vectors_many(
        self, texts: Sequence[str], prefix_lengths: Sequence[Sequence[int]], pooling: str, *,
        layer: Layer = "last",
    ) -> list[NDArray[np.floating]]:
        """``prefix_vectors`` of several texts through the cache (the same entries), the missing
        ones computed in one ``prefix_vectors_many`` call when the model has it."""
        texts, grids = list(texts), [[int(n) for n in g] for g in prefix_lengths]
        if len(texts) != len(grids):
            raise NormtestError(
                f"{len(texts)} texts but {len(grids)} prefix-length lists; give one list per text"
            )
        layer, pooling = self._layer(layer), str(pooling)
        keys = [self._key("prefix_vectors", t, lengths=g, pooling=pooling, layer=layer)
                for t, g in zip(texts, grids, strict=True)]
        found = self.cache.get_many(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        if todo:
            fresh = prefix_vectors_of(self.adapter, [texts[i] for i in todo],
                                      [grids[i] for i in todo], pooling, layer=layer)
            new = {keys[i]: np.asarray(v) for i, v in zip(todo, fresh, strict=True)}
            self.cache.put_many(new)
            found.update(new)
        return [found[k] for k in keys]

    def token_logprobs(self, texts: Sequence[str]) -> list[NDArray[np.floating]]:
        """Per-token log-probabilities through the cache."""
        return self._through("token_logprobs", list(texts),
                             lambda todo: list(self.adapter.token_logprobs(todo)))
