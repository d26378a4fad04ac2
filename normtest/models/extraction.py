"""Extraction: what computing the vectors of some items means, one function for every place it
runs — the embedding cache's misses in this process (:class:`~normtest.models.cache.CachedAdapter`)
and the same misses on remote workers (:mod:`normtest.models.ray`), so both give the same arrays.

An *item* is what one cache entry holds: a word or a text, or for prefix vectors a
``(text, prefix lengths)`` pair, whose array stacks every pooling of ``params["poolings"]`` (one
forward pass serves them all). ``params`` are the method's other arguments as plain values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from normtest.adapters.protocol import prefix_vectors_of
from normtest.errors import NormtestError

__all__ = ["METHODS", "Remote", "compute_items"]

#: Computes the arrays of some items on workers: (method, items, params) → one array per item.
Remote = Callable[[str, list[Any], dict[str, Any]], list[np.ndarray]]


def compute_items(adapter: Any, method: str, items: Sequence[Any],
                  params: dict[str, Any]) -> list[np.ndarray]:
    """One array per item of ``method`` on ``adapter`` (an uncached model)."""
    todo = list(items)
    if method == "word_vectors":
        return list(adapter.word_vectors(todo))
    if method == "text_vectors":
        return list(adapter.text_vectors(todo))
    if method == "token_logprobs":
        return list(adapter.token_logprobs(todo))
    if method == "token_vectors":
        batch = adapter.token_vectors(todo, **params)
        return [batch[i] for i in range(len(batch))]
    if method == "special_states":
        return list(adapter.special_states(todo, params["state"], layer=params["layer"]))
    if method == "prefix_vectors":  # each item's (poolings, lengths, dim) array
        texts, grids = [t for t, _ in todo], [list(g) for _, g in todo]
        per_pooling = [prefix_vectors_of(adapter, texts, grids, p, layer=params["layer"])
                       for p in params["poolings"]]
        return [np.stack([np.asarray(m[i]) for m in per_pooling]) for i in range(len(todo))]
    raise NormtestError(f"no extraction method {method!r}; one of {', '.join(METHODS)}")


#: The methods :func:`compute_items` runs (the cached methods of the protocol).
METHODS = ("word_vectors", "text_vectors", "token_logprobs", "token_vectors", "special_states",
           "prefix_vectors")
