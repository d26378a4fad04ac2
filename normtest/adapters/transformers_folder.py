"""A transformers model folder on disk: where a model comes from, and which files are its identity.

:func:`_resolve_source` tells a local folder (which must hold ``config.json``) from a hub id
(loaded only with ``allow_network=True``), :func:`_refuse_custom_code` refuses a folder whose
configuration names its own Python modules (an ``auto_map``) unless the user trusts it, and
:func:`_identity_files` lists the files whose bytes decide the vectors (config, tokenizer files,
weights, and the folder's own code when trusted), which the adapters' revision hashes. Used by
:mod:`normtest.adapters.transformers_base`; imports neither torch nor transformers.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

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
