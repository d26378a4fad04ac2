"""The gate's regression test: did an effect drop by more than a margin between two reports?

A *regression* is a statistically supported drop of an effect, not any decrease: for each result
id in both reports, H1: effect(candidate) < effect(baseline) − margin, tested at α with Holm over
all compared results. The effect is the estimate in the claim's favourable direction (minus it
for a "less" claim; minus the distance to the margin's centre for an equivalence claim). The test
is *paired* when both measurements resampled the same units with the same seed (same sample
digest, n, seed and number of replicates): the replicate-by-replicate differences give a
bias-corrected bootstrap p-value. Otherwise the two estimates are independent and a normal
approximation uses each interval's width (docs/ci.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from normtest.audit.samples import sample_fingerprints, sample_of
from normtest.stats.multiplicity import holm
from normtest.verdict.sampling import Sampling

if TYPE_CHECKING:
    from normtest.audit.report import Report
    from normtest.verdict.result import Criterion, Result

#: Two-sided confidence of the intervals the summary shows (their ends: one-sided 95% bounds).
Z_95 = 1.6448536269514722


def _target(criterion: Criterion) -> float:
    assert criterion.margin is not None
    low, high = criterion.margin
    return math.sqrt(low * high) if low > 0 else (low + high) / 2


def effect(values: Any, criterion: Criterion | None) -> np.ndarray:
    """The estimate(s) in the claim's favourable direction: larger is better."""
    x = np.asarray(values, dtype=np.float64)
    if criterion is None or criterion.direction == "greater":
        return x
    if criterion.direction == "less":
        return -x
    return -np.abs(x - _target(criterion))


@dataclass(frozen=True)
class BaselineComparison:
    """One result id in both reports, and whether its effect dropped by more than the margin."""

    id: str
    baseline: Result
    candidate: Result
    difference: float
    interval: tuple[float, float]
    margin: float
    p_value: float
    paired: bool
    p_adjusted: float = math.nan
    regressed: bool = False

    @property
    def method(self) -> str:
        """How the difference was tested."""
        return "paired bootstrap" if self.paired else "unpaired normal"


def _pairing(base: Result, cand: Result, key: str | None, base_samples: Mapping[str, str],
             cand_samples: Mapping[str, str], same_version: bool) -> bool:
    """Whether two measurements resampled the same units (sample ``key``) draw for draw."""
    bm, cm = base.measurement, cand.measurement
    assert bm is not None and cm is not None and bm.sampling and cm.sampling
    return bool(
        same_version and key is not None
        and base_samples.get(key) is not None and base_samples.get(key) == cand_samples.get(key)
        and bm.sampling.kind == cm.sampling.kind == "bootstrap"
        and not bm.sampling.sketched and not cm.sampling.sketched  # a slim report's: unpaired
        and bm.sampling.replicates.size == cm.sampling.replicates.size
        and bm.seed is not None and bm.seed == cm.seed and bm.n == cm.n
        and bm.method == cm.method and bm.statistic == cm.statistic
        and not _sorted(bm.sampling.replicates) and not _sorted(cm.sampling.replicates)
    )


def _sorted(replicates: np.ndarray) -> bool:
    """Replicates stored in sorted order (reports of normtest before resampling order was
    kept) cannot be paired: pairing sorted arrays would understate the spread."""
    finite = replicates[~np.isnan(replicates)]
    return finite.size > 2 and bool(np.all(np.diff(finite) >= 0))


def compare_results(base: Result, cand: Result, *, margin: float, alpha: float,
                    paired: bool) -> BaselineComparison:
    """Test H1: effect(cand) < effect(base) − margin for one pair of results."""

    bm, cm = base.measurement, cand.measurement
    assert bm is not None and cm is not None and bm.sampling and cm.sampling
    criterion = cand.criterion or base.criterion
    difference = float(effect(cm.estimate, criterion) - effect(bm.estimate, criterion))
    if paired:
        reps = effect(cm.sampling.replicates, criterion) - effect(bm.sampling.replicates,
                                                                  criterion)
        sampling = Sampling.bootstrap(reps, difference)
    else:
        spread = []
        for m in (bm, cm):
            low, high = m.interval(0.90)
            spread.append((high - low) / (2 * Z_95))
        scale = math.hypot(*spread)
        if not math.isfinite(scale):
            return BaselineComparison(base.id, base, cand, difference, (math.nan, math.nan), margin,
                              1.0, False)
        sampling = Sampling("normal", center=difference, scale=scale)
    return BaselineComparison(base.id, base, cand, difference, sampling.interval(1 - 2 * alpha),
                      margin, float(sampling.p_less(-margin)), paired)


def under_thresholds(baseline: Report, thresholds: Mapping[str, Any]) -> Report:
    """The baseline judged under the configuration's thresholds, as the candidate is; a slim
    baseline as written (its sketches cannot be re-judged, and the regression test reads only
    its estimates and intervals)."""
    if not thresholds or baseline.slim_note:
        return baseline
    from normtest.audit.selection import apply_thresholds

    return replace(baseline, results=apply_thresholds(baseline.results, thresholds))


def compare(baseline: Report, candidate: Report, *, margin: float = 0.05,
            margins: Mapping[str, float] | None = None, alpha: float = 0.05,
            exploratory: bool = True,
            ) -> tuple[list[BaselineComparison], list[tuple[str, str]]]:
    """Every result id measured in both reports (only the baseline's confirmatory rows unless
    ``exploratory``), tested for a regression (Holm over all compared).

    Returns the comparisons and the ids that could not be compared, with the reason.
    """

    base_samples, cand_samples = sample_fingerprints(baseline), sample_fingerprints(candidate)
    same_version = baseline.provenance.get("normtest") == candidate.provenance.get("normtest")
    by_id = {i: r for r in candidate.results for i in reversed(r.ids)}
    found: list[BaselineComparison] = []
    skipped: list[tuple[str, str]] = []
    for base in baseline.results:
        if base.measurement is None or base.measurement.sampling is None \
                or not math.isfinite(base.estimate):
            continue
        if not exploratory and base.role == "exploratory":
            continue
        cand = by_id.get(base.id)
        why = None
        if cand is None:
            why = "not in the candidate's report"
        elif cand.measurement is None or cand.measurement.sampling is None \
                or not math.isfinite(cand.estimate):
            why = f"not measured on the candidate ({cand.verdict.value}: {cand.reason})"
        elif cand.measurement.statistic != base.measurement.statistic:
            why = (f"different statistics ({base.measurement.statistic} vs "
                   f"{cand.measurement.statistic})")
        if why is not None or cand is None:
            skipped.append((base.id, why or ""))
            continue
        claim_margin = (margins or {}).get(base.claim or "", margin)
        paired = _pairing(base, cand, sample_of(base.claim), base_samples, cand_samples,
                          same_version)
        found.append(compare_results(base, cand, margin=claim_margin, alpha=alpha,
                                     paired=paired))
    if found:
        adjusted = holm([c.p_value for c in found])
        found = [replace(c, p_adjusted=float(p), regressed=bool(p < alpha))
                 for c, p in zip(found, adjusted, strict=True)]
    return found, skipped
