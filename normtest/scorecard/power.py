"""How large a sample would decide a row: the power analysis behind an undecided verdict.

A row is INCONCLUSIVE when its evidence does not reach the level it is held to. The evidence of
a part is the normal deviate z of its p-value, and z grows as √n with the number of resampled
units n (words for the word claims; documents for the text and CER claims, whose bootstraps
resample whole documents). Taking the measured estimate as the true effect, the sample that
decides the row with power 0.9 at level α′ is the current one times ((z₁₋α′ + z₀.₉) / z)², with
α′ the level the row is held to by its line's rule: α towards PASS (replicated needs every row,
no adjustment), α over the number of the line's rows towards FAIL (Holm's first step: the
conservative case).

This is the normal approximation every sample-size formula uses; it is a planning figure, not a
guarantee: the estimate itself is uncertain (docs/statistics.md, "Power").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from scipy import special

from normtest.verdict.result import Result, Verdict, p_values, unstable

#: The power the required sample is computed for.
POWER = 0.9
#: A requirement this many times the sample counts as out of reach.
OUT_OF_REACH = 20.0


#: The audit setting that sets each suite's sample (what a user changes to grow it).
SAMPLE_SETTING = {"word": "words", "conditions": "words", "text": "sentences",
                  "cer": "documents"}


@dataclass(frozen=True)
class Requirement:
    """What a row needs: ``factor`` times its current sample, ``--SETTING NEEDED``."""

    factor: float
    alpha: float
    setting: str | None = None
    now: int | None = None

    @property
    def needed(self) -> int | None:
        """The setting's value that gives the required sample (None: no setting known)."""
        return None if self.now is None else max(self.now, math.ceil(self.now * self.factor))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``details["power"]`` of a row)."""
        return {"factor": round(self.factor, 3), "alpha": self.alpha, "power": POWER,
                "setting": self.setting, "now": self.now, "needed": self.needed,
                "out_of_reach": self.factor > OUT_OF_REACH}

    def text(self) -> str:
        """One clause for a reason."""
        head = f"deciding it with power {POWER:g} at α′={self.alpha:.2g} needs about "
        if self.setting is None or self.now is None:
            head += f"{self.factor:.3g} times the sample"
        else:
            head += f"--{self.setting} {self.needed:,} (now {self.now:,})"
        if self.factor > OUT_OF_REACH:
            head += (f", over {OUT_OF_REACH:g} times the sample: out of reach, the effect sits at "
                     "the edge of its threshold")
        return head


def _z(p_value: float, resamples: int | None) -> float:
    """The normal deviate of a one-sided p-value (a bootstrap's 0 read as half a replicate)."""
    floor = 0.5 / resamples if resamples else 1e-12
    return float(special.ndtri(1 - min(max(p_value, floor), 1 - 1e-12)))


def _evidence(result: Result) -> tuple[list[float], list[float], int] | None:
    """The deviates z of the row's judged parts: (on the PASS side, on the FAIL side, how many
    parts); None when a part has no readable sampling distribution."""
    m, c = result.measurement, result.criterion
    if m is None or c is None or m.sampling is None:
        return None
    parts = [(m, c)] + [(m.components[name], sub) for name, sub in c.components.items()
                        if name in m.components]
    pass_side, fail_side = [], []
    for part, crit in parts:
        if part.sampling is None or unstable(part, crit.alpha) is not None:
            return None
        p_pass, p_fail = p_values(part.sampling, crit)
        resamples = part.sampling.replicates.size if part.sampling.kind == "bootstrap" else None
        if p_pass <= p_fail:
            pass_side.append(_z(p_pass, resamples))
        else:
            fail_side.append(_z(p_fail, resamples))
    return pass_side, fail_side, len(parts)


def required(result: Result, alpha: float, settings: Any = None,
             fail_alpha: float | None = None) -> Requirement | None:
    """The sample that decides ``result`` with power :data:`POWER` at level ``alpha``, taking its
    estimate as the truth; None when the row has no readable sampling distribution.

    Each judged part's evidence is the normal deviate z of its p-value — the claim's where the
    estimate lies on the PASS side, the negation's where it lies on the FAIL side — read from
    the measured distribution itself (a bootstrap's tails as they are). z grows as √n, so a
    part needs the sample times ((z_level + z_power) / z)². PASS needs every part (the largest
    factor); FAIL needs one part on the FAIL side, at α/k for k judged parts (the smallest).
    With the audit's ``settings`` the requirement names the setting to raise and its value.
    """
    evidence = _evidence(result)
    if evidence is None:
        return None
    pass_side, fail_side, k = evidence
    z_power = float(special.ndtri(POWER))
    if fail_side:
        alpha = alpha if fail_alpha is None else fail_alpha
        target = float(special.ndtri(1 - alpha / k)) + z_power
        factor = min((target / z) ** 2 if z > 0 else math.inf for z in fail_side)
    else:
        target = float(special.ndtri(1 - alpha)) + z_power
        factor = max((target / z) ** 2 if z > 0 else math.inf for z in pass_side)
    if not math.isfinite(factor):
        return None
    setting, now = _setting(result, settings)
    return Requirement(factor, alpha, setting, now)


def power_at(result: Result, alpha: float, factor: float,
             fail_alpha: float | None = None) -> float | None:
    """The chance that a sample ``factor`` times the current one decides ``result`` (in the
    direction its estimate points) at level ``alpha``, taking the estimate as the truth: the
    power curve of the row. PASS needs every part (its weakest part bounds the power); FAIL one
    part at α/k (its strongest)."""
    evidence = _evidence(result)
    if evidence is None or factor <= 0:
        return None
    pass_side, fail_side, k = evidence
    root = math.sqrt(factor)
    if fail_side:
        alpha = alpha if fail_alpha is None else fail_alpha
        level = float(special.ndtri(1 - alpha / k))
        return float(max(special.ndtr(z * root - level) for z in fail_side))
    level = float(special.ndtri(1 - alpha))
    return float(min(special.ndtr(z * root - level) for z in pass_side))


def margin_power(result: Result, effect: float, target: float,
                 settings: Any = None) -> tuple[float, Requirement | None] | None:
    """The power of ``result``'s one-sided criterion to pass a true effect of ``effect`` at this
    sample, and the sample that would give it power ``target`` (None when it has it): the
    standard error read from the row's own (1 − 2α) interval (normal approximation), the
    distance from ``effect`` to the threshold over it, less z₁₋α. None when the row has no
    readable interval or its criterion is not one-sided."""
    m, c = result.measurement, result.criterion
    if m is None or c is None or m.sampling is None or c.threshold is None \
            or c.direction == "within":
        return None
    low, high = m.interval(1 - 2 * c.alpha)
    level = float(special.ndtri(1 - c.alpha))
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return None
    error = (high - low) / (2 * level)
    distance = (effect - c.threshold) if c.direction == "greater" else (c.threshold - effect)
    if distance <= 0:
        return 0.0, None
    power = float(special.ndtr(distance / error - level))
    if power >= target:
        return power, None
    factor = ((level + float(special.ndtri(target))) * error / distance) ** 2
    setting, now = _setting(result, settings)
    return power, Requirement(factor, c.alpha, setting, now)


def weakest_margin_power(rows: Sequence[Result], target: float, settings: Any = None,
                         ) -> tuple[float, float, Requirement | None] | None:
    """Over the one-sided rows whose claims declare the smallest effect they must detect (a
    claim's ``detect``): (that effect, the weakest row's :func:`margin_power` there, and what
    that row needs for ``target``); None where no row can say."""
    from normtest.claims.catalogue import get

    effect: float | None = None
    weakest: tuple[float, Requirement | None] | None = None
    for r in rows:
        detect = get(str(r.claim)).detect
        if not isinstance(detect, int | float):
            continue
        found = margin_power(r, float(detect), target, settings)
        if found is None:
            continue
        effect = float(detect) if effect is None else max(effect, float(detect))
        if weakest is None or found[0] < weakest[0]:
            weakest = found
    return None if weakest is None or effect is None else (effect, *weakest)


def _setting(result: Result, settings: Any) -> tuple[str | None, int | None]:
    """The audit setting that grows this row's sample, and its current value."""
    from normtest.claims.catalogue import get
    from normtest.errors import NormtestError

    try:
        name = SAMPLE_SETTING.get(get(result.claim or "").suite)
    except NormtestError:  # a stored row of a claim this process does not know
        return None, None
    value = getattr(settings, name, None) if name else None
    return name, value if isinstance(value, int) else None


def _required_at_line(result: Result, results: Sequence[Result],
                      settings: Any) -> Requirement | None:
    alpha, fail_alpha = line_levels(result, results)
    return required(result, alpha, settings, fail_alpha=fail_alpha)


def line_levels(result: Result, results: Sequence[Result]) -> tuple[float, float]:
    """(α, α′) a confirmatory row is planned for under its line's rule: PASS at α (replicated
    needs every row, no adjustment), FAIL at α′ = α over the number of the line's measured rows
    (of its reading) — the level of Holm's first step, the conservative case."""
    measured = [r for r in results if r.confirmatory and r.measurement is not None
                and r.measurement.sampling is not None and r.hypothesis == result.hypothesis
                and r.details.get("reading") == result.details.get("reading")]
    level = result.criterion.alpha if result.criterion is not None else 0.05
    return level, level / max(1, len(measured))


def annotate(results: Sequence[Result], settings: Any = None) -> list[Result]:
    """Every undecided confirmatory row with the sample that would decide it (``details``
    ``power`` and a clause of its reason); other rows unchanged."""
    out = []
    for r in results:
        need = (_required_at_line(r, results, settings)
                if r.confirmatory and r.verdict is Verdict.INCONCLUSIVE else None)
        if need is None:
            out.append(r)
            continue
        out.append(replace(r, reason=f"{r.reason}; {need.text()}",
                           details={**r.details, "power": need.to_dict()}))
    return out


#: The pilot ``normtest plan`` runs when the command line sets no sample size: small enough for a
#: minute or two on two cores, large enough for every claim to be estimable.
PILOT = {"words": 600, "documents": 12, "sentences": 120, "resamples": 500}


@dataclass(frozen=True)
class Plan:
    """What a pilot audit says about the sample a full audit needs."""

    rows: tuple[tuple[Result, Requirement | None], ...]
    settings: Any

    @property
    def recommended(self) -> dict[str, int]:
        """Per sample setting, the largest value any undecided confirmatory row asks for (never
        below the default), leaving out those out of reach."""
        from normtest.base.settings import AuditSettings

        default = AuditSettings()
        out: dict[str, int] = {}
        for _, need in self.rows:
            if need is None or need.setting is None or need.needed is None:
                continue
            if self.out_of_reach(need):
                continue
            base = int(getattr(default, need.setting))
            out[need.setting] = max(out.get(need.setting, base), need.needed)
        return out

    def out_of_reach(self, need: Requirement) -> bool:
        """Whether a requirement exceeds :data:`OUT_OF_REACH` times the default sample."""
        from normtest.base.settings import AuditSettings

        if need.setting is None or need.needed is None:
            return False
        return need.needed > OUT_OF_REACH * int(getattr(AuditSettings(), need.setting))


def plan(results: Sequence[Result], settings: Any) -> Plan:
    """For every confirmatory row of a (pilot) audit: None when it is decided, else the sample
    that would decide it (:func:`required`, at the audit's Holm level for its first step)."""
    confirmatory = [r for r in results if r.confirmatory and r.measurement is not None]
    rows = tuple((r, None if r.verdict in (Verdict.PASS, Verdict.FAIL)
                  else _required_at_line(r, results, settings)) for r in confirmatory)
    return Plan(rows, settings)
