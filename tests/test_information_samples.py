"""Word samples: the stratified default (real wordfreq ranks) and user lists."""

from __future__ import annotations

import re

import numpy as np
import pytest
import wordfreq

from normtest.data.information.samples import (
    default_word_sample,
    rank_bins,
    stratified_word_sample,
    user_word_sample,
)
from normtest.errors import NormtestError


def test_default_sample_is_alphabetic_unique_sized_and_deterministic() -> None:
    words = default_word_sample()
    assert len(words) == 3000 == len(set(words))
    assert all(re.fullmatch(r"[a-z]+", w) for w in words)
    assert default_word_sample() == words
    assert default_word_sample(seed=1) != words
    assert set(default_word_sample(seed=1)[:50]) == set(words[:50])  # the head is taken whole


def test_default_sample_is_stratified_over_log_rank_bins() -> None:
    s = stratified_word_sample(size=3000, seed=0, max_rank=100_000)
    top = wordfreq.top_n_list("en", 100_000)
    rank = {w: r for r, w in enumerate(top, start=1)}
    assert [rank[w] for w in s.words] == s.ranks.tolist()  # ranks are wordfreq's own
    assert np.all(np.diff(s.ranks) > 0) and s.ranks.max() <= 100_000
    per_bin = np.bincount(s.bins, minlength=len(s.bin_edges) - 1)
    # every order of magnitude of frequency is represented: bins too small to fill are taken
    # whole, the others get (within one word) equal shares
    capacity = np.array(
        [
            sum(1 for r, w in enumerate(top, 1) if lo <= r < hi and re.fullmatch(r"[a-z]+", w))
            for lo, hi in zip(s.bin_edges[:-1], s.bin_edges[1:], strict=True)
        ]
    )
    full = per_bin < capacity
    assert np.all(per_bin[~full] == capacity[~full])
    assert per_bin[full].max() - per_bin[full].min() <= 1
    assert (s.ranks > 20_000).sum() > 500 and (s.ranks < 1_000).sum() > 300


def test_rank_bins_are_log_spaced() -> None:
    edges = rank_bins(100_000, 5)
    np.testing.assert_array_equal(edges, [1, 10, 100, 1000, 10_000, 100_001])


def test_sample_size_limits() -> None:
    with pytest.raises(NormtestError, match="at most"):
        default_word_sample(size=5000, max_rank=1000)
    with pytest.raises(NormtestError, match="positive"):
        default_word_sample(size=0)
    assert len(default_word_sample(size=10, max_rank=1000)) == 10


def test_user_sample_strips_dedupes_and_validates() -> None:
    assert user_word_sample([" house", "river", "house", "River"]) == ["house", "river", "River"]
    with pytest.raises(NormtestError, match="whitespace"):
        user_word_sample(["new york"])
    with pytest.raises(NormtestError, match="empty"):
        user_word_sample(["house", ""])
    with pytest.raises(NormtestError, match="not a single string"):
        user_word_sample("house")
