"""Every layer of a layer profile from the same forward passes.

A forward pass with ``output_hidden_states=True`` returns every hidden layer at once, but the
protocol asks for one ``layer`` per call, and a layer profile (``--layers``) asks for each layer
in turn with the same inputs. :class:`LayerStash` sits where a transformers adapter runs its
model: told which layers will be asked for (:meth:`LayerStash.keep`), a pass for one of them
keeps the others, keyed by the pass's exact inputs, and the next call for another layer with the
same inputs reads them instead of running the model. The calls of one audit repeat their
batches exactly (batching is a function of the items' lengths), so each batch runs once.

The kept states are bounded in bytes (the oldest dropped first; each is dropped once read); a
dropped or never-kept pass simply runs again, with the same result. One audit at a time uses an
adapter's stash (it is not shared between threads).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import torch

from normtest.adapters.protocol import Layer

#: Bytes of hidden states kept between calls (on the CPU): a SmolLM2-135M profile of the
#: default audit (31 layers of words, prefixes and sentences) keeps about 3 GiB at its peak.
STASH_BYTES = 6 << 30


def _digest(inputs: dict[str, Any]) -> bytes:
    """A key for a pass's exact inputs: each argument's name, and its tensor's shape, dtype and
    values (ids, masks, positions) or its plain value (``use_cache=False``)."""
    h = hashlib.blake2b(digest_size=16)
    for name in sorted(inputs):
        value = inputs[name]
        h.update(name.encode())
        if isinstance(value, torch.Tensor):
            h.update(str((tuple(value.shape), value.dtype)).encode())
            h.update(value.detach().cpu().contiguous().numpy().tobytes())
        else:
            h.update(repr(value).encode())
    return h.digest()


class LayerStash:
    """Hidden states of the layers a profile will ask for, kept from each forward pass."""

    def __init__(self, limit: int = STASH_BYTES) -> None:
        self.limit = limit
        self.layers: frozenset[Layer] = frozenset()
        self._items: dict[Hashable, tuple[torch.Tensor, int]] = {}
        self._bytes = 0
        #: forward passes run and passes served from the stash (for the cost measurement)
        self.passes = 0
        self.served = 0

    def keep(self, layers: Sequence[Layer]) -> None:
        """Keep these layers (ints and ``"last"``) from every pass from now on; ``()`` stops."""
        self.layers = frozenset(layers)
        if not self.layers:
            self.clear()

    def clear(self) -> None:
        self._items.clear()
        self._bytes = 0

    def run(self, forward: Callable[..., Any], chosen: Layer, **inputs: Any) -> torch.Tensor:
        """The ``chosen`` hidden states of ``forward(**inputs)``: from the stash when a pass with
        these inputs kept them, else from a pass that keeps the profile's other layers."""
        key = None
        if chosen in self.layers:
            key = _digest(inputs)
            found = self._items.pop((key, chosen), None)
            if found is not None:
                self._bytes -= found[1]  # each layer of a pass is read once
                self.served += 1
                device = next(v.device for v in inputs.values() if isinstance(v, torch.Tensor))
                return found[0].to(device)
        self.passes += 1
        out = forward(**inputs, output_hidden_states=isinstance(chosen, int) or key is not None)
        if key is not None:
            for layer in self.layers - {chosen}:
                state = out.last_hidden_state if layer == "last" else out.hidden_states[layer]
                self._put((key, layer), state.detach().to("cpu"))
        return out.hidden_states[chosen] if isinstance(chosen, int) else out.last_hidden_state

    def _put(self, key: Hashable, state: torch.Tensor) -> None:
        size = state.numel() * state.element_size()
        if size > self.limit:
            return
        self._items[key] = (state, size)
        self._bytes += size
        while self._bytes > self.limit:
            self._bytes -= self._items.pop(next(iter(self._items)))[1]
