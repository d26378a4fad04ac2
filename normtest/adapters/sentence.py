"""Sentence encoders: models that map whole texts to vectors, as ``encode(texts)`` does.

The interface of sentence-transformers and MTEB — the most common shape of a new embedding
model — becomes ``Capability.TEXT_VECTORS``. Three ways in:

- :class:`EncodeAdapter` wraps any object with ``encode(list[str]) -> (n, dim)``: a
  ``SentenceTransformer``, an MTEB model, a function-backed class of your own;
- :func:`load_sentence_folder` reads a saved sentence-transformers folder (``modules.json``,
  a ``Pooling`` module): through sentence-transformers when it is installed, else through
  transformers with the folder's pooling (:class:`PooledEncoder`), refusing any module that is
  not sentence-transformers' own unless the folder is trusted;
- :class:`PrecomputedTexts` serves text vectors computed elsewhere (a ``.npz``/``.jsonl`` keyed
  by text): they feed the text claim, on their own texts.

The model's own pooling is its one composition (its ``states``): ``mean``, ``cls``, ``max``,
``sqrt_n`` (sentence-transformers' ``mean_sqrt_len_tokens``: the sum over √n), ``last``
(``lasttoken``), or ``pooled`` when it is not known. A final ``Normalize`` module is left out
(and the revision says so): unit-length vectors leave the norm nothing to carry.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from normtest.adapters.protocol import Capability, TokenBatch
from normtest.adapters.transformers_folder import _refuse_custom_code
from normtest.base import progress
from normtest.base.fingerprint import file_sha256
from normtest.errors import NormtestError

__all__ = ["POOLING_NAMES", "EncodeAdapter", "PooledEncoder", "PrecomputedTexts",
           "is_sentence_folder", "load_sentence_folder", "pool"]

#: sentence-transformers' pooling modes → normtest composition names.
POOLING_NAMES = {"mean": "mean", "cls": "cls", "max": "max", "mean_sqrt_len_tokens": "sqrt_n",
                 "lasttoken": "last", "weightedmean": "weighted_mean"}
#: The flags of a ``Pooling`` module's ``config.json`` → the modes above.
_POOLING_FLAGS = {"pooling_mode_cls_token": "cls", "pooling_mode_mean_tokens": "mean",
                  "pooling_mode_max_tokens": "max",
                  "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
                  "pooling_mode_weightedmean_tokens": "weightedmean",
                  "pooling_mode_lasttoken": "lasttoken"}
#: Module types a folder may name without being trusted (sentence-transformers' own).
_OWN_MODULES = "sentence_transformers."
#: What the transformers reading (without sentence-transformers) can reproduce.
_PLAIN_MODULES = {"Transformer", "Pooling", "Normalize"}


def _texts(texts: Sequence[str], name: str) -> list[str]:
    items = list(texts)
    for i, t in enumerate(items):
        if not isinstance(t, str) or not t.strip():
            raise NormtestError(f"{name}: text {i} is empty or not a string ({t!r}); give "
                                "non-empty texts")
    return items


def _as_matrix(value: Any, rows: int, name: str, dim: int | None = None) -> NDArray[np.float32]:
    """An encoder's output (numpy, torch or lists) as a float32 (rows, dim) matrix of finite
    numbers, or a NormtestError that names ``name`` and says what came back: one row per text,
    every row as long (``dim`` when known), numbers only, none NaN or infinite."""
    said = f"{name}: encode() of {rows} text{'s' if rows != 1 else ''} returned"
    need = f"it must return one vector of numbers per text (shape ({rows}, dim))"
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        try:
            value = value.detach().float().cpu().numpy()
        except Exception as exc:  # not a tensor after all, or one of another dtype
            raise NormtestError(f"{said} a {type(value).__name__} that cannot be read as numbers "
                                f"({type(exc).__name__}: {exc}); {need}") from None
    if isinstance(value, str | bytes) or value is None or isinstance(value, dict):
        raise NormtestError(f"{said} a {type(value).__name__}; {need}")
    try:
        with np.errstate(all="ignore"):
            matrix = np.asarray(value)
    except (ValueError, TypeError):  # ragged nested lists
        raise NormtestError(f"{said} {_ragged(value)}; {need}") from None
    if matrix.dtype.kind not in "iuf" and not (matrix.dtype.kind == "O" and matrix.ndim == 2):
        kind = {"U": "strings", "S": "bytes", "b": "true/false values", "c": "complex numbers",
                "O": "objects", "M": "dates", "m": "time spans"}.get(matrix.dtype.kind,
                                                                   str(matrix.dtype))
        raise NormtestError(f"{said} {kind} (an array of shape {matrix.shape}); {need}")
    if matrix.ndim != 2 or matrix.shape[0] != rows:
        raise NormtestError(f"{said} shape {matrix.shape}; {need}")
    try:
        with np.errstate(all="ignore"):
            matrix = matrix.astype(np.float32)
    except (ValueError, TypeError, OverflowError) as exc:
        raise NormtestError(f"{said} values that are not numbers ({exc}); {need}") from None
    if matrix.shape[1] == 0:
        raise NormtestError(f"{said} vectors of dimension 0; {need}")
    if dim is not None and matrix.shape[1] != dim:
        raise NormtestError(f"{said} vectors of dimension {matrix.shape[1]}, but {dim} before; "
                            "every call must return vectors of one dimension")
    bad = ~np.isfinite(matrix)
    if bad.any():
        row = int(np.argwhere(bad)[0][0])
        raise NormtestError(f"{said} {int(bad.sum())} NaN or infinite value(s) (after "
                            f"conversion to float32), first in row {row}; every value must be "
                            "a finite number")
    return matrix


def _ragged(value: Any) -> str:
    """What makes an encoder's output unreadable as one array, in words."""
    try:
        lengths = sorted({len(row) for row in value})
    except TypeError:  # rows without a length: numbers mixed with lists
        return "rows that mix numbers and lists"
    return f"rows of different lengths ({', '.join(str(n) for n in lengths[:6])})"


def _attribute(model: Any, name: str) -> Any:
    """``getattr(model, name, None)``, with None for a property that raises."""
    try:
        return getattr(model, name, None)
    except Exception:  # a property of the user's object that fails: as if absent
        return None


class _TextEncoder:
    """What every sentence encoder here is: a name, a revision (the cache key), text vectors
    only, and its one pooling as its ``states``."""

    _name: str
    _revision: str
    _pooling: str = "pooled"

    @property
    def name(self) -> str:
        """Model name used in results."""
        return self._name

    @property
    def revision(self) -> str:
        """What keys the embedding cache."""
        return self._revision

    @property
    def capabilities(self) -> frozenset[Capability]:
        """Text vectors only."""
        return frozenset({Capability.TEXT_VECTORS})

    @property
    def states(self) -> tuple[str, ...]:
        """``(pooling,)``: the model's own pooling, its one composition (``pooled`` when not
        known)."""
        return (self._pooling,)


class EncodeAdapter(_TextEncoder):
    """Any object with ``encode(list[str])`` as a sentence encoder (``Capability.TEXT_VECTORS``).

    ``pooling`` names the model's pooling (read from a ``SentenceTransformer``'s ``Pooling``
    module; else the object's ``pooling`` attribute; else ``pooled``, which no expectation of the
    paper speaks about). ``revision`` keys the embedding cache: give one that changes with the
    weights (a ``SentenceTransformer`` from :func:`load_sentence_folder` gets the folder's hash).
    A ``SentenceTransformer``'s ``Normalize`` modules are left out; ``max_seq_length`` and its
    tokenizer let the audit keep prefixes the model would truncate out of its grid.
    """

    def __init__(self, model: Any, *, name: str | None = None, revision: str | None = None,
                 pooling: str | None = None, batch_size: int = 32,
                 source: str | None = None) -> None:
        if isinstance(model, str | bytes) or not callable(_attribute(model, "encode")):
            raise NormtestError(f"{source or type(model).__name__} has no encode(texts) method; "
                                "a sentence encoder maps a list of texts to one vector each")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise NormtestError(f"batch_size must be a positive int, got {batch_size!r}")
        self.normalize_removed = False
        self._sentence_transformer = type(model).__module__.startswith(_OWN_MODULES)
        if self._sentence_transformer:
            model, self.normalize_removed = _without_normalize(model)
            pooling = pooling or _module_pooling(model)
        self._model = model
        self._batch_size = batch_size
        own_name = _attribute(model, "name")
        self._name = name or (own_name if isinstance(own_name, str) and own_name
                              else type(model).__name__)
        #: what messages call the model: where it came from (``module:attribute``), or its name
        self._source = source or self._name
        own = _attribute(model, "revision")
        base = revision or (own if isinstance(own, str) and own else
                            f"python:{type(model).__module__}.{type(model).__qualname__}")
        self._revision = base + (";normalize-removed" if self.normalize_removed else "")
        own_pooling = _attribute(model, "pooling")
        self._pooling = pooling or (own_pooling if isinstance(own_pooling, str) and own_pooling
                                    else "pooled")
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        """Vector dimension (asked of the model, or of one encoded text)."""
        if self._dim is None:
            ask = _attribute(self._model, "get_embedding_dimension") or _attribute(
                self._model, "get_sentence_embedding_dimension")
            try:
                known = ask() if callable(ask) else None
            except Exception:  # the model cannot say: one encoded text will
                known = None
            if isinstance(known, int) and not isinstance(known, bool) and known > 0:
                self._dim = known
            else:
                self._dim = int(self.text_vectors(["dimension"]).shape[1])
        return self._dim

    @property
    def max_tokens(self) -> int | None:
        """The longest text in model tokens the model reads whole (``max_seq_length``)."""
        most = _attribute(self._model, "max_seq_length")
        return int(most) if isinstance(most, int) and not isinstance(most, bool) and most > 0 \
            else None

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Model tokens of each text, special tokens included (needs the model's tokenizer)."""
        tokenizer = _attribute(self._model, "tokenizer")
        if tokenizer is None:
            raise NormtestError(f"{self._source} exposes no tokenizer to count tokens with")
        try:
            ids = tokenizer(list(texts), add_special_tokens=True)["input_ids"]
            counts = [len(i) for i in ids]
        except Exception as exc:  # the user's tokenizer: its failure, without a traceback
            raise NormtestError(f"{self._source}: its tokenizer failed to count the tokens of "
                                f"{len(texts)} texts ({type(exc).__name__}: {exc})") from exc
        if len(counts) != len(texts):
            raise NormtestError(f"{self._source}: its tokenizer gave {len(counts)} token lists "
                                f"for {len(texts)} texts")
        return counts

    def text_vectors(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``encode(texts)`` as a float32 matrix, one row per text, never normalised."""

        items = _texts(texts, self._name)
        if not items:
            return np.empty((0, self._dim or 0), dtype=np.float32)
        step = self._batch_size * 8 if progress.active() else len(items)
        parts = []
        with progress.task(f"{self._name} encode", total=len(items), unit="texts") as bar:
            for start in range(0, len(items), step):
                chunk = items[start:start + step]
                parts.append(self._encode(chunk))
                bar.update(len(chunk))
        return np.concatenate(parts)

    def _encode(self, items: list[str]) -> NDArray[np.float32]:
        try:
            if self._sentence_transformer:
                out = self._model.encode(items, batch_size=self._batch_size,
                                         convert_to_numpy=True, normalize_embeddings=False,
                                         show_progress_bar=False)
            else:
                out = self._model.encode(items)
        except NormtestError:
            raise
        except Exception as exc:  # the model's own code failed: say so, without a traceback
            raise NormtestError(
                f"{self._source}: encode() of {len(items)} text{'s' if len(items) != 1 else ''} "
                f"raised {type(exc).__name__}: "
                f"{exc}; fix its encode(list[str]), which must return one vector per "
                "text") from exc
        matrix = _as_matrix(out, len(items), self._source, self._dim)
        if self._dim is None:
            self._dim = int(matrix.shape[1])
        return matrix


def _without_normalize(model: Any) -> tuple[Any, bool]:
    """A SentenceTransformer without its Normalize modules (the others shared, not copied)."""
    modules = list(model)
    kept = [m for m in modules if type(m).__name__ != "Normalize"]
    if len(kept) == len(modules):
        return model, False
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(modules=kept, device=str(model.device)), True


def _module_pooling(model: Any) -> str | None:
    for module in model:
        if type(module).__name__ == "Pooling":
            config = module.get_config_dict() if callable(getattr(module, "get_config_dict",
                                                                  None)) else {}
            name = _config_pooling(config)
            if name is None and callable(getattr(module, "get_pooling_mode_str", None)):
                mode = str(module.get_pooling_mode_str())  # sentence-transformers before 6
                name = "+".join(POOLING_NAMES.get(m, m) for m in mode.split("+"))
            return name
    return None


def _config_pooling(config: Any) -> str | None:
    """The pooling a Pooling module's configuration names: ``pooling_mode`` (a mode or a list of
    modes, sentence-transformers 6) or the ``pooling_mode_*`` flags (earlier versions)."""
    if not isinstance(config, dict):
        return None
    named = config.get("pooling_mode")
    modes = ([named] if isinstance(named, str) else list(named) if isinstance(named, list)
             else [mode for flag, mode in _POOLING_FLAGS.items() if config.get(flag)])
    return "+".join(POOLING_NAMES.get(str(m), str(m)) for m in modes) or None


def pool(batch: TokenBatch, mode: str) -> NDArray[np.float32]:
    """Each text's token states (special tokens included) pooled as sentence-transformers does:
    ``mean``, ``cls`` (the first), ``max``, ``sqrt_n`` (the sum over √n), ``last``."""
    rows = []
    for i in range(len(batch)):
        states = np.asarray(batch[i], dtype=np.float64)
        if mode == "mean":
            rows.append(states.mean(axis=0))
        elif mode == "cls":
            rows.append(states[0])
        elif mode == "max":
            rows.append(states.max(axis=0))
        elif mode == "sqrt_n":
            rows.append(states.sum(axis=0) / np.sqrt(len(states)))
        elif mode == "last":
            rows.append(states[-1])
        else:
            raise NormtestError(f"pooling {mode!r} needs sentence-transformers to reproduce; pip "
                                "install sentence-transformers")
    return np.asarray(rows, dtype=np.float32)


class PooledEncoder(_TextEncoder):
    """A sentence-transformers folder read through transformers alone: the folder's encoder
    (:class:`~normtest.adapters.encoder.EncoderAdapter`, every safety check included) and its
    pooling over all token states, special tokens included (what sentence-transformers pools).
    Texts over ``max_seq_length`` tokens are refused rather than truncated."""

    def __init__(self, encoder: Any, pooling: str, *, revision: str,
                 max_seq_length: int | None = None) -> None:
        if pooling not in ("mean", "cls", "max", "sqrt_n", "last"):
            raise NormtestError(f"pooling {pooling!r} needs sentence-transformers: pip install "
                                "sentence-transformers")
        self._encoder = encoder
        self._name = str(encoder.name)
        self._pooling = pooling
        self._revision = revision
        self._max_seq_length = max_seq_length

    @property
    def dim(self) -> int:
        """The encoder's hidden size."""
        return int(self._encoder.dim)

    @property
    def max_tokens(self) -> int | None:
        """``max_seq_length`` of the folder (sentence-transformers truncates beyond it)."""
        return self._max_seq_length

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Model tokens of each text, special tokens included."""
        extra = self._encoder.n_special_tokens
        return [len(self._encoder.tokenize(t)) + extra for t in texts]

    def text_vectors(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """The pooled last hidden states of each text."""
        items = _texts(texts, self.name)
        if self._max_seq_length is not None:
            sizes = self.count_tokens(items)
            longest = int(np.argmax(sizes)) if sizes else 0
            if sizes and sizes[longest] > self._max_seq_length:
                raise NormtestError(
                    f"{self.name}: a text of {sizes[longest]} tokens is longer than the "
                    f"model's max_seq_length {self._max_seq_length} (sentence-transformers would "
                    "truncate it); shorten it")
        batch = self._encoder.token_vectors(items, special_tokens=True)
        return pool(batch, self._pooling)


class PrecomputedTexts(_TextEncoder):
    """Text vectors computed elsewhere, keyed by the exact text: a sentence encoder that knows
    only its own ``texts`` (the text claim runs on them; the word and prefix claims are skipped)."""

    def __init__(self, name: str, texts: Sequence[str], vectors: NDArray[np.floating],
                 revision: str, *, checked: bool = False) -> None:
        """``vectors`` row by row for ``texts``, checked whole first (one finite row per
        distinct text, :func:`~normtest.adapters.keyed.check_keyed_rows`) unless ``checked``."""
        if not checked:
            from normtest.adapters.keyed import check_keyed_rows

            check_keyed_rows(name, texts, vectors, what="text")
        self._name = name
        self._revision = revision
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self._row = {t: i for i, t in enumerate(texts)}
        self.texts: list[str] = list(texts)

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return int(self.vectors.shape[1])

    def represents(self, words: Sequence[str]) -> NDArray[np.bool_]:
        """Which texts have a vector."""
        return np.array([w in self._row for w in words], dtype=bool)

    def text_vectors(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """The stored vectors of ``texts``; a text without one raises."""
        missing = [t for t in texts if t not in self._row]
        if missing:
            raise NormtestError(f"{self._name} has no vector for {len(missing)} text(s), first "
                                f"{missing[0][:60]!r}; precomputed vectors serve their own texts")
        return self.vectors[[self._row[t] for t in texts]]


def is_sentence_folder(folder: Path) -> bool:
    """Whether ``folder`` is a saved sentence-transformers model (it has ``modules.json``)."""
    return (folder / "modules.json").is_file()


def _modules(folder: Path) -> list[dict[str, str]]:
    try:
        listed = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise NormtestError(f"{folder}/modules.json is unreadable ({exc}); save the model again "
                            "with model.save(folder)") from exc
    if not isinstance(listed, list) or not all(isinstance(m, dict) and isinstance(
            m.get("type"), str) for m in listed):
        raise NormtestError(f"{folder}/modules.json must list modules with a type each")
    return [{"type": str(m["type"]), "path": str(m.get("path", ""))} for m in listed]


def _folder_pooling(folder: Path, modules: list[dict[str, str]]) -> str:
    for m in modules:
        if m["type"].endswith(".Pooling"):
            try:
                config = json.loads((folder / m["path"] / "config.json").read_text("utf-8"))
            except (OSError, ValueError) as exc:
                raise NormtestError(f"the Pooling module of {folder} has no readable "
                                    f"config.json ({exc})") from exc
            name = _config_pooling(config)
            if name is None:
                raise NormtestError(f"the Pooling module of {folder} names no pooling mode")
            return name
    return "pooled"


def _folder_hash(folder: Path) -> str:
    """SHA-256 over every file of the folder that decides a vector (paths and contents)."""

    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        if relative.startswith(".") or relative.lower().endswith((".md", ".gitattributes")):
            continue
        digest.update(relative.encode())
        digest.update(file_sha256(path).encode())
    return digest.hexdigest()[:16]


def load_sentence_folder(folder: str | os.PathLike[str], *, backend: str = "auto",
                         name: str | None = None, device: str = "cpu", dtype: str | None = None,
                         progress: bool = False, trust_remote_code: bool = False,
                         batch_size: int = 32) -> EncodeAdapter | PooledEncoder:
    """A saved sentence-transformers model as a sentence encoder.

    ``backend``: ``"sentence-transformers"``, ``"transformers"`` (Transformer + Pooling folders
    only) or ``"auto"`` (the first when it is installed). Module types outside
    sentence-transformers (code of the folder's own, or of another package) are refused unless
    ``trust_remote_code``; a transformers configuration with an ``auto_map`` likewise.
    """

    path = Path(folder)
    modules = _modules(path)
    foreign = [m["type"] for m in modules if not m["type"].startswith(_OWN_MODULES)]
    if foreign and not trust_remote_code:
        raise NormtestError(
            f"{path}/modules.json names modules outside sentence-transformers ({', '.join(foreign)}"
            "), whose code would run on loading; normtest never runs it unless you trust the "
            "folder: read that code, then pass --trust-remote-code (docs/security.md)")
    transformer = next((m for m in modules if m["type"].endswith(".Transformer")), None)
    if transformer is None:
        raise NormtestError(f"{path}/modules.json has no Transformer module; normtest reads "
                            "sentence-transformers folders built on a transformers model")
    inner = path / transformer["path"]
    if not trust_remote_code:
        _refuse_custom_code(inner)
    pooling = _folder_pooling(path, modules)
    revision = f"sha256:{_folder_hash(path)};{dtype or 'float32'}"
    if backend not in ("auto", "sentence-transformers", "transformers"):
        raise NormtestError(f"backend must be auto, sentence-transformers or transformers, got "
                            f"{backend!r}")
    if backend == "auto":
        try:
            import sentence_transformers  # noqa: F401
            backend = "sentence-transformers"
        except ImportError:
            backend = "transformers"
    label = name or path.name
    if backend == "sentence-transformers":
        return _through_sentence_transformers(path, label, revision, pooling, device, dtype,
                                              trust_remote_code, batch_size, progress)
    kinds = {m["type"].rsplit(".", 1)[-1] for m in modules}
    if not kinds <= _PLAIN_MODULES:
        raise NormtestError(
            f"{path} has modules ({', '.join(sorted(kinds - _PLAIN_MODULES))}) that only "
            "sentence-transformers reproduces: pip install sentence-transformers")
    from normtest.adapters.encoder import EncoderAdapter

    encoder = EncoderAdapter(inner, name=label, device=device, dtype=dtype or "float32",
                             progress=progress, trust_remote_code=trust_remote_code)
    normalized = "Normalize" in kinds  # never applied here: say so, as the other reading does
    return PooledEncoder(encoder, pooling, max_seq_length=_max_seq_length(path),
                         revision=revision + ";transformers"
                         + (";normalize-removed" if normalized else ""))


def _max_seq_length(folder: Path) -> int | None:
    try:
        config = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    most = config.get("max_seq_length") if isinstance(config, dict) else None
    return int(most) if isinstance(most, int) and most > 0 else None


def _through_sentence_transformers(path: Path, name: str, revision: str, pooling: str,
                                   device: str, dtype: str | None, trust_remote_code: bool,
                                   batch_size: int, progress: bool) -> EncodeAdapter:
    from sentence_transformers import SentenceTransformer

    from normtest.adapters.transformers_base import _torch_device, _transformers_progress

    device = str(_torch_device(device))  # 'cuda:7' without it: refused; 'auto' resolved
    kwargs: dict[str, Any] = {}
    if dtype:
        import torch

        kwargs["model_kwargs"] = {"dtype": getattr(torch, dtype)}
    try:
        with _transformers_progress(progress):
            model = SentenceTransformer(str(path), device=device, local_files_only=True,
                                        trust_remote_code=trust_remote_code, **kwargs)
    except (OSError, ValueError, KeyError) as exc:
        raise NormtestError(f"sentence-transformers cannot load {path}: {exc}") from exc
    return EncodeAdapter(model, name=name, revision=revision + ";sentence-transformers",
                         pooling=pooling, batch_size=batch_size)
