"""The result model: measurements, criteria, verdicts and results (docs/theory.md §8).

A :class:`Measurement` (:mod:`normtest.verdict.measurement`) is what the data say (an estimate and
its sampling distribution); a :class:`Criterion` is what a claim demands; :func:`judge` turns the
two into a :class:`Verdict`. They stay separate so that a stored result can be re-judged under
another criterion without the raw model: ``result.rejudge(Criterion.minimum_effect(0.5))``.

A measurement may carry named *components* (for example the slope and curvature of a growth
curve). A criterion may name components too; the verdict is then the intersection-union rule:
PASS only when the headline and every judged component pass, FAIL when any of them fails,
INCONCLUSIVE otherwise. Components a criterion does not name are reported but not judged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal

import numpy as np

from normtest.errors import NormtestError
from normtest.verdict.measurement import (
    DEFAULT_CONFIDENCE,
    Measurement,
    finite_or_none,
    float_or_nan,
    str_or_none,
)
from normtest.verdict.sampling import Sampling

__all__ = ["DEFAULT_CONFIDENCE", "Criterion", "Direction", "Judgement", "Measurement", "Result",
           "Verdict", "judge", "p_values", "unstable"]

Direction = Literal["greater", "less", "within"]


def variant_key(variant: Mapping[str, str], separator: str = ",") -> str:
    """A variant as ``axis=value`` pairs: the bracket part of a result id
    (``composition=sqrt_n,transform=raw``) or, with ``separator=", "``, a label in prose."""
    return separator.join(f"{k}={v}" for k, v in variant.items())


class Verdict(StrEnum):
    """What a claim's check concluded."""

    PASS = "PASS"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"
    ERROR = "ERROR"
    SKIPPED = "SKIPPED"


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


def _role(value: Any) -> str | None:
    if value is not None and value not in ("confirmatory", "exploratory"):
        raise ValueError(f"role must be 'confirmatory' or 'exploratory', got {value!r}")
    return None if value is None else str(value)


@dataclass(frozen=True)
class Criterion:
    """What a claim demands of a measurement.

    - ``greater``: PASS when the lower (1 − α) bound exceeds ``threshold``, FAIL when the upper
      bound falls below it (a minimum-effect test, never a test against zero by default);
    - ``less``: the mirror image;
    - ``within``: equivalence: PASS when the two-sided (1 − 2α) interval lies inside ``margin``,
      FAIL when it lies entirely outside it.

    ``components`` judge named components of the measurement with their own criteria.
    """

    direction: Direction
    threshold: float | None = None
    margin: tuple[float, float] | None = None
    alpha: float = 0.05
    components: Mapping[str, Criterion] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.direction not in ("greater", "less", "within"):
            raise NormtestError(
                f"criterion direction must be 'greater', 'less' or 'within', got {self.direction!r}"
            )
        if not 0 < self.alpha < 0.5:
            raise NormtestError(f"alpha must lie in (0, 0.5), got {self.alpha}")
        if self.direction == "within":
            if self.margin is None or len(self.margin) != 2:
                raise NormtestError("an equivalence criterion needs margin=(low, high)")
            low, high = (float(v) for v in self.margin)
            if not low < high:
                raise NormtestError(f"equivalence margin needs low < high, got {self.margin}")
            object.__setattr__(self, "margin", (low, high))
        elif self.threshold is None or not math.isfinite(self.threshold):
            raise NormtestError(f"a {self.direction!r} criterion needs a finite threshold")

    @classmethod
    def minimum_effect(
        cls, min_effect: float, alternative: Literal["greater", "less"] = "greater",
        alpha: float = 0.05,
    ) -> Criterion:
        """Effect at least ``min_effect`` in the claimed direction (threshold ±min_effect)."""
        if alternative not in ("greater", "less"):
            raise NormtestError(f"alternative must be 'greater' or 'less', got {alternative!r}")
        if min_effect < 0:
            raise NormtestError(
                f"min_effect is a magnitude and must be ≥ 0, got {min_effect}; "
                "give the direction with alternative='less'"
            )
        sign = 1.0 if alternative == "greater" else -1.0
        return cls(direction=alternative, threshold=sign * float(min_effect), alpha=alpha)

    def headline(self) -> Criterion:
        """The same criterion judging the headline alone (its components dropped): what a
        measurement without those components — a row's ``beyond`` reading — is held to."""
        return replace(self, components={})

    def with_alpha(self, alpha: float) -> Criterion:
        """The same criterion, components included, at another level."""
        parts = {k: c.with_alpha(alpha) for k, c in self.components.items()}
        return replace(self, alpha=alpha, components=parts)

    def with_threshold(self, value: float | Sequence[float], claim: str = "") -> Criterion:
        """The same criterion with a new threshold (one-sided) or margin ``(low, high)``.

        Components and α stay as they are.
        """
        name = claim or "this claim"
        if self.direction == "within":
            if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != 2:
                raise NormtestError(
                    f"{name} is judged against a margin; give two numbers LOW < HIGH, got "
                    f"{value!r}"
                )
            low, high = (float(v) for v in value)
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise NormtestError(f"{name}: a margin needs finite LOW < HIGH, got {value!r}")
            return replace(self, margin=(low, high))
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise NormtestError(
                f"{name} is judged against one threshold ({self.direction}); give one number, "
                f"got {value!r}"
            )
        if not math.isfinite(value):
            raise NormtestError(f"{name}: a threshold must be a finite number, got {value!r}")
        return replace(self, threshold=float(value))

    def describe(self) -> str:
        """A short human-readable statement, e.g. 'ρ > 0.3 at α=0.05'."""
        if self.direction == "within":
            assert self.margin is not None
            head = f"inside [{self.margin[0]:g}, {self.margin[1]:g}]"
        else:
            head = f"{'>' if self.direction == 'greater' else '<'} {self.threshold:g}"
        parts = "".join(f"; {name} {c.describe().rsplit(' at ', 1)[0]}"
                        for name, c in self.components.items())
        return f"{head}{parts} at α={self.alpha:g}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        return {
            "direction": self.direction,
            "threshold": self.threshold,
            "margin": None if self.margin is None else list(self.margin),
            "alpha": self.alpha,
            "components": {k: c.to_dict() for k, c in self.components.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Criterion:
        """Rebuild from :meth:`to_dict` output."""
        margin = data.get("margin")
        return cls(
            direction=data["direction"],
            threshold=data.get("threshold"),
            margin=None if margin is None else (float(margin[0]), float(margin[1])),
            alpha=float(data.get("alpha", 0.05)),
            components={k: cls.from_dict(v) for k, v in data.get("components", {}).items()},
        )


@dataclass(frozen=True)
class Judgement:
    """A verdict with the two one-sided p-values behind it.

    ``p_pass`` tests the claim (small when the data support it); ``p_fail`` tests its negation.
    PASS ⇔ p_pass < α; FAIL ⇔ p_fail < α (both cannot hold at α < 0.5).
    """

    verdict: Verdict
    reason: str
    p_pass: float
    p_fail: float


def p_values(sampling: Sampling, criterion: Criterion) -> tuple[float, float]:
    """(p_pass, p_fail) of one part: the p-values of the claim and of its negation."""
    if criterion.direction == "greater":
        assert criterion.threshold is not None
        return sampling.p_greater(criterion.threshold), sampling.p_less(criterion.threshold)
    if criterion.direction == "less":
        assert criterion.threshold is not None
        return sampling.p_less(criterion.threshold), sampling.p_greater(criterion.threshold)
    assert criterion.margin is not None
    low, high = criterion.margin
    p_pass = max(sampling.p_greater(low), sampling.p_less(high))
    p_fail = min(sampling.p_less(low), sampling.p_greater(high))
    return p_pass, p_fail


def _one_reason(name: str, measurement: Measurement, criterion: Criterion, verdict: Verdict) -> str:
    assert measurement.sampling is not None
    a = criterion.alpha
    conf = f"{100 * (1 - a):g}%"
    lo, hi = measurement.sampling.lower(a), measurement.sampling.upper(a)
    if criterion.direction == "within":
        assert criterion.margin is not None
        m_lo, m_hi = criterion.margin
        span = f"{name} {100 * (1 - 2 * a):g}% interval [{lo:.4g}, {hi:.4g}]"
        if verdict is Verdict.PASS:
            return f"{span} inside the margin [{m_lo:g}, {m_hi:g}]"
        if verdict is Verdict.FAIL:
            side = f"above {m_hi:g}" if lo > m_hi else f"below {m_lo:g}"
            return f"{span} entirely {side}"
        return f"{span} overlaps the edge of the margin [{m_lo:g}, {m_hi:g}]"
    t = criterion.threshold
    greater = criterion.direction == "greater"
    near, far = (lo, hi) if greater else (hi, lo)
    near_word, far_word = ("lower", "upper") if greater else ("upper", "lower")
    cmp = ">" if greater else "<"
    if verdict is Verdict.PASS:
        return f"{name} {near_word} {conf} bound {near:.4g} {cmp} threshold {t:g}"
    if verdict is Verdict.FAIL:
        inv = "<" if greater else ">"
        return f"{name} {far_word} {conf} bound {far:.4g} {inv} threshold {t:g}"
    return f"{name} {conf} bounds [{lo:.4g}, {hi:.4g}] straddle threshold {t:g}"


def unstable(measurement: Measurement, alpha: float) -> str | None:
    """Why a bootstrap sampling distribution cannot be read (None: it can).

    A bootstrap is unreadable when every replicate is the same number (the resamples cannot
    measure the uncertainty), when the estimate lies outside every replicate (the statistic jumps
    between the sample and its resamples — a ratio whose denominator is near zero), or when the
    estimate lies outside its own (1 − 2α) interval or that interval is a single point. No
    sampling distribution can be read around an estimate that is NaN or infinite.
    """
    sampling = measurement.sampling
    if sampling is not None and not math.isfinite(measurement.estimate):
        return (f"{measurement.statistic}: the estimate is {measurement.estimate}, so its "
                "sampling distribution has nothing to stand for")
    if sampling is None or sampling.kind != "bootstrap":
        return None
    reps = sampling.replicates[~np.isnan(sampling.replicates)]
    if reps.size == 0:
        return None
    name, estimate = measurement.statistic, measurement.estimate
    low, high = sampling.lower(alpha), sampling.upper(alpha)
    level = f"{100 * (1 - 2 * alpha):g}%"
    if np.ptp(reps) == 0:
        return (f"{name}: every bootstrap replicate equals {reps[0]:.4g}, so the resamples "
                "cannot measure its uncertainty")
    if estimate < reps.min() or estimate > reps.max():
        return (f"{name}: the estimate {estimate:.4g} lies outside every bootstrap replicate "
                f"([{reps.min():.4g}, {reps.max():.4g}]); the statistic is unstable on this "
                "sample (for a ratio, its denominator is near zero)")
    if not low <= estimate <= high:
        return (f"{name}: the estimate {estimate:.4g} lies outside its own {level} interval "
                f"[{low:.4g}, {high:.4g}]; the bootstrap distribution is too skewed to read")
    if low == high:
        return f"{name}: its {level} interval collapsed to the single point {low:.4g}"
    return None


def judge(
    measurement: Measurement, criterion: Criterion, p_pass: float | None = None,
    p_fail: float | None = None,
) -> Judgement:
    """Judge a measurement against a criterion (components by the intersection-union rule).

    PASS needs every judged part to pass at α (p_pass is the largest part p-value). FAIL needs
    one part to fail at α/k, k the number of judged parts that could be estimated (Bonferroni:
    the false-FAIL rate stays at most α however many parts a claim has). A part that could not be
    estimated blocks PASS (p_pass = 1) but not FAIL. ``p_pass``/``p_fail`` may be supplied
    already adjusted for multiplicity (see :func:`normtest.stats.adjust`).
    """
    if measurement.sampling is None:
        why = f"{measurement.statistic}: {measurement.reason or 'not estimable'}"
        return Judgement(Verdict.INCONCLUSIVE, why, math.nan, math.nan)
    parts: list[tuple[str, Measurement, Criterion]] = [
        (measurement.statistic, measurement, criterion)
    ]
    for name, sub in criterion.components.items():
        if name not in measurement.components:
            raise NormtestError(
                f"criterion judges component {name!r} but the measurement has only "
                f"{sorted(measurement.components)}"
            )
        parts.append((name, measurement.components[name], sub))
    problems = [why for why in (unstable(m, c.alpha) for _, m, c in parts) if why is not None]
    if problems:  # an interval that cannot be read decides nothing, and is not tested
        return Judgement(Verdict.INCONCLUSIVE, "; ".join(problems), math.nan, math.nan)

    missing = [(name, m) for name, m, _ in parts if m.sampling is None]
    singles = []
    for name, m, c in parts:
        if m.sampling is not None:
            pp, pf = p_values(m.sampling, c)
            singles.append((name, m, c, pp, pf))
    k = len(singles)
    own_pass = 1.0 if missing else max(s[3] for s in singles)
    own_fail = min(1.0, k * min(s[4] for s in singles))
    adjusted = p_pass is not None or p_fail is not None
    p_pass = own_pass if p_pass is None else p_pass
    p_fail = own_fail if p_fail is None else p_fail

    def own(c: Criterion, pp: float, pf: float) -> Verdict:
        if pp < c.alpha:
            return Verdict.PASS
        return Verdict.FAIL if k * pf < c.alpha else Verdict.INCONCLUSIVE

    described = []
    for n, m, c, pp, pf in singles:
        v = own(c, pp, pf)
        if v is Verdict.INCONCLUSIVE and pf < c.alpha:  # outside, but not at α/k
            text = _one_reason(n, m, c, Verdict.FAIL)
            text += f" (p={pf:.3g}; FAIL needs p < α/{k} with {k} judged parts)"
        else:
            text = _one_reason(n, m, c, v)
        described.append((v, text))
    missing_text = [f"{name}: {m.reason or 'not estimable'}" for name, m in missing]

    if p_pass < criterion.alpha:
        verdict = Verdict.PASS
        reasons = [t for _, t in described]
    elif p_fail < criterion.alpha:
        verdict = Verdict.FAIL
        reasons = [t for v, t in described if v is Verdict.FAIL] or [
            t for (_, t), s in zip(described, singles, strict=True)
            if s[4] == min(x[4] for x in singles)
        ]
    else:
        verdict = Verdict.INCONCLUSIVE
        reasons = [t for v, t in described if v is not Verdict.PASS] + missing_text
        if not reasons:
            reasons = [t for _, t in described]
    if adjusted and (p_pass, p_fail) != (own_pass, own_fail):
        reasons.append(
            f"after multiplicity adjustment p_pass={p_pass:.3g}, p_fail={p_fail:.3g}"
            + ("" if verdict is not Verdict.INCONCLUSIVE else
               " (the unadjusted interval above does not account for the family)")
        )
    return Judgement(verdict, "; ".join(reasons), p_pass, p_fail)


@dataclass(frozen=True, eq=False)
class Result:
    """One judged claim (or one call of a statistics function)."""

    verdict: Verdict
    reason: str
    measurement: Measurement | None = None
    criterion: Criterion | None = None
    claim: str | None = None
    variant: Mapping[str, str] = field(default_factory=dict)
    p_value: float = math.nan
    p_adjusted: float | None = None
    p_fail_adjusted: float | None = None
    expected: Verdict | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    #: ``confirmatory`` (a hypothesis the paper states: decided line by line in one audit),
    #: ``exploratory`` (every other variant: Benjamini–Hochberg), or None outside an audit
    role: str | None = None
    #: the scorecard line a confirmatory row counts towards (normtest.scorecard.lines)
    hypothesis: str | None = None
    #: every variant this row stands for, its own first, when several variants of its claim
    #: were measured on identical inputs (one measurement, one row); empty: only its own
    stands_for: tuple[Mapping[str, str], ...] = ()

    @property
    def confirmatory(self) -> bool:
        """Whether this row tests a hypothesis the paper states in advance."""
        return self.role == "confirmatory"

    @classmethod
    def judged(
        cls, measurement: Measurement, criterion: Criterion, **context: Any
    ) -> Result:
        """Judge ``measurement`` against ``criterion`` and wrap the outcome."""
        j = judge(measurement, criterion)
        return cls(
            verdict=j.verdict, reason=j.reason, measurement=measurement, criterion=criterion,
            p_value=j.p_pass, **context,
        )

    # -- what a reader looks at ------------------------------------------------------------------
    @property
    def id(self) -> str:
        """Stable id such as ``cer.linear[composition=sqrt_n]``."""
        return self._id_of(self.variant)

    def _id_of(self, variant: Mapping[str, str]) -> str:
        base = self.claim or (self.measurement.statistic if self.measurement else "result")
        if not variant:
            return base
        return f"{base}[{variant_key(variant)}]"

    @property
    def variants(self) -> tuple[Mapping[str, str], ...]:
        """Every variant this row stands for, its own first."""
        return tuple(self.stands_for) or (self.variant,)

    @property
    def ids(self) -> tuple[str, ...]:
        """Every id this row answers to: its own, then those of the variants it stands for
        (a gate, a pytest item or a selection finds the row under each)."""
        return tuple(self._id_of(v) for v in self.variants)

    @property
    def shown_variant(self) -> dict[str, str]:
        """The variant as a reader sees it: an axis on which the variants the row stands for
        differ shows their values joined by ``|`` (``composition=sum|mean``)."""
        return {axis: "|".join(dict.fromkeys(v.get(axis, "") for v in self.variants))
                for axis in self.variant}

    @property
    def label(self) -> str:
        """The id as a reader sees it (``word.norm_ic[composition=sum|mean,transform=raw]`` for
        a row that stands for several variants; else its id)."""
        return self.id if len(self.variants) < 2 else self._id_of(self.shown_variant)

    @property
    def agreement(self) -> str | None:
        """``yes``/``NO`` when the paper states an expectation for this result and the audit
        decided it, ``undecided`` when the audit did not (never a disagreement), else None."""
        if self.expected is None:
            return None
        if self.verdict not in (Verdict.PASS, Verdict.FAIL):
            return "undecided"
        return "yes" if self.expected is self.verdict else "NO"

    @property
    def estimate(self) -> float:
        """The headline estimate."""
        return self.measurement.estimate if self.measurement else math.nan

    @property
    def ci(self) -> tuple[float, float]:
        """Two-sided (1 − 2α) interval: its ends are the one-sided bounds the verdict used."""
        if self.measurement is None:
            return (math.nan, math.nan)
        alpha = self.criterion.alpha if self.criterion else (1 - DEFAULT_CONFIDENCE) / 2
        return self.measurement.interval(1 - 2 * alpha)

    @property
    def n(self) -> int:
        """Number of observations behind the headline estimate."""
        return self.measurement.n if self.measurement else 0

    @property
    def threshold(self) -> float | tuple[float, float] | None:
        """The threshold (one-sided) or margin (equivalence) the headline was held to."""
        if self.criterion is None:
            return None
        if self.criterion.direction == "within":
            return self.criterion.margin
        return self.criterion.threshold

    @property
    def p_fail(self) -> float:
        """p-value of the opposite test (the evidence for FAIL), recomputed from the sampling."""
        if self.measurement is None or self.criterion is None:
            return math.nan
        return judge(self.measurement, self.criterion).p_fail

    def slim(self) -> Result:
        """This row as a slim report stores it (:meth:`Measurement.slim`)."""
        return self if self.measurement is None else replace(self,
                                                             measurement=self.measurement.slim())

    def rejudge(self, criterion: Criterion) -> Result:
        """The same measurement judged under another criterion (no model needed).

        Any multiplicity adjustment is dropped: re-adjust the family with
        :func:`normtest.stats.adjust` after re-judging its members.
        """
        if self.measurement is None:
            raise NormtestError(f"{self.id} has no measurement to re-judge ({self.reason})")
        j = judge(self.measurement, criterion)
        return replace(
            self, verdict=j.verdict, reason=j.reason, criterion=criterion, p_value=j.p_pass,
            p_adjusted=None, p_fail_adjusted=None,
        )

    # -- serialisation ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The flat row of ``report.json`` plus the full measurement and criterion."""
        low, high = self.ci
        threshold = self.threshold
        return {
            "claim": self.claim,
            "variant": dict(self.variant),
            "verdict": self.verdict.value,
            "estimate": finite_or_none(self.estimate),
            "ci": [finite_or_none(low), finite_or_none(high)],
            "threshold": list(threshold) if isinstance(threshold, tuple) else threshold,
            "p_value": finite_or_none(self.p_value),
            "p_adjusted": finite_or_none(self.p_adjusted),
            "p_fail_adjusted": finite_or_none(self.p_fail_adjusted),
            "n": self.n,
            "expected": None if self.expected is None else self.expected.value,
            "role": self.role,
            "hypothesis": self.hypothesis,
            "reason": self.reason,
            "stands_for": [dict(v) for v in self.stands_for],
            "details": dict(self.details),
            "measurement": None if self.measurement is None else self.measurement.to_dict(),
            "criterion": None if self.criterion is None else self.criterion.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Result:
        """Rebuild from :meth:`to_dict` output."""
        try:
            verdict = Verdict(data["verdict"])
            expected = data.get("expected")
            measurement = data.get("measurement")
            criterion = data.get("criterion")
            return cls(
                verdict=verdict,
                reason=data.get("reason", ""),
                measurement=None if measurement is None else Measurement.from_dict(measurement),
                criterion=None if criterion is None else Criterion.from_dict(criterion),
                claim=str_or_none("claim", data.get("claim")),
                variant=dict(data.get("variant", {})),
                p_value=float_or_nan(data.get("p_value")),
                p_adjusted=_float_or_none(data.get("p_adjusted")),
                p_fail_adjusted=_float_or_none(data.get("p_fail_adjusted")),
                expected=None if expected is None else Verdict(expected),
                details=dict(data.get("details", {})),
                role=_role(data.get("role")),
                hypothesis=str_or_none("hypothesis", data.get("hypothesis")),
                stands_for=tuple(_variant(v) for v in data.get("stands_for") or ()),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, NormtestError):
                raise
            raise NormtestError(
                f"stored result is malformed ({exc!r}); was it written by normtest?"
            ) from exc


def _variant(value: Any) -> dict[str, str]:
    """A stored variant: a mapping of axis names to values, all strings."""
    if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise TypeError(f"a stored variant must map axis names to values, got {value!r}")
    return dict(value)
