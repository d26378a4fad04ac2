"""A transformers model folder on disk: where a model comes from, and which files are its identity.

:func:`_resolve_source` tells a local folder (which must hold ``config.json``) from a hub id
(loaded only with ``allow_network=True``), :func:`_refuse_custom_code` refuses a folder whose
configuration names its own Python modules (an ``auto_map``) unless the user trusts it, and
:func:`_identity_files` lists the files whose bytes decide the vectors (config, tokenizer files,
weights, and the folder's own code when trusted), which the adapters' revision hashes.
:func:`config_family` and :func:`refuse_other_family` hold the one rule of which family a
folder is (its ``config.json``'s ``architectures`` and ``model_type``) and which readings of it
are refused. Used by :mod:`normtest.adapters.transformers_base` and :mod:`normtest.models.registry`;
imports neither torch nor transformers.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from normtest.errors import NormtestError

_TOKENIZER_FILES = (
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
    "vocab.txt", "vocab.json", "merges.txt", "tokenizer.model", "spiece.model",
    "sentencepiece.bpe.model",
)
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


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


#: Model types read as decoders (``AutoModelForCausalLM``) even when no architecture says so.
DECODER_TYPES = frozenset({"llama", "gpt2", "mistral", "qwen2", "gemma", "gemma2", "phi", "phi3",
                           "gpt_neox", "opt", "falcon", "olmo", "smollm3"})
#: Class-name endings of the architectures that carry a causal language-model head.
_CAUSAL_HEADS = ("ForCausalLM", "LMHeadModel")


def config_family(config: Mapping[str, Any]) -> str:
    """``"decoder"`` for a causal-LM architecture or a decoder model type, else ``"encoder"``:
    the one family a transformers folder reads as."""
    architectures = config.get("architectures") or []
    if any(str(a).endswith("ForCausalLM") for a in architectures):
        return "decoder"
    return "decoder" if config.get("model_type") in DECODER_TYPES else "encoder"


def _architecture(config: Mapping[str, Any]) -> str:
    """How a folder's model is named in a message: its architecture and model type."""
    architectures = [str(a) for a in config.get("architectures") or []]
    model_type = config.get("model_type")
    if not architectures:
        return f"a model of type {model_type!r}" if model_type else "a model of no named type"
    named = "a " + " / ".join(architectures)
    return f"{named} (model_type {model_type!r})" if model_type else named


def _new_head(config: Mapping[str, Any]) -> bool:
    """Whether reading the folder as a causal LM needs a language-model head it does not hold:
    no architecture with a causal head is recorded, and the head is not the (tied) embeddings."""
    architectures = [str(a) for a in config.get("architectures") or []]
    if any(a.endswith(_CAUSAL_HEADS) for a in architectures):
        return False
    if config_family(config) == "encoder":
        return True
    return bool(architectures) and not config.get("tie_word_embeddings", True)


def refuse_other_family(config: Mapping[str, Any], kind: str, where: str, *,
                        strict: bool = True) -> None:
    """Raise when ``kind`` (``"encoder"`` or ``"decoder"``) cannot read the model of ``config``
    (at ``where``) as it is. A decoder reading needs a causal language-model head in the
    folder: without one transformers adds one of random weights ("newly initialized") and the
    log-probabilities, the surprisal and the report's family would be wrong. With ``strict``
    (how ``normtest.load`` and ``--kind`` read a folder: one model family per folder), an
    encoder reading of a causal language model is refused too, since the report would call it
    an encoder; an adapter built directly (a sentence-transformers model's backbone, pooled by
    its own module) may read a decoder's hidden states."""
    if kind == "decoder" and _new_head(config):
        family = config_family(config)
        what = "an encoder" if family == "encoder" else "a decoder without its language-model head"
        raise NormtestError(
            f"{where} holds {_architecture(config)}, {what}: read as a decoder it would need a "
            "language-model head the folder does not have (transformers would add one of "
            "random weights), so normtest refuses it; "
            + ("leave out --kind (Python: kind=None) to read it as the encoder it is"
               if family == "encoder" else
               "save the model with its head (…ForCausalLM.save_pretrained)")
        )
    if strict and kind == "encoder" and config_family(config) == "decoder":
        raise NormtestError(
            f"{where} holds {_architecture(config)}, a causal language model: it reads as a "
            "decoder only (one model family per folder; read as an encoder its first-token "
            "state sees nothing but itself and the report would call it an encoder); leave out "
            "--kind (Python: kind=None), or use --kind decoder"
        )
