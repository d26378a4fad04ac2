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

from normtest.base.settings import AuditSettings
from normtest.claims.catalogue import get
from normtest.claims.measuring import beyond_criterion
from normtest.data.capacity import capacity
from normtest.errors import NormtestError
from normtest.stats.baseline import beyond_threshold
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
    #: the most of ``setting`` the audit's data can give (:mod:`normtest.data.capacity`; None:
    #: unknown)
    capacity: int | None = None

    @property
    def needed(self) -> int | None:
        """The setting's value that gives the required sample (None: no setting known)."""
        return None if self.now is None else max(self.now, math.ceil(self.now * self.factor))

    @property
    def beyond_data(self) -> bool:
        """Whether the data cannot give the sample needed (more than its ``capacity``)."""
        needed = self.needed
        return self.capacity is not None and needed is not None and needed > self.capacity

    @property
    def out_of_reach(self) -> bool:
        """Over :data:`OUT_OF_REACH` times the sample, or more than the data can give."""
        return self.factor > OUT_OF_REACH or self.beyond_data

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``details["power"]`` of a row)."""
        return {"factor": round(self.factor, 3), "alpha": self.alpha, "power": POWER,
                "setting": self.setting, "now": self.now, "needed": self.needed,
                "capacity": self.capacity, "out_of_reach": self.out_of_reach}

    def text(self) -> str:
        """One clause for a reason."""
        head = f"deciding it with power {POWER:g} at α′={self.alpha:.2g} needs about "
        if self.setting is None or self.now is None:
            head += f"{self.factor:.3g} times the sample"
        else:
            head += f"--{self.setting} {self.needed:,} (now {self.now:,})"
        return head + self.reach()

    def reach(self) -> str:
        """``, more than the bundled data hold (…): out of reach of this data`` or the like
        (empty when the sample can be had)."""
        if self.beyond_data:
            return (f", more than the data hold ({self.capacity:,} at most): out of reach of "
                    "this data")
        if self.factor > OUT_OF_REACH:
            return (f", over {OUT_OF_REACH:g} times the sample: out of reach, the effect sits at "
                    "the edge of its threshold")
        return ""


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
        resamples = (part.sampling.sketch_of or part.sampling.replicates.size
                     if part.sampling.kind == "bootstrap" else None)
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
    return Requirement(factor, alpha, setting, now, _capacity(setting, settings))


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


def detectable_effect(result: Result, alpha: float, power: float = POWER) -> float | None:
    """The minimum detectable effect of ``result`` at its sample: how far beyond its threshold
    (or inside its margin's nearer edge) the true value must lie for the row to pass at level
    ``alpha`` with probability ``power`` — (z₁₋α + z_power) × SE, the standard error read from
    the row's own (1 − 2α_c) interval at its criterion's α_c. None where the row has no
    readable interval."""
    m, c = result.measurement, result.criterion
    if m is None or c is None or m.sampling is None:
        return None
    low, high = m.interval(1 - 2 * c.alpha)
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return None
    error = (high - low) / (2 * float(special.ndtri(1 - c.alpha)))
    return (float(special.ndtri(1 - alpha)) + float(special.ndtri(power))) * error


@dataclass(frozen=True)
class LinePower:
    """The power of a line's criterion at the smallest effect it must detect: the chance that
    every one of its rows passes there (:func:`line_margin_power`), and what sample would give
    it the target power."""

    #: the smallest effect the line must detect (its claims' ``detect``)
    planted: float
    #: the joint power at ``planted`` with the audit's sample
    power: float
    #: how many rows it is joint over
    rows: int
    #: the sample that gives the target power (None: it has it, or no setting grows it)
    needs: Requirement | None = None


#: Gaussian draws behind a joint power (fixed seed: the figure is reproducible; its Monte-Carlo
#: error is under 0.004).
_JOINT_DRAWS = 20_000


def line_margin_power(rows: Sequence[Result], target: float, settings: Any = None,
                      beyond: bool = False) -> LinePower | None:
    """The power of a line's criterion at the smallest effect its rows' claims must detect (a
    claim's ``detect``): the probability that **every** one-sided row passes there, since
    replicated needs them all. Each row passes when its estimate's error stays under
    (effect − threshold)/SE − z₁₋α in standard units (SE read from its own (1 − 2α) interval:
    the normal approximation every sample-size formula uses); the errors are jointly normal,
    correlated as the rows' bootstrap replicates are where two rows were resampled on the same
    draws, and independent otherwise
    (for rows that share data, positively correlated, that understates the joint power: a
    conservative figure). The sample for ``target`` is found by bisection on the factor of the
    sample (every row's distance grows as √factor). None where no row can say.

    With ``beyond``, the same for the line's reading beyond its baseline: each row's within-
    strata measurement against its attenuated threshold, the effect an ideal norm at the
    smallest effect shows within the strata (both read from the measurement's attenuation
    curve, :func:`~normtest.stats.baseline.beyond_threshold`); rows without such a curve (the
    contrasts) are left out."""
    import numpy as np


    found: list[tuple[Result, float, float]] = []  # row, distance in SE, level
    effect: float | None = None
    for r in rows:
        detect = get(str(r.claim)).detect
        if not isinstance(detect, int | float):
            continue
        target_row = _beyond_row(r, float(detect)) if beyond else (r, float(detect))
        if target_row is None:
            continue
        distance = _margin_distance(*target_row)
        if distance is None:
            continue
        effect = float(detect) if effect is None else max(effect, float(detect))
        found.append((r, *distance))
    if not found or effect is None:
        return None
    shift = np.array([d for _, d, _ in found])
    level = np.array([lv for _, _, lv in found])
    draws = _correlated_errors([r for r, _, _ in found])

    def joint(factor: float) -> float:
        bound = shift * math.sqrt(factor) - level
        if draws is None:
            return float(special.ndtr(bound[0]))
        return float(np.mean(np.all(draws < bound, axis=1)))

    power = joint(1.0)
    need = None
    if power < target and np.all(shift > 0):
        low, high = 1.0, 4.0
        while joint(high) < target and high < 1e6:
            low, high = high, high * 4
        for _ in range(40):
            middle = math.sqrt(low * high)
            low, high = (middle, high) if joint(middle) < target else (low, middle)
        weakest = min(found, key=lambda f: f[1])[0]
        setting, now = _setting(weakest, settings)
        assert weakest.criterion is not None
        need = Requirement(high, weakest.criterion.alpha, setting, now,
                           _capacity(setting, settings))
    return LinePower(effect, power, len(found), need)


def _beyond_row(r: Result, detect: float) -> tuple[Result, float] | None:
    """A row's beyond reading as a row of its own (its within-strata measurement, judged
    against the attenuated threshold) and the effect an ideal norm at ``detect`` shows there;
    None where the row has no attenuation curve."""

    measured = None if r.measurement is None else r.measurement.components.get("beyond")
    curve = None if measured is None or not isinstance(measured.settings, dict) \
        else measured.settings.get("attenuation")
    if measured is None or not curve or r.criterion is None:
        return None
    return (replace(r, measurement=measured, criterion=beyond_criterion(r.criterion, measured)),
            beyond_threshold(curve, detect))


def _margin_distance(result: Result, effect: float) -> tuple[float, float] | None:
    """(the distance from the threshold to ``effect`` in standard errors, z₁₋α) of a one-sided
    row, the SE read from its own (1 − 2α) interval; None where it cannot be read."""
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
    return distance / error, level


def _correlated_errors(rows: Sequence[Result]) -> Any:
    """Standard normal errors of ``rows`` (:data:`_JOINT_DRAWS` × rows), correlated as their
    replicates are where two rows share their bootstrap draws; None for a single row."""
    import numpy as np

    k = len(rows)
    if k < 2:
        return None
    corr = np.eye(k)
    for i in range(k):
        for j in range(i + 1, k):
            corr[i, j] = corr[j, i] = _paired_correlation(rows[i], rows[j])
    values, vectors = np.linalg.eigh(corr)  # nearest valid correlation: negative parts dropped
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    rng = np.random.default_rng(20251207)
    return rng.standard_normal((_JOINT_DRAWS, k)) @ root.T


def _paired_correlation(a: Result, b: Result) -> float:
    """The correlation of two rows' bootstrap replicates where they were drawn alike (the same
    draws, as many replicates), else 0."""
    import numpy as np

    ma, mb = a.measurement, b.measurement
    if ma is None or mb is None or ma.sampling is None or mb.sampling is None \
            or ma.draws is None or ma.draws != mb.draws or ma.sampling.kind != "bootstrap" \
            or mb.sampling.kind != "bootstrap" or ma.sampling.sketched or mb.sampling.sketched \
            or ma.sampling.replicates.size != mb.sampling.replicates.size:
        return 0.0
    x, y = ma.sampling.replicates, mb.sampling.replicates
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 10 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return 0.0
    return float(np.corrcoef(x[ok], y[ok])[0, 1])


def _capacity(setting: str | None, settings: Any) -> int | None:
    """The most of ``setting`` the audit's data can give (None without the audit's settings)."""
    if settings is None:
        return None

    return capacity(setting, settings)


def _setting(result: Result, settings: Any) -> tuple[str | None, int | None]:
    """The audit setting that grows this row's sample, and its current value."""

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
    #: the pilot's line controls (normtest.scorecard.controls.LineControls): each line's power
    #: at its margin and the sample for 0.8
    controls: tuple[Any, ...] = ()

    @property
    def recommended(self) -> dict[str, int]:
        """Per sample setting, the largest value any undecided confirmatory row (power 0.9) or
        any line's positive control (power 0.8 at its margin) asks for (never below the
        default), leaving out those out of reach."""

        default = AuditSettings()
        out: dict[str, int] = {}

        def ask(setting: str, needed: int) -> None:
            base = int(getattr(default, setting))
            out[setting] = max(out.get(setting, base), needed)

        for _, need in self.rows:
            if need is None or need.setting is None or need.needed is None:
                continue
            if not self.out_of_reach(need):
                ask(need.setting, need.needed)
        for _, _, found, reach in self.lines():
            if found is not None and not reach:
                ask(*found)
        return out

    def lines(self) -> list[tuple[str, float, tuple[str, int] | None, str]]:
        """(the line, its power at its margin, the (setting, value) it needs for power 0.8 there
        or None, why that is out of reach or empty) for each line whose power was read (its
        positive control's)."""
        return [(c.line, c.positive.power, c.positive.needed(), c.positive.reach)
                for c in self.controls if c.positive is not None and c.positive.power is not None]

    def out_of_reach(self, need: Requirement) -> bool:
        """Whether a requirement exceeds :data:`OUT_OF_REACH` times the default sample, or
        what the data can give."""

        if need.setting is None or need.needed is None:
            return False
        return need.beyond_data or \
            need.needed > OUT_OF_REACH * int(getattr(AuditSettings(), need.setting))


def plan(results: Sequence[Result], settings: Any, controls: Sequence[Any] = ()) -> Plan:
    """For every confirmatory row of a (pilot) audit: None when it is decided, else the sample
    that would decide it (:func:`required`, at the audit's Holm level for its first step); and
    each line's power at its margin from the pilot's ``controls``."""
    confirmatory = [r for r in results if r.confirmatory and r.measurement is not None]
    rows = tuple((r, None if r.verdict in (Verdict.PASS, Verdict.FAIL)
                  else _required_at_line(r, results, settings)) for r in confirmatory)
    return Plan(rows, settings, tuple(controls))
