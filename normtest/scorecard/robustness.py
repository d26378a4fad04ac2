"""Robustness: does a scorecard line's verdict survive another reasonable analysis, does it
hold in each subpopulation, and does another sample of the same kind give it?

Each line of the scorecard is decided under one analysis of one sample: one geometry, one
source of IC, one word population, one minimum pair count, one prefix unit. Each line declares
its space of choices next to its claims in ``checks/`` (:func:`specifications`); the audit
(:func:`assess`) re-measures the line's deciding rows under them, reusing the vectors already
computed, judges them, and decides the line again by its own rule (as the headline is: PASS
unadjusted, FAIL at Holm's level over the line's rows). Three different questions are kept
apart, each its own number (:class:`LineRobustness`):

- the **multiverse** (Steegen et al. 2016; a *specification curve*, Simonsohn, Simmons & Nelson
  2020): the full sample's other analyses *of the same estimand* (geometry, IC source, minimum
  pair count, prefix unit and grid, text IC), each counted once, and the share of them under
  which the line has its headline status (``holds in 89% of 9 analyses``): **robust** at
  :data:`ROBUST_SHARE` or more of at least :data:`MIN_ANALYSES`. An analysis that cannot tell —
  a deciding row not estimable, or its criterion's power below :data:`POWER_AT_MARGIN` at the
  smallest effect it must detect — is left out and counted, never counted as disagreeing, and
  the audit's own analysis is held to the same filter. An undecided headline shows how its
  analyses fall (``9 analyses: 6 undecided, 3 replicated``), never a share that "holds";
- the **heterogeneity** panel: the line in each subpopulation (one-token and multi-token words,
  the frequent and the rare half, short and long sentences) on the full sample, the analysis at
  the audit's own. A subpopulation is another estimand, not another analysis of this one: its
  status is shown, not folded into the share;
- the **sampling stability**: for each analysis of the multiverse, the line decided on each of
  two disjoint halves of the sample (``sample``), and how many halves give the status that
  analysis has on the full sample (``halves agree 14 of 18``). A half has half the sample, so
  an effect near the margin agrees less often; the number says how a verdict would fare on
  another sample of the same kind, at half the size.

The criterion is not one of the choices: the margin's effect is the line's *sensitivity*
(:mod:`normtest.scorecard.lines`), reported apart. The choices that flip the headline are
named: a value of one analysis choice that, the others at the audit's own, gives the line
another status ("contradicted in raw geometry"). The numbers are descriptive: the headline
keeps its error control, and the analyses are not a family of tests (docs/statistics.md,
"Robustness", where the cut-off is argued from a simulation that ``tests/test_robustness.py``
runs).
"""


from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from normtest.base import progress
from normtest.base.parallel import forked_map
from normtest.claims.catalogue import Claim, get
from normtest.claims.line_declarations import Space, space_of
from normtest.claims.measuring import remeasure, stamp
from normtest.data.respecified import DATA_CHOICES, AnalysisContext, respecified, view_key
from normtest.scorecard.lines import build, decide_line
from normtest.scorecard.power import line_margin_power
from normtest.stats.multiplicity import adjust
from normtest.verdict.result import Result

if TYPE_CHECKING:
    from normtest.data.kinds import AuditData

__all__ = ["MIN_ANALYSES", "POWER_AT_MARGIN", "ROBUST_SHARE", "LineRobustness", "Specification",
           "assess"]

#: An analysis counts only where its criterion has at least this power at the smallest effect it
#: must detect (the claims' ``detect``), read from its own rows' intervals.
POWER_AT_MARGIN = 0.8
#: A line is robust when at least this share of its counted analyses agree with its decided
#: headline. The analyses share one sample, so where the effect is the same under every one
#: they agree far more often than independent tests would: the simulation in
#: ``tests/test_robustness.py`` (docs/statistics.md, "Robustness") gives the rates at which a
#: homogeneous line is called robust and a line whose effect holds under only part of its
#: analyses is not.
ROBUST_SHARE = 0.8
#: The fewest counted analyses (the audit's own among them) whose share is read at all.
MIN_ANALYSES = 3
#: Choices that pick a subpopulation: another estimand, shown as a panel (heterogeneity), never
#: folded into the multiverse's share.
SUBPOPULATIONS = ("population", "sentences")
#: The choice that draws an independent half of the sample (sampling stability).
SAMPLE = "sample"


@dataclass(frozen=True)
class Specification:
    """One specification of a line: its choices, the line's status under it, its rows, and
    whether it can tell (its rows estimable, its criterion's power at the margin at least
    :data:`POWER_AT_MARGIN`)."""

    choices: Mapping[str, str]
    status: str
    rows: tuple[Mapping[str, Any], ...] = ()
    can_tell: bool = True

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"choices": dict(self.choices), "status": self.status,
                "can_tell": self.can_tell, "rows": [dict(r) for r in self.rows]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Specification:
        """Rebuild from :meth:`to_dict` output."""
        return cls({str(k): str(v) for k, v in data["choices"].items()}, str(data["status"]),
                   tuple(dict(r) for r in data.get("rows", ())),
                   bool(data.get("can_tell", True)))


#: The statuses a line can be decided to have (an undecided headline shows how its analyses
#: fall rather than a share that "holds").
DECIDED = ("replicated", "contradicted")


@dataclass(frozen=True)
class LineRobustness:
    """How a scorecard line fares across its specifications, read as three numbers: the
    *multiverse* (the full sample's other analyses of the same estimand, each counted once,
    the headline's own among them and held to the same power filter), the *heterogeneity*
    (the line in each subpopulation: other estimands, shown as a panel) and the *sampling
    stability* (how often an independent half of the sample gives an analysis's status)."""

    line: str
    #: the headline status (the audit's own specification)
    status: str
    #: the audit's own value of each choice
    reference: Mapping[str, str]
    specifications: tuple[Specification, ...] = ()
    #: choices (and values) left out for this model, with why
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    #: the multiverse's analyses left out, by why (``too small``: a row not estimable or its
    #: criterion's power below :data:`POWER_AT_MARGIN` at the margin; ``identical``: the same
    #: data as one counted)
    left_out: Mapping[str, int] = field(default_factory=dict)

    # -- which specification answers which question ----------------------------------------
    def _full(self, s: Specification) -> bool:
        return s.choices.get(SAMPLE, self.reference.get(SAMPLE)) == self.reference.get(SAMPLE)

    def _differs(self, s: Specification, names: Iterable[str]) -> list[str]:
        return [k for k in names if k in s.choices and s.choices[k] != self.reference.get(k)]

    @property
    def analyses(self) -> tuple[Specification, ...]:
        """The multiverse: the full sample's analyses of the headline's estimand (every
        subpopulation choice at the audit's own), whether or not they can tell."""
        return tuple(s for s in self.specifications
                     if self._full(s) and not self._differs(s, SUBPOPULATIONS))

    @property
    def counted(self) -> tuple[Specification, ...]:
        """The multiverse's analyses that can tell (the headline's own only if it can too)."""
        return tuple(s for s in self.analyses if s.can_tell)

    @property
    def statuses(self) -> dict[str, int]:
        """How the counted analyses fall: status → how many."""
        tally: dict[str, int] = {}
        for s in self.counted:
            tally[s.status] = tally.get(s.status, 0) + 1
        return dict(sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])))

    @property
    def share(self) -> float:
        """The share of the counted analyses under which the line has its headline status."""
        counted = self.counted
        if not counted:
            return math.nan
        return sum(s.status == self.status for s in counted) / len(counted)

    @property
    def assessed(self) -> bool:
        """Whether enough analyses count for the share to be read (:data:`MIN_ANALYSES`)."""
        return len(self.counted) >= MIN_ANALYSES

    @property
    def robust(self) -> bool:
        """A decided headline that at least :data:`ROBUST_SHARE` of at least
        :data:`MIN_ANALYSES` counted analyses agree with."""
        return self.assessed and self.status in DECIDED and bool(self.share >= ROBUST_SHARE)

    @property
    def modal(self) -> str:
        """The status the most counted analyses give (the headline's on a tie)."""
        tally = self.statuses
        if not tally:
            return self.status
        best = max(tally.values())
        return self.status if tally.get(self.status) == best else \
            next(k for k, v in tally.items() if v == best)

    @property
    def heterogeneity(self) -> tuple[tuple[str, str, Specification], ...]:
        """The line in each subpopulation (choice, value, its specification): the full sample,
        every analysis choice at the audit's own, one subpopulation choice changed."""
        analysis = [k for k in self.reference if k not in (*SUBPOPULATIONS, SAMPLE)]
        out = []
        for s in self.specifications:
            changed = self._differs(s, SUBPOPULATIONS)
            if self._full(s) and len(changed) == 1 and not self._differs(s, analysis):
                out.append((changed[0], s.choices[changed[0]], s))
        return tuple(out)

    @property
    def stability(self) -> tuple[int, int]:
        """(agree, halves): how many of the independent halves of the sample give the status
        their analysis has on the full sample, over the multiverse's analyses."""
        full = {tuple(sorted((k, v) for k, v in s.choices.items() if k != SAMPLE)): s.status
                for s in self.analyses}
        agree = halves = 0
        for s in self.specifications:
            if self._full(s) or self._differs(s, SUBPOPULATIONS):
                continue
            status = full.get(tuple(sorted((k, v) for k, v in s.choices.items()
                                           if k != SAMPLE)))
            if status is not None:
                halves += 1
                agree += s.status == status
        return agree, halves

    # -- the words -------------------------------------------------------------------------
    @property
    def label(self) -> str:
        """``holds in 89% of 9 analyses`` (``; mostly undecided`` where the modal status
        differs): the one wording of the multiverse, in every view."""
        head = self.share_text
        return head if not self.assessed or self.status not in DECIDED \
            or self.modal == self.status else f"{head}; mostly {self.modal}"

    @property
    def share_text(self) -> str:
        """The label without its modal status: ``holds in 89% of 9 analyses``; for an
        undecided headline, how its analyses fall (``9 analyses: 6 undecided, 3
        replicated``), never a share that holds."""
        if not self.specifications and not self.left_out:
            return "robustness not assessed"
        n = len(self.counted)
        if not self.assessed:
            total = len(self.analyses) + self.left_out.get("identical", 0)
            return f"too few analyses: {n} of {total} can tell"
        if self.status not in DECIDED:
            return f"{n} analyses: " + ", ".join(f"{k} {s}" for s, k in self.statuses.items())
        return f"holds in {self.share:.0%} of {n} analyses"

    @property
    def stability_text(self) -> str:
        """``halves agree 14 of 18`` (empty where no half was analysed)."""
        agree, halves = self.stability
        return f"halves agree {agree} of {halves}" if halves else ""

    @property
    def heterogeneity_text(self) -> str:
        """``by subpopulation: multitoken undecided, frequent replicated`` (empty where the
        line declares none)."""
        panel = self.heterogeneity
        if not panel:
            return ""
        return "by subpopulation: " + ", ".join(
            f"{value} {s.status}" + ("" if s.can_tell else " (cannot tell)")
            for _, value, s in panel)

    @property
    def left_out_text(self) -> str:
        """``12 left out: 9 too small, 3 identical`` (empty when none)."""
        total = sum(self.left_out.values())
        if not total:
            return ""
        return f"{total} left out: " + ", ".join(f"{n} {why}" for why, n in
                                                  self.left_out.items() if n)

    @property
    def flips(self) -> list[tuple[str, str, str]]:
        """(choice, value, status) of each analysis choice whose value, the others at the
        audit's own, gives the line another status than the headline (counted analyses)."""
        out = []
        for s in self.counted:
            other = [k for k, v in s.choices.items() if self.reference.get(k) != v]
            if len(other) == 1 and s.status != self.status:
                out.append((other[0], s.choices[other[0]], s.status))
        return out

    @property
    def heterogeneous(self) -> tuple[tuple[str, str], ...]:
        """The subpopulations (value, status) that can tell and are decided against the
        headline's decided status: where the effect differs, not the analysis."""
        if self.status not in DECIDED:
            return ()
        return tuple((value, s.status) for _, value, s in self.heterogeneity
                     if s.can_tell and s.status in DECIDED and s.status != self.status)

    @property
    def advice(self) -> str:
        """The robustness in words a reader acts on: ``robust (89% of 9 analyses)``,
        ``fragile: transform=raw gives contradicted``, ``fragile (67% of 9 analyses)``, ``too
        few analyses can tell``. Empty for an undecided headline (its next step says more) or
        where robustness was not assessed."""
        if (not self.specifications and not self.left_out) or self.status not in DECIDED:
            return ""
        if not self.assessed:
            head = "too few analyses can tell"
        elif self.robust:
            head = f"robust ({self.share:.0%} of {len(self.counted)} analyses)"
        else:
            flips = self.flips
            head = (f"fragile: {flips[0][0]}={flips[0][1]} gives {flips[0][2]}" if flips
                    else f"fragile ({self.share:.0%} of {len(self.counted)} analyses)")
        return head

    @property
    def heterogeneity_advice(self) -> str:
        """``heterogeneous: frequent contradicted, one_token contradicted`` where a
        subpopulation is decided against the headline (empty otherwise)."""
        differ = self.heterogeneous
        return "heterogeneous: " + ", ".join(f"{v} {s}" for v, s in differ) if differ else ""

    def short(self) -> str:
        """The label and the sampling stability, for one-line views: ``holds in 89% of 9
        analyses; halves agree 14 of 18``."""
        return "; ".join(x for x in (self.label, self.stability_text) if x)

    def summary(self) -> str:
        """``holds in 89% of 9 analyses (robust at 80%; 3 left out: 3 identical); halves
        agree 14 of 18; by subpopulation: multitoken undecided: transform=raw gives
        undecided``."""
        extra = ", ".join(x for x in (
            f"{'robust' if self.robust else 'not robust'} at {ROBUST_SHARE:.0%}"
            if self.assessed and self.status in DECIDED else "", self.left_out_text) if x)
        head = self.label + (f" ({extra})" if extra else "")
        head = "; ".join(x for x in (head, self.stability_text, self.heterogeneity_text) if x)
        flips = self.flips
        if not flips:
            return head
        shown = "; ".join(f"{c}={v} gives {s}" for c, v, s in flips[:2])
        more = f" (+{len(flips) - 2})" if len(flips) > 2 else ""
        return f"{head}: {shown}{more}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (an entry of ``robustness`` in ``report.json``)."""
        agree, halves = self.stability
        return {"line": self.line, "status": self.status, "share": _finite(self.share),
                "robust": self.robust, "n": len(self.counted), "label": self.label,
                "modal": self.modal, "statuses": self.statuses, "left_out": dict(self.left_out),
                "stability": {"agree": agree, "halves": halves},
                "heterogeneity": [{"choice": c, "value": v, "status": s.status,
                                   "can_tell": s.can_tell} for c, v, s in self.heterogeneity],
                "reference": dict(self.reference),
                "flips": [{"choice": c, "value": v, "status": s} for c, v, s in self.flips],
                "notes": list(self.notes), "seconds": round(self.seconds, 3),
                "specifications": [s.to_dict() for s in self.specifications]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LineRobustness:
        """Rebuild from :meth:`to_dict` output."""
        return cls(str(data["line"]), str(data["status"]),
                   {str(k): str(v) for k, v in data.get("reference", {}).items()},
                   tuple(Specification.from_dict(s) for s in data.get("specifications", ())),
                   tuple(str(n) for n in data.get("notes", ())),
                   float(data.get("seconds") or 0.0),
                   {str(k): int(v) for k, v in (data.get("left_out") or {}).items()})


def _finite(value: float) -> float | None:
    return None if not math.isfinite(value) else round(float(value), 6)


# -- the assessment ----------------------------------------------------------------------------


def assess(results: Sequence[Result], data: AuditData, family: str,
           source: Any | None = None, lines: Iterable[str] | None = None,
           ) -> list[LineRobustness]:
    """Every tested line re-decided under each specification of its space (module doc);
    ``lines`` limits which. ``source`` is the audit's own frequency source (None: wordfreq).

    In three steps: each line's analyses are planned (which are identical to one already
    counted, and which measurements they need that no earlier analysis made); those
    measurements, independent of each other, are made over the audit's ``--workers`` (forked
    processes, :mod:`normtest.base.parallel`: the same numbers as in one); then each line is decided
    analysis by analysis, in order, from them.
    """
    import time


    context = AnalysisContext(data, family, source)
    began = time.monotonic()
    plans = [_plan(line, context) for line in build(results)
             if line.status != "not tested" and (lines is None or line.key in lines)]
    # one job per line and set of data: its measurements read one view, made once
    groups: dict[tuple[int, Any], list[tuple[Any, Result, dict[str, str]]]] = {}
    for n, plan in enumerate(plans):
        for key, (row, choices) in plan.needs.items():
            claim = get(str(row.claim))
            kept = _measurement_key(claim, row, choices)[2]
            groups.setdefault((n, view_key(str(claim.data), kept)), []).append(
                (key, row, choices))
    jobs = list(groups.items())
    state: dict[str, int] = {}

    def measure(job: tuple[tuple[int, Any], list[tuple[Any, Result, dict[str, str]]]],
                ) -> list[Result]:
        (n, _), needs = job
        if state.get("line") != n:  # a view holds copies of vectors: one line's at a time
            context.views.clear()
            state["line"] = n
        return [_measure(row, choices, context) for _, row, choices in needs]

    total = sum(len(needs) for _, needs in jobs)
    with progress.task("robustness", total=total, unit="analyses") as bar:
        measured = forked_map(measure, jobs, data.settings.workers,
                              done=lambda i: bar.update(len(jobs[i][1])),
                              cost=lambda job: len(job[1]))
    context.views.clear()
    made: list[dict[Any, Result]] = [{} for _ in plans]
    for ((n, _), needs), results_of_job in zip(jobs, measured, strict=True):
        for (key, _, _), result in zip(needs, results_of_job, strict=True):
            made[n][key] = result
    planned = time.monotonic() - began
    out = []
    for plan, results_of in zip(plans, made, strict=True):
        decided = time.monotonic()
        line = _decide_line(plan, results_of, data.settings.alpha)
        # the measurements' time is shared out by each line's share of them
        share = len(results_of) / max(1, total) * planned
        out.append(replace(line, seconds=share + time.monotonic() - decided))
    return out


@dataclass
class _Plan:
    """One line's analyses, in order: the deciding rows, the choices and their reference
    values, the distinct analyses (choices, whether the audit's own) and how many were
    identical to one before; ``needs``: each measurement no earlier analysis made, by its key,
    with the row and choices of the first analysis that needs it."""

    line: Any
    deciding: list[Result]
    reference: dict[str, str]
    notes: list[str]
    analyses: list[tuple[dict[str, str], bool]]
    identical: int
    needs: dict[Any, tuple[Result, dict[str, str]]]


def _plan(line: Any, context: AnalysisContext) -> _Plan:

    deciding = [r for r in line.rows if not r.details.get("reading")]
    options, reference, notes = _choices(space_of(line.key), deciding, context)
    # the choices that change the data vary slowest, then the geometry: the draws and what is
    # derived from them for one set of data stay in the memo while used
    data_choices = {c for kinds in DATA_CHOICES.values() for c in kinds}
    names = sorted(options, key=lambda n: n not in data_choices)
    combos = list(itertools.product(*(options[n] for n in names)))
    # the audit's own analysis first: an analysis identical to it is the one left out
    combos.sort(key=lambda combo: dict(zip(names, combo, strict=True)) != reference)
    # the audit's own measurements are reused (one that could not be made is made again)
    known = {_measurement_key(get(str(r.claim)), r, reference)[0] for r in deciding
             if r.measurement is not None}
    seen: set[tuple[Any, ...]] = set()
    analyses: list[tuple[dict[str, str], bool]] = []
    needs: dict[Any, tuple[Result, dict[str, str]]] = {}
    identical = 0
    for combo in combos:
        choices = dict(zip(names, combo, strict=True))
        subpopulation = any(choices.get(c, reference.get(c)) != reference.get(c)
                            for c in SUBPOPULATIONS)
        half = choices.get(SAMPLE, reference.get(SAMPLE)) != reference.get(SAMPLE)
        if subpopulation and half:
            continue  # a subpopulation is read on the full sample (heterogeneity) only
        keys = tuple(_measurement_key(get(str(r.claim)), r, choices)[0] for r in deciding)
        if keys in seen:
            identical += not (subpopulation or half)  # the multiverse's analyses
            continue
        seen.add(keys)
        own = choices == reference
        analyses.append((choices, own))
        if own:
            continue
        for key, r in zip(keys, deciding, strict=True):
            if key not in known and key not in needs:
                needs[key] = (r, choices)
    return _Plan(line, deciding, reference, notes, analyses, identical, needs)


def _decide_line(plan: _Plan, made: Mapping[Any, Result], alpha: float) -> LineRobustness:
    """The line decided under each planned analysis, from the measurements made for it."""

    deciding = plan.deciding
    # the audit's own measurements, then each made one, are reused by later analyses
    measured: dict[Any, Result] = {
        _measurement_key(get(str(r.claim)), r, plan.reference)[0]: r for r in deciding}
    specs = []
    for choices, own in plan.analyses:
        if own:
            rows = deciding
        else:
            rows = [_measured(get(str(r.claim)), r, choices, measured, made, alpha)
                    for r in deciding]
        # the same power filter for every analysis, the audit's own included
        can_tell = not _too_small(rows)
        if not own:
            rows = adjust(rows, "line")  # the line's own decision, as the headline's
        status = decide_line(rows)[0] if rows else "not tested"
        specs.append(Specification(choices, status, tuple(
            _row(r, k, reference_row) for k, (r, reference_row) in enumerate(
                zip(rows, deciding, strict=True))), can_tell))
    line = LineRobustness(plan.line.key, plan.line.status, plan.reference, tuple(specs),
                          tuple(plan.notes))
    small = sum(not s.can_tell for s in line.analyses)
    left_out = {"too small": small, "identical": plan.identical}
    return replace(line, left_out={k: v for k, v in left_out.items() if v})


def _too_small(rows: Sequence[Result]) -> bool:
    """Whether an analysis cannot tell: a deciding row could not be estimated, or the
    criterion's power at the smallest effect its claims must detect is below
    :data:`POWER_AT_MARGIN` (the chance that every one-sided row passes there, read from their
    own intervals: :func:`normtest.scorecard.power.line_margin_power`)."""

    if any(r.measurement is None or r.measurement.sampling is None for r in rows):
        return True
    found = line_margin_power(rows, POWER_AT_MARGIN)
    return found is not None and found.power < POWER_AT_MARGIN


def _row(r: Result, position: int, reference: Result) -> dict[str, Any]:
    """A row as a specification curve plots it: which deciding row it is (``row``, its
    ``of``: the id under the audit's own specification) and what it measured."""
    low, high = r.ci
    threshold = r.threshold
    return {"row": position, "of": reference.id, "id": r.id, "claim": r.claim,
            "verdict": r.verdict.value,
            "estimate": _finite(r.estimate), "ci": [_finite(low), _finite(high)],
            "threshold": list(threshold) if isinstance(threshold, tuple) else threshold}


def _choices(space: Space, deciding: Sequence[Result], context: AnalysisContext,
             ) -> tuple[dict[str, tuple[str, ...]], dict[str, str], list[str]]:
    """The values of each choice that apply to this line and model, the audit's own value of
    each, and notes on what was left out."""

    settings = context.data.settings
    claims = [get(str(r.claim)) for r in deciding]
    kinds = {c.data for c in claims}
    options: dict[str, tuple[str, ...]] = {}
    reference: dict[str, str] = {}
    notes: list[str] = []
    for name, values in space.choices.items():
        if name == "transform":
            own = {r.variant["transform"] for r in deciding if "transform" in r.variant}
            if len(own) != 1:
                notes.append("transform: the line's rows have no single geometry")
                continue
            ref = own.pop()
        elif name == "ic_source":
            if context.source is not None:
                notes.append("ic_source: the audit was given its own frequency source")
                continue
            ref = "wordfreq"
        elif name == "min_pair_count":
            ref = str(settings.min_pair_count)
        elif name == "prefix_unit":
            ref = "words" if context.data.prefix().unit == "words" else "tokens"
            if context.family == "sentence":
                notes.append("prefix_unit: a sentence encoder's prefixes are cut on a word grid")
                continue
        else:
            ref = values[0]
        kept = tuple(dict.fromkeys((ref, *values)))
        if name == "population" and context.family in ("static", "sentence"):
            kept = tuple(v for v in kept if v not in ("one_token", "multitoken"))
            notes.append("population: one_token and multitoken left out (whole words)")
        relevant = name == "transform" or any(
            name in DATA_CHOICES.get(str(k), ()) for k in kinds)
        if not relevant:
            continue
        options[name] = kept
        reference[name] = ref
    return options, reference, notes


def _measure(row: Result, choices: Mapping[str, str], context: AnalysisContext) -> Result:
    """A deciding row measured and judged on the data of an analysis (unadjusted)."""

    claim = get(str(row.claim))
    _, variant, kept = _measurement_key(claim, row, choices)
    data, settings = respecified(str(claim.data), kept, context)
    return remeasure(claim, data, variant, settings, like=row)


def _measured(claim: Claim, row: Result, choices: Mapping[str, str],
              measured: dict[Any, Result], made: Mapping[Any, Result], alpha: float) -> Result:
    """A deciding row under an analysis (unadjusted): a row already measured on the same data
    (a choice its claim does not read) is judged again, not measured again; else the
    measurement made for it."""
    key, _, _ = _measurement_key(claim, row, choices)
    earlier = measured.get(key)
    if earlier is not None and earlier.measurement is not None:
        judged = replace(Result.judged(earlier.measurement, claim.criterion.with_alpha(alpha)),
                         claim=earlier.claim, variant=dict(earlier.variant),
                         details=earlier.details)
    else:
        judged = measured[key] = made[key]
    return stamp(judged, claim, like=row)  # the expectation, role and line of the row it stands for


def _measurement_key(claim: Claim, row: Result, choices: Mapping[str, str],
                     ) -> tuple[tuple[Any, ...], dict[str, str], dict[str, str]]:
    """What a row's measurement under ``choices`` depends on, the variant it is measured at, and
    the choices that apply to its claim."""
    variant = dict(row.variant)
    if "transform" in choices and "transform" in claim.axes:
        variant["transform"] = choices["transform"]
    # a choice the claim's quantities do not involve leaves its data as they are (C1 reads no
    # IC, so the IC source must not change its words)
    uses = {"ic_source": "information_content", "min_pair_count": "pmi"}
    kept = {k: v for k, v in choices.items() if k not in uses or uses[k] in claim.quantities}
    key = (claim.id, tuple(sorted(variant.items())),
           tuple(sorted(kept.items())))
    return key, variant, kept


