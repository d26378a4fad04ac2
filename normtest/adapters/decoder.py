"""The decoder adapter: a causal language model (LLaMA family) read with ``AutoModelForCausalLM``.

:class:`DecoderAdapter` (LLaMA, SmolLM2, GPT-2, …; the embedded ``smollm2-135m`` via
:meth:`DecoderAdapter.smollm2_135m`) runs every text as ``start t_1 … t_n``: ``start_token_id``
is prepended as the start of context (the pretraining document separator, ``<|endoftext|>`` =
id 0 for SmolLM2, never its chat ``bos``), so the first token has a log-probability and no text
token sits at position 0, where LLaMA-style models park their attention sink. Token vectors,
``last``, compositions, ``eos`` and log-probabilities all share that context. ``eos`` is the
state of ``end_token_id`` appended after the text (``start t_1 … t_n end``); ``last`` is the
state of ``t_n``. ``special_tokens=True`` adds the rows of the start and end tokens (the last row
is then the ``eos`` state). Pass ``start_token_id=None`` to run texts without a start token (then
``token_logprobs`` is not offered) and ``end_token_id=None`` to drop ``eos``.

Prefixes: a decoder is causal, so one forward pass per text serves every prefix: it runs
``start t_1 … t_n`` followed by one end token per prefix length L, each at position L + 1 and,
under a block attention mask, seeing only ``start t_1 … t_L`` and itself (``eos``); ``last`` and
the compositions pool the text tokens' states (``sum``/``mean``/``sqrt_n`` by cumulative sums).
This equals one pass per prefix up to float32 rounding (max |Δ| below 1e-4 on SmolLM2's final
states); a model whose attention ignores the mask or the position ids is detected once on a probe
text and falls back to one pass per prefix, as does a text longer than the model's sliding
attention window (Gemma 3: 512 tokens), which a custom mask would ignore. The shared conventions
(words, layers, batches, revision, the prefix memo, ``fast=False``) are in
:mod:`normtest.adapters.transformers_base`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any, Literal, cast

import numpy as np
from numpy.typing import NDArray

from normtest.adapters.embedded import SMOLLM2_DOCUMENT_SEPARATOR, smollm2_folder
from normtest.adapters.protocol import Capability, Layer, check_layer
from normtest.adapters.transformers_base import (
    _PROBE_TEXT,
    DEFAULT_MAX_TOKENS_PER_BATCH,
    FloatRows,
    _grid,
)
from normtest.adapters.transformers_batches import _BatchedAdapter
from normtest.errors import NormtestError
from normtest.geometry.compose import compose_segments

# isort: split
# torch after transformers_base, whose import turns its absence into the install hint
import torch

__all__ = ["DecoderAdapter"]

log = logging.getLogger(__name__)

#: Upper bound on logits held at once by ``token_logprobs`` (elements; 2**27 float32 = 512 MiB).
_LOGIT_ELEMENTS = 1 << 27
#: Largest relative row error between the one-pass and per-prefix decoder paths on the probe
#: text before the one-pass path is judged unsupported by the model (float32; half precision 5e-2).
_ONE_PASS_TOLERANCE = {torch.float32: 1e-3}
_ONE_PASS_HALF_TOLERANCE = 5e-2

Auto = Literal["auto"]


class DecoderAdapter(_BatchedAdapter):
    """A causal language model (LLaMA, SmolLM2, GPT-2…) read with ``AutoModelForCausalLM``.

    Every text runs as ``start t_1 … t_n`` (see the module doc). ``start_token_id`` and
    ``end_token_id`` default ("auto") to the tokenizer's bos (else eos) and eos tokens; pass the
    ids explicitly for models whose bos is a chat token (SmolLM2: both 0), or None to go without.
    Other options as for :class:`~normtest.adapters.encoder.EncoderAdapter`.
    """

    _auto_class = "AutoModelForCausalLM"

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        name: str | None = None,
        device: str | torch.device = "cpu",
        dtype: str | torch.dtype = "float32",
        max_tokens_per_batch: int = DEFAULT_MAX_TOKENS_PER_BATCH,
        max_padding: float = 0.0,
        progress: bool = True,
        allow_network: bool = False,
        word_prefix: str | None = None,
        start_token_id: int | Auto | None = "auto",
        end_token_id: int | Auto | None = "auto",
        fast: bool = True,
        trust_remote_code: bool = False,
    ) -> None:
        """Load the decoder and its tokenizer from a folder (or a hub id with allow_network)."""
        self._start_option: int | Auto | None = start_token_id
        self._end_option: int | Auto | None = end_token_id
        super().__init__(model, name=name, device=device, dtype=dtype,
                         max_tokens_per_batch=max_tokens_per_batch, max_padding=max_padding,
                         progress=progress, allow_network=allow_network, word_prefix=word_prefix,
                         fast=fast, trust_remote_code=trust_remote_code)

    def _configure(self, options: dict[str, Any]) -> None:
        """Apply the run options, including the start and end tokens."""
        options = {"start_token_id": self._start_option, "end_token_id": self._end_option,
                   **options}
        tok = self._tokenizer
        default_start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        start = self._token_option("start_token_id", options["start_token_id"], default_start)
        end = self._token_option("end_token_id", options["end_token_id"], tok.eos_token_id)
        super()._configure(options)
        self._start, self._end = start, end

    @classmethod
    def smollm2_135m(
        cls, cache_dir: str | os.PathLike[str] | None = None, **options: Any
    ) -> DecoderAdapter:
        """The embedded ``smollm2-135m`` model (float32 copy, built once from the GGUF file)."""
        options.setdefault("name", "smollm2-135m")
        options.setdefault("start_token_id", SMOLLM2_DOCUMENT_SEPARATOR)
        options.setdefault("end_token_id", SMOLLM2_DOCUMENT_SEPARATOR)
        return cls(smollm2_folder(cache_dir), **options)

    def _token_option(self, what: str, value: object, default: object) -> int | None:
        """Validate a start/end token id option ("auto", None or an id in the vocabulary)."""
        if value == "auto":
            value = default
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                or not 0 <= int(value) < self._vocab_size:
            raise NormtestError(
                f"{what} must be a token id in 0..{self._vocab_size - 1}, None or 'auto'; "
                f"got {value!r}"
            )
        return int(value)

    def _revision_extras(self) -> list[str]:
        return [f"start={self._start}", f"end={self._end}"]

    @property
    def start_token_id(self) -> int | None:
        """Token prepended as the start of context (None: none)."""
        return self._start

    @property
    def end_token_id(self) -> int | None:
        """Token appended after a text for the ``eos`` state (None: no ``eos``)."""
        return self._end

    @property
    def states(self) -> tuple[str, ...]:
        """("eos", "last"), or ("last",) without an end token."""
        return ("eos", "last") if self._end is not None else ("last",)

    @property
    def capabilities(self) -> frozenset[Capability]:
        """Encoder capabilities plus token log-probabilities (which need a start token)."""
        caps = set(super().capabilities)
        if self._start is not None:
            caps.add(Capability.TOKEN_LOGPROBS)
        return frozenset(caps)

    def _base_model(self) -> Any:
        return self._model.base_model

    @property
    def _context(self) -> list[int]:
        """The tokens before a text: [start] or nothing."""
        return [] if self._start is None else [self._start]

    def _wrap(self, ids: list[int]) -> tuple[list[int], int]:
        return [*self._context, *ids], len(self._context)

    def _wrap_full(self, ids: list[int]) -> list[int]:
        end = [] if self._end is None else [self._end]
        return [*self._context, *ids, *end]

    def _state_sequence(self, ids: list[int], state: str) -> tuple[list[int], int]:
        seq = self._wrap_full(ids) if state == "eos" else self._wrap(ids)[0]
        return seq, len(seq) - 1

    def _layout(self, special_tokens: bool) -> tuple[list[int], list[int]]:
        end = [self._end] if special_tokens and self._end is not None else []
        return self._context, end

    def prefix_vectors(
        self, text: str, prefix_lengths: Sequence[int], pooling: str, *, layer: Layer = "last"
    ) -> NDArray[np.floating]:
        """One vector per prefix, every pooling from one forward pass over the text.

        The pass runs ``start t_1 … t_n end … end``: one end token per prefix length L, at
        position L + 1 (as if appended after t_L), under a block attention mask that lets it see
        only ``start t_1 … t_L`` and itself, while the text tokens see only earlier text tokens.
        ``last`` and the compositions come from the text tokens' states (``sum``/``mean``/
        ``sqrt_n`` by cumulative sums), ``eos`` from the end tokens. The states are kept
        (``clear_prefix_memo``), so another pooling of the same text and lengths runs no model.
        Models whose attention does not honour a custom mask and position ids (checked once on a
        probe text) fall back to one pass per prefix, as does ``fast=False``.
        """
        setup = self._prefix_setup(text, prefix_lengths, pooling, layer)
        return self._prefix_many([setup], pooling, layer)[0]

    def _prefix_many(
        self, setups: Sequence[tuple[list[int], list[int]]], pooling: str, layer: Layer
    ) -> list[NDArray[np.floating]]:
        """One forward pass per document (see ``prefix_vectors``)."""
        out: list[NDArray[np.floating]] = []
        for ids, lengths in setups:
            if not lengths:
                out.append(np.empty((0, self._dim), dtype=np.float32))
            elif not self._fast or check_layer(layer) == "input" \
                    or not self._one_pass_supported() or not self._within_window(max(lengths)):
                out.append(self._prefix_vectors_simple(ids, lengths, pooling, layer))
            else:
                out.append(self._prefix_vectors_one_pass(ids, lengths, pooling, layer))
        return out

    def _prefix_vectors_one_pass(
        self, ids: list[int], lengths: list[int], pooling: str, layer: Layer, memo: bool = True
    ) -> NDArray[np.float32]:
        grid = _grid(lengths)
        key = self._memo_key("decoder", ids, grid, layer)
        found = self._memo.get(key) if memo else None
        if found is None:
            found = self._one_pass_states(ids, grid, layer)
            if memo:
                self._memo.put(key, found, sum(a.nbytes for a in found if a is not None))
        text_states, eos_states = found
        if pooling == "eos":
            assert eos_states is not None
            return np.ascontiguousarray(eos_states[np.searchsorted(grid, lengths)])
        return self._pool_causal(text_states, lengths, pooling)

    def _one_pass_states(
        self, ids: list[int], grid: tuple[int, ...], layer: Layer
    ) -> tuple[FloatRows, FloatRows | None]:
        """(states of t_1 … t_longest, the ``eos`` state after each prefix of ``grid``).

        End tokens that do not fit beside the text in ``max_tokens_per_batch`` go to further
        passes, each over the text up to its longest prefix.
        """
        chosen = check_layer(layer, self._n_layers)
        context = np.asarray(self._context, dtype=np.int64)
        c, longest = context.size, grid[-1]
        self._check_sizes(np.array([c + longest + (self._end is not None)], dtype=np.intp))
        text = np.concatenate([context, np.asarray(ids[:longest], dtype=np.int64)])
        if self._end is None:
            states = self._masked_pass(text, np.arange(text.size), np.tri(text.size, dtype=bool),
                                       chosen)
            return states[c:], None
        chunks: list[list[int]] = [[]]
        for n in grid:
            if chunks[-1] and c + n + len(chunks[-1]) + 1 > self._max_tokens:
                chunks.append([])
            chunks[-1].append(n)
        eos_parts, states = [], np.empty((0, self._dim), dtype=np.float32)
        for chunk in chunks:
            n_text, m = c + chunk[-1], len(chunk)
            ends = np.asarray(chunk, dtype=np.int64)
            tokens = np.concatenate([text[:n_text], np.full(m, self._end, dtype=np.int64)])
            positions = np.concatenate([np.arange(n_text), c + ends])
            allowed = np.zeros((n_text + m, n_text + m), dtype=bool)
            allowed[:n_text, :n_text] = np.tri(n_text, dtype=bool)
            allowed[n_text:, :n_text] = np.arange(n_text)[None, :] < (c + ends)[:, None]
            allowed[np.arange(n_text, n_text + m), np.arange(n_text, n_text + m)] = True
            states = self._masked_pass(tokens, positions, allowed, chosen)
            eos_parts.append(states[n_text:])
        return np.ascontiguousarray(states[c:c + longest]), np.concatenate(eos_parts)

    def _masked_pass(
        self, tokens: NDArray[np.int64], positions: NDArray[np.int64], allowed: NDArray[np.bool_],
        chosen: Layer,
    ) -> FloatRows:
        """States of one sequence run with explicit position ids and a (T, T) attention mask."""
        mask = torch.zeros((1, 1, *allowed.shape), dtype=self._dtype, device=self._device)
        blocked = torch.from_numpy(~allowed).to(self._device)[None, None]
        mask.masked_fill_(blocked, torch.finfo(self._dtype).min)
        with torch.inference_mode():
            hidden = self._hidden(
                chosen, input_ids=torch.from_numpy(tokens[None]).to(self._device),
                position_ids=torch.from_numpy(np.asarray(positions, dtype=np.int64)[None])
                .to(self._device),
                attention_mask=mask, use_cache=False,
            )
            rows: FloatRows = hidden[0].float().cpu().numpy()
        return rows

    def _pool_causal(
        self, states: FloatRows, lengths: list[int], pooling: str
    ) -> NDArray[np.float32]:
        """Pool the first L causal token states for every L: sums by cumulative sums."""
        n = np.asarray(lengths, dtype=np.intp)
        if pooling == "last":
            return np.ascontiguousarray(states[n - 1])
        if pooling == "first":
            return np.repeat(states[:1], n.size, axis=0)
        if pooling in ("sum", "mean", "sqrt_n"):
            if not np.isfinite(states).all():
                raise NormtestError(
                    f"{self._name} produced NaN or infinite states for this text; check the "
                    "model's dtype (float16 overflows) and weights"
                )
            sums = np.cumsum(states, axis=0, dtype=np.float64)[n - 1]
            scale = {"sum": np.ones(n.size), "mean": n.astype(np.float64),
                     "sqrt_n": np.sqrt(n)}[pooling]
            return (sums / scale[:, None]).astype(np.float32)
        # prefix L is rows 0..L-1: segments that share their rows, composed where they stand
        return compose_segments(np.asarray(states), np.zeros(n.size, dtype=np.intp), n,
                                pooling).astype(np.float32)

    def _within_window(self, longest: int) -> bool:
        """Whether a one-pass sequence for prefixes up to ``longest`` tokens fits the model's
        sliding attention window (Gemma 3: 512), which a custom attention mask would ignore."""
        window = getattr(self._config, "sliding_window", None)
        if not isinstance(window, int) or isinstance(window, bool) or window <= 0 \
                or getattr(self._config, "use_sliding_window", True) is False:
            return True
        return len(self._context) + longest + 1 <= window

    def _one_pass_supported(self) -> bool:
        """Whether the one-pass prefix states equal per-prefix passes on a probe text (once)."""
        if self._one_pass_ok is None:
            self._one_pass_ok = self._probe_one_pass()
        return self._one_pass_ok

    def _probe_one_pass(self) -> bool:
        ids = self._ids(_PROBE_TEXT)
        lengths = sorted({1, max(1, len(ids) // 2), len(ids)})
        tolerance = _ONE_PASS_TOLERANCE.get(self._dtype, _ONE_PASS_HALF_TOLERANCE)
        poolings = ("last", "eos") if self._end is not None else ("last",)
        try:
            worst = 0.0
            for pooling in poolings:
                fast = self._prefix_vectors_one_pass(ids, lengths, pooling, "last", memo=False)
                simple = self._prefix_vectors_simple(ids, lengths, pooling, "last")
                scale = np.maximum(np.linalg.norm(simple, axis=1), 1e-30)
                worst = max(worst, float((np.linalg.norm(fast - simple, axis=1) / scale).max()))
        except Exception as exc:  # any model that rejects a 4D mask or position ids
            log.warning("normtest: %s cannot run prefixes in one pass (%s: %s); running one "
                        "pass per prefix", self._name, type(exc).__name__, exc)
            return False
        if not worst <= tolerance:
            log.warning("normtest: %s's one-pass prefix states differ from separate passes "
                        "(relative %.3g > %.3g); running one pass per prefix", self._name,
                        worst, tolerance)
            return False
        return True

    def _prefix_vectors_simple(
        self, ids: list[int], lengths: list[int], pooling: str, layer: Layer
    ) -> NDArray[np.floating]:
        """The reference path: one forward pass per prefix, for every pooling."""
        if pooling == "eos":
            pairs = [self._state_sequence(ids[:n], "eos") for n in lengths]
            rows = self._run_states([p[0] for p in pairs], layer,
                                    [slice(p[1], p[1] + 1) for p in pairs], "eos prefixes")
            return np.concatenate(rows)
        seqs, keep = [], []
        for n in lengths:
            seq, first = self._wrap(ids[:n])
            seqs.append(seq)
            keep.append(slice(first, first + n))
        token_rows = self._run_states(seqs, layer, keep, "prefixes")
        if pooling == "last":
            return np.stack([rows[-1] for rows in token_rows])
        return self._compose_prefixes(token_rows, pooling)

    def token_logprobs(self, texts: Sequence[str]) -> list[NDArray[np.floating]]:
        """log P(t_i | start, t_<i) for every token of each text (float64)."""
        if self._start is None:
            raise NormtestError(
                f"{self._name} has no start token, so the first token has no context; "
                "pass start_token_id (the model's document separator) to score every token"
            )
        id_lists = self._item_ids(texts, words=False)
        seqs = [[self._start, *ids[:-1]] for ids in id_lists]
        self._check_lengths(seqs)
        lengths = [len(s) for s in seqs]
        budget = min(self._max_tokens, max(1, _LOGIT_ELEMENTS // self._vocab_size))
        batches = self._batches(lengths, budget)
        results: list[NDArray[np.float64] | None] = [None] * len(seqs)
        with self._progress_bar(sum(lengths), len(batches), "log-probs") as bar, \
                torch.inference_mode():
            for batch in batches:
                ids, mask = self._padded([seqs[i] for i in batch])
                logits = self._model(input_ids=ids, attention_mask=mask).logits
                for row, i in enumerate(batch):
                    results[i] = self._logprobs(logits[row, :lengths[i]], id_lists[i])
                bar.update(sum(lengths[i] for i in batch))
        return [cast(NDArray[np.float64], r) for r in results]

    @staticmethod
    def _logprobs(logits: torch.Tensor, targets: list[int]) -> NDArray[np.float64]:
        """log_softmax in float64 of each row, read at the target id (row chunks bound memory)."""
        target = torch.tensor(targets, dtype=torch.long, device=logits.device)
        parts = []
        for a in range(0, len(targets), 512):
            block = torch.log_softmax(logits[a:a + 512].double(), dim=-1)
            parts.append(block.gather(1, target[a:a + 512, None])[:, 0])
        return torch.cat(parts).cpu().numpy()
