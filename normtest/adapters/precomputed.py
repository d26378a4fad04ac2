"""Precomputed vectors: audit embeddings produced elsewhere, keyed by the exact word or text.

Two file layouts, neither needing pickle:

- ``.npz`` with a string array ``keys`` and a float matrix ``vectors`` (``numpy.savez``);
- ``.jsonl`` with one object per line: ``{"key": "the text or word", "vector": [0.1, …]}``
  (``"text"`` or ``"word"`` are accepted in place of ``"key"``).

Keys are exact strings: a claim about words looks words up, a claim about texts looks texts up.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from normtest.adapters.static import StaticVectors
from normtest.errors import NormtestError
from normtest.fingerprint import file_sha256

PRECOMPUTED_SUFFIXES = (".npz", ".jsonl")


def load_precomputed(path: str | os.PathLike[str], name: str | None = None) -> StaticVectors:
    """Read a ``.npz`` or ``.jsonl`` file of precomputed vectors."""
    p = Path(path)
    if not p.is_file():
        raise NormtestError(f"precomputed vector file not found: {p}")
    if p.suffix == ".npz":
        keys, vectors = _read_npz(p)
    elif p.suffix == ".jsonl":
        keys, vectors = _read_jsonl(p)
    else:
        raise NormtestError(
            f"{p}: precomputed vectors must be a .npz (keys, vectors) or a .jsonl file"
        )
    if not np.isfinite(vectors).all():
        bad = np.flatnonzero(~np.isfinite(vectors).all(axis=1))
        raise NormtestError(
            f"{p} has NaN or infinite vectors for {bad.size} key(s), first {keys[bad[0]]!r}; "
            "recompute or drop them"
        )
    return StaticVectors(name or p.stem, keys, vectors, file_sha256(p))


def _read_npz(p: Path) -> tuple[list[str], np.ndarray]:
    try:
        with np.load(p, allow_pickle=False) as data:
            if "keys" not in data or "vectors" not in data:
                raise NormtestError(
                    f"{p} must hold arrays 'keys' and 'vectors' "
                    f"(found {sorted(data.files)}); write it with numpy.savez(keys=…, vectors=…)"
                )
            keys = [str(k) for k in data["keys"]]
            vectors = np.asarray(data["vectors"], dtype=np.float32)
    except (ValueError, OSError) as exc:
        raise NormtestError(f"{p} is not a readable .npz file without pickles ({exc})") from exc
    return keys, vectors


def _read_jsonl(p: Path) -> tuple[list[str], np.ndarray]:
    keys: list[str] = []
    rows: list[list[float]] = []
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise NormtestError(f"{p} is not UTF-8 text ({exc.reason})") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            key = next(item[k] for k in ("key", "text", "word") if k in item)
            vector = [float(v) for v in item["vector"]]
        except (json.JSONDecodeError, StopIteration, KeyError, TypeError, ValueError) as exc:
            raise NormtestError(
                f"{p}, line {number}: expected {{\"key\": str, \"vector\": [numbers]}} ({exc})"
            ) from exc
        if rows and len(vector) != len(rows[0]):
            raise NormtestError(
                f"{p}, line {number}: vector has dimension {len(vector)}, "
                f"earlier lines have {len(rows[0])}"
            )
        keys.append(str(key))
        rows.append(vector)
    if not rows:
        raise NormtestError(f"{p} holds no vectors")
    return keys, np.asarray(rows, dtype=np.float32)
