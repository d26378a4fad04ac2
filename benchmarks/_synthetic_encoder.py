"""A synthetic encoder of any dimension: MiniLM's tokenizer and adapter, no forward pass.

:class:`SyntheticEncoder` is :class:`~normtest.adapters.encoder.EncoderAdapter` on the embedded
``minilm-l6`` folder (its real WordPiece tokenizer, its ``[CLS] … [SEP]`` wrapping, its batches,
prefix memo and protocol methods, so an audit asks it for exactly what it asks MiniLM for) with
the model's forward pass replaced by a cheap deterministic one of dimension ``dim``:

* each token id has a row of a float32 table, drawn on first use from a generator seeded by
  (seed, id) (standard normal, scaled so that the norm grows mildly with the id), so the table
  holds only the ids an audit meets;
* the state at position t is the token's row plus half the running mean of the rows at
  positions 0 … t (a context term: a prefix's states differ from the whole text's);
* the state at position 0 (``[CLS]``) is its row plus the mean of the whole sequence's rows;
* a hidden layer k scales the context term by k / L; ``"input"`` is the table's rows alone;
* ``states="nonlinear"`` (the default) then passes each hidden state through x ↦ x + ½·tanh(x·√d)
  / √d, a nonlinearity of the states' own scale, as a real network's layers are nonlinear.
  ``states="linear"`` leaves them linear in the token rows: the word vectors of a sample then
  satisfy exact linear relations (words built of the same tokens), left only as float32 rounding,
  which a whitening fit of float64 vectors keeps as directions of condition number about 1e10 —
  a spectrum no real model's vectors have, which sends every whitening fit to the SVD
  (docs/performance.md).

The weights of MiniLM are never read. ``seconds``, ``calls`` and ``tokens`` count the time
spent making states (:meth:`_hidden` and :meth:`_embedding_rows`: the synthetic "forward
passes"), their calls and the token positions they made.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from normtest.adapters.encoder import EncoderAdapter
from normtest.adapters.protocol import Layer

__all__ = ["SyntheticEncoder"]


class SyntheticEncoder(EncoderAdapter):
    """MiniLM's tokenizer and encoder adapter with synthetic states of dimension ``dim``."""

    def __init__(self, dim: int, seed: int = 0, states: str = "nonlinear",
                 **options: Any) -> None:
        from normtest.adapters.embedded import minilm_folder

        options.setdefault("name", f"synthetic-{dim}d")
        options.setdefault("progress", False)
        super().__init__(minilm_folder(), **options)
        self._dim = int(dim)
        self._seed = int(seed)
        if states not in ("nonlinear", "linear"):
            raise ValueError(f"states must be 'nonlinear' or 'linear', got {states!r}")
        self._states = states
        self._table = np.zeros((self._vocab_size, self._dim), dtype=np.float32)
        self._filled = np.zeros(self._vocab_size, dtype=bool)
        #: seconds and calls spent making synthetic states (the "forward passes")
        self.seconds = 0.0
        self.calls = 0
        #: token positions made (what a real model's forward passes would have run)
        self.tokens = 0

    @property
    def revision(self) -> str:
        """The generating parameters (never the MiniLM files' hash: no weights are read)."""
        states = ":nonlinear" if self._states == "nonlinear" else ""  # linear: as before
        return f"synthetic:minilm-tokenizer:dim={self._dim}:seed={self._seed}{states}"

    def _rows(self, ids: NDArray[np.int64]) -> NDArray[np.float32]:
        """Table rows of ``ids`` (any shape), drawing the rows of ids not met before."""
        new = np.unique(ids[~self._filled[ids]])
        scale = 1.0 / np.sqrt(self._dim)
        for i in new.tolist():
            rng = np.random.default_rng([self._seed, int(i)])
            row = rng.standard_normal(self._dim, dtype=np.float32)
            row *= np.float32(scale * (1.0 + 0.1 * np.log1p(i)))
            self._table[i] = row
        self._filled[new] = True
        return np.take(self._table, ids, axis=0)  # (much faster than table[ids])

    def _hidden(self, chosen: Layer, **inputs: Any) -> Any:
        """States of a batch: row + ½·(running mean of rows), [CLS] + mean of the sequence."""
        import torch

        start = time.perf_counter()
        ids = inputs["input_ids"].cpu().numpy()
        mask = inputs["attention_mask"].cpu().numpy().astype(np.float32)
        rows = self._rows(ids)
        if not mask.all():  # padded positions hold nothing (batches are of one length)
            rows *= mask[..., None]
        if chosen == "input":
            out = rows
        else:
            weight = 0.5 if chosen == "last" else 0.5 * int(chosen) / self._n_layers
            counts = np.maximum(np.cumsum(mask, axis=1), 1.0)
            out = np.empty_like(rows)  # running sums (a loop over positions: np.cumsum
            out[:, 0] = rows[:, 0]     # along axis 1 is ten times slower), then means
            for k in range(1, rows.shape[1]):
                np.add(out[:, k - 1], rows[:, k], out=out[:, k])
            whole = out[:, -1] / counts[:, -1:]
            out *= (np.float32(weight) / counts)[..., None]
            out += rows
            out[:, 0] = rows[:, 0] + whole
            if self._states == "nonlinear":
                root = np.float32(np.sqrt(self._dim))
                out += np.tanh(out * root) * (np.float32(0.5) / root)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        self.tokens += int(ids.size)
        return torch.from_numpy(out)

    def _embedding_rows(self, ids: NDArray[np.int64]) -> NDArray[np.float32]:
        """The table's rows (``layer="input"``: no context)."""
        start = time.perf_counter()
        rows = self._rows(np.asarray(ids, dtype=np.int64))
        self.seconds += time.perf_counter() - start
        self.calls += 1
        self.tokens += int(np.size(ids))
        return rows
