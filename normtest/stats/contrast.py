"""Contrasts: the difference of one statistic between two variants, on the same draws.

A claim such as "the correspondence holds under a suitable composition and not under the plain
mean" is about a *difference*: ρ under one variant minus ρ under another, on the same words.
Measured on the same bootstrap draws (the same units drawn as often in both, see
:attr:`~normtest.verdict.measurement.Measurement.draws`), the difference of the two measurements'
replicates is a paired bootstrap of the difference: what the two variants share (the words'
own difficulty, the IC side of the correlation) cancels instead of widening the interval.

- :func:`measure_contrast` takes two measurements made on the same draws and returns the
  measurement of their difference (estimate, bias-corrected percentile interval), with the two
  as its components;
- :func:`contrast` judges it against a minimum difference (a convenience, like
  :func:`~normtest.stats.correlation`).

Two measurements resampled differently (other units, another seed or B, rows drawn by position
after a sort by value) are refused: the difference of unpaired replicates is not the sampling
distribution of anything.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from normtest.errors import NormtestError
from normtest.stats import bootstrap
from normtest.stats.correlation import measure_correlation
from normtest.verdict.result import Criterion, Measurement, Result
from normtest.verdict.sampling import Sampling

__all__ = ["contrast", "measure_contrast", "measure_correlation_contrast"]


def measure_contrast(first: Measurement, second: Measurement, *,
                     statistic: str | None = None) -> Measurement:
    """``first − second``: the difference of two measurements of one statistic made on the same
    bootstrap draws, as a paired bootstrap (replicate minus replicate).

    Both must be bootstrap measurements with the same :attr:`~Measurement.draws` (measure them
    with ``units=`` over the same units, or ``clusters=`` over the same clusters, with the same
    ``seed`` and ``n_resamples``). Where either could not be estimated, neither can the
    difference (the reason says which). The two are kept as the components ``first`` and
    ``second`` (reported, not judged).
    """
    for name, m in (("first", first), ("second", second)):
        if not isinstance(m, Measurement):
            raise NormtestError(f"measure_contrast: {name} must be a normtest.claims.Measurement,"
                                f" got {type(m).__name__}")
    if first.statistic != second.statistic:
        raise NormtestError(
            f"measure_contrast: the two measurements are of different statistics "
            f"({first.statistic} and {second.statistic}); a contrast compares one statistic "
            "under two variants"
        )
    name = statistic or f"{first.statistic}_difference"
    parts = {"first": first, "second": second}
    method = (f"difference of two {first.statistic} measurements, paired bootstrap (the same "
              "draws for both)")
    inputs = (None if first.inputs is None or second.inputs is None else
              bootstrap.digest(np.frombuffer(f"{name};{first.inputs};{second.inputs}".encode(),
                                             np.uint8)))
    if first.draws is not None and second.draws is not None and first.draws != second.draws:
        _refuse("their draws differ: other units, another seed or another number of resamples")
    missing = [f"{part}: {m.reason or 'not estimable'}" for part, m in parts.items()
               if m.sampling is None or not math.isfinite(m.estimate)]
    if not missing and first.inputs is not None and first.inputs == second.inputs:
        missing = ["the two variants are one measurement (identical inputs: the compositions "
                   "coincide on these data), so there is no difference to measure"]
    if missing:
        return Measurement.not_estimable(name, first.n, method, "; ".join(missing),
                                         seed=first.seed, components=parts, inputs=inputs,
                                         draws=first.draws)
    assert first.sampling is not None and second.sampling is not None
    unpaired = _unpaired(first, second)
    if unpaired:
        _refuse(unpaired)
    estimate = first.estimate - second.estimate
    replicates = first.sampling.replicates - second.sampling.replicates
    return Measurement(
        statistic=name, estimate=estimate, n=first.n, method=method,
        sampling=Sampling.bootstrap(replicates, estimate), confidence=first.confidence,
        seed=first.seed, settings={"n_resamples": int(replicates.size)}, components=parts,
        inputs=inputs, draws=first.draws,
    )


def _refuse(why: str) -> None:
    raise NormtestError(
        f"measure_contrast: the two measurements were not resampled alike ({why}); measure "
        "both with units= over the same units (or clusters= over the same clusters), the same "
        "seed and the same n_resamples, so that their replicates pair draw for draw"
    )


def _unpaired(first: Measurement, second: Measurement) -> str | None:
    """Why two measurements' replicates do not pair draw for draw (None: they do)."""
    assert first.sampling is not None and second.sampling is not None
    if first.sampling.kind != "bootstrap" or second.sampling.kind != "bootstrap":
        return (f"a {first.sampling.kind} and a {second.sampling.kind} sampling; both must be "
                "bootstrap replicates: a Pearson correlation without clusters is read by "
                "Fisher's z, so measure it with clusters=, or use method='spearman' or "
                "'kendall' with units=")
    if first.draws is None or second.draws is None:
        return "one of them records no draws (rows drawn by position, or an older report)"
    if first.draws != second.draws:
        return "their draws differ: other units, another seed or another number of resamples"
    if first.sampling.replicates.size != second.sampling.replicates.size:
        return "they hold different numbers of replicates"
    return None


def measure_correlation_contrast(
    x: ArrayLike, first: ArrayLike, second: ArrayLike, *, units: ArrayLike | None = None,
    clusters: ArrayLike | None = None, n_resamples: int = 1000, seed: int = 0,
    alpha: float = 0.05, interval: Literal["bootstrap", "analytic"] = "bootstrap",
) -> Measurement:
    """Spearman ρ(x, first) − ρ(x, second) on the same rows (one per unit, ``units``, or
    resampled by ``clusters``).

    ``bootstrap`` (always, with clusters): :func:`measure_contrast` of the two measurements,
    drawn by unit (or cluster) alike.
    ``analytic``: the difference of two dependent correlations that share x, read as normal
    with the delta-method variance var₁ + var₂ − 2c·sd₁·sd₂, each ρ's variance from the
    Bonett–Wright standard error of its Fisher z ((1 + ρ²/2)(1 − ρ²)²/(n − 3)) and c the
    large-sample correlation of two correlations with a variable in common (Olkin & Finn 1990;
    the approximation of Zou's 2007 interval, symmetric), computed from Spearman's ρ of
    (x, first), (x, second) and (first, second). No draws: it pairs with nothing.
    """

    def rho(y: ArrayLike, how: Literal["bootstrap", "analytic"]) -> Measurement:
        return measure_correlation(x, y, units=units, clusters=clusters,
                                   n_resamples=n_resamples, seed=seed, alpha=alpha, interval=how)

    if interval == "bootstrap" or clusters is not None:
        return measure_contrast(rho(first, "bootstrap"), rho(second, "bootstrap"))
    if interval != "analytic":
        raise NormtestError(f"interval must be 'bootstrap' or 'analytic', got {interval!r}")
    a, b = rho(first, "analytic"), rho(second, "analytic")
    name = f"{a.statistic}_difference"
    method = ("difference of two Spearman ρ sharing x: normal, delta-method variance with the "
              "Bonett–Wright standard errors and their correlation")
    parts = {"first": a, "second": b}
    inputs = (None if a.inputs is None or b.inputs is None else
              bootstrap.digest(np.frombuffer(f"{name};{a.inputs};{b.inputs}".encode(),
                                             np.uint8)))
    missing = [f"{part}: {m.reason or 'not estimable'}" for part, m in parts.items()
               if m.sampling is None or not math.isfinite(m.estimate)]
    if not missing and a.inputs is not None and a.inputs == b.inputs:
        missing = ["the two variants are one measurement (identical inputs: the compositions "
                   "coincide on these data), so there is no difference to measure"]
    if missing:
        return Measurement.not_estimable(name, a.n, method, "; ".join(missing), seed=seed,
                                         components=parts, inputs=inputs)
    between = measure_correlation(first, second, units=units, n_resamples=n_resamples,
                                  seed=seed, alpha=alpha, interval="analytic")
    r12, r13 = a.estimate, b.estimate
    r23 = between.estimate if math.isfinite(between.estimate) else 0.0
    n = a.n
    var1, var2 = (_variance(r, n) for r in (r12, r13))
    denominator = (1 - r12 * r12) * (1 - r13 * r13)
    c = ((r23 - r12 * r13 / 2) * (1 - r12 * r12 - r13 * r13 - r23 * r23) + r23 ** 3) / \
        denominator if denominator > 0 else 1.0
    variance = max(var1 + var2 - 2 * min(max(c, -1.0), 1.0) * math.sqrt(var1 * var2), 0.0)
    estimate = r12 - r13
    if variance <= 0:
        return Measurement.not_estimable(name, n, method, "the difference has no spread",
                                         seed=seed, components=parts, inputs=inputs)
    return Measurement(statistic=name, estimate=estimate, n=n, method=method,
                       sampling=Sampling("normal", center=estimate, scale=math.sqrt(variance)),
                       confidence=1 - 2 * alpha, seed=seed,
                       settings={"interval": "analytic", "rho_between": r23},
                       components=parts, inputs=inputs)


def _variance(rho: float, n: int) -> float:
    """Var(ρ̂) of a Spearman ρ: the Bonett–Wright variance of its z, (1 + ρ²/2)/(n − 3), carried
    to ρ by the delta method (dρ/dz = 1 − ρ²)."""
    return (1 + rho * rho / 2) * (1 - rho * rho) ** 2 / max(n - 3, 1)


def contrast(first: Measurement, second: Measurement, min_difference: float = 0.1,
             alternative: Literal["greater", "less"] = "greater",
             alpha: float = 0.05) -> Result:
    """Judge whether ``first − second`` exceeds ``min_difference`` in the claimed direction:
    PASS when the one-sided (1 − α) bound clears it, FAIL when the opposite bound falls short,
    INCONCLUSIVE otherwise (:func:`measure_contrast`, then the criterion)."""
    criterion = Criterion.minimum_effect(min_difference, alternative, alpha)
    return Result.judged(measure_contrast(first, second), criterion)
