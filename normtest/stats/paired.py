"""Paired differences of an effect between two models measured on the same sample.

Two models read the same words, sentences or documents (the same prefixes on a word grid), so
their statistics are compared *paired*: every bootstrap resample draws the same units (words,
or whole documents) for both models, and the statistic of the difference is computed on that
one draw. The interval of the difference is a percentile interval of those paired replicates;
what is shared between the two models (the items' own difficulty, a document's length) cancels
instead of widening it.

- :func:`measure_linearity_gain`: how much closer to linear growth the first model's s(L) is
  than the second's. Distance from linear growth is D = |log r|, r the late/early slope ratio
  (:mod:`normtest.stats.growth`: 1 for a straight line, near 0 at a fixed point, above 1 for
  superlinear growth), clipped to [1/16, 16]; a curve that does not rise in both halves (flat or
  falling anywhere, whatever r) counts as the farthest, D = log 16. D is scale-free (a model's norms
  may be in any unit) and symmetric in log terms (halving and doubling the slope are equally far).
  The gain is D_second − D_first: positive when the first model grows more linearly. Known bias:
  |log r̂| folds at r = 1, so a model whose growth is exactly linear has D̂ > 0 on noisy data and
  the gain is biased towards FAIL (at the threshold with a linear first model, FAIL 13% of the time
  at α = 0.05 with 60 documents); the false-PASS rate stays below α (tests/test_paired.py).
- :func:`measure_correlation_difference`: ρ_first − ρ_second of the Spearman correlations of
  each model's squared norms with the items' information.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from normtest.errors import NormtestError
from normtest.stats import bootstrap
from normtest.stats._inputs import (
    MIN_GROUPS,
    MIN_POINTS,
    as_vector,
    check_resamples,
    group_codes,
    same_length,
)
from normtest.stats.correlation import _weighted_statistic
from normtest.stats.growth import _Curves
from normtest.verdict.result import Measurement

__all__ = ["RATIO_CLIP", "linearity_distance", "measure_correlation_difference",
           "measure_linearity_gain"]

#: The late/early ratio is clipped to [1/RATIO_CLIP, RATIO_CLIP] before its log is taken.
RATIO_CLIP = 16.0


def linearity_distance(ratio: np.ndarray) -> np.ndarray:
    """D = |log r| with r clipped to [1/16, 16]; an undefined or non-positive r is the farthest."""
    r = np.asarray(ratio, dtype=np.float64)
    clipped = np.clip(np.where(np.isfinite(r), r, 0.0), 1 / RATIO_CLIP, RATIO_CLIP)
    return np.abs(np.log(clipped))


def _distance(curves: Any, w: np.ndarray) -> np.ndarray:
    """D of a model's curves under (b, G) document weights; a curve that does not rise in both
    halves (a falling or flat s(L), whatever its ratio) is the farthest from linear growth."""
    early, late = curves.first_half.slope(w), curves.second_half.slope(w)
    rising = (early > 0) & (late > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(rising, late / np.where(rising, early, 1.0), 0.0)
    return linearity_distance(ratio)


def measure_linearity_gain(
    lengths: ArrayLike, first: ArrayLike, second: ArrayLike, groups: ArrayLike, *,
    n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05,
) -> Measurement:
    """D_second − D_first on paired curves: row i is the same document and length for both.

    Positive when the first model's s(L) is closer to linear growth. Components: each model's
    late/early ratio (estimate and interval from the same paired draws).
    """

    n_resamples = check_resamples(n_resamples)
    length = as_vector("lengths", lengths)
    a, b = as_vector("first", first), as_vector("second", second)
    same_length(lengths=length, first=a, second=b)
    codes = group_codes("groups", groups, length.size)
    curves_a, curves_b = _Curves(length, a, codes), _Curves(length, b, codes)
    method = "late/early slope ratio of each model, paired percentile bootstrap over documents"
    if curves_a.problem:
        return Measurement.not_estimable("linearity_gain", int(length.size), method,
                                         curves_a.problem, seed=seed)
    if curves_a.n_groups != curves_b.n_groups:  # cannot happen for rows of the same lengths
        raise NormtestError("the two models' curves do not cover the same documents")

    def gain(w: np.ndarray) -> np.ndarray:
        return _distance(curves_b, w) - _distance(curves_a, w)

    ones = np.ones((1, curves_a.n_groups))
    farthest = float(linearity_distance(np.zeros(1))[0])
    if _distance(curves_a, ones)[0] == _distance(curves_b, ones)[0] == farthest:
        return Measurement.not_estimable(
            "linearity_gain", curves_a.n, method,
            "neither model's s(L) rises in both halves of the lengths (a flat, falling or "
            "saturating curve): both are as far from linear growth as this statistic measures, "
            "so it cannot say which is closer", seed=seed)

    # the same seed gives every statistic below the same document draws: paired
    head = bootstrap.unit_measurement("linearity_gain", gain, curves_a.n_groups, curves_a.n,
                                      method, n_resamples, seed, alpha,
                                      {"documents": curves_a.n_groups})
    if head.sampling is None:
        return head
    parts = {f"{name}_ratio": bootstrap.unit_measurement(
        "late_early_ratio", curves.ratio, curves.n_groups, curves.n,
        f"late/early slope ratio of the {name} model", n_resamples, seed, alpha,
        {"documents": curves.n_groups}) for name, curves in (("first", curves_a),
                                                             ("second", curves_b))}
    return replace(head, components=parts)


def measure_correlation_difference(
    information: ArrayLike, first: ArrayLike, second: ArrayLike, clusters: ArrayLike | None = None,
    *, second_information: ArrayLike | None = None, n_resamples: int = 1000, seed: int = 0,
    alpha: float = 0.05,
) -> Measurement:
    """ρ_first − ρ_second: Spearman ρ(information, squared norm) of each model on the same items
    (row i is the same word or sentence), resampling ``clusters`` (documents) or rows.

    ``second_information`` gives the second model its own information of the same items (a
    decoder's own surprisal); by default both use ``information``.
    """

    n_resamples = check_resamples(n_resamples)
    x = as_vector("information", information)
    a, b = as_vector("first", first), as_vector("second", second)
    x_b = x if second_information is None else as_vector("second_information",
                                                          second_information)
    n = same_length(information=x, first=a, second=b, second_information=x_b)
    codes = (np.arange(n) if clusters is None else group_codes("clusters", clusters, n))
    n_units = int(codes.max()) + 1 if n else 0
    unit = "rows" if clusters is None else f"{n_units} clusters"
    method = f"Spearman ρ of each model, paired percentile bootstrap over {unit}"
    settings: dict[str, object] = {"clusters": None if clusters is None else n_units}
    problem = None
    if n < MIN_POINTS:
        problem = f"only {n} paired items; at least {MIN_POINTS} are needed"
    elif clusters is not None and n_units < MIN_GROUPS:
        problem = f"only {n_units} clusters; at least {MIN_GROUPS} are needed"
    elif min(np.ptp(x), np.ptp(x_b), np.ptp(a), np.ptp(b)) == 0:
        problem = "a variable is constant, so a correlation is undefined"
    if problem:
        return Measurement.not_estimable("rho_difference", n, method, problem, seed=seed,
                                         settings=settings)
    rho_a = _weighted_statistic(x, a, None, "spearman")
    rho_b = _weighted_statistic(x_b, b, None, "spearman")
    rows_tag = ("rows", bootstrap.digest(codes))

    def difference(w: np.ndarray) -> np.ndarray:
        # each row's weight is its unit's (kept per chunk of draws, like the ranks of x)
        rows = w if clusters is None else bootstrap.derived(
            w, rows_tag, lambda: np.take(w, codes, axis=1), chunk=True)
        return rho_a(rows) - rho_b(rows)

    return bootstrap.unit_measurement("rho_difference", difference, n_units, n, method,
                                      n_resamples, seed, alpha, settings,
                                      widen=clusters is not None)
