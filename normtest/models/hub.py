"""Hugging Face ids (``owner/name[@revision]``) as the ecosystem resolves them.

:func:`hub_folder` finds the model's files the way ``transformers`` and ``sentence-transformers``
do, through ``huggingface_hub``: from the local Hugging Face cache (``$HF_HUB_CACHE``, else
``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``; the ``models--owner--name/snapshots/REV``
layout) when the files are there, downloading only when the environment allows it
(``HF_HUB_OFFLINE`` unset). Offline and uncached is a one-line :class:`NormtestError` that says how
to fetch the model. What is fetched is the model's configuration, tokenizer and weights (safetensors
first, a ``.bin`` only when there is none) and, only with ``trust_remote_code``, its Python files;
the folder then loads as any local folder does (``normtest.models.registry``), so a model asking to
run its own code is refused unless trusted.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from normtest.errors import NormtestError

#: ``owner/name`` with an optional ``@revision`` (a branch, a tag or a commit hash).
HUB_ID = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)(?:@(?P<revision>[\w./-]+))?$")
#: What a model needs besides its weights: configuration, tokenizer and pooling files.
_FILES = ["*.json", "*.txt", "*.model", "*.tiktoken", "1_Pooling/*", "2_Dense/*"]
_OFFLINE_VALUES = {"1", "ON", "YES", "TRUE"}


def is_hub_id(target: str) -> bool:
    """Whether ``target`` reads as ``owner/name[@revision]`` (and is not a local path)."""
    return bool(HUB_ID.match(target)) and not target.startswith((".", "~")) \
        and not Path(target).expanduser().exists()


def offline() -> bool:
    """Whether the environment forbids downloads (``HF_HUB_OFFLINE``, read when asked)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in _OFFLINE_VALUES


def cache_dir() -> Path:
    """The Hugging Face cache the ids resolve in (read from the environment when asked)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME")
    return (Path(home).expanduser() if home else Path.home() / ".cache" / "huggingface") / "hub"


def split(target: str) -> tuple[str, str | None]:
    """``owner/name@rev`` → (``owner/name``, ``rev``); no ``@``: (``owner/name``, None)."""
    match = HUB_ID.match(target)
    if match is None:
        raise NormtestError(f"{target!r} is not a Hugging Face id (owner/name[@revision])")
    return match["repo"], match["revision"]


def hub_folder(target: str, *, trust_remote_code: bool = False) -> Path:
    """The local folder holding the files of the hub model ``target`` (module doc)."""
    repo, revision = split(target)
    try:
        import huggingface_hub
        from huggingface_hub import errors
    except ImportError as exc:
        raise NormtestError(f"loading {target!r} needs huggingface_hub: pip install "
                            "'normtest[models]'") from exc
    local_only = offline()
    patterns = [*_FILES, "*.safetensors", *(["*.py"] if trust_remote_code else [])]

    def fetch(allow: list[str]) -> Path:
        return Path(huggingface_hub.snapshot_download(
            repo, revision=revision, cache_dir=cache_dir(), allow_patterns=allow,
            local_files_only=local_only))

    where = f"the Hugging Face cache ({cache_dir()})"
    try:
        folder = fetch(patterns)
        if not any(folder.rglob("*.safetensors")):
            folder = fetch([*patterns, "*.bin"])  # an older repository: pickled weights only
    except errors.LocalEntryNotFoundError as exc:
        if local_only:
            raise NormtestError(
                f"{target!r} is not in {where} and downloads are off (HF_HUB_OFFLINE is set): "
                f"fetch it once where the network is allowed (huggingface-cli download {repo}"
                f"{' --revision ' + revision if revision else ''}), or unset HF_HUB_OFFLINE"
            ) from exc
        raise NormtestError(f"{target!r} is not in {where} and could not be downloaded "
                            f"({_reason(exc)}); check the network, or fetch it with "
                            f"huggingface-cli download {repo}") from exc
    except errors.RepositoryNotFoundError as exc:
        raise NormtestError(f"{repo!r} is not a model on the Hugging Face hub (or it is "
                            "private: log in with huggingface-cli login); check the id") from exc
    except errors.RevisionNotFoundError as exc:
        raise NormtestError(f"{repo!r} has no revision {revision!r}; give a branch, a tag or a "
                            "commit hash it has") from exc
    except (errors.HfHubHTTPError, OSError, ValueError) as exc:
        raise NormtestError(f"could not get {target!r} from the Hugging Face hub "
                            f"({_reason(exc)}); check the id and the network, or download it "
                            "and pass its folder") from exc
    if not (folder / "config.json").is_file() and not (folder / "modules.json").is_file():
        raise NormtestError(f"{target!r} ({folder}) holds no config.json: it is not a "
                            "transformers or sentence-transformers model")
    return folder


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")
