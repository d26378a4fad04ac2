"""The audit runner: plan the claims a model can be checked on, measure once, judge, adjust.

Data flow (ARCHITECTURE.md): the adapter gives vectors, :class:`WordData` composes and transforms
them once per variant and shares them between claims, each claim's measurement function returns a
:class:`~normtest.result.Measurement`, the claim's criterion judges it, and Holm adjusts within
each claim's family of variants. The outcome is one :class:`~normtest.report.Report`.

This version measures the word suite (``word.norm_ic``, ``word.norm_ic.multitoken``,
``word.norm_ic.partial``). Claims whose measurement is not available yet are listed as SKIPPED
with that reason, never run and never counted as passing.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from normtest.adapters.protocol import Capability, supports
from normtest.catalogue import Claim, claims, get
from normtest.errors import NormtestError
from normtest.report import Report, provenance
from normtest.result import Measurement, Result, Verdict
from normtest.stats import adjust, correlation, partial_correlation


def model_family(adapter: Any) -> str:
    """``static`` (whole-word vectors), ``decoder`` (a causal LM) or ``encoder``."""
    if supports(adapter, Capability.WORD_VECTORS):
        return "static"
    if supports(adapter, Capability.TOKEN_LOGPROBS):
        return "decoder"
    return "encoder"


@dataclass(frozen=True)
class AuditSettings:
    """What an audit samples and how it resamples."""

    seed: int = 0
    words: int = 2000
    n_resamples: int = 1000
    alpha: float = 0.05


@dataclass
class WordData:
    """The word sample, its information content, and vectors per variant, computed once."""

    adapter: Any
    settings: AuditSettings
    family: str
    words: list[str] = field(default_factory=list)
    information: np.ndarray = field(default_factory=lambda: np.empty(0))
    dropped: dict[str, int] = field(default_factory=dict)
    _vectors: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    _token_counts: np.ndarray | None = None

    @classmethod
    def build(cls, adapter: Any, settings: AuditSettings, family: str,
              words: Sequence[str] | None = None, source: Any | None = None) -> WordData:
        """Draw (or take) the sample, keep words with an IC the model can represent.

        ``source`` is any frequency source with ``information_content(words)`` (default:
        wordfreq English); words it does not know are dropped and counted.
        """
        from normtest.information import WordfreqSource, default_word_sample

        sample = list(words) if words is not None else default_word_sample(
            size=settings.words, seed=settings.seed)
        ic = (source or WordfreqSource()).information_content(sample)
        kept, values = list(ic.words), np.asarray(ic.values, dtype=np.float64)
        dropped = {"no frequency": len(ic.missing)}
        if family == "static":
            known = np.asarray(adapter.represents(kept), dtype=bool)
            dropped["no vector"] = int((~known).sum())
            kept = [w for w, k in zip(kept, known, strict=True) if k]
            values = values[known]
        if not kept:
            raise NormtestError(
                "no word of the sample has both an IC and a vector; check the model and sample"
            )
        return cls(adapter, settings, family, kept, values, dropped)

    @property
    def probabilities(self) -> np.ndarray:
        """Unigram weights p(w) = exp(−IC(w)) (renormalised by the transforms)."""
        return np.exp(-self.information)

    def token_counts(self) -> np.ndarray:
        """Number of model tokens of each word (1 for whole-word models)."""
        if self._token_counts is None:
            if self.family == "static":
                self._token_counts = np.ones(len(self.words), dtype=np.intp)
            else:
                self._token_counts = np.array(
                    [len(self.adapter.word_tokens(w)) for w in self.words], dtype=np.intp)
        return self._token_counts

    def vectors(self, composition: str, representation: str) -> np.ndarray:
        """Word vectors for a composition and representation (float64, one row per word)."""
        key = (composition, representation)
        if key not in self._vectors:
            if self.family == "static":
                raw = np.asarray(self.adapter.word_vectors(self.words), dtype=np.float64)
            else:
                from normtest.compose import compose_batch

                batch = self.adapter.token_vectors(self.words, layer=representation, words=True)
                raw = compose_batch(np.asarray(batch.vectors, dtype=np.float64), batch.offsets,
                                    composition)
            self._vectors[key] = raw
        return self._vectors[key]

    def squared_norms(self, variant: Mapping[str, str]) -> np.ndarray:
        """‖e(w)‖² under the variant's composition, representation and transform."""
        from normtest.transforms import make_transform

        vectors = self.vectors(variant.get("composition", "whole"),
                               variant.get("representation", "last"))
        transform = variant.get("transform", "raw")
        if transform != "raw":
            vectors = make_transform(transform).fit(vectors, self.probabilities).apply(vectors)
        return np.einsum("ij,ij->i", vectors, vectors)


Measure = Callable[[WordData, Mapping[str, str], AuditSettings], Measurement]


def _norm_ic(data: WordData, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    result = correlation(data.information, data.squared_norms(variant),
                         n_resamples=s.n_resamples, seed=s.seed)
    assert result.measurement is not None
    return result.measurement


def _norm_ic_multitoken(data: WordData, variant: Mapping[str, str],
                        s: AuditSettings) -> Measurement:
    several = data.token_counts() >= 2
    result = correlation(data.information[several], data.squared_norms(variant)[several],
                         n_resamples=s.n_resamples, seed=s.seed)
    assert result.measurement is not None
    return result.measurement


def _norm_ic_partial(data: WordData, variant: Mapping[str, str],
                     s: AuditSettings) -> Measurement:
    result = partial_correlation(data.information, data.squared_norms(variant),
                                 data.token_counts().astype(np.float64),
                                 n_resamples=s.n_resamples, seed=s.seed)
    assert result.measurement is not None
    return result.measurement


#: Measurement functions by claim id (the word suite in this version).
MEASURES: dict[str, Measure] = {
    "word.norm_ic": _norm_ic,
    "word.norm_ic.multitoken": _norm_ic_multitoken,
    "word.norm_ic.partial": _norm_ic_partial,
}


def applicable_axes(claim: Claim, family: str) -> dict[str, tuple[str, ...]]:
    """The claim's variant axes that apply to a model family.

    Whole-word (static) models have no subword composition and one representation.
    """
    axes = dict(claim.axes)
    if family == "static":
        axes.pop("composition", None)
        axes.pop("representation", None)
    else:
        axes["composition"] = tuple(c for c in axes.get("composition", ())
                                    if c not in ("cls", "eos"))
    return axes


def variants(claim: Claim, family: str) -> list[dict[str, str]]:
    """Every variant of a claim for a model family (the product of its applicable axes)."""
    axes = applicable_axes(claim, family)
    names = list(axes)
    return [dict(zip(names, combo, strict=True))
            for combo in itertools.product(*(axes[n] for n in names))]


def _skip_reason(claim: Claim, adapter: Any) -> str | None:
    if claim.id not in MEASURES:
        return "this version of normtest does not measure this claim yet"
    if claim.needs and not any(all(supports(adapter, c) for c in option)
                               for option in claim.needs):
        return f"the model lacks the capabilities it needs ({claim.needs_text()})"
    return None


def run_audit(
    adapter: Any,
    claim_ids: Iterable[str] | None = None,
    suite: str = "all",
    settings: AuditSettings | None = None,
    words: Sequence[str] | None = None,
    source: Any | None = None,
) -> Report:
    """Audit ``adapter`` on the chosen claims and return one report (Holm within each claim).

    ``words`` replaces the default word sample; ``source`` the default frequency source.
    A run in which no claim could run raises NormtestError (never an empty green report).
    """
    settings = settings or AuditSettings()
    family = model_family(adapter)
    chosen = [get(i) for i in claim_ids] if claim_ids else claims(suite)
    data: WordData | None = None
    results: list[Result] = []
    for claim in chosen:
        reason = _skip_reason(claim, adapter)
        if reason is not None:
            results.append(Result(Verdict.SKIPPED, reason, claim=claim.id,
                                  criterion=claim.criterion))
            continue
        if data is None:
            data = WordData.build(adapter, settings, family, words, source)
        family_results = []
        for variant in variants(claim, family):
            expected = claim.expectation(family, variant)
            try:
                measurement = MEASURES[claim.id](data, variant, settings)
            except NormtestError as exc:
                family_results.append(Result(Verdict.ERROR, str(exc), claim=claim.id,
                                             variant=variant, expected=expected))
                continue
            judged = Result.judged(measurement, claim.criterion.with_alpha(settings.alpha))
            family_results.append(replace(judged, claim=claim.id, variant=variant,
                                          expected=expected,
                                          details={"reconstructed": claim.reconstructed}))
        results.extend(adjust(family_results, "holm"))
    ran = [r for r in results if r.verdict not in (Verdict.SKIPPED, Verdict.ERROR)]
    if not ran:
        raise NormtestError(
            "no claim could run on this model: "
            + "; ".join(f"{r.claim}: {r.reason}" for r in results[:5])
        )
    model = {"name": adapter.name, "revision": adapter.revision, "family": family,
             "dim": adapter.dim}
    extra = {} if data is None else {"words": len(data.words), "dropped_words": data.dropped}
    return Report(results=results, model=model,
                  provenance=provenance(seed=settings.seed, n_resamples=settings.n_resamples,
                                        alpha=settings.alpha, **extra))
