"""A memo bounded in bytes: the least recently used values are dropped first.

What the audit computes once and reads many times goes through one of these: a document's prefix
states (every pooling of it), the word vectors of a transformed variant (every claim over the
words). A value larger than the whole budget is not kept; a budget of 0 keeps nothing.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

__all__ = ["ByteMemo"]


class ByteMemo:
    """Values by key within ``limit`` bytes, least recently used dropped first."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
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
        if size > self.limit:
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
