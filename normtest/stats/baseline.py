"""What a trivial predictor already explains, and what a norm carries beyond it
(docs/statistics.md, "Baselines and the beyond reading").

A correspondence between ‖e‖² and information is only interesting beyond what a trivial
predictor of the information already gives: the number of subword tokens of a word (rare words
take more tokens), the length of a text (surprisal grows with it). Two measurements sit beside
every correlational row that declares such a *baseline*:

- **baseline**: Spearman ρ(information, baseline) on the same rows and the same draws — how much
  of the correspondence the trivial predictor reaches on its own;
- **beyond**: the rank correlation of the information and the norm *within* strata of the
  baseline — Spearman's ρ with the baseline partialled out both as a step function over its
  strata (:func:`strata`: every token count, or adjacent lengths merged until each stratum holds
  :data:`MIN_STRATUM` rows) and linearly. Under the conditional-permutation null (norms shuffled
  within each stratum: the baseline kept, every other information removed) its expectation is
  0; it is ρ − E_perm[ρ] rescaled by the within-stratum shares of the two variables' rank
  variance, so a norm that is a function of the baseline plus noise reads about 0 however
  strongly the baseline predicts the information.

Both are measured with the headline's own resampling (units or clusters, seed, B), so their
intervals are as honest as the headline's; the beyond ρ is judged against the claim's own
threshold (the norm must track the information within a baseline stratum as strongly as the
claim demands overall).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from normtest.errors import NormtestError
from normtest.verdict.measurement import Measurement
from normtest.verdict.sampling import Sampling

__all__ = ["MAX_STRATA", "MIN_STRATUM", "baseline_covariates", "conditional_permutation_excess",
           "measure_baseline", "measure_baseline_contrast", "strata"]

#: The fewest rows a stratum of the baseline holds (adjacent values are merged until it does).
MIN_STRATUM = 20
#: The most strata a baseline is cut into (adjacent values merged further beyond that).
MAX_STRATA = 12

Interval = Literal["bootstrap", "analytic"]


def strata(baseline: ArrayLike, min_size: int = MIN_STRATUM,
           max_strata: int = MAX_STRATA) -> np.ndarray:
    """Stratum codes 0..k−1 of each row: the baseline's distinct values in order, adjacent ones
    merged until each stratum holds at least ``max(min_size, n / max_strata)`` rows (a last
    stratum short of it joins the one before). A baseline of few values (token counts) keeps
    one stratum per value wherever each is common enough."""
    values = np.asarray(baseline, dtype=np.float64)
    if values.ndim != 1:
        raise NormtestError(f"a baseline must be one value per row, got shape {values.shape}")
    if values.size == 0:
        return np.zeros(0, dtype=np.intp)
    distinct, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    floor = max(int(min_size), math.ceil(values.size / max(int(max_strata), 1)))
    code_of = np.empty(distinct.size, dtype=np.intp)
    code, held = 0, 0
    for i, c in enumerate(counts):
        code_of[i] = code
        held += int(c)
        if held >= floor:
            code, held = code + 1, 0
    if held and code > 0:  # the last stratum is short: it joins the one before
        code_of[code_of == code] = code - 1
    return code_of[inverse]


def baseline_covariates(baseline: ArrayLike) -> np.ndarray:
    """The baseline as covariates: its value (linear) and one indicator per stratum but the
    first (a step function) — what :func:`measure_baseline` partials out."""
    values = np.asarray(baseline, dtype=np.float64)
    codes = strata(values)
    k = int(codes.max()) + 1 if codes.size else 0
    indicators = [(codes == j).astype(np.float64) for j in range(1, k)]
    return np.column_stack([values, *indicators]) if values.size else np.zeros((0, 1))


def measure_baseline(
    information: ArrayLike, norms: ArrayLike, baseline: ArrayLike, *,
    units: ArrayLike | None = None, clusters: ArrayLike | None = None,
    n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05,
    interval: Interval = "bootstrap",
) -> dict[str, Measurement]:
    """The ``baseline`` and ``beyond`` measurements of one correlational row (see the module
    doc), resampled as the headline is (``units`` or ``clusters``, ``seed``, ``n_resamples``)."""
    from normtest.stats.correlation import measure_correlation, measure_partial_correlation

    base = measure_correlation(information, baseline, units=units, clusters=clusters,
                               n_resamples=n_resamples, seed=seed, alpha=alpha,
                               interval=interval)
    covariates = baseline_covariates(baseline)
    beyond = measure_partial_correlation(information, norms, covariates, units=units,
                                         clusters=clusters, n_resamples=n_resamples, seed=seed,
                                         alpha=alpha, interval=interval)
    n_strata = covariates.shape[1] if covariates.shape[0] else 0  # the value + k − 1 indicators
    return {"baseline": base,
            "beyond": beyond.with_settings(strata=n_strata, beyond="baseline strata + linear")}


def measure_baseline_contrast(
    information: ArrayLike, first: ArrayLike, second: ArrayLike, baseline: ArrayLike, *,
    units: ArrayLike | None = None, n_resamples: int = 1000, seed: int = 0,
    alpha: float = 0.05, interval: Interval = "bootstrap",
) -> dict[str, Measurement]:
    """The ``baseline`` and ``beyond`` measurements of a contrast row: ρ(information, baseline),
    and the difference of the two compositions' beyond ρ on the same draws (its null
    expectation under the baseline is 0, not the difference of the plain ρ). With analytic
    intervals the difference is read as normal with the variances added (no credit for their
    correlation: conservative)."""
    from normtest.stats.contrast import measure_contrast

    a = measure_baseline(information, first, baseline, units=units, n_resamples=n_resamples,
                         seed=seed, alpha=alpha, interval=interval)
    b = measure_baseline(information, second, baseline, units=units, n_resamples=n_resamples,
                         seed=seed, alpha=alpha, interval=interval)
    one, two = a["beyond"], b["beyond"]
    name = f"{one.statistic}_difference"
    if interval == "bootstrap" and one.sampling is not None and two.sampling is not None \
            and one.inputs != two.inputs:
        beyond = measure_contrast(one, two)
    else:
        beyond = _normal_difference(name, one, two, alpha)
    return {"baseline": a["baseline"], "beyond": beyond}


def _normal_difference(name: str, one: Measurement, two: Measurement,
                       alpha: float) -> Measurement:
    """``one − two`` read as normal, each part's variance from its own interval (added)."""
    parts = {"first": one, "second": two}
    method = "difference of two beyond ρ, normal with the variances added (conservative)"
    missing = [f"{p}: {m.reason or 'not estimable'}" for p, m in parts.items()
               if m.sampling is None or not math.isfinite(m.estimate)]
    if not missing and one.inputs is not None and one.inputs == two.inputs:
        missing = ["the two variants are one measurement on these data"]
    if missing:
        return Measurement.not_estimable(name, one.n, method, "; ".join(missing),
                                         seed=one.seed, components=parts)
    z = float(_ndtri(1 - alpha))
    spreads = [(high - low) / (2 * z) for low, high in
               (m.interval(1 - 2 * alpha) for m in (one, two))]
    scale = math.sqrt(sum(s * s for s in spreads))
    estimate = one.estimate - two.estimate
    if not scale > 0:
        return Measurement.not_estimable(name, one.n, method, "the difference has no spread",
                                         seed=one.seed, components=parts)
    return Measurement(statistic=name, estimate=estimate, n=one.n, method=method,
                       sampling=Sampling("normal", center=estimate, scale=scale),
                       confidence=1 - 2 * alpha, seed=one.seed, components=parts)


def _ndtri(p: float) -> float:
    from scipy import special

    return float(special.ndtri(p))


def conditional_permutation_excess(information: ArrayLike, norms: ArrayLike,
                                   baseline: ArrayLike, permutations: int = 200,
                                   seed: int = 0) -> dict[str, Any]:
    """An independent check of the beyond reading: Spearman ρ(information, norms), its mean
    and spread with the norms shuffled among the rows of each baseline value (every token
    count), and the excess ρ − E_perm[ρ] (docs/statistics.md)."""
    from scipy.stats import rankdata, spearmanr

    x = np.asarray(information, dtype=np.float64)
    y = np.asarray(norms, dtype=np.float64)
    codes = np.unique(np.asarray(baseline, dtype=np.float64), return_inverse=True)[1]
    rng = np.random.default_rng(seed)
    observed = float(spearmanr(x, y).statistic)
    ry = rankdata(y)
    rx = rankdata(x)
    groups: Sequence[np.ndarray] = [np.flatnonzero(codes == c) for c in np.unique(codes)]
    null = np.empty(permutations)
    for b in range(permutations):
        shuffled = ry.copy()
        for g in groups:
            shuffled[g] = ry[rng.permutation(g)]
        null[b] = float(np.corrcoef(rx, shuffled)[0, 1])
    return {"rho": observed, "null_mean": float(null.mean()), "null_sd": float(null.std()),
            "excess": observed - float(null.mean()),
            "p_value": float((1 + np.sum(null >= observed)) / (1 + permutations))}
