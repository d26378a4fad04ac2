"""A bounded memo of bootstrap draws and of what is computed from them, shared by every
measurement of a process (:mod:`normtest.stats.bootstrap`).

An audit measures each claim once per variant (composition × representation × transform), and
every measurement draws its bootstrap from the same seed and size. The draws of (n units, B
resamples, seed) are deterministic, so they are drawn once and kept; so is what a statistic
computes from a chunk of draws alone (the row weights of clusters, the ranks of a variable that
every variant shares), keyed by the chunk and a digest of the data it read.

Everything kept is read-only (``setflags(write=False)``): a statistic that writes into its weights
fails loudly instead of corrupting the draws of the next measurement (the one exception: work
arrays kept per thread, so that their bytes count in the same budget). The memo holds at most
:data:`DEFAULT_BUDGET` bytes (least recently used out); a budget of 0 turns it off, and every
measurement then draws and computes from scratch, with bit-identical results. The store is the
project's :class:`~normtest.base.byte_memo.ByteMemo` (as for the prefix states and transformed
vectors).
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from normtest.base.byte_memo import ByteMemo

__all__ = ["DEFAULT_BUDGET", "clear", "derived", "digest", "fits", "is_chunk", "keep", "limit",
           "lookup", "nbytes", "register", "stats", "store"]

#: Bytes the memo may hold: the draws and shared ranks of a few claims at n = 5,000, B = 1,000.
#: 1 GiB: a partial correlation's shared side (x's ranks, the covariates' orthonormal basis and
#: x's residual, each n × B floats) is about 200 MB at 5,000 words and 1,000 resamples, and an
#: audit's baseline readings hold three such sides in turn (all words, multi-token words, the
#: KL words); at 256 MiB they evicted each other and were rebuilt for nearly every variant
#: (the default MiniLM audit's measuring stage 30.0 s, against 10.5 s at 768 MiB)
DEFAULT_BUDGET = 2**30

T = TypeVar("T")


class _Memo:
    """A :class:`~normtest.base.byte_memo.ByteMemo` behind a lock, with hit counts and the
    registry of the chunks of weights it handed out."""

    def __init__(self, budget: int) -> None:
        self.values = ByteMemo(budget)
        self.hits = 0
        self.misses = 0
        self.lock = threading.RLock()
        #: id → weak reference of every array this memo handed out as a chunk of weights
        self.chunks: dict[int, weakref.ref[np.ndarray]] = {}

    @property
    def budget(self) -> int:
        return self.values.limit

    def get(self, key: Hashable) -> Any | None:
        with self.lock:
            value = self.values.get(key)
            if value is None:
                self.misses += 1
            else:
                self.hits += 1
            return value

    def put(self, key: Hashable, value: Any, size: int) -> None:
        with self.lock:
            if self.values.limit > 0:  # off: nothing is kept, not even a value of 0 bytes
                self.values.put(key, value, size)

    def set_budget(self, budget: int) -> None:
        """A new budget; lowering it below what is held forgets everything."""
        with self.lock:
            self.values.limit = max(0, int(budget))
            if self.values.nbytes > self.values.limit:
                self.values.clear()

    def clear(self) -> None:
        with self.lock:
            self.values.clear()
            self.hits = self.misses = 0


_MEMO = _Memo(DEFAULT_BUDGET)


def nbytes(value: Any) -> int:
    """Bytes held by an array, a tuple or list of them, or an object with ``nbytes``."""
    if isinstance(value, (tuple, list)):
        return sum(nbytes(v) for v in value)
    return int(getattr(value, "nbytes", 0))


def fits(size: int) -> bool:
    """Whether an entry of ``size`` bytes would be kept (the memo is on and large enough)."""
    return 0 < size <= _MEMO.budget


def lookup(key: Hashable) -> Any | None:
    """The value kept under ``key``, or None."""
    return _MEMO.get(key)


def store(key: Hashable, value: Any) -> None:
    """Keep ``value`` under ``key`` (when it fits the budget)."""
    _MEMO.put(key, value, nbytes(value))


def keep(key: Hashable, value: Any, size: int) -> None:
    """Keep ``value`` under ``key``, counted as ``size`` bytes (for values that are not arrays)."""
    _MEMO.put(key, value, size)


def register(chunk: np.ndarray) -> np.ndarray:
    """Mark ``chunk`` read-only and as a chunk of weights the memo handed out (so that
    :func:`derived` may keep what is computed from it); returns it."""
    chunk.setflags(write=False)
    key = id(chunk)
    chunks = _MEMO.chunks

    def forget(ref: weakref.ref[np.ndarray], key: int = key) -> None:
        if chunks.get(key) is ref:
            chunks.pop(key, None)

    chunks[key] = weakref.ref(chunk, forget)
    return chunk


def is_chunk(weights: np.ndarray) -> bool:
    """Whether ``weights`` is a (live, read-only) chunk this memo handed out."""
    ref = _MEMO.chunks.get(id(weights))
    return ref is not None and ref() is weights


def derived(weights: np.ndarray, tag: Hashable, make: Callable[[], T], chunk: bool = False) -> T:
    """``make()``, kept per chunk of weights: a later call with the same chunk and ``tag``
    returns the kept value.

    ``tag`` must name everything ``make`` reads besides the weights (a :func:`digest` of the
    data). Only chunks handed out by the memo are keyed (an array of the caller's own could be
    changed in place); for any other array, and with the memo off, ``make()`` is called.
    ``chunk=True`` registers the result as a chunk itself (row weights derived from unit
    weights).
    """
    if not is_chunk(weights):
        return make()
    key = ("derived", id(weights), tag)
    hit = _MEMO.get(key)
    if hit is not None and hit[0]() is weights:
        return hit[1]
    value = make()
    if chunk and isinstance(value, np.ndarray):
        register(value)
    elif isinstance(value, np.ndarray):
        value.setflags(write=False)
    _MEMO.put(key, (weakref.ref(weights), value), nbytes(value))
    return value


def digest(*arrays: np.ndarray | None) -> str:
    """A content digest of arrays (dtype, shape and bytes; None stands for itself)."""
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        if a is None:
            h.update(b"none;")
            continue
        arr = np.asarray(a)
        h.update(f"{arr.dtype.str}{arr.shape};".encode())
        h.update(arr.tobytes())
    return h.hexdigest()


def clear() -> None:
    """Forget everything kept (the budget stays)."""
    _MEMO.clear()


@contextmanager
def limit(budget: int) -> Iterator[None]:
    """Run with the memo's budget set to ``budget`` bytes (0: off, everything from scratch)."""
    before = _MEMO.budget
    _MEMO.set_budget(budget)
    try:
        yield
    finally:
        _MEMO.set_budget(before)


def stats() -> dict[str, int]:
    """Entries, bytes held, budget, hits and misses since the last :func:`clear`."""
    with _MEMO.lock:
        return {"entries": len(_MEMO.values), "bytes": _MEMO.values.nbytes,
                "budget": _MEMO.budget, "hits": _MEMO.hits, "misses": _MEMO.misses}
