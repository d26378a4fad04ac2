"""The measurement: what the data say — an estimate, its sampling distribution and how it was
obtained (docs/theory.md §8); :mod:`normtest.verdict.result` judges it against a criterion.

A measurement may carry named *components* (for example the slope and curvature of a growth
curve), a digest of its *inputs* (two measurements with the same digest are the same
measurement) and of its bootstrap *draws* (two measurements with the same draws pair replicate
by replicate: :func:`normtest.stats.measure_contrast`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from normtest.errors import with_article
from normtest.verdict.sampling import Sampling

__all__ = ["DEFAULT_CONFIDENCE", "Measurement", "finite_or_none", "float_or_nan", "invalid",
           "str_or_none"]

#: Default two-sided confidence of a stored interval: its ends are the one-sided 95% bounds.
DEFAULT_CONFIDENCE = 0.90


def finite_or_none(value: float | None) -> float | None:
    """A finite float, or None for a missing, NaN or infinite value."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def float_or_nan(value: Any) -> float:
    """A stored number, NaN for null."""
    return math.nan if value is None else float(value)


def str_or_none(name: str, value: Any) -> str | None:
    """A stored text field: a string or null (anything else is a damaged report)."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name!r} is {type(value).__name__}, not a string or null")
    return value


@dataclass(frozen=True, eq=False)
class Measurement:
    """An estimate with its uncertainty and how it was obtained.

    ``sampling`` is None when the data were too few to estimate anything; ``reason`` then says why.
    ``ci`` is the two-sided interval at ``confidence``, kept for reading; criteria use ``sampling``.
    """

    statistic: str
    estimate: float
    n: int
    method: str
    sampling: Sampling | None = None
    confidence: float = DEFAULT_CONFIDENCE
    seed: int | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    components: Mapping[str, Measurement] = field(default_factory=dict)
    reason: str | None = None
    #: a digest of everything the measurement was computed from (its data in canonical order,
    #: the statistic, the resampling): two measurements with the same digest are the same
    #: measurement (the audit reports them as one row); None when not recorded
    inputs: str | None = None
    #: a digest of the bootstrap draws (the units resampled, their number, B and the seed): two
    #: measurements with the same ``draws`` resampled alike, draw for draw, so the difference of
    #: their replicates is a paired bootstrap (:func:`normtest.stats.measure_contrast`)
    draws: str | None = None
    #: A slim report's interval at ``confidence``, as the full replicates gave it (its sampling
    #: is a sketch, :meth:`Sampling.sketch`, read at other levels to within a percentile)
    stored_ci: tuple[float, float] | None = None

    @property
    def ci(self) -> tuple[float, float]:
        """Two-sided interval at ``confidence`` (NaNs when not estimable)."""
        return self.interval(self.confidence)

    @property
    def interval_kind(self) -> str | None:
        """How the interval is read: ``bootstrap``, ``analytic`` (a normal, t or Fisher z
        law) or ``exact`` (binomial); None without a sampling distribution."""
        if self.sampling is None:
            return None
        return {"bootstrap": "bootstrap", "binomial": "exact"}.get(self.sampling.kind,
                                                                   "analytic")

    @property
    def sketched(self) -> bool:
        """Whether this measurement, or one of its components, holds a slim report's sketch."""
        return bool(self.sampling is not None and self.sampling.sketched) or any(
            c.sketched for c in self.components.values())

    def slim(self) -> Measurement:
        """The measurement a slim report stores: each bootstrap sampling (its components' too)
        reduced to its sketch, its interval at ``confidence`` kept exactly as it was."""
        sampling = None if self.sampling is None else self.sampling.sketch()
        kept = self.ci if sampling is not self.sampling else self.stored_ci  # not yet sketched
        return replace(self, sampling=sampling, stored_ci=kept,
                       components={k: c.slim() for k, c in self.components.items()})

    def interval(self, confidence: float) -> tuple[float, float]:
        """Two-sided interval at any confidence, from the stored sampling distribution (a slim
        report's at its own confidence: as the full replicates gave it)."""
        if self.sampling is None:
            return (math.nan, math.nan)
        if self.stored_ci is not None and math.isclose(confidence, self.confidence):
            return self.stored_ci
        return self.sampling.interval(confidence)

    @classmethod
    def not_estimable(
        cls, statistic: str, n: int, method: str, reason: str, **kwargs: Any
    ) -> Measurement:
        """A measurement that could not be made (too few points, constant input)."""
        return cls(
            statistic=statistic, estimate=math.nan, n=n, method=method, reason=reason, **kwargs
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        low, high = self.ci
        return {
            "statistic": self.statistic,
            "estimate": finite_or_none(self.estimate),
            "ci": [finite_or_none(low), finite_or_none(high)],
            "confidence": self.confidence,
            "n": self.n,
            "method": self.method,
            "seed": self.seed,
            "settings": dict(self.settings),
            "reason": self.reason,
            "sampling": None if self.sampling is None else self.sampling.to_dict(),
            "components": {name: m.to_dict() for name, m in self.components.items()},
            "inputs": self.inputs,
            "draws": self.draws,
        }

    def with_settings(self, **extra: Any) -> Measurement:
        """The same measurement with ``extra`` entries recorded in its settings."""
        return replace(self, settings={**self.settings, **extra})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Measurement:
        """Rebuild from :meth:`to_dict` output."""
        stored = data.get("sampling")
        confidence = float(data.get("confidence", DEFAULT_CONFIDENCE))
        if not 0 < confidence < 1:
            raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
        sampling = None if stored is None else Sampling.from_dict(stored)
        stored_ci = None
        if sampling is not None and sampling.sketched:  # a slim report: its interval as written
            low, high = data["ci"]
            stored_ci = (float_or_nan(low), float_or_nan(high))
        return cls(
            statistic=data["statistic"],
            estimate=float_or_nan(data.get("estimate")),
            n=int(data["n"]),
            method=data["method"],
            sampling=sampling,
            stored_ci=stored_ci,
            confidence=confidence,
            seed=data.get("seed"),
            settings=dict(data.get("settings", {})),
            components={k: cls.from_dict(v) for k, v in data.get("components", {}).items()},
            reason=data.get("reason"),
            inputs=str_or_none("inputs", data.get("inputs")),
            draws=str_or_none("draws", data.get("draws")),
        )


def invalid(value: Any, judged: Iterable[str] = ()) -> str | None:
    """What is wrong with a measurement that a user's code returned (None: nothing), in words.

    A :class:`Measurement` is refused when a field has the wrong type (the statistic and method are
    strings, ``n`` a whole number ≥ 0, the estimate a real number, the sampling a
    :class:`~normtest.verdict.sampling.Sampling` or None, the components measurements), when it
    carries a sampling distribution but its estimate is NaN or infinite (a measurement that could
    not be made is :meth:`Measurement.not_estimable`: estimate NaN, no sampling, a ``reason``), when
    its interval at ``confidence`` cannot be read, is not finite (a bootstrap's ends may be
    infinite: that is how it counts resamples on which the statistic is undefined) or is inverted,
    or when the estimate lies outside the interval of a sampling built around it (normal, t, Fisher
    z, binomial; a bootstrap's estimate outside its interval is a statistical finding, judged
    INCONCLUSIVE). ``judged`` names the components a criterion judges, which must be there.
    """
    if not isinstance(value, Measurement):
        return f"it is {with_article(type(value).__name__)}, not a normtest.claims.Measurement"
    problem = _invalid(value, "its", 0)
    if problem is not None:
        return problem
    missing = [name for name in judged if name not in value.components]
    if missing:
        return (f"its criterion judges the component(s) {missing}, but the measurement has "
                f"{sorted(value.components) or 'none'}")
    return None


#: How deep components may nest (a measurement whose components contain it is refused).
_MAX_DEPTH = 8


def _real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _invalid(m: Measurement, its: str, depth: int) -> str | None:
    if depth > _MAX_DEPTH:
        return f"{its} components nest more than {_MAX_DEPTH} deep (or contain themselves)"
    if not isinstance(m.statistic, str) or not m.statistic:
        return f"{its} statistic is {m.statistic!r}, not a non-empty string"
    name = f"{its} {m.statistic}"
    if not _real(m.estimate):
        return f"{name} estimate is {type(m.estimate).__name__} {m.estimate!r}, not a number"
    if isinstance(m.n, bool) or not isinstance(m.n, numbers.Integral) or m.n < 0:
        return f"{name} n is {m.n!r}, not a whole number ≥ 0"
    if not isinstance(m.method, str):
        return f"{name} method is {type(m.method).__name__}, not a string"
    if not _real(m.confidence) or not 0 < m.confidence < 1:
        return f"{name} confidence is {m.confidence!r}, not a number in (0, 1)"
    for field_name in ("reason", "inputs", "draws"):
        text = getattr(m, field_name)
        if text is not None and not isinstance(text, str):
            return f"{name} {field_name} is {type(text).__name__}, not a string or None"
    if m.seed is not None and (isinstance(m.seed, bool) or not isinstance(m.seed,
                                                                         numbers.Integral)):
        return f"{name} seed is {m.seed!r}, not a whole number or None"
    if not isinstance(m.settings, Mapping):
        return f"{name} settings are {type(m.settings).__name__}, not a mapping"
    if not isinstance(m.components, Mapping):
        return f"{name} components are {type(m.components).__name__}, not a mapping"
    for key, part in m.components.items():
        if not isinstance(key, str):
            return f"{name} component name {key!r} is not a string"
        if not isinstance(part, Measurement):
            return (f"{name} component {key!r} is {type(part).__name__}, not a "
                    "normtest.claims.Measurement")
        problem = _invalid(part, f"{its} component {key!r}:", depth + 1)
        if problem is not None:
            return problem
    try:
        estimate = float(m.estimate)
    except (OverflowError, ValueError, TypeError):  # an integer beyond any float
        return f"{name} estimate {m.estimate!r} is not a finite number"
    sampling = m.sampling
    if sampling is None:
        if math.isinf(estimate):
            return (f"{name} estimate is {estimate} without a sampling distribution; a "
                    "measurement that could not be made is Measurement.not_estimable(...) "
                    "(estimate NaN, with a reason)")
        return None
    if not isinstance(sampling, Sampling):
        return (f"{name} sampling is {type(sampling).__name__}, not a normtest.verdict.sampling."
                "Sampling (or None when nothing could be estimated)")
    if not math.isfinite(estimate):
        return (f"{name} estimate is {estimate} but it carries a sampling distribution; a "
                "measurement that could not be made is Measurement.not_estimable(...) (estimate "
                "NaN, no sampling, with a reason)")
    problem = _unreadable(sampling)
    if problem is not None:
        return f"{name} {sampling.kind} sampling {problem}"
    level = f"{100 * m.confidence:g}%"
    try:
        low, high = (float(v) for v in sampling.interval(float(m.confidence)))
    except Exception as exc:  # a sampling that cannot be read: say what it raised
        return (f"{name} {sampling.kind} sampling cannot be read ({type(exc).__name__}: "
                f"{exc})")
    shown = f"{name} {level} interval [{low:.4g}, {high:.4g}]"
    if math.isnan(low) or math.isnan(high):
        return f"{shown} is not a number"
    if low > high:
        return f"{shown} is inverted (its lower end above its upper end)"
    if sampling.kind == "bootstrap":
        return None  # infinite ends count undefined resamples; the estimate is judged there
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{shown} is not finite"
    slack = 1e-9 * max(1.0, abs(estimate), abs(low), abs(high))
    if not low - slack <= estimate <= high + slack:
        return (f"{name} estimate {estimate:.4g} lies outside its own {level} interval "
                f"[{low:.4g}, {high:.4g}]; the sampling must be built around the estimate")
    return None


def _unreadable(sampling: Sampling) -> str | None:
    """What in a sampling's stored numbers cannot be read (None: they can)."""
    if sampling.kind not in ("normal", "t", "fisher_z", "binomial", "bootstrap"):
        return "is of no known kind"
    if sampling.kind == "bootstrap":
        reps = sampling.replicates
        if not isinstance(reps, np.ndarray) or reps.ndim != 1 or reps.size == 0 \
                or reps.dtype.kind != "f":
            return "needs a non-empty list of replicates"
        if not _real(sampling.bias) or not math.isfinite(sampling.bias):
            return f"has a bias of {sampling.bias!r}, not a finite number"
        return None
    for field_name in ("center", "scale", "df"):
        number = getattr(sampling, field_name)
        if field_name == "df" and number is None:
            continue
        if not _real(number) or not math.isfinite(number):
            return f"has {field_name} {number!r}, not a finite number"
    return None
