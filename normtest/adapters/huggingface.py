"""Compatibility names for the transformers adapters, which now live in one module per stage.

Everything public that ``normtest.adapters.huggingface`` offered is re-exported from where it
lives: :class:`~normtest.adapters.encoder.EncoderAdapter` (:mod:`normtest.adapters.encoder`),
:class:`~normtest.adapters.decoder.DecoderAdapter` (:mod:`normtest.adapters.decoder`), the
embedded models and their constants (:mod:`normtest.adapters.embedded`), and
``DEFAULT_MAX_TOKENS_PER_BATCH`` (:mod:`normtest.adapters.transformers_base`, with the shared
conventions). New code imports from those modules.
"""

from __future__ import annotations

from normtest.adapters.decoder import DecoderAdapter
from normtest.adapters.embedded import (
    MODELS_INSTALL_HINT,
    SMOLLM2_CACHE_NAME,
    SMOLLM2_DOCUMENT_SEPARATOR,
    SMOLLM2_GGUF_FILE,
    SMOLLM2_INSTALL_HINT,
    build_smollm2_cache,
    load_smollm2_gguf,
    minilm_folder,
    smollm2_folder,
    smollm2_gguf_path,
)
from normtest.adapters.encoder import EncoderAdapter
from normtest.adapters.transformers_base import DEFAULT_MAX_TOKENS_PER_BATCH

__all__ = [
    "DEFAULT_MAX_TOKENS_PER_BATCH",
    "MODELS_INSTALL_HINT",
    "SMOLLM2_CACHE_NAME",
    "SMOLLM2_DOCUMENT_SEPARATOR",
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
