"""A sequential audit: add words, documents and sentences in stages until every confirmatory row
is decided, with the error rates of a fixed-sample audit (``normtest audit --until-decided``).

The design is group-sequential. Stage k audits a sample ``growth^(k−1)`` times the first one,
each stage's sample containing the one before (the same words, documents and sentences, and
more). The level α is spent over the stages by the O'Brien–Fleming-type function of Lan and
DeMets, α(t) = 2 − 2Φ(z₁₋α/₂ / √t) with t = n_k / n_K the information fraction: almost nothing at
the first looks, nearly all of α at the last. Stage k judges the audit at the increment
a_k = α(t_k) − α(t_{k−1}), Holm over its confirmatory rows as always; a confirmatory row decided
(PASS or FAIL) at a stage keeps that verdict and the stage. Because Σ a_k = α, the chance of any
wrong confirmatory decision over all stages is at most α by the union bound, whatever the
dependence between stages — a conservative but assumption-free version of the group-sequential
boundary (tests/test_sequential.py measures it by simulation).

The audit stops when every confirmatory row is decided, after the last stage, when the next
stage would not fit the time budget (stages grow, so the next is estimated at ``growth`` times the
last one's time), or for **futility**: when every row still open is out of reach of the stages
left — its conditional power, the chance that the last planned stage decides it at that stage's
level taking its present estimate as the truth (:func:`~normtest.scorecard.power.power_at`),
is below :data:`FUTILITY`. Stopping without a decision never adds a wrong one, so the error
rates stay as they are (a non-binding futility rule); the rows stopped say so
(``details.futile``).

The design is checked before any work: the last stage at most :data:`MAX_GROWTH` times the first
one's sample (``--stages`` 1 to 30 at the command line's growth of 2; :func:`check_stages`), a
word list that holds the last stage's words (:func:`check_words`: with the default 5,000 words,
at most 5 stages), and a time budget that is a positive, finite number of seconds
(:func:`check_budget`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import special

from normtest.audit.report import Report
from normtest.audit.run import run_audit
from normtest.base.settings import AuditSettings
from normtest.data.information.samples import _eligible, default_word_sample
from normtest.errors import NormtestError
from normtest.scorecard.power import line_levels, power_at
from normtest.verdict.result import Result, Verdict

#: The spending function's name, as the report records it.
SPENDING = "O'Brien–Fleming type (Lan–DeMets), spent by the union bound over stages"
#: The largest last stage, in times the first one's sample: 30 stages at the growth of 2.
MAX_GROWTH = 2.0 ** 29
#: The most stages at any growth.
MAX_STAGES = 100
#: A row whose conditional power at the last planned stage is below this is futile.
FUTILITY = 0.05
#: The names the checks use for the design's parameters: the command line's, or Python's.
_CLI = {"stages": "--stages", "budget": "--budget", "words": "--words"}
_PYTHON = {"stages": "stages=", "budget": "budget=", "words": "words="}


def _names(cli: bool) -> dict[str, str]:
    return _CLI if cli else _PYTHON


def _said(name: str, value: object) -> str:
    """``--stages 30`` (a flag and its value) or ``stages=30`` (a Python keyword)."""
    text = f"{value:g}" if isinstance(value, float) else str(value)
    return f"{name} {text}" if name.startswith("--") else f"{name}{text}"


def stage_limit(growth: float) -> int:
    """The most stages a design of this ``growth`` may take: the last stage at most
    :data:`MAX_GROWTH` times the first (30 at growth 2), and never over :data:`MAX_STAGES`."""
    return min(MAX_STAGES, 1 + math.floor(math.log(MAX_GROWTH) / math.log(growth) + 1e-9))


def _times(growth: float) -> str:
    return "twice" if growth == 2 else f"{growth:g} times"


def check_stages(stages: int, growth: float = 2.0, *, cli: bool = False) -> None:
    """Refuse a number of stages or a growth the design cannot run (a NormtestError naming
    ``--stages``, or ``stages=`` from Python, and the range allowed)."""
    name = _names(cli)["stages"]
    if (isinstance(growth, bool) or not isinstance(growth, int | float)
            or not math.isfinite(growth) or growth <= 1):
        raise NormtestError(f"the growth of a sequential audit is a finite number > 1 (each "
                            f"stage's sample over the one before), got {growth!r}")
    limit = stage_limit(growth)
    if isinstance(stages, bool) or not isinstance(stages, int) or not 1 <= stages <= limit:
        raise NormtestError(
            f"{_said(name, stages)}: a sequential audit takes 1 to {limit} stages (each "
            f"{_times(growth)} the sample of the one before; "
            f"the last of {limit} is "
            f"{growth ** (limit - 1):,.0f} times the first); give {name} 1 to {limit}"
            + (" (3 by default)" if cli else ""))


def check_budget(budget: float | None, *, cli: bool = False) -> float | None:
    """The time budget in seconds (None: no limit), or a NormtestError naming ``--budget`` (or
    ``budget=`` from Python) when it is not a positive, finite number."""
    if budget is None:
        return None
    name = _names(cli)["budget"]
    if (isinstance(budget, bool) or not isinstance(budget, int | float)
            or not math.isfinite(budget) or budget <= 0):
        shown = budget if isinstance(budget, int | float) else repr(budget)
        raise NormtestError(
            f"{_said(name, shown)}: the time budget is a positive, finite number of seconds "
            "(the stages stop before one that would not fit); "
            + (f"leave out {name} for no time limit" if cli else
               "give budget=None for no time limit"))
    return float(budget)


def available_words() -> int:
    """How many words the default word sample can draw from (:func:`nested_words`' list: the
    alphabetic English words within rank 100,000)."""

    return len(_eligible("en", 100_000)[1])


def most_stages(words: int, available: int, growth: float = 2.0) -> int:
    """The most stages whose word samples (``words`` at the first, ``growth`` times more at each
    next) all fit in a word list of ``available`` words; 0 when not even the first does."""
    most = 0
    for k in range(1, stage_limit(growth) + 1):
        if math.ceil(words * growth ** (k - 1)) > available:
            break
        most = k
    return most


def check_words(words: int, stages: int, growth: float = 2.0, *, cli: bool = False) -> None:
    """Refuse a design whose last stage needs more words than the default word list holds,
    saying how many stages fit (a NormtestError naming ``--stages``, or ``stages=``)."""
    names = _names(cli)
    available = available_words()
    most = most_stages(words, available, growth)
    if stages <= most:
        return
    if most == 0:
        raise NormtestError(
            f"{_said(names['words'], words)}: the word list holds {available:,} words, fewer "
            f"than the first stage's sample; give {names['words'].rstrip('=')} at most "
            f"{available:,}")
    last = math.ceil(words * growth ** (stages - 1)) if stages <= stage_limit(growth) else None
    need = f"{last:,} words" if last is not None else "more words than any word list holds"
    stages_name, words_name = names["stages"].rstrip("="), names["words"].rstrip("=")
    raise NormtestError(
        f"{_said(names['stages'], stages)}: the last stage would need {need} "
        f"({_said(names['words'], words)} at the first stage, {_times(growth)} as many at "
        f"each next), but the word list holds {available:,}; with "
        f"{_said(names['words'], words)} give {stages_name} 1 to {most}, or lower {words_name} "
        "for more stages")


def spent(alpha: float, fraction: float) -> float:
    """α(t) = 2 − 2Φ(z₁₋α/₂ / √t): the level spent by information fraction t (α at t = 1)."""
    if not 0 < fraction <= 1:
        raise NormtestError(f"an information fraction lies in (0, 1], got {fraction}")
    z = float(special.ndtri(1 - alpha / 2))
    return float(2 - 2 * special.ndtr(z / math.sqrt(fraction)))


def stage_levels(alpha: float, fractions: Sequence[float]) -> list[float]:
    """The level each stage is judged at: the increments of :func:`spent` (they sum to α when
    the last fraction is 1)."""
    out, before = [], 0.0
    for t in fractions:
        now = spent(alpha, t)
        out.append(now - before)
        before = now
    return out


@dataclass(frozen=True)
class Stage:
    """One stage: its sample, its level, how long it took, what it decided."""

    number: int
    settings: AuditSettings
    alpha: float
    seconds: float
    decided: tuple[str, ...]
    undecided: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``provenance.sequential.stages``)."""
        s = self.settings
        return {"stage": self.number, "words": s.words, "documents": s.documents,
                "sentences": s.sentences, "alpha": self.alpha, "seconds": round(self.seconds, 2),
                "decided": list(self.decided), "undecided": list(self.undecided)}


def _measured_confirmatory(results: Iterable[Result]) -> list[Result]:
    return [r for r in results if r.confirmatory and r.measurement is not None
            and r.measurement.sampling is not None]


def sequential(
    audit_stage: Callable[[int, AuditSettings], Report],
    settings: AuditSettings,
    *,
    stages: int = 3,
    growth: float = 2.0,
    budget: float | None = None,
    on_stage: Callable[[Stage], None] | None = None,
) -> Report:
    """Run ``audit_stage(k, settings_k)`` for k = 1, 2, … until every confirmatory row is
    decided (see the module doc); return the last stage's report with each confirmatory row
    taken from the stage that decided it (``details.stage``), and the design in
    ``provenance.sequential``. ``settings`` is the first stage's sample."""
    check_stages(stages, growth)
    budget = check_budget(budget)
    fractions = [growth ** (k - stages) for k in range(1, stages + 1)]
    levels = stage_levels(settings.alpha, fractions)
    decided: dict[str, Result] = {}
    futile: dict[str, tuple[int, float]] = {}
    done: list[Stage] = []
    start = time.monotonic()
    report: Report | None = None
    for k in range(1, stages + 1):
        scale = growth ** (k - 1)
        stage_settings = replace(
            settings, alpha=levels[k - 1], words=math.ceil(settings.words * scale),
            documents=math.ceil(settings.documents * scale),
            sentences=math.ceil(settings.sentences * scale))
        began = time.monotonic()
        report = audit_stage(k, stage_settings)
        confirmatory = _measured_confirmatory(report.results)
        newly = [r for r in confirmatory if r.id not in decided
                 and r.verdict in (Verdict.PASS, Verdict.FAIL)]
        for r in newly:
            decided[r.id] = replace(r, details={**r.details, "stage": k,
                                                "stage_alpha": levels[k - 1]})
        open_ = [r.id for r in confirmatory if r.id not in decided]
        hopeless = {} if k == stages else _futile(
            [r for r in confirmatory if r.id not in decided], confirmatory,
            growth ** (stages - k), levels[-1])
        stage = Stage(k, stage_settings, levels[k - 1], time.monotonic() - began,
                      tuple(r.id for r in newly), tuple(open_))
        done.append(stage)
        if on_stage is not None:
            on_stage(stage)
        if not open_:
            break
        if len(hopeless) == len(open_):  # every open row out of reach of the stages left
            futile = {row_id: (k, chance) for row_id, chance in hopeless.items()}
            break
        if budget is not None and k < stages:
            elapsed = time.monotonic() - start
            if elapsed + growth * stage.seconds > budget:
                break
    assert report is not None
    results = [decided.get(r.id, r) if r.confirmatory else r for r in report.results]
    results = [_stopped(r, *futile[r.id], stages) if r.id in futile and r.id not in decided
               else r for r in results]
    prov = dict(report.provenance)
    prov["sequential"] = {
        "spending": SPENDING, "alpha": settings.alpha, "growth": growth,
        "planned_stages": stages, "levels": levels, "stages": [s.to_dict() for s in done],
        "futility": FUTILITY, "stopped_for_futility": sorted(futile),
    }
    return replace(report, results=results, provenance=prov)


def _futile(open_rows: Sequence[Result], confirmatory: Sequence[Result], factor: float,
            last_alpha: float) -> dict[str, float]:
    """The open rows whose conditional power at the last planned stage (``factor`` times this
    stage's sample, judged at the last stage's level ``last_alpha``, FAIL at Holm's first
    step over the line's rows) is below :data:`FUTILITY`, with that power."""

    out = {}
    for r in open_rows:
        alpha, fail_alpha = line_levels(r, confirmatory)
        ratio = last_alpha / alpha if alpha > 0 else 1.0
        chance = power_at(r, last_alpha, factor, fail_alpha=fail_alpha * ratio)
        if chance is not None and chance < FUTILITY:
            out[r.id] = chance
    return out


def _stopped(r: Result, stage: int, chance: float, stages: int) -> Result:
    """A row stopped for futility: its reason says so, ``details.futile`` holds when and why."""
    return replace(r, reason=f"{r.reason}; stopped for futility at stage {stage} of {stages}: "
                             f"the last stage would decide it with probability {chance:.2f} at "
                             "its present estimate",
                   details={**r.details, "futile": {"stage": stage, "power": round(chance, 4)}})


def nested_words(size: int, seed: int) -> list[str]:
    """The default word sample of ``size`` words in a seeded random order, so that its first n
    words are a random subsample: the stages of a sequential audit take growing prefixes."""

    words = default_word_sample(size=size, seed=seed)
    order = np.random.default_rng([seed, 17]).permutation(len(words))
    return [words[i] for i in order]


def run_sequential(
    adapter: Any,
    claim_ids: Iterable[str] | None = None,
    suite: str = "all",
    settings: AuditSettings | None = None,
    *,
    stages: int = 3,
    growth: float = 2.0,
    budget: float | None = None,
    on_stage: Callable[[Stage], None] | None = None,
) -> Report:
    """``normtest audit --until-decided``: :func:`sequential` over
    :func:`normtest.audit.run.run_audit` with nested samples (the words of :func:`nested_words`;
    documents and sentences nest by construction), ``settings`` the first stage's."""

    first = settings or AuditSettings()
    check_stages(stages, growth)
    check_budget(budget)
    check_words(first.words, stages, growth)
    ids = list(claim_ids) if claim_ids else None
    pool = nested_words(math.ceil(first.words * growth ** (stages - 1)), first.seed)

    def audit_stage(k: int, stage_settings: AuditSettings) -> Report:
        return run_audit(adapter, ids, suite=suite, settings=stage_settings,
                         words=pool[:stage_settings.words])

    return sequential(audit_stage, first, stages=stages, growth=growth, budget=budget,
                      on_stage=on_stage)
