"""The one check of keyed vectors read from a file: every reader calls :func:`check_keyed_rows`.

Word2vec, fastText and GloVe files, a ``.npy`` matrix with its vocabulary, ``.npz`` and
``.jsonl`` precomputed vectors (and a table built in Python) are all checked whole, the same
way, before anything is measured on them: there are keys; the vectors are a (keys, dim) matrix
of numbers (integers or floats; not booleans, complex numbers, strings or objects) with one row
per key; no key appears twice (which row would a lookup mean?); and every value is finite and
within float32's range (the vectors are used as float32). A failure is a
:class:`~normtest.errors.NormtestError` that names the file, the first offending key and what
to do. A memory-mapped matrix is scanned in blocks, never copied whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from normtest.errors import NormtestError

__all__ = ["FLOAT32_MAX", "check_keyed_rows", "first_duplicate"]

FLOAT32_MAX = float(np.finfo(np.float32).max)
_BLOCK_BYTES = 64 << 20


def first_duplicate(keys: Sequence[Any]) -> tuple[Any, int, int] | None:
    """(key, first row, second row) of the first key that appears twice, or None."""
    if len(set(keys)) == len(keys):  # the common case, at C speed
        return None
    seen: dict[Any, int] = {}
    for row, key in enumerate(keys):
        first = seen.setdefault(key, row)
        if first != row:
            return key, first, row
    return None


def _shown(key: Any) -> str:
    if isinstance(key, bytes):
        key = key.decode("utf-8", "replace")
    text = repr(key)
    return text if len(text) <= 60 else text[:57] + "..."


def check_keyed_rows(where: object, keys: Sequence[Any], vectors: Any, *,
                     what: str = "key") -> None:
    """Refuse (NormtestError naming ``where``) keyed vectors that are not one finite float32-range
    row of numbers per distinct key; ``what`` names a key in messages ("word", "text")."""
    if len(keys) == 0:
        raise NormtestError(f"{where}: the vocabulary is empty (no {what}s); point at a complete "
                            "vector file, or check the vocabulary file")
    matrix: NDArray[Any] = vectors if isinstance(vectors, np.ndarray) else np.asarray(vectors)
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        raise NormtestError(
            f"{where}: vectors must be a ({what}s, dim) matrix, got shape {matrix.shape}")
    if matrix.dtype.kind not in "fiu":
        raise NormtestError(
            f"{where}: vectors must be numbers, got dtype {matrix.dtype}; save a float matrix")
    duplicate = first_duplicate(keys)
    if duplicate is not None:
        key, first, second = duplicate
        raise NormtestError(
            f"{where}: the {what} {_shown(key)} appears more than once (rows {first + 1:,} and "
            f"{second + 1:,}), so a lookup could mean either vector; keep one row per {what}")
    if matrix.shape[0] != len(keys):
        raise NormtestError(
            f"{where}: {len(keys):,} {what}s but {matrix.shape[0]:,} rows of vectors; they must "
            "correspond row by row")
    if matrix.dtype.kind == "f":
        _check_finite(where, keys, matrix, what)


def _check_finite(where: object, keys: Sequence[Any], matrix: NDArray[Any], what: str) -> None:
    """Every value finite and within float32's range, scanned in blocks of rows."""
    narrow = matrix.dtype.itemsize <= 4  # float16/32: finite means within float32's range
    step = max(1, _BLOCK_BYTES // max(1, matrix.shape[1] * matrix.dtype.itemsize))
    bad_rows: list[int] = []
    count = 0
    for start in range(0, matrix.shape[0], step):
        block = np.asarray(matrix[start:start + step])
        with np.errstate(invalid="ignore", over="ignore"):
            good = np.isfinite(block) if narrow else np.abs(block) <= FLOAT32_MAX
        bad = ~good.all(axis=1)
        if bad.any():
            found = np.flatnonzero(bad)
            count += int(found.size)
            if not bad_rows:
                bad_rows.append(start + int(found[0]))
    if count:
        raise NormtestError(
            f"{where} has NaN or infinite (or out-of-float32-range) vectors for {count:,} "
            f"{what}(s), first {_shown(keys[bad_rows[0]])}; the file is damaged: recompute "
            "or drop them")
