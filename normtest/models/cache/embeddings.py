"""The embedding cache: a second audit reads vectors from disk instead of running the model.

Entries live in one SQLite file (``embeddings.sqlite`` under the cache folder). A key is the
SHA-256 of everything that changes a vector: the model's name and revision (which include the
weight-file hash and dtype), the method, every argument (layer, special-token handling, pooling or
composition, state, prefix lengths) and the exact text; numpy scalars among the arguments (a layer
given as ``np.int64(2)``) are turned into plain Python values first, so they key like their
equals. Each value is the array's bytes with its dtype, shape and a SHA-256 checksum that covers
all three.

Nothing the cache file holds can crash an audit or lose a vector the audit needs: at worst the
vector is recomputed.

- Writes are atomic: each batch is one SQLite transaction, so a crash keeps every finished batch
  and a re-run resumes from them.
- A corrupt entry (checksum mismatch, unreadable bytes, a damaged dtype or shape) is reported with
  a warning and recomputed.
- A damaged file (SQLite reports it as not a database or as malformed, at open or at any later
  query: SQLite only notices damage in the pages a query reads) is closed, moved aside to
  ``embeddings.corrupt-<time>`` (with its ``-journal``/``-wal``/``-shm`` files) with one
  :class:`CacheWarning`, and replaced by an empty cache; the query that noticed it then runs on
  the empty cache, so its vectors are recomputed and stored afresh. The whole file is not checked
  at open (``PRAGMA quick_check`` reads every page: seconds for a large cache on a cold disk).
- A cache file that exists but cannot be written (the file or its folder is not writable, SQLite
  answers "attempt to write a readonly database", or ``read_only=True``) is opened read-only:
  its vectors are served, and new ones are not stored (one :class:`CacheWarning` says so). A
  read-only cache written by another version of normtest, or damaged, serves nothing, with a
  warning; it is never moved or changed.
- A cache that another process holds locked is waited for (``timeout`` seconds, 60 by default),
  then refused with a :class:`~normtest.errors.NormtestError`; it is never treated as damaged.
- A cache file (or its whole folder) removed or replaced while an audit runs (SQLite then
  answers "attempt to write a readonly database") is made again: the folder and an empty file,
  or the file that replaced it, and every vector the removed file held (this run's and earlier
  ones, still readable through the open connection) is copied into it, with one
  :class:`CacheWarning`. Where the folder cannot be made again, the cache carries on in memory
  (the vectors copied there) for the rest of the run, saying so in that warning.

The folder is ``$NORMTEST_CACHE_DIR`` when set, otherwise the user's cache directory
(``~/.cache/normtest`` on Linux): :func:`~normtest.base.paths.default_cache_dir`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from normtest.base.paths import (  # also importable from normtest.models.cache
    CACHE_ENV,
    default_cache_dir,
)
from normtest.errors import NormtestError

_SCHEMA = 2  # 2: the checksum covers dtype and shape as well as the bytes
_WHAT_TO_DO = (f"run with --no-cache (Python: cache=False), or set {CACHE_ENV} to another "
               "folder")
_T = TypeVar("_T")


class CacheWarning(UserWarning):
    """A cache entry or file was damaged and has been recomputed or replaced, or is read-only."""


def _checksum(dtype: str, shape: str, payload: bytes) -> str:
    digest = hashlib.sha256()
    for part in (dtype.encode("utf-8"), shape.encode("utf-8")):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    digest.update(payload)
    return digest.hexdigest()


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite says the file itself is damaged (SQLITE_CORRUPT, SQLITE_NOTADB, …).

    Those arrive as a plain :class:`sqlite3.DatabaseError`; its subclasses mean something else
    (``OperationalError``: locked, read-only, I/O; ``ProgrammingError``: a closed connection;
    ``IntegrityError``, ``DataError``, …), and none of them is a reason to discard the file.
    """
    return type(exc) is sqlite3.DatabaseError


def _says_read_only(exc: sqlite3.OperationalError) -> bool:
    name = str(getattr(exc, "sqlite_errorname", ""))
    return name.startswith("SQLITE_READONLY") or "readonly database" in str(exc)


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path``, None when there is none."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _layout(db: sqlite3.Connection) -> str | None:
    """The schema version the cache tables were written under; None when they do not exist."""
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not {"entries", "meta"} <= tables:
        return None
    row = db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
    return None if row is None else str(row[0])


def _create_tables(db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, dtype TEXT, "
               "shape TEXT, checksum TEXT, data BLOB)")
    db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)")
    db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(_SCHEMA),))


def _in_memory() -> sqlite3.Connection:
    """An empty cache that lives only as long as this process (stands in for an unusable file)."""
    db = sqlite3.connect(":memory:", check_same_thread=False)
    with db:
        _create_tables(db)
    return db


class _Unreadable(Exception):
    """The removed cache file could not be read back (damaged, or of another schema)."""


def _copy_entries(source: sqlite3.Connection, target: sqlite3.Connection) -> int | None:
    """Copy every entry of ``source`` that ``target`` lacks, in one transaction, streaming;
    how many ``source`` held (None when it could not be read). An error writing ``target``
    propagates (nothing is written then)."""
    count = 0

    def rows() -> Iterator[tuple[Any, ...]]:
        nonlocal count
        try:
            for row in source.execute("SELECT key, dtype, shape, checksum, data FROM entries"):
                count += 1
                yield row
        except sqlite3.Error as exc:
            raise _Unreadable(str(exc)) from exc

    try:
        with target:
            target.execute("BEGIN IMMEDIATE")
            target.executemany("INSERT OR IGNORE INTO entries VALUES (?, ?, ?, ?, ?)", rows())
    except _Unreadable:
        return None
    return count


class EmbeddingCache:
    """Key → array store in one SQLite file, safe against crashes and corruption."""

    # class-level defaults, so a cache assembled attribute by attribute behaves like a writable one
    _read_only = False
    _warned_read_only = False
    _identity: tuple[int, int] | None = None
    #: the file was removed and could not be made again: the cache lives in memory
    _in_memory_only = False
    #: held while a statement runs: the connection is shared by the threads of one audit
    _lock = threading.RLock()
    #: a write failed (a full disk, an I/O error, a lock never released): this run computes and
    #: uses its vectors without keeping them
    _not_kept: str | None = None

    def __init__(
        self, folder: str | os.PathLike[str] | None = None, *, timeout: float = 60.0,
        read_only: bool = False,
    ) -> None:
        """Open (or create) the cache in ``folder`` (default: :func:`default_cache_dir`).

        ``timeout`` is how many seconds to wait for another process that holds the cache locked.
        ``read_only=True`` opens an existing cache without ever writing to it (as happens by
        itself when the file or folder is not writable): vectors are served, none are stored.
        """
        self._lock = threading.RLock()
        self.timeout = float(timeout)
        self.folder = Path(folder) if folder is not None else default_cache_dir()
        self._read_only = bool(read_only)
        if not self._read_only:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise NormtestError(
                    f"cannot create the cache folder {self.folder} ({exc.strerror}); "
                    f"{_WHAT_TO_DO}"
                ) from exc
        self.path = self.folder / "embeddings.sqlite"
        self._db = self._open()

    @property
    def read_only(self) -> bool:
        """Whether this cache only serves vectors (new ones are not stored)."""
        return self._read_only

    def _unavailable(self, exc: sqlite3.OperationalError) -> NormtestError:
        """The error for a cache that cannot be used right now (locked, cannot open, …)."""
        text = str(exc)
        if "locked" in text or "busy" in text:
            return NormtestError(
                f"the embedding cache {self.path} is locked: another process holds it and did "
                f"not release it within {self.timeout:g} s ({text}). Wait for that process to "
                f"finish, or {_WHAT_TO_DO}"
            )
        return NormtestError(f"cannot use the embedding cache {self.path} ({text}); {_WHAT_TO_DO}")

    def _warn(self, message: str) -> None:
        warnings.warn(message, CacheWarning, stacklevel=4)

    # -- opening ---------------------------------------------------------------------------------
    def _writable(self) -> bool:
        """Whether the cache can be written: its folder, and its file if there is one."""
        if not os.access(self.folder, os.W_OK | os.X_OK):
            return False
        return not self.path.exists() or os.access(self.path, os.W_OK)

    def _open(self) -> sqlite3.Connection:
        """A connection ready for use; a damaged file is moved aside (or, read-only, not used)."""
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            if not _is_damage(exc):
                raise
            return self._recover(exc)

    def _connect(self) -> sqlite3.Connection:
        """Connect and make sure the tables exist, writing only when they need to be made.

        Raises NormtestError when the cache cannot be used and lets SQLite's damage errors
        through (:meth:`_open` and :meth:`_run` handle them).
        """
        if self._read_only or not self._writable():
            return self._connect_read_only()
        db: sqlite3.Connection | None = None
        try:
            db = sqlite3.connect(self.path, timeout=self.timeout, check_same_thread=False)
            self._identity = _identity(self.path)
            if _layout(db) != str(_SCHEMA):
                with db:
                    db.execute("BEGIN IMMEDIATE")  # another process may be creating it as well
                    _create_tables(db)
                    if _layout(db) != str(_SCHEMA):
                        # entries written under another checksum scheme: drop them (recomputed)
                        db.execute("DELETE FROM entries")
                        db.execute("UPDATE meta SET value = ? WHERE name = 'schema'",
                                   (str(_SCHEMA),))
            return db
        except sqlite3.OperationalError as exc:
            # locked, read-only, cannot open: the file is not known to be damaged, so keep it
            if db is not None:
                db.close()
            if _says_read_only(exc) and self.path.exists():
                return self._connect_read_only()
            raise self._unavailable(exc) from exc
        except BaseException:
            if db is not None:
                db.close()
            raise

    def _connect_read_only(self) -> sqlite3.Connection:
        """Open the file read-only (SQLite never writes through this connection)."""
        self._read_only = True
        db: sqlite3.Connection | None = None
        try:
            db = sqlite3.connect(self.path.absolute().as_uri() + "?mode=ro", uri=True,
                                 timeout=self.timeout, check_same_thread=False)
            self._identity = _identity(self.path)
            layout = _layout(db)
        except sqlite3.OperationalError as exc:
            if db is not None:
                db.close()
            raise self._unavailable(exc) from exc
        except BaseException:
            if db is not None:
                db.close()
            raise
        if layout == str(_SCHEMA):
            return db
        db.close()
        what = ("holds no cache tables" if layout is None else
                f"was written by another version of normtest (schema {layout}, not {_SCHEMA})")
        self._warn(f"the embedding cache {self.path} is read-only and {what}; none of its "
                   "entries are used and new vectors are not stored")
        self._warned_read_only = True
        return _in_memory()

    # -- damage ----------------------------------------------------------------------------------
    def _recover(self, exc: sqlite3.DatabaseError) -> sqlite3.Connection:
        """After SQLite found the file damaged: move it aside and start an empty cache."""
        self._close_quietly()
        if self._read_only:
            self._warn(f"the embedding cache {self.path} is damaged ({exc}) and read-only, so it "
                       "is left as it is; none of its entries are used and new vectors are not "
                       "stored")
            self._warned_read_only = True
            return _in_memory()
        try:
            aside = self._move_aside()
        except OSError as move:
            self._warn(f"the embedding cache {self.path} is damaged ({exc}) and could not be "
                       f"moved aside ({move.strerror or move}); this run keeps its vectors in "
                       f"memory only. Delete the file, or {_WHAT_TO_DO}")
            return _in_memory()
        if aside is None:
            self._warn(f"the embedding cache {self.path} was unreadable ({exc}); another process "
                       "has already replaced it, so this one carries on with the new cache")
        else:
            self._warn(f"the embedding cache {self.path} was unreadable ({exc}); moved it to "
                       f"{aside} and started an empty cache")
        return self._connect()

    def _move_aside(self) -> Path | None:
        """Rename the damaged file (and its journal files) to ``embeddings.corrupt-<time>``.

        None when the file is gone or is no longer the one this cache opened (another process
        has already moved it aside): a new file is left alone.
        """
        current = _identity(self.path)
        if current is None or (self._identity is not None and current != self._identity):
            return None
        stamp = int(time.time())
        aside, n = self.path.with_suffix(f".corrupt-{stamp}"), 1
        while aside.exists():
            aside, n = self.path.with_suffix(f".corrupt-{stamp}-{n}"), n + 1
        os.replace(self.path, aside)
        for tail in ("-journal", "-wal", "-shm"):
            sibling = self.path.with_name(self.path.name + tail)
            if sibling.exists():
                os.replace(sibling, aside.with_name(aside.name + tail))
        return aside

    def _close_quietly(self) -> None:
        db = getattr(self, "_db", None)
        if db is not None:
            try:
                db.close()
            except sqlite3.Error:  # pragma: no cover - closing a damaged file does not fail
                pass

    def _run(self, action: Callable[[sqlite3.Connection], _T]) -> _T:
        """``action(connection)``, with every way SQLite can fail handled in one place.

        Locked or otherwise unusable: NormtestError. Read-only where a write was tried: the
        cache turns read-only and the action runs again (it sees :attr:`read_only`). Damaged:
        the file is moved aside and the action runs again on the empty cache that replaces it.
        """
        with self._lock:  # one statement at a time, whichever thread asks (the word data's
            return self._run_locked(action)  # fits run on threads)

    def _run_locked(self, action: Callable[[sqlite3.Connection], _T]) -> _T:
        for attempt in range(3):
            try:
                return action(self._db)
            except sqlite3.OperationalError as exc:
                if not self._read_only and attempt < 2 and self._moved():
                    self._db = self._remake(exc)
                    continue
                if not self._read_only and _says_read_only(exc) and self.path.exists():
                    self._close_quietly()
                    self._read_only = True
                    self._db = self._open()
                    continue
                raise self._unavailable(exc) from exc
            except sqlite3.DatabaseError as exc:
                if not _is_damage(exc) or attempt == 2:
                    raise
                self._db = self._recover(exc)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- removal -------------------------------------------------------------------------------
    def _moved(self) -> bool:
        """Whether the file this cache opened is no longer at its path (removed with its
        folder, or replaced by another file)."""
        if self._in_memory_only or self._identity is None:
            return False
        return _identity(self.path) != self._identity

    def _remake(self, exc: sqlite3.OperationalError) -> sqlite3.Connection:
        """After the cache file was removed or replaced under this run: a connection to the
        file now at the path (made anew, with its folder, when there is none), or to memory
        when that cannot be made, holding every entry of the removed file (still readable
        through ``self._db``); one warning says what happened."""
        old, replaced = self._db, self.path.exists()
        new: sqlite3.Connection | None = None
        where: str | None = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            new = self._open()
            if self._read_only:  # only readable: this run's vectors go to memory instead
                self._read_only = False
                raise OSError("the new file is read-only")
            copied = _copy_entries(old, new)
        except (OSError, NormtestError, sqlite3.Error) as failed:
            where = getattr(failed, "strerror", None) or str(failed)
            if new is not None:
                new.close()
            new = _in_memory()
            copied = _copy_entries(old, new)
        try:
            old.close()
        except sqlite3.Error:  # pragma: no cover - closing a removed file does not fail
            pass
        kept = ("nothing could be read back from it: its vectors are computed again when "
                "needed" if copied is None else "it held no vectors yet" if copied == 0 else
                f"the {copied:,} vectors it held were copied over, so none is lost")
        if where is not None:
            self._in_memory_only = True
            self._warn(f"the embedding cache {self.path} was removed during the run ({exc}) and "
                       f"could not be made again ({where}); this run keeps its vectors in memory "
                       f"({kept}) and stores none on disk")
        elif replaced:
            self._warn(f"the embedding cache {self.path} was replaced by another file during "
                       f"the run; carrying on with the new one ({kept})")
        else:
            self._warn(f"the embedding cache {self.path} was removed during the run; made it "
                       f"again ({kept})")
        return new

    def _query(self, sql: str, parameters: Sequence[Any] = ()) -> list[Any]:
        """The rows of one read-only statement, through :meth:`_run`."""
        return self._run(lambda db: db.execute(sql, parameters).fetchall())

    # -- the store -------------------------------------------------------------------------------
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
            rows = self._query(
                f"SELECT key, dtype, shape, checksum, data FROM entries WHERE key IN ({marks})",
                chunk,
            )
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
            def drop(db: sqlite3.Connection) -> None:
                if not self._read_only:  # a read-only cache keeps them; they are skipped anyway
                    with db:
                        db.execute("BEGIN IMMEDIATE")
                        db.executemany("DELETE FROM entries WHERE key = ?",
                                       [(k,) for k in damaged])

            self._run(drop)
        return found

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        """Store arrays in one transaction (all or nothing); a read-only cache stores nothing."""
        rows = []
        for key, array in items.items():
            arr = np.ascontiguousarray(array)
            payload = arr.tobytes()
            dtype, shape = arr.dtype.str, json.dumps([int(n) for n in arr.shape])
            rows.append((key, dtype, shape, _checksum(dtype, shape, payload), payload))

        if self._not_kept is not None:
            return

        def write(db: sqlite3.Connection) -> None:
            if self._read_only:
                if rows and not self._warned_read_only:
                    self._warned_read_only = True
                    self._warn(f"the embedding cache {self.path} is read-only; new vectors are "
                               "not stored")
                return
            with db:
                db.execute("BEGIN IMMEDIATE")
                db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?)", rows)

        try:
            self._run(write)
        except (NormtestError, sqlite3.Error) as exc:  # storage failed: used, not kept
            self._not_kept = str(exc.__cause__ or exc)
            self._warn(f"the embedding cache {self.path} could not store new vectors "
                       f"({self._not_kept}); "
                       "this run computes and uses them without keeping them")

    def __len__(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM entries")[0][0])
