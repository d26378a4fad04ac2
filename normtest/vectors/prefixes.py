"""The prefix data (``"prefixes"``): CER documents, their prefix-length grids, the curve
s(L) = ‖e(prefix_L)‖² per variant and its growth analysis."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from normtest.adapters.protocol import prefix_vectors_of
from normtest.result import Measurement
from normtest.settings import AuditSettings
from normtest.vectors.common import as_layer, text_vectors

if TYPE_CHECKING:
    from normtest.adapters.protocol import ModelAdapter

__all__ = ["PrefixData"]


@dataclass
class PrefixData:
    """CER documents, their prefix grids (in model tokens; in words for a sentence encoder,
    which is given each prefix as a text), and prefix vectors per variant."""

    adapter: ModelAdapter
    plans: list[Any]
    unit: str = "model tokens"
    #: the poolings the audit will ask for (computed together with the first one asked)
    poolings: tuple[str, ...] = ()
    _curves: dict[tuple[str, str], tuple[np.ndarray, ...]] = field(default_factory=dict)
    _growth: dict[tuple[str, str], Measurement] = field(default_factory=dict)
    #: a view of another prefix data's curves (:meth:`view`): that data, the prefixes kept (a
    #: mask over its rows) and their lengths in the view's unit
    _source: tuple[PrefixData, np.ndarray, np.ndarray] | None = None

    def view(self, keep: np.ndarray, lengths: np.ndarray, unit: str) -> PrefixData:
        """Another analysis of the same prefix vectors: the prefixes where ``keep`` (a mask over
        the rows of :meth:`curves`, in their order) is true, their lengths counted anew
        (``lengths``, one per row: in words instead of model tokens, say), in ``unit``."""
        keep = np.asarray(keep, dtype=bool)
        lengths = np.asarray(lengths, dtype=np.float64)
        return PrefixData(self.adapter, self.plans, unit, self.poolings,
                          _source=(self, keep, lengths))

    @classmethod
    def build(cls, adapter: ModelAdapter, settings: AuditSettings,
              family: str = "encoder") -> PrefixData:
        """The default documents with a non-empty prefix grid for this model."""
        from normtest.information import plan_prefixes, plan_word_prefixes
        from normtest.information.documents import on_token_grid

        documents = settings.documents_for(settings.documents)
        words = family == "sentence" or settings.prefix_unit == "words"
        if family == "sentence":
            count, most = getattr(adapter, "count_tokens", None), getattr(adapter, "max_tokens",
                                                                         None)
            limit = (count, int(most)) if callable(count) and most else None
            planned = plan_word_prefixes(documents, settings.prefix_step, settings.max_prefix,
                                         token_limit=limit)
        elif words:  # the same word grid for every tokenizer, read as each prefix's tokens
            planned = on_token_grid(adapter, plan_word_prefixes(
                documents, settings.prefix_step, settings.max_prefix))
        else:
            planned = plan_prefixes(adapter, documents, settings.prefix_step,
                                    settings.max_prefix)
        plans = [p for p in planned if p.lengths.size >= 2]
        return cls(adapter, plans, "words" if words else "model tokens")

    def growth(self, variant: Mapping[str, str], settings: AuditSettings) -> Measurement:
        """How s(L) grows for one variant (:func:`~normtest.stats.measure_linear_growth`),
        analysed once and shared by every claim that reads it (``cer.linear``)."""
        from normtest.stats import measure_linear_growth

        key = (variant["composition"], variant.get("representation", "last"))
        if key not in self._growth:
            lengths, values, groups, _ = self.curves(variant)
            self._growth[key] = measure_linear_growth(lengths, values, groups,
                                                      n_resamples=settings.resamples,
                                                      seed=settings.seed, alpha=settings.alpha)
        return self._growth[key]

    def curves(self, variant: Mapping[str, str]) -> tuple[np.ndarray, ...]:
        """(lengths, squared norms, document ids, vectors) of every prefix, for one variant."""
        key = (variant["composition"], variant.get("representation", "last"))
        if key not in self._curves and self._source is not None:
            parent, keep, counted = self._source
            self._curves[key] = (counted[keep],
                                 *(part[keep] for part in parent.curves(variant)[1:]))
        if key not in self._curves:
            from normtest.cache import CachedAdapter

            tokens = [p.lengths if p.tokens is None else p.tokens for p in self.plans]
            if self.unit == "words" and self.plans and self.plans[0].tokens is None:
                # a sentence encoder: every prefix text in one call
                from normtest.information import word_prefix

                texts = [word_prefix(p.document.text, int(n)) for p in self.plans
                         for n in p.lengths]
                flat = text_vectors(self.adapter, texts)
                ends = np.cumsum([p.lengths.size for p in self.plans])[:-1]
                matrices = list(np.split(flat, ends))
            elif isinstance(self.adapter, CachedAdapter):  # every pooling asked for at once
                matrices = self.adapter.prefix_vectors_many(
                    [p.document.text for p in self.plans], tokens,
                    key[0], layer=as_layer(key[1]), also=self.poolings)
            else:  # encoders batch every document's prefixes by length
                matrices = prefix_vectors_of(self.adapter, [p.document.text for p in self.plans],
                                             tokens, key[0], layer=as_layer(key[1]))
            lengths, values, groups, vectors = [], [], [], []
            for doc, (plan, matrix) in enumerate(zip(self.plans, matrices, strict=True)):
                v = np.asarray(matrix, dtype=np.float64)
                lengths.append(plan.lengths.astype(np.float64))
                values.append(np.einsum("ij,ij->i", v, v))
                groups.append(np.full(plan.lengths.size, doc))
                vectors.append(v)
            self._curves[key] = tuple(np.concatenate(x) for x in (lengths, values, groups,
                                                                  vectors))
        return self._curves[key]
