"""The prefix data (``"prefixes"``): CER documents, their prefix-length grids, the curve
s(L) = ‖e(prefix_L)‖² per variant and its growth analysis."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from normtest.adapters.protocol import adapter_info, optional_method, prefix_vectors_of
from normtest.base.settings import AuditSettings
from normtest.data.common import (
    as_layer,
    documents_for,
    each_variant,
    profiled,
    rounded,
    text_vectors,
)
from normtest.data.information.documents import on_token_grid, plan_prefixes, plan_word_prefixes
from normtest.stats.growth import measure_linear_growth
from normtest.verdict.result import Measurement, variant_key

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
        return PrefixData(self.adapter, self.plans, unit, _source=(self, keep, lengths))

    @classmethod
    def with_curves(cls, like: PrefixData,
                    curves: Mapping[tuple[str, str], tuple[np.ndarray, ...]]) -> PrefixData:
        """Prefix data on ``like``'s documents and grids whose curves are ``curves`` (by
        (composition, representation): lengths, squared norms, document ids, vectors) — a
        control's data, made rather than measured."""
        return cls(like.adapter, like.plans, like.unit, _curves=dict(curves))

    # -- what the report keeps of it (the data-kind registry, normtest.data.kinds) ------
    def provenance(self, settings: AuditSettings) -> dict[str, Any]:
        """What the report's provenance says of the documents and their grids."""
        return {"documents": len(self.plans), "prefix_step": settings.prefix_step,
                "max_prefix": settings.max_prefix}

    def plot_data(self, variants: Sequence[Mapping[str, str]] = ()) -> dict[str, Any] | None:
        """The report's ``data["prefixes"]`` (``variants``, the word claims' measured variants,
        do not concern it): the documents, the unit, every curve measured
        (the last layer's and the input rows'; a layer profile's hidden layers are reported by
        their rows only) and a word grid's model tokens; None when no curve was measured."""
        if not self._curves:
            return None
        curves = {}
        for (composition, representation), (lengths, values, groups, _) in self._curves.items():
            if profiled(representation):
                continue
            key = variant_key({"composition": composition, "representation": representation})
            curves[key] = {"lengths": [int(x) for x in lengths], "squared_norms": rounded(values),
                           "document": [int(g) for g in groups]}
        out: dict[str, Any] = {"documents": [p.document.doc_id for p in self.plans],
                               "unit": self.unit, "curves": curves}
        if self.plans and self.plans[0].tokens is not None:  # a word grid's model tokens
            out["tokens"] = [[int(t) for t in p.tokens] for p in self.plans
                             if p.tokens is not None]
        return out

    @staticmethod
    def fingerprint(section: Mapping[str, Any]) -> Any:
        """What identifies the sample in the report's ``data["prefixes"]``: its documents."""
        return list(section["documents"])

    @classmethod
    def build(cls, adapter: ModelAdapter, settings: AuditSettings,
              family: str = "encoder") -> PrefixData:
        """The default documents with a non-empty prefix grid for this model."""

        documents = documents_for(settings, settings.documents)
        words = family == "sentence" or settings.prefix_unit == "words"
        if family == "sentence":
            count = optional_method(adapter, "count_tokens")
            most = adapter_info(adapter).max_tokens
            limit = (count, most) if count is not None and most else None
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

    def prepare(self, variants: Sequence[Mapping[str, str]], threads: int = 1) -> None:
        """Make every variant's prefix vectors in this process, before rows are measured in
        others, one at a time (each is the adapter's work: ``threads`` is not used)."""
        each_variant(variants, self.curves)

    def growth(self, variant: Mapping[str, str], settings: AuditSettings) -> Measurement:
        """How s(L) grows for one variant (:func:`~normtest.stats.measure_linear_growth`),
        analysed once and shared by every claim that reads it (``cer.linear``)."""

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
            tokens = [p.lengths if p.tokens is None else p.tokens for p in self.plans]
            if self.unit == "words" and self.plans and self.plans[0].tokens is None:
                # a sentence encoder: every prefix text in one call
                from normtest.data.information.documents import word_prefix

                texts = [word_prefix(p.document.text, int(n)) for p in self.plans
                         for n in p.lengths]
                flat = text_vectors(self.adapter, texts)
                ends = np.cumsum([p.lengths.size for p in self.plans])[:-1]
                matrices = list(np.split(flat, ends))
            else:  # encoders batch every document's prefixes by length (and the cache computes
                # every pooling the audit expects with the first: CachedAdapter.expect_poolings)
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
