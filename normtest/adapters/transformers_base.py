"""What the transformers adapters share: loading, options, identity and tokenisation.

:class:`~normtest.adapters.encoder.EncoderAdapter` wraps an ``AutoModel`` (BERT, RoBERTa,
ModernBERT, MiniLM, …) and :class:`~normtest.adapters.decoder.DecoderAdapter` an
``AutoModelForCausalLM`` (LLaMA, SmolLM2, GPT-2, …), both read from a local folder saved with
``save_pretrained`` (config.json, weights, tokenizer). A hub id is loaded only with
``allow_network=True``; offline it raises :class:`~normtest.errors.NormtestError`. Both speak
:mod:`normtest.adapters.protocol`. This module holds what they share: the guard that turns a missing
torch or transformers into the install hint, reading a model (``trust_remote_code`` is always
passed, so transformers never asks on standard input; a folder that names its own Python code is
refused unless trusted, see :mod:`normtest.adapters.transformers_folder`), the dtype and device
helpers, the weights read on first use (``_LazyModel``), transformers' progress bars, the prefix
memo, and ``_TransformersAdapter`` (options and ``variant``, identity and revision, tokenisation).
Running the model in batches and the protocol methods built on it are in
:mod:`normtest.adapters.transformers_batches`, what differs in :mod:`normtest.adapters.encoder` and
:mod:`normtest.adapters.decoder`, and the embedded models in :mod:`normtest.adapters.embedded`.

Conventions
-----------

* **Words** (``word_tokens``, ``token_vectors(words=True)``): a word is tokenised as it stands in
  running text. WordPiece/BERT tokenizers ignore the space before a word, so the word is taken as
  is (``unbelievably`` → ``un ##bel ##ie ##va ##bly``). Byte-level BPE (GPT-2, LLaMA-3, SmolLM2,
  RoBERTa) spells a word after a space differently (``Ġcat``), so the word gets a leading space
  (``" cat"``). The choice is detected from the tokenizer (a leading space changes the ids but
  not their number) and can be forced with ``word_prefix=``.
* **Texts** run the way the model is used: encoders wrapped in their special tokens, decoders
  after a start-of-context token (the module docs of :mod:`~normtest.adapters.encoder` and
  :mod:`~normtest.adapters.decoder` say how, and how each runs prefixes).
* **Prefixes** are counted in the text's model tokens (1 … n). A text's prefix states are kept
  between calls (``clear_prefix_memo``; 256 MiB at most), so the audit's many poolings of one
  text run the model once. ``fast=False`` selects the reference paths (one pass per prefix;
  per-item tokenisation and lists for token vectors) that the tests and benchmarks compare with.
* **Layers**: ``"input"`` is the rows of the input embedding matrix (context-free, no forward
  pass), an integer k is ``hidden_states[k]`` (0 = embedding output, 1 … L = blocks), ``"last"``
  is the model's final hidden state (``last_hidden_state``, equal to ``hidden_states[L]``).
* **Batches** are sorted by length, padded on the right with an attention mask, and cut so that
  (rows × longest length) stays under ``max_tokens_per_batch``; results come back in the caller's
  order. Word and text lists are tokenised in one tokenizer call, and the id matrices and the
  rows kept are built with numpy (no per-item Python work besides the tokenizer's). By default
  (``max_padding=0``) a batch holds sequences of one length only: padding is exact in arithmetic
  but changes float32 summation order (SmolLM2: up to ~2e-4 on states of size ~30), so without
  it a text's vectors equal a separate forward pass bit for bit on CPU, and word lists (few
  distinct lengths) still batch fully. ``max_padding=f`` lets a sequence join a batch
  whose longest is at most a fraction ``f`` longer (faster on GPUs for varied texts).
  Vectors are float32 numpy arrays, log-probabilities float64 (``log_softmax`` in float64).
* **Loading**: the tokenizer and config.json are read when the adapter is made, the weights on
  first use (``model``, or the first vector not already in the embedding cache), so an audit
  whose vectors all come from the cache never reads them.
* **dtype and device**: ``dtype="bfloat16"`` (or ``"float16"``) runs the model in that precision
  (vectors still come back as float32), ``device="cuda"`` on a GPU; the dtype is part of the
  revision, so a shared cache never mixes float32 and bfloat16 vectors.
* **Revision** (part of every cache key): SHA-256 over config.json, the tokenizer files and the
  weight files (``*.safetensors``, else ``pytorch_model*.bin``) of the folder, computed on first
  use and memoised (~0.3 s for MiniLM, ~1 s for SmolLM2's 540 MB float32 copy), plus the dtype,
  and for decoders the start and end token ids; a forced ``word_prefix`` is added too. A model
  read from the hub uses the commit hash instead.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import itertools
import os
import pickle
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Self

import numpy as np
from numpy.typing import NDArray

from normtest.adapters.protocol import Capability, Tokenization
from normtest.adapters.transformers_folder import (
    _identity_files,
    _refuse_custom_code,
    _resolve_source,
    refuse_other_family,
)
from normtest.base.byte_memo import ByteMemo
from normtest.base.progress import library_bars
from normtest.errors import NormtestError

try:
    import torch
    import transformers
except ImportError as _exc:  # pragma: no cover - exercised only without the models extra
    raise NormtestError(
        "the transformers adapters need torch and transformers: install torch==2.13.0 first, "
        "then pip install 'normtest[models]' (see docs/models.md)"
    ) from _exc

__all__ = ["DEFAULT_MAX_TOKENS_PER_BATCH"]

#: Probe text of the decoders' one-pass check and of the check of SmolLM2's float32 copy.
_PROBE_TEXT = "The cat sat on the mat and looked out of the window."

DEFAULT_MAX_TOKENS_PER_BATCH = 4096
#: Bytes of prefix states an adapter keeps between calls (one document's states serve every
#: pooling of that document: the audit asks for each composition in turn).
_MEMO_BYTES = 256 << 20
#: Texts whose leading token ids are kept, the least recently used dropped first.
_KEPT_TEXTS = 1024
_DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32, "fp32": torch.float32,
    "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
    "float16": torch.float16, "fp16": torch.float16, "half": torch.float16,
}
#: Read weights into memory: memory-mapped weights fault in page by page on first use and can be
#: evicted again, which made the first forward passes ~20x slower than later ones on test machines.
_NO_MMAP: dict[str, Any] = (
    {"disable_mmap": True}
    if "disable_mmap" in inspect.signature(transformers.PreTrainedModel.from_pretrained).parameters
    else {}
)

FloatRows = NDArray[np.float32]


def _torch_dtype(dtype: str | torch.dtype) -> torch.dtype:
    """Map "float32"/"bfloat16"/"float16" (or a torch dtype) to a torch dtype."""
    if isinstance(dtype, torch.dtype):
        if dtype in (torch.float32, torch.bfloat16, torch.float16):
            return dtype
    elif isinstance(dtype, str) and dtype.lower() in _DTYPES:
        return _DTYPES[dtype.lower()]
    raise NormtestError(f"dtype must be float32, bfloat16 or float16, got {dtype!r}")


def _dtype_name(dtype: torch.dtype) -> str:
    """"float32" for torch.float32, and so on."""
    return str(dtype).removeprefix("torch.")


def _torch_device(device: str | torch.device) -> torch.device:
    """Validate a device: "cpu", "cuda[:k]" (which must be available) or "auto" (CUDA where
    it is available, else the CPU)."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise NormtestError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {device!r}") from exc
    if dev.type not in ("cpu", "cuda"):
        raise NormtestError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {device!r}")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise NormtestError(f"device={str(device)!r} was asked for but CUDA is not available; "
                            "use 'cpu'")
    if dev.type == "cuda" and dev.index is not None \
            and dev.index >= (count := torch.cuda.device_count()):
        raise NormtestError(f"device={str(device)!r} was asked for but this machine has "
                            f"{count} CUDA device{'s' * (count != 1)} (cuda:0 … "
                            f"cuda:{count - 1}); use one of them, or 'cpu'")
    return dev


def _reasonable_limit(*values: object) -> int | None:
    """The smallest of the positive integer limits given (tokenizers use 1e30 for "none")."""
    limits = [int(v) for v in values if isinstance(v, int) and 0 < v < 10**9]
    return min(limits) if limits else None


@contextlib.contextmanager
def _transformers_progress(show: bool) -> Iterator[None]:
    """transformers' own progress bars ("Loading weights") only where ours would show."""

    with library_bars(show):
        yield


class _LazyModel:
    """A model read from disk on first use; an adapter's variants share one."""

    def __init__(self, load: Callable[[], Any]) -> None:
        self._load = load
        self._value: Any = None

    @property
    def loaded(self) -> bool:
        """Whether the weights have been read."""
        return self._value is not None

    def get(self) -> Any:
        """The model, read now if it has not been yet."""
        if self._value is None:
            self._value = self._load()
        return self._value


def _grid(lengths: Sequence[int]) -> tuple[int, ...]:
    """The distinct prefix lengths, ascending."""
    return tuple(sorted(set(lengths)))


class _TransformersAdapter:
    """What encoders and decoders share: loading, options, identity, tokenisation.

    Running the model and the protocol methods built on it:
    :class:`~normtest.adapters.transformers_batches._BatchedAdapter`.
    """

    _auto_class: str = "AutoModel"

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
        fast: bool = True,
        trust_remote_code: bool = False,
    ) -> None:
        if not isinstance(trust_remote_code, bool):
            raise NormtestError(
                f"trust_remote_code must be True or False, got {trust_remote_code!r}"
            )
        source, folder = _resolve_source(model, allow_network)
        if folder is not None and not trust_remote_code:
            _refuse_custom_code(folder)
        self._trust_remote_code = trust_remote_code
        self._source = source
        self._folder = folder
        self._dtype = _torch_dtype(dtype)
        self._device = _torch_device(device)
        local_only = not allow_network
        auto = getattr(transformers, self._auto_class)

        def cannot_load(exc: Exception) -> NormtestError:
            if isinstance(exc, pickle.UnpicklingError) or "Weights only load failed" in str(exc):
                return NormtestError(
                    f"{source}: the weights file holds pickled objects besides tensors, which "
                    "could run code when read, so torch.load(weights_only=True) refused it and "
                    "normtest will not read it. If you trust the file, convert it to "
                    "safetensors (load it yourself, then model.save_pretrained(folder)) and "
                    "audit that folder"
                )
            return NormtestError(
                f"cannot load a transformers model from {source}: {exc}. Check that the folder "
                "was written by save_pretrained (model and tokenizer) and that this transformers "
                "version knows its architecture"
            )

        # trust_remote_code is always passed: left unset, transformers asks on standard input
        # whether to run a folder's own Python code, and runs it on a "y"
        trust = {"trust_remote_code": trust_remote_code}
        try:
            self._tokenizer = transformers.AutoTokenizer.from_pretrained(
                source, local_files_only=local_only, **trust
            )
            config = transformers.AutoConfig.from_pretrained(
                source, local_files_only=local_only, **trust
            )
        except (OSError, ValueError, KeyError) as exc:
            raise cannot_load(exc) from exc
        # a causal-LM reading of a folder without a causal head (BERT) would add random weights
        refuse_other_family(config.to_dict(), "decoder" if self._auto_class ==
                            "AutoModelForCausalLM" else "encoder", source, strict=False)
        if folder is not None:
            _identity_files(folder)  # a folder without weights is refused now, not at first use

        def load() -> Any:
            try:
                with _transformers_progress(self._progress):
                    loaded = auto.from_pretrained(
                        source, dtype=self._dtype, local_files_only=local_only, **trust,
                        **_NO_MMAP,
                    )
            except (OSError, ValueError, KeyError, pickle.UnpicklingError) as exc:
                # UnpicklingError: a pytorch_model.bin that torch.load(weights_only=True)
                # refuses, because it holds more than tensors (code could run on unpickling)
                raise cannot_load(exc) from exc
            loaded.to(self._device)
            loaded.eval()
            return loaded

        # the weights are read on first use: a run whose vectors all come from the embedding
        # cache (a warm audit, the surprisal model of a re-run) never reads them
        self._weights = _LazyModel(load)
        self._config = config
        self._n_layers = int(config.num_hidden_layers)
        self._dim = int(config.hidden_size)
        vocab = getattr(config, "vocab_size", None)
        self._vocab_size = int(vocab) if isinstance(vocab, int) and vocab > 0 \
            else int(self._embedding.weight.shape[0])
        self._max_length = _reasonable_limit(
            getattr(self._tokenizer, "model_max_length", None),
            getattr(config, "max_position_embeddings", None),
        )
        pad = self._tokenizer.pad_token_id
        self._pad_id = int(pad) if isinstance(pad, int) and 0 <= pad < self._vocab_size else 0
        self._detected_word_prefix = self._detect_word_prefix()
        self._revision: str | None = None
        self._options: dict[str, Any] = {}
        self._configure({
            "name": name, "max_tokens_per_batch": max_tokens_per_batch,
            "max_padding": max_padding, "progress": progress, "word_prefix": word_prefix,
            "fast": fast,
        })

    def _configure(self, options: dict[str, Any]) -> None:
        """Validate and apply the run options (everything but source, device and dtype)."""
        max_tokens = options["max_tokens_per_batch"]
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise NormtestError(f"max_tokens_per_batch must be a positive int, got {max_tokens!r}")
        max_padding = options["max_padding"]
        if isinstance(max_padding, bool) or not isinstance(max_padding, (int, float)) \
                or not 0.0 <= max_padding <= 1.0:
            raise NormtestError(f"max_padding must be a fraction in [0, 1], got {max_padding!r}")
        word_prefix = options["word_prefix"]
        if word_prefix is not None and not isinstance(word_prefix, str):
            raise NormtestError(f"word_prefix must be a str or None, got {word_prefix!r}")
        if not isinstance(options["fast"], bool):
            raise NormtestError(f"fast must be True or False, got {options['fast']!r}")
        self._name = options["name"] or (
            self._folder.name if self._folder is not None else self._source
        )
        self._max_tokens = max_tokens
        self._max_padding = float(max_padding)
        self._progress = bool(options["progress"])
        detected = self._detected_word_prefix
        self._word_prefix = detected if word_prefix is None else word_prefix
        self._forced_word_prefix = word_prefix is not None and word_prefix != detected
        self._fast = options["fast"]
        self._memo = ByteMemo(_MEMO_BYTES)  # a document's prefix states, for every pooling
        #: the leading token ids of recent texts (``_leading_ids``), counted in texts
        self._text_ids = ByteMemo(_KEPT_TEXTS)
        self._one_pass_ok: bool | None = None
        self._options = dict(options)
        self._revision = None

    def variant(self, **changes: Any) -> Self:
        """A copy that shares the loaded model and tokenizer but runs with other options.

        Changeable without reloading: ``name``, ``max_tokens_per_batch``, ``max_padding``,
        ``progress``, ``word_prefix``, ``fast`` (and ``start_token_id``, ``end_token_id`` for
        decoders).
        """
        unknown = sorted(set(changes) - set(self._options))
        if unknown:
            raise NormtestError(
                f"variant() cannot change {unknown}; it changes only {sorted(self._options)} "
                "(device, dtype and the model itself need a new adapter)"
            )
        clone = copy.copy(self)
        clone.__dict__.pop("_layer_stash", None)  # its own layer profile, if any
        clone._configure({**self._options, **changes})
        return clone

    # -- identity --------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """Short model name used in results."""
        return self._name

    @property
    def revision(self) -> str:
        """Content hash of config, tokenizer and weights, plus dtype and context options."""
        if self._revision is None:
            if self._folder is not None:
                from normtest.base.fingerprint import files_sha256

                files = _identity_files(self._folder, code=self._trust_remote_code)
                base = "sha256:" + files_sha256(files)[:16]
            else:
                commit = getattr(self._config, "_commit_hash", None) or "unknown"
                base = f"hub:{self._source}@{commit}"
            parts = [base, _dtype_name(self._dtype), *self._revision_extras()]
            if self._forced_word_prefix:
                parts.append(f"word_prefix={self._word_prefix!r}")
            self._revision = ";".join(parts)
        return self._revision

    def _revision_extras(self) -> list[str]:
        """Options besides the files that change vectors (decoders: start and end tokens)."""
        return []

    @property
    def dim(self) -> int:
        """Hidden size: the dimension of every vector returned."""
        return self._dim

    @property
    def device(self) -> str:
        """Where the model runs: ``cpu``, ``cuda`` or ``cuda:N`` (``auto`` resolved)."""
        return str(self._device)

    @property
    def architecture(self) -> str:
        """The model's architecture as transformers names it (``config.model_type``)."""
        return str(getattr(self._config, "model_type", "") or "unknown")

    @property
    def n_layers(self) -> int:
        """Number of transformer blocks L (hidden states are numbered 0 … L)."""
        return self._n_layers

    @property
    def states(self) -> tuple[str, ...]:
        """The special states this model produces."""
        raise NotImplementedError

    @property
    def capabilities(self) -> frozenset[Capability]:
        """The capabilities this adapter supports."""
        caps = {Capability.WORD_TOKENS, Capability.TOKEN_VECTORS, Capability.PREFIX_VECTORS}
        if self.states:
            caps.add(Capability.SPECIAL_STATES)
        return frozenset(caps)

    @property
    def model(self) -> Any:
        """The underlying transformers model (in eval mode), read from disk on first use."""
        return self._weights.get()

    @property
    def _model(self) -> Any:
        return self._weights.get()

    @property
    def _embedding(self) -> Any:
        return self._weights.get().get_input_embeddings()

    @property
    def tokenizer(self) -> Any:
        """The underlying transformers tokenizer."""
        return self._tokenizer

    @property
    def folder(self) -> Path | None:
        """The local model folder (None for a model read from the hub)."""
        return self._folder

    @property
    def word_prefix(self) -> str:
        """What is put before a word to tokenise it as in running text ("" or " ")."""
        return self._word_prefix

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(name={self._name!r}, source={self._source!r}, "
                f"dtype={_dtype_name(self._dtype)}, device={self._device})")

    # -- tokenisation ----------------------------------------------------------------------------
    def _ids(self, text: str) -> list[int]:
        """Token ids of ``text`` without special tokens."""
        if not isinstance(text, str):
            raise NormtestError(f"texts must be str, got {type(text).__name__}")
        # verbose=False: no "longer than the maximum … indexing errors" warning for a long text;
        # only prefixes reach the model, and _check_sizes refuses what would not fit
        ids = self._tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]
        return [int(i) for i in ids]

    def _detect_word_prefix(self) -> str:
        """" " when a leading space changes a word's ids but not their number (byte-level BPE)."""
        bare, spaced = self._ids("the"), self._ids(" the")
        return " " if spaced != bare and len(spaced) == len(bare) else ""

    def _tokenization(self, ids: list[int]) -> Tokenization:
        """Ids with their token strings."""
        tokens = self._tokenizer.convert_ids_to_tokens(ids)
        return Tokenization(ids=tuple(ids), tokens=tuple(str(t) for t in tokens))

    def tokenize(self, text: str) -> Tokenization:
        """The model tokens of ``text`` taken literally, without special tokens."""
        ids = self._ids(text)
        if not ids:
            raise NormtestError(
                f"text {text!r} has no tokens for {self._name}; pass non-empty text"
            )
        return self._tokenization(ids)

    def word_tokens(self, word: str) -> Tokenization:
        """The model tokens of one word as it stands in running text (see the module doc)."""
        if not isinstance(word, str):
            raise NormtestError(f"a word must be str, got {type(word).__name__}")
        ids = self._ids(self._word_prefix + word) if word.strip() else []
        if not ids:
            raise NormtestError(f"word {word!r} has no tokens for {self._name}; drop it")
        return self._tokenization(ids)

    def word_token_counts(self, words: Sequence[str]) -> NDArray[np.intp]:
        """``len(word_tokens(w))`` of every word, from one tokenizer call (each distinct word
        tokenized once: running text repeats its words)."""
        if isinstance(words, str) or not all(isinstance(w, str) for w in words):
            return self._flat_ids(words, True)[1]  # refused there, with the reason
        words = list(words)
        distinct = list(dict.fromkeys(words))
        if len(distinct) == len(words):
            return self._flat_ids(words, True)[1]
        try:
            counts = self._flat_ids(distinct, True)[1]
        except NormtestError:  # said again of the words as given (the index the caller knows)
            return self._flat_ids(words, True)[1]
        at = {w: i for i, w in enumerate(distinct)}
        return counts[np.fromiter((at[w] for w in words), dtype=np.intp, count=len(words))]

    def _item_ids(self, items: Sequence[str], words: bool) -> list[list[int]]:
        """Token ids of every text (or word), raising on one that has none."""
        if isinstance(items, str):
            raise NormtestError("pass a list of texts, not a single string")
        out = []
        for i, item in enumerate(items):
            if words and isinstance(item, str):
                ids = self._ids(self._word_prefix + item) if item.strip() else []
            else:
                ids = self._ids(item)
            if not ids:
                what = "word" if words else "text"
                raise NormtestError(
                    f"{what} {i} ({item!r}) has no tokens for {self._name}; drop empty items"
                )
            out.append(ids)
        return out

    def _flat_ids(
        self, items: Sequence[str], words: bool
    ) -> tuple[NDArray[np.int64], NDArray[np.intp]]:
        """Token ids of every item from one tokenizer call: (flat ids, lengths), none empty."""
        if isinstance(items, str):
            raise NormtestError("pass a list of texts, not a single string")
        texts = list(items)
        if not all(isinstance(t, str) for t in texts):
            bad = next(t for t in texts if not isinstance(t, str))
            raise NormtestError(f"texts must be str, got {type(bad).__name__}")
        if not texts:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.intp)
        inputs = texts
        if words:
            array = np.asarray(texts, dtype=np.str_)
            if self._word_prefix:
                inputs = np.char.add(self._word_prefix, array).tolist()
        encoded = self._tokenizer(inputs, add_special_tokens=False, verbose=False)["input_ids"]
        lengths = np.fromiter(map(len, encoded), dtype=np.intp, count=len(encoded))
        if words:  # a blank word has no tokens, whatever its prefix tokenises to
            lengths[np.char.strip(array) == ""] = 0
        if not lengths.all():
            i = int(np.flatnonzero(lengths == 0)[0])
            what = "word" if words else "text"
            raise NormtestError(
                f"{what} {i} ({texts[i]!r}) has no tokens for {self._name}; drop empty items"
            )
        flat = np.fromiter(itertools.chain.from_iterable(encoded), dtype=np.int64,
                           count=int(lengths.sum()))
        return flat, lengths
