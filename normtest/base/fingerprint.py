"""Content fingerprints: of model files (the revision part of every cache key), of arrays and of
JSON values (what the stores of corpus counts and sentence surprisal digest).

A file's SHA-256 is computed once per (path, size, modification time) and remembered in memory, so
reloading a model in the same process costs nothing. Large files hash at disk speed (~0.2 s for the
80 MB GloVe matrix; SmolLM2's 540 MB copy, whose digest names the surprisal every audit reads,
~0.5 s from the page cache and ten times that from a cold disk); the digest of a file of
:data:`KEPT_FROM_BYTES` or more is also kept between processes, in ``file-digests.json`` under
the cache root, with the file's size, modification and change times, inode and device — a file
changed in any way (a change time moves with every write, and cannot be set back) is read again.
That is an identity, what a cache key needs; a check of an installed file's integrity reads the
file every time (:func:`sha256_now`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from normtest.base.paths import atomic_write, default_cache_dir, published
from normtest.errors import NormtestError

_MEMO: dict[tuple[str, int, int], str] = {}
_CHUNK = 1 << 22


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file's bytes (memoised on path, size and modification time)."""
    p = Path(path)
    try:
        stat = p.stat()
    except OSError as exc:
        raise NormtestError(f"cannot read {p}: {exc.strerror}; check the path") from exc
    key = (str(p.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _MEMO:
        if stat.st_size < KEPT_FROM_BYTES:
            _MEMO[key] = sha256_now(p)
        else:
            identity = [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino,
                        stat.st_dev]
            kept = _read_kept()
            found = kept.get(key[0])
            if isinstance(found, dict) and found.get("identity") == identity \
                    and isinstance(found.get("sha256"), str):
                _MEMO[key] = found["sha256"]
            else:
                _MEMO[key] = sha256_now(p)
                _keep(key[0], {"identity": identity, "sha256": _MEMO[key]})
    return _MEMO[key]


#: The smallest file whose digest is kept between processes (module doc).
KEPT_FROM_BYTES = 16 << 20
#: The file under the cache root that keeps them.
DIGESTS_FILE = "file-digests.json"


def _read_kept() -> dict[str, Any]:
    try:
        found = json.loads((default_cache_dir() / DIGESTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _keep(path: str, entry: dict[str, Any]) -> None:
    """Add one file's digest to the kept ones (a cache that cannot be written keeps none)."""
    kept = {k: v for k, v in _read_kept().items() if os.path.exists(k)}  # the gone go
    kept[path] = entry
    try:
        atomic_write(default_cache_dir() / DIGESTS_FILE,
                     published(json.dumps(kept, indent=1, sort_keys=True) + "\n"))
    except (OSError, NormtestError):
        return


def sha256_now(path: Path) -> str:
    """Hex SHA-256 of a file's bytes, read in full now (never from the memo: what a check of
    an installed file's integrity needs)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def files_sha256(paths: list[Path]) -> str:
    """One SHA-256 over several files (their names and contents), in sorted name order."""
    digest = hashlib.sha256()
    for p in sorted(paths, key=lambda q: q.name):
        digest.update(p.name.encode())
        digest.update(file_sha256(p).encode())
    return digest.hexdigest()


def _framed(digest: Any, part: bytes | np.ndarray) -> None:
    """Add ``part`` (bytes, or a 1-D uint8 array) preceded by its length."""
    digest.update(len(part).to_bytes(8, "little"))
    digest.update(part)


def arrays_sha256(arrays: Mapping[str, np.ndarray]) -> str:
    """Hex SHA-256 of named arrays: each name, dtype, shape and bytes (C order), in name order.

    Two mappings have the same digest only when they hold the same names with equal arrays of the
    same dtypes and shapes (every part is length-framed, so no two differ by where a part ends).
    Object arrays have no bytes to digest and raise TypeError.
    """
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        for part in (name, array.dtype.str, json.dumps(array.shape)):
            _framed(digest, part.encode("utf-8"))
        _framed(digest, array.reshape(-1).view(np.uint8))
    return digest.hexdigest()


def json_sha256(value: Any) -> str:
    """Hex SHA-256 of a JSON value (keys sorted): the name of a store entry from its key."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode("utf-8")).hexdigest()
