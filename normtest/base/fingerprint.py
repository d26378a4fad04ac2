"""Content fingerprints: of model files (the revision part of every cache key), of arrays and of
JSON values (what the stores of corpus counts and sentence surprisal digest).

A file's SHA-256 is computed once per (path, size, modification time) and remembered in memory, so
reloading a model in the same process costs nothing. Large files hash at disk speed (~0.2 s for the
80 MB GloVe matrix).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

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
        _MEMO[key] = sha256_now(p)
    return _MEMO[key]


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
