"""Models by name: the one registry, the installable store, the hub, the embedding cache.

``named`` (``NamedModel``, the record of a model known by name), ``registry`` (every model
normtest knows by name, the one lookup, and ``load``), ``store`` and ``install`` (the
installable models, checked against pinned digests), ``hub`` (Hugging Face ids, cache first),
``cache`` (embeddings kept on disk), ``extraction`` and ``ray`` (forward passes in batches, on
Ray where asked) and ``synthetic`` (models built to satisfy or violate a condition exactly).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from normtest.base.lazy import lazy_exports

_EXPORTS = {
    "normtest.models.registry": (
        "ADAPTER_KINDS", "EmbeddedModel", "EMBEDDED", "embedded_names", "load", "is_python_target",
        "from_python",
    ),
}

__getattr__, __dir__ = lazy_exports(
    __name__, _EXPORTS, fallback="normtest.models.registry",
    renamed={"KINDS": ("normtest.models.registry", "ADAPTER_KINDS")})

if TYPE_CHECKING:  # what the names above are, for type checkers
    from normtest.models.registry import (
        ADAPTER_KINDS,
        EMBEDDED,
        EmbeddedModel,
        embedded_names,
        from_python,
        is_python_target,
        load,
    )


__all__ = [
    "ADAPTER_KINDS",
    "EMBEDDED",
    "EmbeddedModel",
    "embedded_names",
    "from_python",
    "is_python_target",
    "load",
]
