"""The text data (``"texts"``): sentences of real documents, their surprisal under a causal LM,
and text vectors per variant."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from normtest.adapters.protocol import Capability, adapter_info, supports
from normtest.base import progress
from normtest.base.paths import default_cache_dir
from normtest.base.settings import TEXT_SOURCES, AuditSettings
from normtest.data.common import (
    as_layer,
    documents_for,
    each_variant,
    profiled,
    rounded,
    text_vectors,
)
from normtest.data.information.documents import document_sentences
from normtest.data.information.surprisal import stored_surprisal
from normtest.errors import NormtestError
from normtest.geometry.compose import MODEL_STATES, compose_batch
from normtest.models.cache.adapter import CachedAdapter
from normtest.models.registry import load
from normtest.verdict.result import variant_key

if TYPE_CHECKING:
    from normtest.adapters.protocol import (
        LogProbModel,
        ModelAdapter,
        SpecialStateModel,
        TokenVectorModel,
    )

__all__ = ["TextData", "surprisal_model"]


@functools.lru_cache(maxsize=1)
def _loaded_surprisal_model(name: str, cache_dir: str) -> Any:
    """The surprisal model, loaded once per process and cache folder (its tokenizer alone takes
    ~0.2 s to read); its weights are read only if a surprisal is not in the cache, and then
    stay in memory for the next audit (SmolLM2: 540 MB)."""

    return load(name, cache=False, cache_dir=cache_dir)


def surprisal_model(name: str, audited: ModelAdapter) -> LogProbModel:
    """The causal LM that gives sentences their IC, read through the audited model's cache.

    The audited adapter's :class:`~normtest.models.cache.EmbeddingCache` is shared. What the audit
    reads first is the surprisal store (:func:`~normtest.data.information.stored_surprisal`): a text
    set this model scored for any earlier audit, of any model, is not scored again.
    """

    with progress.task(f"loading the surprisal model {name}"):
        lm = _loaded_surprisal_model(name, str(default_cache_dir()))
    if not isinstance(audited, CachedAdapter):
        return lm
    cached = CachedAdapter(lm, audited.cache)
    remote = audited.remote
    if remote is not None and hasattr(remote, "for_model"):  # on the same workers
        cached.remote = remote.for_model((name, {"cache_dir": str(default_cache_dir())}))
    return cached


@dataclass
class TextData:
    """Sentences of real documents, their LM surprisal, and text vectors per variant."""

    adapter: ModelAdapter
    sentences: list[str]
    documents: np.ndarray
    information: np.ndarray
    surprisal_model: str
    #: each sentence's length in the tokens its surprisal sums over (the surprisal model's
    #: tokenisation): the trivial predictor of its information (the claim's ``baseline``)
    lengths: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    #: the id of each document the sentences come from (``documents`` index into it)
    document_ids: tuple[str, ...] = ()
    _vectors: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    _tokens: dict[str, Any] = field(default_factory=dict)
    #: a view of another text data's sentences (:meth:`view`): that data and the rows kept
    _source: tuple[TextData, np.ndarray] | None = None

    def view(self, rows: np.ndarray, information: np.ndarray | None = None,
             name: str | None = None) -> TextData:
        """Another analysis of the same text vectors: the sentences at ``rows``, with another
        information content of theirs (``information``, called ``name``) if given."""
        rows = np.asarray(rows, dtype=np.intp)
        ic = self.information[rows] if information is None else np.asarray(information,
                                                                            dtype=np.float64)
        return TextData(self.adapter, [self.sentences[i] for i in rows], self.documents[rows],
                        ic, name or self.surprisal_model, self.lengths[rows],
                        self.document_ids, _source=(self, rows))

    def with_norms(self, norms: Mapping[tuple[str, str], np.ndarray]) -> TextData:
        """The same sentences, documents and surprisal with these squared norms (by
        (composition, representation)) — a control's data, made rather than measured."""
        return TextData(self.adapter, list(self.sentences), self.documents, self.information,
                        self.surprisal_model, self.lengths, self.document_ids,
                        _vectors=dict(norms))

    # -- what the report keeps of it (the data-kind registry, normtest.data.kinds) ------
    def provenance(self, settings: AuditSettings) -> dict[str, Any]:
        """What the report's provenance says of the sentences (``settings``: the audit's)."""
        return {"sentences": len(self.sentences), "surprisal_model": self.surprisal_model,
                "sentence_documents": len(set(self.documents.tolist()))}

    def plot_data(self, variants: Sequence[Mapping[str, str]] = ()) -> dict[str, Any] | None:
        """The report's ``data["texts"]`` (``variants``, the word claims' measured variants, do
        not concern it): sentence ids, the surprisal model and values, the documents (by index,
        and their ids), the lengths (the baseline) and the squared norms measured; None when
        none was measured."""
        if not self._vectors:
            return None
        return {
            "sentences": [sentence_id(t) for t in self.sentences],
            "surprisal_model": self.surprisal_model,
            "information": rounded(self.information),
            "document": [int(d) for d in self.documents],
            "document_ids": list(self.document_ids),
            "lengths": [int(n) for n in self.lengths],
            "squared_norms": {variant_key({"composition": c, "representation": r}): rounded(v)
                              for (c, r), v in self._vectors.items() if not profiled(r)},
        }

    @staticmethod
    def fingerprint(section: Mapping[str, Any]) -> Any:
        """What identifies the sample in the report's ``data["texts"]``: the sentences'
        surprisal and documents."""
        return [rounded(section["information"]), list(section.get("document", []))]

    @classmethod
    def build(cls, adapter: ModelAdapter, settings: AuditSettings) -> TextData:
        """Sample sentences; their IC from the model itself if it is a causal LM, else from
        ``settings.surprisal_model``."""

        own = adapter_info(adapter).own_texts
        if own is not None:  # precomputed text vectors: their own texts, each its own cluster
            pairs = list(enumerate(own))
            ids = tuple(f"own:{i}" for i in range(len(own)))
        else:
            documents = documents_for(settings, settings.text_documents, TEXT_SOURCES)
            pairs = document_sentences(documents, settings.sentences, seed=settings.seed)
            ids = tuple(d.doc_id for d in documents)
        if not pairs:
            raise NormtestError("the documents hold no sentence of 5 to 40 words")
        lm = cast("LogProbModel", adapter) if supports(adapter, Capability.TOKEN_LOGPROBS) \
            else surprisal_model(settings.surprisal_model, adapter)
        texts = [t for _, t in pairs]
        scored = stored_surprisal(lm, texts)
        return cls(adapter, texts, np.array([d for d, _ in pairs], dtype=np.intp),
                   scored.information, lm.name, scored.n_tokens.astype(np.intp), ids)

    def prepare(self, variants: Sequence[Mapping[str, str]], threads: int = 1) -> None:
        """Make every variant's sentence vectors in this process, before rows are measured in
        others, one at a time (each is the adapter's work: ``threads`` is not used)."""
        each_variant(variants, self.squared_norms)

    def squared_norms(self, variant: Mapping[str, str]) -> np.ndarray:
        """‖e(t)‖² of each sentence under the variant's pooling and representation."""

        key = (variant["composition"], variant.get("representation", "last"))
        if key not in self._vectors and self._source is not None:
            parent, rows = self._source
            self._vectors[key] = parent.squared_norms(variant)[rows]
        if key not in self._vectors:
            if supports(self.adapter, Capability.TEXT_VECTORS) \
                    and not supports(self.adapter, Capability.TOKEN_VECTORS):
                v = text_vectors(self.adapter, self.sentences)
            elif key[0] in MODEL_STATES:
                v = cast("SpecialStateModel", self.adapter).special_states(
                    self.sentences, key[0], layer=as_layer(key[1]))
            else:
                if key[1] not in self._tokens:  # one forward pass per representation
                    self._tokens[key[1]] = cast("TokenVectorModel", self.adapter).token_vectors(
                        self.sentences, layer=as_layer(key[1]))
                batch = self._tokens[key[1]]
                v = compose_batch(np.asarray(batch.vectors, dtype=np.float64), batch.offsets,
                                  key[0])
            v = np.asarray(v, dtype=np.float64)
            self._vectors[key] = np.einsum("ij,ij->i", v, v)
        return self._vectors[key]


def sentence_id(text: str) -> str:
    """A short stable id of a sentence (pairs the sentences of two reports)."""
    import hashlib

    return hashlib.blake2b(text.encode("utf-8"), digest_size=6).hexdigest()
