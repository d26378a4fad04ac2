"""How reliably a corpus measures PMI: split-half reliability with the Spearman–Brown step-up.

Claim C1 (``cond.inner_pmi``) correlates ⟨e(x), e(y)⟩ with the corpus's PMI(x, y). PMI estimated
from a small corpus is noisy, and a correlation with a noisy variable is attenuated towards 0
(by √reliability, Spearman 1904), so a corpus too small to measure PMI cannot confirm nor refute
C1. :func:`pmi_reliability` measures how reproducible the corpus's PMI ranks are:

1. the corpus's **documents** are split in two by a seeded coin per document
   (:func:`~normtest.data.information.corpus_counting.document_half`: a keyed hash of the document's
   tokens). Windows never cross documents, so each half is counted exactly as the whole is and the
   two halves' counts add up to the whole corpus's; identical documents fall on the same side, so
   duplicated text cannot make the halves agree;
2. PMI of the given pairs (chosen on the whole corpus, seen ≥ ``min_count`` times there) is
   computed in each half (``min_count`` 1 within a half), and the **split-half correlation** ρ is
   Spearman's rank correlation over the pairs that have a PMI in both halves (NaN below
   :data:`MIN_RELIABILITY_PAIRS` such pairs);
3. the **Spearman–Brown** step-up 2ρ/(1 + ρ) estimates the reliability of the PMI of the whole
   corpus, twice as long as a half. A negative ρ (the halves disagree more than chance) has no
   reliable variance to step up: its reliability is reported as 0 (a variance share cannot be
   negative), ``split_half`` keeping the raw ρ.

Spearman–Brown assumes parallel halves; a coin split of documents gives halves of unequal size
(the ``source`` says both halves' documents and tokens), so the step-up is an approximation,
good when the halves are of similar size.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from normtest.data.information.corpus import _check_min_count, _check_pairs
from normtest.data.information.corpus_counting import check_seed
from normtest.errors import NormtestError

__all__ = ["MIN_PMI_RELIABILITY", "MIN_RELIABILITY_PAIRS", "PMIReliability", "pmi_reliability"]

MIN_PMI_RELIABILITY = 0.5
"""The least reliability of the corpus's PMI at which C1 is tested.

In classical test theory the reliability of a measure is the share of its variance that is
true-score variance: ρ_XX' = σ²_T / σ²_X, the rest being measurement error (here: the sampling
noise of counts in a finite corpus, on the rank scale of Spearman's ρ). Below 0.5 more than half
of the rank variance of the corpus's PMI is noise; a correlation of ⟨e(x), e(y)⟩ with it is then
attenuated by a factor √ρ_XX' below 0.71 and would be dominated by the corpus's noise rather than
by the model, so neither a pass nor a fail says much about the model. 0.5 is the point where
signal and noise weigh the same; it is a floor, not a mark of good measurement (0.7 to 0.8 is
the usual bar for a research instrument).
"""

#: Fewest pairs with a PMI in both halves for which the split-half correlation is computed.
MIN_RELIABILITY_PAIRS = 10


@dataclass(frozen=True)
class PMIReliability:
    """The split-half reliability of a corpus's PMI over a set of pairs (module doc)."""

    split_half: float  # Spearman ρ between the two halves' PMI (NaN if too few pairs)
    reliability: float  # Spearman–Brown 2ρ/(1+ρ) (0 for ρ ≤ 0; NaN when split_half is NaN)
    pairs: int  # pairs with a PMI in both halves
    requested: int  # pairs asked about
    min_count: int  # the whole-corpus minimum count the pairs were chosen with
    seed: int
    source: str  # the corpus, and how it was split

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (NaN → None), with ``reliable``, the threshold and the ``reason``."""
        out = {k: (None if isinstance(v, float) and math.isnan(v) else v)
               for k, v in asdict(self).items()}
        out.update(reliable=self.reliable, min_reliability=MIN_PMI_RELIABILITY,
                   reason=self.reason())
        return out

    @property
    def reliable(self) -> bool:
        """Whether the reliability reaches :data:`MIN_PMI_RELIABILITY` (NaN: not reliable)."""
        return bool(self.reliability >= MIN_PMI_RELIABILITY)

    def reason(self) -> str | None:
        """None when reliable; else one sentence saying why and what to do."""
        if self.reliable:
            return None
        fix = ("give a larger --corpus (more text, so that each pair is seen more often), or "
               "leave --corpus out to use the bundled Wikipedia sample")
        if self.pairs < MIN_RELIABILITY_PAIRS:
            return (f"PMI's reliability cannot be measured on {self.source}: only {self.pairs} of "
                    f"the {self.requested} pairs seen {self.min_count} times or more have a PMI "
                    f"in both halves of its documents ({MIN_RELIABILITY_PAIRS} are needed); "
                    f"{fix}")
        if math.isnan(self.reliability):
            return (f"PMI's reliability cannot be measured on {self.source}: the PMI of the "
                    f"{self.pairs} pairs does not vary within a half; {fix}")
        return (f"the corpus's PMI is too unreliable to test this claim: its split-half "
                f"reliability is {self.reliability:.2f} (Spearman–Brown from ρ = "
                f"{self.split_half:.2f} between the two halves' PMI of {self.pairs} pairs seen "
                f"{self.min_count} times or more), below {MIN_PMI_RELIABILITY}, so more than half "
                f"of its variance is noise; {fix}")


def _step_up(rho: float) -> float:
    if math.isnan(rho):
        return math.nan
    return 0.0 if rho <= 0.0 else 2.0 * rho / (1.0 + rho)


def _describe(corpus: Any, halves: Sequence[Any], seed: int) -> str:
    sizes = " and ".join(f"{h.n_documents:,} documents / {h.n_tokens:,} tokens"
                         for h in halves)
    return (f"{corpus.source}, documents split in two by a seeded coin (seed {seed}): "
            f"{sizes}")


def pmi_reliability(corpus: Any, pairs: Sequence[tuple[str, str]], *, min_count: int,
                    seed: int = 0) -> PMIReliability:
    """The split-half reliability of ``corpus``'s PMI over ``pairs`` (module doc).

    ``corpus`` is a :class:`~normtest.data.information.corpus.CorpusStatistics` (kept token ids) or
    :class:`~normtest.data.information.vocabulary_counts.CorpusCounts` from ``corpus_counts`` (its
    halves are counted from the files, on the same executor, and stored): anything with
    ``halves(seed)`` and ``pair_counts``. Pairs seen fewer than ``min_count`` times in the whole
    corpus are left out (C1 leaves them out too); a pair and its reverse count once.
    """
    min_count = _check_min_count(min_count)
    seed = check_seed(seed)
    asked = _check_pairs(pairs)
    if not callable(getattr(corpus, "halves", None)):
        raise NormtestError(f"{type(corpus).__name__} cannot be split into halves; pass corpus "
                            "statistics or counts from corpus_counts")
    distinct = list(dict.fromkeys((a, b) if a <= b else (b, a) for a, b in asked))
    counts = corpus.pair_counts(distinct)
    chosen = [p for p, n in zip(distinct, counts.tolist(), strict=True) if n >= min_count]
    halves = corpus.halves(seed)
    rho, found = math.nan, 0
    if chosen:
        first, second = (dict(zip(r.pairs, r.values.tolist(), strict=True))
                         for r in (h.pmi(chosen) for h in halves))
        both = [p for p in chosen if p in first and p in second]
        found = len(both)
        if found >= MIN_RELIABILITY_PAIRS:
            from scipy.stats import spearmanr

            x = np.array([first[p] for p in both])
            y = np.array([second[p] for p in both])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a constant input: NaN, said by reason()
                rho = float(spearmanr(x, y).statistic)
    return PMIReliability(split_half=rho, reliability=_step_up(rho), pairs=found,
                          requested=len(asked), min_count=min_count, seed=seed,
                          source=_describe(corpus, halves, seed))
