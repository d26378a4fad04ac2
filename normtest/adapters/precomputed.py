"""Precomputed vectors: audit embeddings produced elsewhere, keyed by the exact word or text.

Two file layouts, neither needing pickle:

- ``.npz`` with a string array ``keys`` and a float matrix ``vectors`` (``numpy.savez``);
- ``.jsonl`` with one object per line: ``{"key": "the text or word", "vector": [0.1, …]}``
  (``"text"`` or ``"word"`` are accepted in place of ``"key"``).

Keys are exact strings: a claim about words looks words up, a claim about texts looks texts up.
The file is checked whole as every vector file is (:func:`normtest.adapters.keyed.
check_keyed_rows`): one row per key, no key twice, numbers only, and, with the first offending
key, no value NaN, infinite or beyond the float32 range (they are kept as float32).
"""

from __future__ import annotations

import json
import math
import os
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from normtest.adapters.keyed import check_keyed_rows
from normtest.adapters.sentence import PrecomputedTexts
from normtest.adapters.static import NPY_ERRORS, StaticVectors, read_npy_header
from normtest.base.fingerprint import file_sha256
from normtest.errors import NormtestError

PRECOMPUTED_SUFFIXES = (".npz", ".jsonl")

#: Deflate expands at most ~1032×; a member claiming more is damaged (or a zip bomb).
_MAX_EXPANSION = 1100
#: What reading a damaged zip archive or its ``.npy`` members raises.
_NPZ_ERRORS = (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, *NPY_ERRORS)


def load_precomputed(path: str | os.PathLike[str], name: str | None = None,
                     texts: bool | None = None) -> StaticVectors | PrecomputedTexts:
    """Read a ``.npz`` or ``.jsonl`` file of precomputed vectors: word vectors (a static model),
    or text vectors (a sentence encoder of its own texts, which feed the text claim) when
    ``texts`` is True, or, with ``texts=None``, when most keys are several words."""
    p = Path(path)
    if not p.is_file():
        raise NormtestError(f"precomputed vector file not found: {p}")
    if p.suffix == ".npz":
        keys, matrix = _read_npz(p)
    elif p.suffix == ".jsonl":
        keys, matrix = _read_jsonl(p)
    else:
        raise NormtestError(
            f"{p}: precomputed vectors must be a .npz (keys, vectors) or a .jsonl file"
        )
    vectors = _float32_rows(p, keys, matrix)
    if texts is None:
        texts = sum(len(k.split()) > 1 for k in keys) * 2 > len(keys)
    if texts:
        return PrecomputedTexts(name or p.stem, keys, vectors, file_sha256(p), checked=True)
    return StaticVectors(name or p.stem, keys, vectors, file_sha256(p), checked=True)


def _float32_rows(p: Path, keys: list[str], matrix: NDArray[Any]) -> NDArray[np.float32]:
    """The matrix as float32, checked whole first (:func:`check_keyed_rows`)."""
    check_keyed_rows(p, keys, matrix)
    return np.asarray(matrix, dtype=np.float32)


def _read_npz(p: Path) -> tuple[list[str], NDArray[Any]]:
    try:
        with zipfile.ZipFile(p) as archive:
            members = {info.filename.removesuffix(".npy"): info for info in archive.infolist()}
            if "keys" not in members or "vectors" not in members:
                raise NormtestError(
                    f"{p} must hold arrays 'keys' and 'vectors' (found {sorted(members)}); "
                    "write it with numpy.savez(keys=…, vectors=…)"
                )
            keys = _npz_member(p, archive, members["keys"])
            vectors = _npz_member(p, archive, members["vectors"])
    except NormtestError:
        raise
    except _NPZ_ERRORS as exc:
        raise NormtestError(
            f"{p} is not a readable .npz file without pickles ({type(exc).__name__}: {exc}); "
            "write it with numpy.savez(keys=…, vectors=…)"
        ) from exc
    if keys.ndim != 1:
        raise NormtestError(f"{p}: 'keys' must be a 1-D array of strings, got shape {keys.shape}")
    if keys.dtype.kind == "S":
        try:
            return [bytes(k).decode("utf-8") for k in keys], vectors
        except UnicodeDecodeError as exc:
            raise NormtestError(f"{p}: 'keys' are bytes that are not UTF-8 ({exc.reason})") from exc
    if keys.dtype.kind != "U":
        raise NormtestError(
            f"{p}: 'keys' must be strings, got dtype {keys.dtype}; save numpy.array(list_of_str)"
        )
    return [str(k) for k in keys], vectors


def _npz_member(p: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> NDArray[Any]:
    """One array of the archive, its declared size checked before numpy allocates it."""
    with archive.open(info) as handle:
        shape, dtype = read_npy_header(handle)
    if dtype.hasobject:
        raise NormtestError(
            f"{p}: '{info.filename}' holds Python objects, which load only by unpickling; "
            "normtest reads .npz files without pickles (unpickling runs code): save string keys "
            "and a float matrix (numpy.savez(keys=…, vectors=…))"
        )
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > info.file_size or nbytes > _MAX_EXPANSION * info.compress_size + 4096:
        raise NormtestError(
            f"{p}: '{info.filename}' claims shape {shape} ({nbytes:,} bytes) but holds "
            f"{info.file_size:,} bytes; the file is damaged, write it again with numpy.savez"
        )
    with archive.open(info) as handle:
        array = np.lib.format.read_array(handle, allow_pickle=False)
    return np.asarray(array)


def _read_jsonl(p: Path) -> tuple[list[str], NDArray[np.float64]]:
    keys: list[str] = []
    rows: list[list[float]] = []
    try:
        lines = p.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise NormtestError(f"{p} is not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise NormtestError(f"cannot read {p}: {exc.strerror or exc}") from exc
    expected = 'expected {"key": "text", "vector": [numbers]}'
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise NormtestError(f"{p}, line {number}: not JSON ({reason}); {expected}") from None
        key, vector = _jsonl_item(item)
        if key is None or vector is None:
            raise NormtestError(f"{p}, line {number}: {expected}, got {line[:80]!r}")
        if rows and len(vector) != len(rows[0]):
            raise NormtestError(
                f"{p}, line {number}: vector has dimension {len(vector)}, "
                f"earlier lines have {len(rows[0])}"
            )
        keys.append(key)
        rows.append(vector)
    if not rows:
        raise NormtestError(f"{p} holds no vectors; write one JSON object per line")
    return keys, np.asarray(rows, dtype=np.float64)


def _jsonl_item(item: Any) -> tuple[str | None, list[float] | None]:
    """The key and vector of one parsed line, or None for what is missing or mistyped."""
    if not isinstance(item, dict):
        return None, None
    key = next((item[k] for k in ("key", "text", "word") if k in item), None)
    values = item.get("vector")
    if not isinstance(key, str) or not isinstance(values, list) or not values:
        return None, None
    vector: list[float] = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | float):
            return key, None
        vector.append(float(v) if isinstance(v, float) or abs(v) < 2**1000 else math.inf)
    return key, vector
