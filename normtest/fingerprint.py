"""Content fingerprints of model files: the revision part of every cache key.

A file's SHA-256 is computed once per (path, size, modification time) and remembered in memory, so
reloading a model in the same process costs nothing. Large files hash at disk speed (~0.2 s for the
80 MB GloVe matrix).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

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
        digest = hashlib.sha256()
        with p.open("rb") as handle:
            while block := handle.read(_CHUNK):
                digest.update(block)
        _MEMO[key] = digest.hexdigest()
    return _MEMO[key]


def files_sha256(paths: list[Path]) -> str:
    """One SHA-256 over several files (their names and contents), in sorted name order."""
    digest = hashlib.sha256()
    for p in sorted(paths, key=lambda q: q.name):
        digest.update(p.name.encode())
        digest.update(file_sha256(p).encode())
    return digest.hexdigest()
