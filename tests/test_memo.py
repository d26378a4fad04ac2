"""The byte-bounded memo behind the prefix states and the transformed word vectors."""

from __future__ import annotations

import pytest

from normtest.base.byte_memo import ByteMemo


def test_least_recently_used_values_are_dropped_first() -> None:
    memo = ByteMemo(10)
    memo.put("a", 1, 4)
    memo.put("b", 2, 4)
    assert memo.get("a") == 1  # a is now the most recent
    memo.put("c", 3, 4)  # over the limit: b goes
    assert memo.get("b") is None and memo.get("a") == 1 and memo.get("c") == 3
    assert memo.nbytes == 8 and len(memo) == 2
    memo.put("a", 5, 2)  # replacing counts the new size only
    assert memo.get("a") == 5 and memo.nbytes == 6


def test_a_full_keeping_memo_keeps_what_it_has() -> None:
    """Values read in one cycle again and again: keeping the first ones hits them every cycle,
    where least-recently-used eviction would hit none."""
    cycle = [f"variant {i}" for i in range(5)]
    hits = {}
    for policy in ("lru", "keep"):
        memo, found = ByteMemo(30, policy), 0  # type: ignore[arg-type]
        for _ in range(3):
            for key in cycle:
                if memo.get(key) is not None:
                    found += 1
                else:
                    memo.put(key, key, 10)
        hits[policy] = found
    assert hits == {"lru": 0, "keep": 6}  # three of five kept, hit in the two later cycles


def test_oversized_values_and_a_zero_budget_keep_nothing() -> None:
    for policy in ("lru", "keep"):
        memo = ByteMemo(5, policy)  # type: ignore[arg-type]
        memo.put("big", 1, 6)
        assert memo.get("big") is None and memo.nbytes == 0
        memo.put("small", 2, 5)
        memo.clear()
        assert len(memo) == 0 and memo.nbytes == 0
    nothing = ByteMemo(0)
    nothing.put("a", 1, 1)
    assert nothing.get("a") is None
    with pytest.raises(ValueError, match="policy"):
        ByteMemo(1, "fifo")  # type: ignore[arg-type]
