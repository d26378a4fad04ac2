"""What to do after an audit: why each undecided line is undecided, what would decide it, and
one rerun command that decides every undecided line the data can decide.

A line is undecided when one of its deciding rows is (replicated needs every row to pass,
contradicted one row to fail against the paper). What would decide it comes from two sources,
whichever asks more:

- each undecided row's power analysis (``details.power``: the sample that decides it with power
  0.9 at its line's level, taking its estimate as the truth; :mod:`normtest.scorecard.power`);
- the line's positive control (the sample that gives the line power 0.8 at its margin;
  :mod:`normtest.scorecard.controls`).

Each asks for one sample setting (``--words``, ``--sentences``, ``--documents``) and is held to
what the data can give (:mod:`normtest.data.capacity`): a line that asks for more than the
data hold, or more than twenty times its sample (an effect at the edge of its threshold), is
*out of reach* and named with what it would need; every other undecided line goes into one
command, its settings the largest any of them asks for. The command's time is a planning
figure, estimated from this audit's own (``provenance.seconds``): each new word, sentence or
document at the rate one takes to make on this machine (measured when an audit made them fresh,
and kept in the cache folder: :mod:`normtest.models.cache.rates`), the statistics, robustness
and controls scaled by how much their setting grows.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from normtest.audit.report import Report
from normtest.base.settings import AuditSettings
from normtest.claims.catalogue import get
from normtest.data.capacity import capacity
from normtest.errors import NormtestError
from normtest.models.cache.rates import UNIT_OF_KIND
from normtest.scorecard.lines import Line, deciding_rows
from normtest.scorecard.power import OUT_OF_REACH, SAMPLE_SETTING
from normtest.verdict.result import Result, Verdict

#: The kind of data each sample setting draws (``provenance.seconds`` is kept by kind).
KIND_OF_SETTING = {unit: kind for kind, unit in UNIT_OF_KIND.items()}


@dataclass(frozen=True)
class Need:
    """What one row (or a line's positive control) asks for: ``--SETTING NEEDED`` where the
    audit had ``now``, against the most the data can give (``capacity``; None: unknown)."""

    setting: str
    needed: int
    now: int
    capacity: int | None = None
    #: who asks: a row id, or ``positive control``
    by: str = ""
    #: the power analysis says no affordable sample decides it (over twenty times the sample)
    too_far: bool = False

    @property
    def reachable(self) -> bool:
        """Whether the data can give it and it is within reach of the power analysis."""
        return not self.too_far and (self.capacity is None or self.needed <= self.capacity)

    @property
    def flag(self) -> str:
        """``--sentences 15,560``."""
        return f"--{self.setting} {self.needed:,}"

    def words(self) -> str:
        """``--documents 2,658 (now 150; 212 held)``."""
        held = f"; {self.capacity:,} held" if self.capacity is not None \
            and self.needed > self.capacity else ""
        return f"{self.flag} (now {self.now:,}{held})"


@dataclass(frozen=True)
class LineStep:
    """An undecided line and what would decide it: its needs, or why no sample would."""

    line: str
    needs: tuple[Need, ...] = ()
    #: why no sample size helps (a row without a readable sampling distribution), else empty
    stuck: str = ""

    @property
    def reachable(self) -> bool:
        """Whether a larger sample from these data can decide it."""
        return not self.stuck and bool(self.needs) and all(n.reachable for n in self.needs)

    def clause(self) -> str:
        """Why it is undecided and what would decide it, in one clause: ``needs --sentences
        15,560 (now 819)``, ``out of reach of these data: needs --documents 2,658 (now 150; 212
        held)``, ``no larger sample decides it: …``."""
        if self.stuck:
            return f"no larger sample decides it: {self.stuck}"
        largest = _largest(self.needs)
        shown = ", ".join(n.words() for n in largest)
        if self.reachable:
            return f"needs {shown}"
        far = [n for n in largest if n.too_far and (n.capacity is None
                                                    or n.needed <= n.capacity)]
        if far:
            return (f"out of reach: needs {shown} (over {OUT_OF_REACH:g} times its sample: "
                    "the effect sits at the edge of its threshold)")
        return f"out of reach of these data: needs {shown}"


    def short(self) -> str:
        """The step in a few words, for a list of them: ``text_level: --sentences 15,560
        (2,470 held)``."""
        if self.stuck:
            return f"{self.line}: no larger sample decides {self.stuck.split(':')[0]}"
        parts = []
        for n in _largest(self.needs):
            held = f" ({n.capacity:,} held)" if n.capacity is not None \
                and n.needed > n.capacity else f" (over {OUT_OF_REACH:g} times the sample)" \
                if n.too_far else ""
            parts.append(n.flag + held)
        return f"{self.line}: " + ", ".join(parts)


def _largest(needs: Sequence[Need]) -> list[Need]:
    """The largest need of each setting, in the order the settings first appear."""
    most: dict[str, Need] = {}
    for n in needs:
        if n.setting not in most or n.needed > most[n.setting].needed:
            most[n.setting] = n
    return list(most.values())


@dataclass(frozen=True)
class NextSteps:
    """What an audit says to do next: each undecided line's step, and the rerun that decides
    the reachable ones."""

    model: str
    #: the audit's sample: words, documents, sentences
    now: Mapping[str, int]
    steps: tuple[LineStep, ...] = ()
    #: the rerun's estimated wall seconds (None: the report kept no timing)
    seconds: float | None = None
    #: whether ``seconds`` is a lower bound: a kind of data that grows had no rate for making a
    #: unit (this audit read it from the cache, and no audit on this machine recorded one)
    at_least: bool = False
    #: the user's other settings a rerun keeps (``--seed 3``), as command-line flags
    keep: tuple[str, ...] = ()

    @property
    def decides(self) -> tuple[str, ...]:
        """The undecided lines the rerun is sized to decide."""
        return tuple(s.line for s in self.steps if s.reachable)

    @property
    def out_of_reach(self) -> tuple[LineStep, ...]:
        """The undecided lines no sample from these data decides."""
        return tuple(s for s in self.steps if not s.reachable)

    @property
    def sizes(self) -> dict[str, int]:
        """The rerun's sample: the audit's own, raised to the largest need of each setting
        among the lines it decides."""
        out = dict(self.now)
        for step in self.steps:
            if step.reachable:
                for n in step.needs:
                    out[n.setting] = max(out.get(n.setting, 0), n.needed)
        return out

    @property
    def command(self) -> str | None:
        """``normtest audit --model M --words 8276 --documents 150 --sentences 15560`` (every
        sample size, so that the rerun draws the sample it was sized for without sizing itself
        again, and the settings that chose the audit's sample: seed, corpus, prefix unit,
        scope, resamples), or None when no line needs one."""
        if not self.decides:
            return None
        sizes = self.sizes
        flags = [f"--{k} {sizes[k]}" for k in ("words", "documents", "sentences") if k in sizes]
        return " ".join(["normtest audit --model", shlex.quote(self.model), *flags, *self.keep])

    def time_text(self) -> str:
        """``about 12 min`` (``about 40 s``; ``at least 2 min`` where some new data have no
        known rate), empty where no estimate exists."""
        if self.seconds is None or not math.isfinite(self.seconds):
            return ""
        lead = "at least" if self.at_least else "about"
        if self.seconds < 90:
            return f"{lead} {max(10, round(self.seconds, -1)):.0f} s"
        return f"{lead} {self.seconds / 60:.0f} min"


def _now(report: Report) -> dict[str, int]:
    """The sizes the audit asked for (``provenance.sample``; the counts it kept where a report
    predates it): what a rerun asks for again, and what a power analysis's ``now`` is."""
    p = report.provenance
    sample = p.get("sample")
    asked: Mapping[str, Any] = sample if isinstance(sample, Mapping) else p
    return {k: int(asked[k]) for k in ("words", "documents", "sentences")
            if isinstance(asked.get(k), int) and not isinstance(asked.get(k), bool)}


def _kept(report: Report) -> tuple[str, ...]:
    """The flags that chose the audit's sample and analysis besides its sizes, as a shell reads
    them: ``--seed``, ``--corpus``, ``--prefix-unit``, ``--scope``, ``--resamples``, where they
    are not the defaults."""
    p = report.provenance
    found = p.get("sample")
    sample: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    default = AuditSettings()
    out: list[str] = []
    seed = sample.get("seed", p.get("seed"))
    if isinstance(seed, int) and seed != default.seed:
        out.append(f"--seed {seed}")
    corpus = sample.get("corpus") or p.get("corpus") or []
    if isinstance(corpus, list) and corpus:
        out.append("--corpus " + " ".join(shlex.quote(str(c)) for c in corpus))
    unit = sample.get("prefix_unit")
    if isinstance(unit, str) and unit != default.prefix_unit:
        out.append(f"--prefix-unit {shlex.quote(unit)}")
    scope = p.get("scope")
    if isinstance(scope, str) and scope != default.scope:
        out.append(f"--scope {shlex.quote(scope)}")
    resamples = p.get("resamples")
    if isinstance(resamples, int) and resamples != default.resamples:
        out.append(f"--resamples {resamples}")
    return tuple(out)


def _setting_of(r: Result) -> str | None:
    try:
        return SAMPLE_SETTING.get(get(r.claim or "").suite)
    except NormtestError:  # a stored row of a claim this process does not know
        return None


def _row_need(r: Result, now: Mapping[str, int]) -> Need | str:
    """What an undecided row asks for, or why no sample would decide it."""
    power = r.details.get("power")
    if not isinstance(power, Mapping) or power.get("needed") is None \
            or power.get("setting") is None:
        return r.reason.split("; ")[0] if r.reason else "its sampling distribution is unreadable"
    setting = str(power["setting"])
    capacity = power.get("capacity")
    needed = int(power["needed"])
    return Need(setting, needed, int(power.get("now") or now.get(setting, 0)),
                None if capacity is None else int(capacity), r.id,
                too_far=bool(power.get("out_of_reach")) and (capacity is None
                                                              or needed <= int(capacity)))


def _control_need(controls: Any, now: Mapping[str, int], report: Report) -> Need | None:
    """What a line's positive control asks for (power 0.8 at its margin), where it lacks it."""
    positive = None if controls is None else controls.positive
    if positive is None or positive.powered:
        return None
    found = positive.needed()
    if found is None:
        return None
    setting, needed = found
    here = now.get(setting, 0)
    corpus = SimpleNamespace(corpus=tuple(report.provenance.get("corpus") or ()))
    return Need(setting, needed, here, capacity(setting, corpus), "positive control",
                too_far=bool(here) and needed > OUT_OF_REACH * here)


def line_step(line: Line, report: Report) -> LineStep | None:
    """The step of an undecided line (None for any other)."""
    if line.status != "undecided":
        return None
    now = _now(report)
    needs: list[Need] = []
    stuck = ""
    for r in deciding_rows(line):
        if r.verdict in (Verdict.PASS, Verdict.FAIL):
            continue
        found = _row_need(r, now)
        if isinstance(found, Need):
            needs.append(found)
        elif not stuck:  # one row no sample decides keeps the whole line undecided
            stuck = f"{r.id}: {found}"
    control = _control_need(report.controls_of(line.key), now, report)
    if control is not None:
        needs.append(control)
    return LineStep(line.key, tuple(needs), stuck)


def next_steps(report: Report, model: str | None = None) -> NextSteps:
    """What ``report`` says to do next: every undecided line's step, the rerun's sizes and its
    estimated time; ``model`` is the model as the user named it (``--model``; default: the
    report's model name, which for a path is the folder's name only). A report re-judged under
    other thresholds has no steps: its power analyses were made at the audit's thresholds."""
    if report.rejudged_note:
        return NextSteps(model or str(report.model.get("name", "MODEL")), _now(report))
    steps = tuple(s for line in report.scorecard if (s := line_step(line, report)) is not None)
    now = _now(report)
    found = NextSteps(model or str(report.model.get("name", "MODEL")), now, steps, None,
                      keep=_kept(report))
    seconds, at_least = _estimate(report, found.sizes)
    return NextSteps(found.model, now, steps, seconds, at_least, found.keep)


def _estimate(report: Report, sizes: Mapping[str, int]) -> tuple[float | None, bool]:
    """The rerun's wall seconds: this audit's; plus, for each kind of data that grows, its new
    units at the seconds one unit takes to make on this machine (``provenance.seconds.per_unit``:
    measured by this audit where it made the kind fresh, else as an earlier audit recorded it),
    or, where no rate is known, this audit's own seconds for the kind scaled by the growth (an
    underestimate when its data came from the cache); plus its lines' robustness and controls
    scaled by the growth; less the sizing (a rerun with every size given does not size
    itself). Second: whether it is a lower bound (a kind grew without a rate)."""
    seconds = report.provenance.get("seconds")
    if not isinstance(seconds, Mapping) or not isinstance(seconds.get("total"), int | float):
        return None, False
    now = _now(report)

    def grows(setting: str | None) -> float:
        if setting is None or not now.get(setting):
            return 0.0
        return sizes.get(setting, now[setting]) / now[setting] - 1

    def number(value: Any) -> float:
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
            and math.isfinite(value) and value >= 0 else 0.0

    total = number(seconds["total"])
    found = seconds.get("per_unit")
    per_unit: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    at_least = False
    for setting, kind in KIND_OF_SETTING.items():
        rate = per_unit.get(kind)
        if number(rate) > 0 and setting in now:  # each new unit made and measured
            total += max(0, sizes.get(setting, now[setting]) - now[setting]) * number(rate)
        elif grows(setting) > 0:  # no rate known: this audit's own time for the kind, scaled
            total += number(seconds.get(kind)) * grows(setting)
            at_least = True
    for line in report.scorecard:
        rows = deciding_rows(line)
        grown = _setting_of(rows[0]) if rows else None
        spent = 0.0
        robustness, controls = report.robustness_of(line.key), report.controls_of(line.key)
        spent += robustness.seconds if robustness is not None else 0.0
        spent += controls.seconds if controls is not None else 0.0
        total += spent * grows(grown)
    sizing = report.provenance.get("sizing")
    if isinstance(sizing, Mapping) and isinstance(sizing.get("seconds"), int | float):
        total -= number(sizing["seconds"])
    return max(total, 0.0), at_least
