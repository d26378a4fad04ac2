"""The cached adapter: any adapter, with every vector read through the embedding cache
(:class:`~normtest.models.cache.embeddings.EmbeddingCache`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from normtest.adapters.protocol import Capability, Layer, TokenBatch, check_layer
from normtest.base.byte_memo import ByteMemo
from normtest.errors import NormtestError
from normtest.models.cache.embeddings import EmbeddingCache
from normtest.models.extraction import Remote, compute_items

#: Items at least this long have their hash state kept (see ``CachedAdapter._keys``): documents.
_LONG_ITEM = 4096
#: Items this process computed (cache misses), over every cached adapter: an audit reads how
#: many a kind of data computed fresh from the difference (:func:`computed_items`).
_COMPUTED = [0]


def computed_items() -> int:
    """How many items the cached adapters of this process have computed so far (not read from
    the cache)."""
    return _COMPUTED[0]


#: How many items are computed, then stored in one transaction, at a time: what an interrupted
#: run keeps (the default 5,000 words: five parts).
COMMIT_ITEMS = 1000
#: At most this many kept hash states (the least recently used dropped first).
_KEPT_ITEM_HASHES = 4096


class CachedAdapter:
    """Wraps an adapter: the same protocol, with every vector read through the cache.

    Cheap methods (tokenisation, ``represents``) pass straight through. Each item (word, text,
    prefix request) is cached on its own, so a request that overlaps an earlier one computes only
    the new items, in one batched call to the model.
    """

    def __init__(self, adapter: Any, cache: EmbeddingCache,
                 recipe: tuple[str, dict[str, Any]] | None = None) -> None:
        """Wrap ``adapter`` (any object speaking the protocol). ``recipe``, ``(name or path,
        load options)``, is how another process loads the same model (normtest.load sets it)."""
        self.adapter = adapter
        self.cache = cache
        self.recipe = recipe
        #: computes missing items elsewhere (normtest.models.ray); None: in this process
        self.remote: Remote | None = None
        #: a long item's hash state after its part of the key (see _keys), by item; counted
        #: in items
        self._item_hashes = ByteMemo(_KEPT_ITEM_HASHES)
        #: the prefix poolings the audit will ask for (:meth:`expect_poolings`)
        self._expected_poolings: tuple[str, ...] = ()

    # -- identity passes through -----------------------------------------------------------------
    @property
    def name(self) -> str:
        """The wrapped model's name."""
        return str(self.adapter.name)

    @property
    def revision(self) -> str:
        """The wrapped model's revision."""
        return str(self.adapter.revision)

    @property
    def capabilities(self) -> frozenset[Capability]:
        """The wrapped model's capabilities."""
        return frozenset(self.adapter.capabilities)

    @property
    def dim(self) -> int:
        """The wrapped model's dimension."""
        return int(self.adapter.dim)

    @property
    def states(self) -> tuple[str, ...]:
        """The wrapped model's special states."""
        return tuple(getattr(self.adapter, "states", ()))

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.adapter, attribute)

    def variant(self, **changes: Any) -> CachedAdapter:
        """The wrapped adapter's ``variant(...)``, still read through this cache."""
        return CachedAdapter(self.adapter.variant(**changes), self.cache)

    # -- keys ------------------------------------------------------------------------------------
    def _key(self, method: str, item: str, **params: Any) -> str:
        return self._keys(method, [item], **params)[0]

    def _keys(self, method: str, items: Sequence[str], **params: Any) -> list[str]:
        """sha256 of the JSON of {model, revision, method, params, item} (sorted keys) per item.

        params arrive normalised to plain Python values (see _layer and the methods below). The
        part shared by every item is serialised once: "item" sorts first, so each description
        is ``{"item": <item>, `` followed by the rest, exactly as json.dumps writes the whole.
        A long item (a CER document: every pooling and grid of it has a key, in every call) is
        hashed once: its hash state after ``{"item": <item>`` is kept and copied for each tail.
        """
        rest = json.dumps({"model": self.name, "revision": self.revision, "method": method,
                           "params": params}, sort_keys=True, ensure_ascii=False)
        tail = (", " + rest[1:]).encode("utf-8")
        out = []
        for item in items:
            if len(item) < _LONG_ITEM:
                out.append(hashlib.sha256(b'{"item": ' + json.dumps(item, ensure_ascii=False)
                                          .encode("utf-8") + tail).hexdigest())
                continue
            head = self._item_hashes.get(item)
            if head is None:
                head = hashlib.sha256(b'{"item": ' + json.dumps(item, ensure_ascii=False)
                                      .encode("utf-8"))
                self._item_hashes.put(item, head, 1)
            key = head.copy()
            key.update(tail)
            out.append(key.hexdigest())
        return out

    def _through(
        self, method: str, items: Sequence[str], compute: Callable[[list[str]], list[np.ndarray]],
        **params: Any,
    ) -> list[np.ndarray]:
        keys = self._keys(method, items, **params)
        found = self.cache.get_many(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        todo_items = list(dict.fromkeys(items[i] for i in todo))
        # computed and stored a part at a time, so that an interruption keeps every part done
        # and the same command resumes from it
        for start in range(0, len(todo_items), COMMIT_ITEMS):
            part = todo_items[start:start + COMMIT_ITEMS]
            fresh = compute(part)
            _COMPUTED[0] += len(part)
            new = dict(zip(self._keys(method, part, **params), fresh, strict=True))
            self.cache.put_many(new)
            found.update(new)
        return [found[k] for k in keys]

    @staticmethod
    def _layer(layer: object) -> Layer:
        """The layer as a plain ``int`` or name (``np.int64(2)`` keys like ``2``)."""
        checked = check_layer(layer)
        return checked if isinstance(checked, str) else int(checked)

    # -- cached methods --------------------------------------------------------------------------
    def _compute(self, method: str, items: list[Any], params: dict[str, Any]) -> list[np.ndarray]:
        """The missing items' arrays: on the remote workers when there are some, else here."""
        if self.remote is not None:
            return self.remote(method, items, params)
        return compute_items(self.adapter, method, items, params)

    def _rows(self, method: str, items: Sequence[str], **params: Any) -> list[np.ndarray]:
        return self._through(method, list(items),
                             lambda todo: self._compute(method, todo, params), **params)

    def _stack(self, rows: list[np.ndarray]) -> NDArray[np.floating]:
        return np.stack(rows) if rows else np.empty((0, self.dim), dtype=np.float32)

    def word_vectors(self, words: Sequence[str]) -> NDArray[np.floating]:
        """Word vectors through the cache."""
        return self._stack(self._rows("word_vectors", words))

    # represents, tokenize and word_tokens are cheap: they pass through __getattr__, so that a
    # wrapped model without them (an open-vocabulary sentence encoder) has none here either

    def text_vectors(self, texts: Sequence[str]) -> NDArray[np.floating]:
        """A sentence encoder's text vectors through the cache."""
        return self._stack(self._rows("text_vectors", texts))

    def token_vectors(
        self, texts: Sequence[str], *, layer: Layer = "last", special_tokens: bool = False,
        words: bool = False,
    ) -> TokenBatch:
        """Token vectors through the cache, one entry per text."""
        rows = self._rows("token_vectors", texts, layer=self._layer(layer),
                          special_tokens=bool(special_tokens), words=bool(words))
        return TokenBatch.from_list(rows, self.dim)

    def special_states(
        self, texts: Sequence[str], state: str, *, layer: Layer = "last"
    ) -> NDArray[np.floating]:
        """Special states through the cache."""
        return self._stack(self._rows("special_states", texts, state=str(state),
                                      layer=self._layer(layer)))

    def prefix_vectors(
        self, text: str, prefix_lengths: Sequence[int], pooling: str, *, layer: Layer = "last"
    ) -> NDArray[np.floating]:
        """Prefix vectors through the cache (one entry per text and length grid)."""
        return self.prefix_vectors_many([text], [prefix_lengths], pooling, layer=layer,
                                        also=())[0]

    def expect_poolings(self, poolings: Sequence[str]) -> None:
        """The prefix poolings the audit will ask for: each :meth:`prefix_vectors_many` computes
        and stores them all with the one asked for."""
        self._expected_poolings = tuple(str(p) for p in poolings)

    def prefix_vectors_many(
        self, texts: Sequence[str], prefix_lengths: Sequence[Sequence[int]], pooling: str, *,
        layer: Layer = "last", also: Sequence[str] | None = None,
    ) -> list[NDArray[np.floating]]:
        """``prefix_vectors`` of several texts through the cache, the missing ones computed in
        one batch. ``also``: other poolings of the same prefixes to compute and store with them
        (one forward pass serves them all; on remote workers, one job); by default those of
        :meth:`expect_poolings`."""
        if also is None:
            also = self._expected_poolings
        texts, grids = list(texts), [[int(n) for n in g] for g in prefix_lengths]
        if len(texts) != len(grids):
            raise NormtestError(
                f"{len(texts)} texts but {len(grids)} prefix-length lists; give one list per text"
            )
        layer = self._layer(layer)
        poolings = list(dict.fromkeys([str(pooling), *map(str, also)]))
        keys = {p: [self._key("prefix_vectors", t, lengths=g, pooling=p, layer=layer)
                    for t, g in zip(texts, grids, strict=True)] for p in poolings}
        found = self.cache.get_many([k for p in poolings for k in keys[p]])
        todo = [i for i in range(len(texts)) if any(keys[p][i] not in found for p in poolings)]
        if todo:  # every pooling of the texts that lack one, in one batch
            fresh = self._compute("prefix_vectors", [(texts[i], grids[i]) for i in todo],
                                  {"poolings": poolings, "layer": layer})
            _COMPUTED[0] += len(todo)
            new = {keys[p][i]: np.asarray(stacked[j]) for i, stacked in zip(todo, fresh,
                                                                            strict=True)
                   for j, p in enumerate(poolings)}
            self.cache.put_many(new)
            found.update(new)
        return [found[k] for k in keys[str(pooling)]]

    def token_logprobs(self, texts: Sequence[str]) -> list[NDArray[np.floating]]:
        """Per-token log-probabilities through the cache."""
        return self._rows("token_logprobs", texts)
