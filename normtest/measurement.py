"""The measurement: what the data say — an estimate, its sampling distribution and how it was
obtained (docs/theory.md §8); :mod:`normtest.result` judges it against a criterion.

A measurement may carry named *components* (for example the slope and curvature of a growth
curve), a digest of its *inputs* (two measurements with the same digest are the same
measurement) and of its bootstrap *draws* (two measurements with the same draws pair replicate
by replicate: :func:`normtest.stats.measure_contrast`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from normtest.sampling import Sampling

__all__ = ["DEFAULT_CONFIDENCE", "Measurement", "finite_or_none", "float_or_nan", "str_or_none"]

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

    @property
    def ci(self) -> tuple[float, float]:
        """Two-sided interval at ``confidence`` (NaNs when not estimable)."""
        return self.interval(self.confidence)

    def interval(self, confidence: float) -> tuple[float, float]:
        """Two-sided interval at any confidence, from the stored sampling distribution."""
        if self.sampling is None:
            return (math.nan, math.nan)
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
        sampling = data.get("sampling")
        confidence = float(data.get("confidence", DEFAULT_CONFIDENCE))
        if not 0 < confidence < 1:
            raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
        return cls(
            statistic=data["statistic"],
            estimate=float_or_nan(data.get("estimate")),
            n=int(data["n"]),
            method=data["method"],
            sampling=None if sampling is None else Sampling.from_dict(sampling),
            confidence=confidence,
            seed=data.get("seed"),
            settings=dict(data.get("settings", {})),
            components={k: cls.from_dict(v) for k, v in data.get("components", {}).items()},
            reason=data.get("reason"),
            inputs=str_or_none("inputs", data.get("inputs")),
            draws=str_or_none("draws", data.get("draws")),
        )
