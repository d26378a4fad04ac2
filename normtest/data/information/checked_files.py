"""The files of the two stores of information sources, checked on read.

The stored corpus counts (:mod:`~normtest.data.information.scaled`, written by
:meth:`CorpusCounts.save <normtest.data.information.vocabulary_counts.CorpusCounts.save>`) and the
stored sentence surprisal (:mod:`~normtest.data.information.surprisal`) are ``.npz`` files of plain
arrays, one of which is the key the entry was computed from (the corpus files' fingerprints and the
settings; the model, its revision and the texts). :func:`write_checked` adds a member ``sha256``:
the :func:`~normtest.base.fingerprint.arrays_sha256` of every other member, key included.
:func:`read_checked` reads each member through :mod:`zipfile` (its CRC-32 checked before numpy sees
the bytes, so a damaged header cannot make numpy allocate what it declares), with
``allow_pickle=False``, and refuses a file whose checksum is missing or differs.

Every way a present file can fail — truncated, random bytes, another format, a checksum that does
not match, a key or a shape that does not fit — is one :class:`~normtest.errors.NormtestError`
naming the file. The stores then recompute the entry, replace the file and say so once
(:func:`warn_recomputed`: a :class:`~normtest.models.cache.CacheWarning`, which the command line
prints as one ``normtest: warning:`` line). The checksum guards against damage, not against someone
who can write the cache folder: such a person can write a consistent file (docs/security.md).
"""

from __future__ import annotations

import io
import os
import struct
import warnings
import zipfile
import zlib
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from normtest.base.fingerprint import arrays_sha256
from normtest.base.paths import atomic_write
from normtest.errors import NormtestError
from normtest.models.cache.embeddings import CacheWarning

__all__ = ["CHECKSUM", "read_checked", "unusable", "warn_recomputed", "write_checked"]

#: The member holding the SHA-256 of all the others.
CHECKSUM = "sha256"

#: What reading damaged bytes can raise (zipfile, zlib and numpy's header parser).
_UNREADABLE = (OSError, EOFError, ValueError, KeyError, IndexError, TypeError, OverflowError,
               MemoryError, RuntimeError, NotImplementedError, zipfile.BadZipFile, zlib.error,
               struct.error)


def unusable(path: str | os.PathLike[str], what: str, reason: str) -> NormtestError:
    """The error for a stored file that cannot be used: it names the file and the reason."""
    return NormtestError(f"{path} cannot be used as {what}: {reason}")


def write_checked(path: Path, arrays: Mapping[str, NDArray[Any]]) -> None:
    """Write ``arrays`` and their checksum to ``path`` (``.npz``) atomically: a temporary file in
    the same folder, then ``os.replace`` (OSError when the folder cannot be written)."""
    if CHECKSUM in arrays:
        raise ValueError(f"{CHECKSUM!r} is the checksum's member")
    members: dict[str, Any] = {**arrays, CHECKSUM: np.array(arrays_sha256(arrays))}
    atomic_write(path, lambda out: np.savez(out, **members))


def read_checked(path: str | os.PathLike[str], what: str,
                 names: Collection[str]) -> dict[str, NDArray[Any]]:
    """The arrays written by :func:`write_checked`, their checksum verified and the arrays
    ``names`` among them (NormtestError naming ``path`` as ``what`` when the file is unreadable,
    not such a file, or damaged)."""
    arrays: dict[str, NDArray[Any]] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if not info.filename.endswith(".npy") or info.compress_type != zipfile.ZIP_STORED:
                    raise ValueError(f"unexpected member {info.filename!r}")
                raw = archive.read(info)  # raises on a CRC-32 mismatch
                array = np.lib.format.read_array(io.BytesIO(raw), allow_pickle=False)
                arrays[info.filename.removesuffix(".npy")] = array
        stored = arrays.pop(CHECKSUM, None)
        if stored is None or stored.shape != () or stored.dtype.kind != "U":
            raise unusable(path, what, "it carries no checksum (written by another version of "
                                       "normtest, or not a normtest store file)")
        if str(stored) != arrays_sha256(arrays):
            raise unusable(path, what, "its checksum does not match its content")
        if missing := sorted(set(names) - set(arrays)):
            raise unusable(path, what, f"it holds no {missing[0]!r} array (a file of another "
                                       "kind)")
    except NormtestError:
        raise
    except _UNREADABLE as exc:
        raise unusable(path, what, f"unreadable ({type(exc).__name__}: {exc})") from None
    return arrays


def warn_recomputed(error: NormtestError) -> None:
    """Say once, as the embedding cache does, that a stored entry is recomputed: the error that
    refused it (it names the file), and what happens now."""

    warnings.warn(f"{error}; recomputing it and replacing the file", CacheWarning, stacklevel=3)
