"""A memo bounded in bytes.

What the audit computes once and reads many times goes through one of these: a document's prefix
states (every pooling of it), the word vectors of a transformed variant (every claim over the
words). A value larger than the whole budget is not kept; a budget of 0 keeps nothing. The
sizes are the caller's to give: bytes, or 1 per value for a memo bounded in entries (the leading
token ids of recent texts, the hash states of long cache keys).

When full, a memo either drops its least recently used values (``"lru"``) or keeps what it has
and stores nothing more (``"keep"``). The second suits values read in the same cycle again and
again (every claim over the words asks for the variants in one order): least-recently-used
eviction would drop each value just before it is asked for again, and hit nothing.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Literal

__all__ = ["ByteMemo"]


class ByteMemo:
    """Values by key within ``limit`` bytes; when full, the least recently used are dropped
    (``policy="lru"``) or new values are not kept (``policy="keep"``)."""

    def __init__(self, limit: int, policy: Literal["lru", "keep"] = "lru") -> None:
        if policy not in ("lru", "keep"):
            raise ValueError(f"policy must be 'lru' or 'keep', got {policy!r}")
        self.limit = limit
        self.policy = policy
        self._items: dict[Hashable, tuple[Any, int]] = {}
        self._bytes = 0

    def get(self, key: Hashable) -> Any:
        """The value stored under ``key`` (now the most recent), or None."""
        item = self._items.pop(key, None)
        if item is None:
            return None
        self._items[key] = item
        return item[0]

    def put(self, key: Hashable, value: Any, size: int) -> None:
        """Store ``value`` (``size`` bytes), dropping the least recent values over the limit."""
        old = self._items.pop(key, None)
        if old is not None:
            self._bytes -= old[1]
        if size > self.limit or (self.policy == "keep" and self._bytes + size > self.limit):
            return
        self._items[key] = (value, size)
        self._bytes += size
        while self._bytes > self.limit:
            self._bytes -= self._items.pop(next(iter(self._items)))[1]

    def clear(self) -> None:
        """Forget everything."""
        self._items.clear()
        self._bytes = 0

    @property
    def nbytes(self) -> int:
        """The bytes held now."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)
