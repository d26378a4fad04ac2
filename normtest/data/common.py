"""What the kinds of data share: a representation as a layer, and a sentence encoder's vectors
checked for a norm that carries information."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from normtest.base.settings import DOCUMENT_SOURCES, AuditSettings
from normtest.data.information.documents import corpus_documents, default_documents
from normtest.errors import NormtestError

if TYPE_CHECKING:
    from normtest.adapters.protocol import (
        Layer,
        ModelAdapter,
        TextVectorModel,
    )

__all__ = ["TRANSFORMED_BYTES", "as_layer", "each_variant", "text_vectors"]


def as_layer(representation: str) -> Layer:
    """A variant's representation as an adapter's ``layer`` argument: ``"input"``, ``"last"``
    or a layer index."""
    if representation in ("input", "last"):
        return cast("Layer", representation)
    try:
        return int(representation)
    except ValueError:
        raise NormtestError(
            f"representation must be 'input', 'last' or a layer number, got {representation!r}"
        ) from None


def text_vectors(adapter: ModelAdapter, texts: Sequence[str]) -> np.ndarray:
    """A sentence encoder's vectors of ``texts`` (float64), refused when every vector has the
    same length: a model that normalises its output (a sentence-transformers ``Normalize``
    module, ``normalize_embeddings=True``) leaves the norm no information to carry."""
    vectors = np.asarray(cast("TextVectorModel", adapter).text_vectors(list(texts)),
                         dtype=np.float64)
    if vectors.shape != (len(texts), adapter.dim):
        raise NormtestError(
            f"model {adapter.name!r} returned vectors of shape {vectors.shape} for {len(texts)} "
            f"texts; text_vectors must return one row of {adapter.dim} numbers per text"
        )
    if not np.isfinite(vectors).all():
        raise NormtestError(f"model {adapter.name!r} returned NaN or infinite vectors")
    norms = np.einsum("ij,ij->i", vectors, vectors)
    if norms.size >= 3 and np.ptp(norms) <= 1e-6 * max(float(norms.mean()), 1e-12):
        raise NormtestError(
            f"model {adapter.name!r} returns vectors of one length (every ‖e‖² = "
            f"{norms.mean():.4g}): it normalises its output, so the norm carries no information. "
            "Audit it without the normalisation (sentence-transformers: drop the Normalize "
            "module and pass normalize_embeddings=False; normtest does both for a folder)"
        )
    return vectors


#: Bytes of the words' token vectors kept (per representation), and of transformed word vectors
#: (per variant: 16 of the 27 of a default audit, 5,000 words × 384 dimensions), each: the first
#: ones asked for are kept (the claims ask in one order, again and again).
TRANSFORMED_BYTES = 256 << 20


def each_variant(variants: Iterable[Mapping[str, str]],
                 make: Callable[[Mapping[str, str]], object]) -> None:
    """``make`` each variant's data in turn (a data kind's ``prepare``); a variant that cannot be
    had is left to the rows that read it, which say why."""
    for variant in variants:
        try:
            make(variant)
        except NormtestError:
            continue


def rounded(values: Any) -> list[float]:
    """Six significant digits: enough for a plot, a third of the JSON of full doubles (the
    report's data section, and the sample digests computed from it)."""
    return [float(f"{float(v):.6g}") for v in np.asarray(values, dtype=np.float64).ravel()]


def profiled(representation: str) -> bool:
    """A hidden layer below the last (a layer profile's own rows, reported by their rows only)."""
    return representation.isdigit()


def documents_for(settings: AuditSettings, n: int,
                  sources: tuple[str, ...] = DOCUMENT_SOURCES) -> list[Any]:
    """``n`` documents: the user's corpus when the settings give one (its first ones, read as a
    stream), else the bundled ``sources``' (an even share of each), drawn by the audit's seed."""

    if settings.corpus:
        found = corpus_documents(list(settings.corpus), n)
        if not found:
            raise NormtestError(
                f"the corpus {', '.join(settings.corpus)} holds no paragraph of 200 words or "
                "more; give longer documents separated by blank lines"
            )
        return found
    return default_documents(n, sources=sources, seed=settings.seed)
