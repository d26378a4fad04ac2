"""Sampling distributions of an estimate: what a criterion needs to judge it at any level.

A :class:`Sampling` is stored with every measurement so that a stored result can be re-judged
under another threshold or level without the raw model (docs/theory.md §8). Five kinds:

- ``normal``: estimate ± z·se on the estimate's own scale;
- ``t``: the same with Student's t on ``df`` degrees of freedom (cluster-robust slopes);
- ``fisher_z``: normal on the Fisher z = atanh(r) scale (Pearson correlations), mapped back by tanh;
- ``binomial``: a share of successes, ``center`` = k of ``df`` = n trials, read exactly:
  Clopper–Pearson bounds (Beta quantiles) and binomial tail p-values, which agree the way the
  bounds and p-values of every kind do; a share of n of n keeps an interval below 1;
- ``bootstrap``: the bootstrap replicates themselves, read by the bias-corrected percentile
  method (BC; Efron 1981): with z₀ = Φ⁻¹(share of replicates below the estimate), the lower
  (1 − α) bound is the Φ(2z₀ + z_α) quantile of the replicates. z₀ = 0 is the plain percentile
  method. The correction removes the median bias of skewed statistics (ratios, shares) whose
  plain percentile intervals were measured to be liberal.

For bootstrap replicates the bounds and p-values are defined so that they agree exactly:
``lower(alpha) > t`` if and only if ``p_greater(t) < alpha``, with
p_greater(t) = Φ(Φ⁻¹(F(t)) − 2z₀) and F(t) the share of replicates ≤ t. A replicate that is NaN
(a resample on which the statistic is undefined) counts against every conclusion: it is taken as
−∞ for a lower bound and +∞ for an upper bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from scipy import special

from normtest.errors import NormtestError

SamplingKind = Literal["normal", "t", "fisher_z", "binomial", "bootstrap"]

_KINDS = ("normal", "t", "fisher_z", "binomial", "bootstrap")


#: The one-sided level the few-units widening is set at (the audit's α).
WIDENING_ALPHA = 0.05


def few_units_widening(units: int) -> float:
    """How much wider a bootstrap over ``units`` independent units is read:
    √(G/(G − 1)) · t_{G−1}(1 − α)/z(1 − α) at α = :data:`WIDENING_ALPHA` (1.051 at 30 units,
    1.037 at 40, 1.025 at 60, 1.007 at 200); 1 for fewer than two units (nothing to widen)."""
    if units < 2:
        return 1.0
    z = float(special.ndtri(1 - WIDENING_ALPHA))
    t = float(special.stdtrit(units - 1, 1 - WIDENING_ALPHA))
    return math.sqrt(units / (units - 1)) * t / z


#: How many points a slim report keeps of each bootstrap distribution: its quantiles at every
#: 1% from the smallest replicate to the largest (NaN replicates kept in proportion).
SKETCH_POINTS = 101


@dataclass(frozen=True, eq=False)
class Sampling:
    """The sampling distribution of an estimate: bounds and p-values at any level."""

    kind: SamplingKind
    center: float = math.nan
    scale: float = math.nan
    df: float | None = None
    replicates: np.ndarray = field(default_factory=lambda: np.empty(0))
    bias: float = 0.0
    #: For a slim report's bootstrap: how many replicates the stored :data:`SKETCH_POINTS`
    #: quantiles stand for (None: the replicates themselves, in resampling order).
    sketch_of: int | None = None

    @classmethod
    def binomial(cls, successes: int, trials: int) -> Sampling:
        """The exact sampling of a share: ``successes`` of ``trials`` (Clopper–Pearson)."""
        return cls("binomial", center=float(successes), df=float(trials))

    @classmethod
    def bootstrap(cls, replicates: np.ndarray, estimate: float,
                  units: int | None = None) -> Sampling:
        """Bias-corrected bootstrap: z₀ from where the replicates sit around the estimate.

        ``units``: the number of independent units resampled (clusters: documents, the
        sentences' sources) where they are few. The replicates' spread around the estimate is
        then widened by :func:`few_units_widening` — the bootstrap's variance of a mean over G
        units is (G − 1)/G of the unbiased one, and G units give a Student t with G − 1
        degrees of freedom, not a normal — the small-sample correction of cluster-robust
        inference (docs/statistics.md, "Calibration")."""
        reps = np.asarray(replicates, dtype=np.float64)
        if units is not None and math.isfinite(estimate):
            reps = estimate + (reps - estimate) * few_units_widening(units)
        finite = reps[~np.isnan(reps)]
        if finite.size == 0 or not math.isfinite(estimate):
            return cls("bootstrap", replicates=reps)
        share = (np.count_nonzero(finite < estimate) + 0.5 * np.count_nonzero(finite == estimate))
        share /= finite.size
        edge = 0.5 / finite.size
        z0 = float(special.ndtri(min(max(share, edge), 1 - edge)))
        return cls("bootstrap", replicates=reps, bias=z0)

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise NormtestError(f"unknown sampling kind {self.kind!r}; use one of {_KINDS}")
        if self.kind == "bootstrap":
            # kept in resampling order (bounds sort as they need): two measurements made on the
            # same resamples then pair replicate by replicate (the gate's paired test)
            reps = np.array(self.replicates, dtype=np.float64)
            if reps.size == 0:
                raise NormtestError("a bootstrap sampling needs at least one replicate")
            object.__setattr__(self, "replicates", reps)
        elif self.kind == "binomial":
            k, n = self.center, self.df
            if n is None or not (n >= 1 and float(n).is_integer() and float(k).is_integer()
                                 and 0 <= k <= n):
                raise NormtestError(
                    f"a binomial sampling needs 0 ≤ successes ≤ trials, whole numbers, with at "
                    f"least one trial; got {k} of {n}")
            object.__setattr__(self, "scale", 0.0)
        elif not (math.isfinite(self.center) and math.isfinite(self.scale) and self.scale >= 0):
            raise NormtestError(
                f"a {self.kind} sampling needs a finite center and a non-negative scale, "
                f"got center={self.center}, scale={self.scale}"
            )
        if self.kind == "t" and (self.df is None or self.df <= 0):
            raise NormtestError("a t sampling needs positive degrees of freedom")

    @property
    def sketched(self) -> bool:
        """Whether this bootstrap is a slim report's sketch: its quantiles, not its replicates
        (bounds and p-values read to within a percentile; nothing pairs with it)."""
        return self.sketch_of is not None

    def sketch(self, points: int = SKETCH_POINTS) -> Sampling:
        """A bootstrap reduced to ``points`` quantiles, evenly spaced from the smallest replicate
        to the largest, NaN replicates kept as NaN in the same proportion; the bias-correction
        z₀ is kept as it was. Other kinds, and a bootstrap of no more replicates than
        ``points``, are returned as they are."""
        if self.kind != "bootstrap" or self.sketched or self.replicates.size <= points:
            return self
        reps = self.replicates
        missing = round(points * np.count_nonzero(np.isnan(reps)) / reps.size)
        finite = reps[~np.isnan(reps)]
        kept = points - missing
        values = (np.quantile(finite, np.linspace(0.0, 1.0, kept)) if kept and finite.size
                  else np.empty(0))
        values = np.array([float(f"{v:.7g}") for v in values])
        return Sampling("bootstrap", replicates=np.concatenate([values, np.full(missing, np.nan)]),
                        bias=self.bias, sketch_of=int(reps.size))

    # -- the parametric kinds share one shape: a location-scale law on some scale ---------------
    def _quantile(self, q: float) -> float:
        if self.kind == "t":
            return float(special.stdtrit(self.df, q))  # Student t quantile
        return float(special.ndtri(q))

    def _sf(self, z: float) -> float:
        if self.kind == "t":
            return float(special.stdtr(self.df, -z))  # Student t upper tail
        return float(special.ndtr(-z))

    @staticmethod
    def _to_scale(kind: str, value: float) -> float:
        if kind != "fisher_z":
            return value
        if value >= 1.0:
            return math.inf
        if value <= -1.0:
            return -math.inf
        return math.atanh(value)

    @staticmethod
    def _from_scale(kind: str, value: float) -> float:
        return math.tanh(value) if kind == "fisher_z" else value

    def _standardised(self, threshold: float) -> float:
        """(center − threshold)/scale on the working scale; ±inf for a zero scale."""
        t = self._to_scale(self.kind, threshold)
        diff = self.center - t
        if self.scale == 0 or math.isinf(t):
            return math.inf if diff > 0 else (-math.inf if diff < 0 else 0.0)
        return diff / self.scale

    # -- public interface -------------------------------------------------------------------------
    def _corrected(self, alpha: float) -> float:
        """The BC-adjusted tail share: Φ(2z₀ + z_α)."""
        return float(special.ndtr(2 * self.bias + special.ndtri(alpha)))

    def lower(self, alpha: float) -> float:
        """One-sided lower (1 − alpha) confidence bound."""
        _check_alpha(alpha)
        if self.kind == "bootstrap":
            reps = np.where(np.isnan(self.replicates), -np.inf, self.replicates)
            return float(np.sort(reps)[_order_index(self._corrected(alpha), reps.size)])
        if self.kind == "binomial":
            k, n = self.center, float(self.df or 0)
            return 0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, alpha))
        bound = self.center - self._quantile(1 - alpha) * self.scale
        return self._from_scale(self.kind, bound)

    def upper(self, alpha: float) -> float:
        """One-sided upper (1 − alpha) confidence bound."""
        _check_alpha(alpha)
        if self.kind == "bootstrap":
            reps = np.where(np.isnan(self.replicates), np.inf, self.replicates)
            tail = float(special.ndtr(special.ndtri(alpha) - 2 * self.bias))
            return float(np.sort(reps)[::-1][_order_index(tail, reps.size)])
        if self.kind == "binomial":
            k, n = self.center, float(self.df or 0)
            return 1.0 if k == n else float(special.betaincinv(k + 1, n - k, 1 - alpha))
        bound = self.center + self._quantile(1 - alpha) * self.scale
        return self._from_scale(self.kind, bound)

    def interval(self, confidence: float) -> tuple[float, float]:
        """Two-sided interval at `confidence`: the one-sided (1 + confidence)/2 bounds."""
        if not 0 < confidence < 1:
            raise NormtestError(f"confidence must lie in (0, 1), got {confidence}")
        tail = (1 - confidence) / 2
        return (self.lower(tail), self.upper(tail))

    def p_greater(self, threshold: float) -> float:
        """p-value for H0: θ ≤ threshold against θ > threshold."""
        if self.kind == "bootstrap":
            reps = self.replicates
            below = np.count_nonzero(reps <= threshold) + np.count_nonzero(np.isnan(reps))
            return self._uncorrect(below / reps.size, -1.0)
        if self.kind == "binomial":  # P(X ≥ k) at the threshold (1 for k = 0)
            share = min(max(threshold, 0.0), 1.0)
            return float(special.bdtrc(round(self.center) - 1, round(self.df or 0), share))
        return self._sf(self._standardised(threshold))

    def p_less(self, threshold: float) -> float:
        """p-value for H0: θ ≥ threshold against θ < threshold."""
        if self.kind == "bootstrap":
            reps = self.replicates
            above = np.count_nonzero(reps >= threshold) + np.count_nonzero(np.isnan(reps))
            return self._uncorrect(above / reps.size, 1.0)
        if self.kind == "binomial":  # P(X ≤ k) when the share is at the threshold
            share = min(max(threshold, 0.0), 1.0)
            return float(special.bdtr(round(self.center), round(self.df or 0), share))
        return self._sf(-self._standardised(threshold))

    def _uncorrect(self, share: float, sign: float) -> float:
        """p-value from a tail share under the BC correction: Φ(Φ⁻¹(share) ± 2z₀)."""
        if self.bias == 0.0 or share in (0.0, 1.0):
            return share
        return float(special.ndtr(special.ndtri(share) + sign * 2 * self.bias))

    # -- serialisation ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (NaN replicates become null)."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "bootstrap":
            out["replicates"] = [None if math.isnan(v) else float(v) for v in self.replicates]
            out["bias"] = self.bias
            if self.sketch_of is not None:
                out["sketch_of"] = self.sketch_of
        else:
            out["center"] = float(self.center)
            out["scale"] = float(self.scale)
            if self.df is not None:
                out["df"] = float(self.df)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Sampling:
        """Rebuild from :meth:`to_dict` output."""
        kind = data.get("kind")
        if kind == "bootstrap":
            stored = data["replicates"]
            if not isinstance(stored, list) or not stored or not all(
                    v is None or (isinstance(v, int | float) and not isinstance(v, bool))
                    for v in stored):
                raise NormtestError("stored bootstrap replicates are not a list of numbers")
            reps = np.array([math.nan if v is None else v for v in stored], dtype=np.float64)
            bias = _stored_number(data.get("bias", 0.0), "bias")
            of = data.get("sketch_of")
            if of is not None and (isinstance(of, bool) or not isinstance(of, int)
                                   or of < reps.size):
                raise NormtestError(f"stored sketch_of is not a count of replicates at least "
                                    f"as large as the sketch: {of!r}")
            return cls(kind="bootstrap", replicates=reps, bias=bias, sketch_of=of)
        if kind not in _KINDS:
            raise NormtestError(f"stored sampling has unknown kind {kind!r}")
        df = data.get("df")
        return cls(kind=kind, center=_stored_number(data["center"], "center"),
                   scale=_stored_number(data["scale"], "scale"),
                   df=None if df is None else _stored_number(df, "df"))


def _stored_number(value: Any, name: str) -> float:
    """A finite number read back from a report, or an error naming the field."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise NormtestError(f"stored sampling {name} is not a number: {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise NormtestError(f"stored sampling {name} is not finite: {value!r}")
    return number


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 0.5:
        raise NormtestError(f"alpha must lie in (0, 0.5), got {alpha}")


def _order_index(alpha: float, size: int) -> int:
    """0-based index of the ⌈alpha·B⌉-th order statistic (the inverted-CDF quantile)."""
    k = math.ceil(alpha * size - 1e-9)
    return min(max(k, 1), size) - 1
