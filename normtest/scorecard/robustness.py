"""Robustness: does a scorecard line's verdict survive another reasonable analysis?

Each line of the scorecard is decided under one analysis of one sample: one geometry, one
source of IC, one word population, one minimum pair count, one prefix unit. A *multiverse*
(Steegen et al. 2016), or *specification curve* (Simonsohn, Simmons & Nelson 2020), re-decides
the line under every reasonable analysis and says how many agree; its ``sample`` axis
re-decides it on each of two disjoint halves of the audit's sample as well, so that the share
also says whether another sample of the same kind agrees. Each line declares its space of
analyses next to its claims in ``checks/`` (:func:`specifications`); the audit
(:func:`assess`) re-measures the line's deciding rows under every combination of the choices,
reusing the vectors already computed, judges them, and decides the line again by its own rule
(as the headline is: PASS unadjusted, FAIL at Holm's level over the line's rows). The
criterion is not one of the choices: the margin's effect is the line's *sensitivity*
(:mod:`normtest.scorecard.lines`), reported apart.

Analyses that could not tell are left out and counted, never counted as disagreeing: one whose
deciding rows cannot be estimated or whose criterion has power below :data:`POWER_AT_MARGIN` at
the smallest effect it must detect (the frequent half's five multi-token words), and one whose
data are identical to an analysis already counted (C1 reads no IC, so the IC source does not
change it). It reports:

- the line's status under the audit's own analysis (the headline, unchanged);
- the share of the counted analyses under which the line has that status (``holds in 83% of 54
  analyses``): **robust** at :data:`ROBUST_SHARE` or more, and the modal status where it
  differs from the headline;
- the choices that flip it: a value of one choice that, the others at the audit's own, gives
  the line another status ("contradicted in raw geometry, replicated after Zipfian centring").

The share is descriptive: the headline keeps its error control, and the analyses are not a
family of tests (docs/statistics.md, "Robustness").
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
#: A line is robust when at least this share of its counted analyses agree with the headline.
#: Every counted analysis has power ≥ :data:`POWER_AT_MARGIN` at the margin, so where the line's
#: effect truly lies beyond the margin under every analysis, sampling alone leaves about that
#: share agreeing; a lower share means the analyses disagree, not that the samples were small.
ROBUST_SHARE = POWER_AT_MARGIN
#: The fewest counted analyses (the audit's own among them) whose share is read at all.
MIN_ANALYSES = 3


@dataclass(frozen=True)
class Specification:
    """One specification of a line: its choices, the line's status under it, and its rows."""

    choices: Mapping[str, str]
    status: str
    rows: tuple[Mapping[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"choices": dict(self.choices), "status": self.status,
                "rows": [dict(r) for r in self.rows]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Specification:
        """Rebuild from :meth:`to_dict` output."""
        return cls({str(k): str(v) for k, v in data["choices"].items()}, str(data["status"]),
                   tuple(dict(r) for r in data.get("rows", ())))


@dataclass(frozen=True)
class LineRobustness:
    """How a scorecard line fares across its specifications."""

    line: str
    #: the headline status (the audit's own specification)
    status: str
    #: the audit's own value of each choice
    reference: Mapping[str, str]
    specifications: tuple[Specification, ...] = ()
    #: choices (and values) left out for this model, with why
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    #: analyses left out, by why (``too small``: a row not estimable or its criterion's power
    #: below :data:`POWER_AT_MARGIN` at the margin; ``identical``: the same data as one counted)
    left_out: Mapping[str, int] = field(default_factory=dict)

    @property
    def share(self) -> float:
        """The share of the counted analyses under which the line has its headline status."""
        if not self.specifications:
            return math.nan
        return sum(s.status == self.status for s in self.specifications) / len(
            self.specifications)

    @property
    def assessed(self) -> bool:
        """Whether enough analyses count for the share to be read (:data:`MIN_ANALYSES`)."""
        return len(self.specifications) >= MIN_ANALYSES

    @property
    def robust(self) -> bool:
        """At least :data:`ROBUST_SHARE` of at least :data:`MIN_ANALYSES` counted analyses
        agree."""
        return self.assessed and bool(self.share >= ROBUST_SHARE)

    @property
    def modal(self) -> str:
        """The status the most counted analyses give (the headline's on a tie)."""
        if not self.specifications:
            return self.status
        tally: dict[str, int] = {}
        for s in self.specifications:
            tally[s.status] = tally.get(s.status, 0) + 1
        best = max(tally.values())
        return self.status if tally.get(self.status) == best else \
            next(k for k, v in tally.items() if v == best)

    @property
    def label(self) -> str:
        """``holds in 83% of 54 analyses`` (``; mostly undecided`` where the modal status
        differs): the one wording of the share, in every view."""
        head = self.share_text
        return head if not self.assessed or self.modal == self.status else \
            f"{head}; mostly {self.modal}"

    @property
    def share_text(self) -> str:
        """The label without its modal status: ``holds in 83% of 54 analyses`` (the terminal
        gives the modal status on the line below, where a narrow column would cut it)."""
        if not self.specifications and not self.left_out:
            return "robustness not assessed"
        n = len(self.specifications)
        if not self.assessed:
            return f"too few analyses: {n} of {n + sum(self.left_out.values())} can tell"
        return f"holds in {self.share:.0%} of {n} analyses"

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
        """(choice, value, status) of each value that, the other choices at the audit's own,
        gives the line another status than the headline."""
        out = []
        for s in self.specifications:
            other = [k for k, v in s.choices.items() if self.reference.get(k) != v]
            if len(other) == 1 and s.status != self.status:
                out.append((other[0], s.choices[other[0]], s.status))
        return out

    def short(self) -> str:
        """The label for one-line views (:attr:`label`)."""
        return self.label

    def summary(self) -> str:
        """``holds in 58% of 81 analyses (robust at 80%; 12 left out: 12 too small):
        transform=center_zipf gives replicated``."""
        if not self.assessed:
            return self.label + (f" ({self.left_out_text})" if self.left_out_text else "")
        extra = ", ".join(x for x in (f"{'robust' if self.robust else 'not robust'} at "
                                      f"{ROBUST_SHARE:.0%}", self.left_out_text) if x)
        head = f"{self.label} ({extra})"
        flips = self.flips
        if not flips:
            return head
        shown = "; ".join(f"{c}={v} gives {s}" for c, v, s in flips[:2])
        more = f" (+{len(flips) - 2})" if len(flips) > 2 else ""
        return f"{head}: {shown}{more}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (an entry of ``robustness`` in ``report.json``)."""
        return {"line": self.line, "status": self.status, "share": _finite(self.share),
                "robust": self.robust, "n": len(self.specifications), "label": self.label,
                "modal": self.modal, "left_out": dict(self.left_out),
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
        keys = tuple(_measurement_key(get(str(r.claim)), r, choices)[0] for r in deciding)
        if keys in seen:
            identical += 1
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
    left_out = {"too small": 0, "identical": plan.identical}
    for choices, own in plan.analyses:
        if own:
            rows = deciding
        else:
            rows = [_measured(get(str(r.claim)), r, choices, measured, made, alpha)
                    for r in deciding]
            if _too_small(rows):
                left_out["too small"] += 1
                continue
            rows = adjust(rows, "line")  # the line's own decision, as the headline's
        status = decide_line(rows)[0] if rows else "not tested"
        specs.append(Specification(choices, status, tuple(
            _row(r, k, reference_row) for k, (r, reference_row) in enumerate(
                zip(rows, deciding, strict=True)))))
    return LineRobustness(plan.line.key, plan.line.status, plan.reference, tuple(specs),
                          tuple(plan.notes), left_out={k: v for k, v in left_out.items() if v})


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


