"""The scorecard: the paper's hypotheses, each replicated, contradicted, undecided or not tested.

Each line is one hypothesis of the paper (declared with
:func:`normtest.claims.catalogue.hypothesis`, in the paper's order). The confirmatory rows of an
audit — the variants for which the paper states a verdict, each line from its own rows (PASS
unadjusted, FAIL at Holm's level over the line's rows) — decide the lines they count towards:

- **replicated**: every confirmatory row of the line was decided, and as the paper expects;
- **contradicted**: at least one was decided (PASS or FAIL) against the paper's expectation;
- **undecided**: none contradicts, but at least one is INCONCLUSIVE or ERROR — undecided is never
  counted as disagreement;
- **not tested**: the audit has no confirmatory row for the line (not selected, skipped, or the
  paper states no expectation for this model family);
- **invalid**: one of the line's controls misbehaved (:mod:`normtest.scorecard.controls`: the
  negative control passed, the confound control passed beyond its baseline, or the positive
  control failed where the sample has the power to see it). Low power alone never makes a line
  invalid: an undecided line says what sample would decide it.

A line may have two readings (the conditions: the model's raw geometry, and the centred geometry
of the framework the paper builds on). Its status is decided under its *reference* reading; the
rows of another reading (an expectation's ``reading``) decide that reading's own status, which
the line reports beside it ("contradicted in raw geometry; replicated after centring")
rather than folding the two into one word.

Each line also says what it rests on: whether its criterion is stated by the paper or
reconstructed by normtest (any of its confirmatory rows' claims reconstructed), and the
representation, transform, sample sizes and thresholds its rows were judged at.

Exploratory rows never move a line. The scorecard is computed from the results alone, so a stored
report gives the same scorecard as the audit that wrote it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from normtest.claims.measuring import beyond_criterion
from normtest.stats.multiplicity import adjust
from normtest.verdict.formatting import interval, number, threshold
from normtest.verdict.result import Result, Verdict

#: The statuses of a line, best news first (the order reports list their counts in).
STATUSES: tuple[str, ...] = ("replicated", "contradicted", "undecided", "invalid",
                             "not tested")


@dataclass(frozen=True)
class Reading:
    """A line's other reading (``after centring``): its own status and reason."""

    name: str
    status: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (in a line's ``readings``)."""
        return {"name": self.name, "status": self.status, "reason": self.reason}


@dataclass(frozen=True)
class Line:
    """One scorecard line: a hypothesis, what the audit concluded, why, and the rows behind it."""

    key: str
    title: str
    status: str
    reason: str
    rows: tuple[Result, ...] = ()
    source: str = ""
    #: a few words naming the line, for one-line views
    short: str = ""
    #: the reading the status is decided under (empty: the line has one reading)
    reference: str = ""
    #: the line's other readings, each with its own status (rows with that ``reading``)
    readings: tuple[Reading, ...] = ()
    #: ``stated`` (the paper states the criterion) or ``reconstructed`` (normtest
    #: reconstructed it), from the claims of its confirmatory rows; empty when not tested
    basis: str = ""
    #: the analysis its rows were judged under: representation, transform, sample, threshold
    rests_on: str = ""
    #: for an invalid line, the status its rows gave before its controls overruled it
    measured: str = ""
    #: how far the criterion's threshold could move before a deciding row changed: the row
    #: whose deciding bound lies nearest its threshold (empty when none can be read)
    sensitivity: str = ""
    #: the line's reading beyond its rows' baseline (``beyond token count``): whether the norm
    #: carries the information beyond what the trivial predictor gives; None when no deciding
    #: row declares a baseline
    beyond: Reading | None = None

    @property
    def verdict(self) -> str:
        """The status with its readings where they disagree: ``contradicted in raw geometry;
        replicated after centring``, ``replicated as stated · not beyond token count`` (else the
        bare status)."""
        others = [r for r in self.readings if r.status != self.status]
        head = self.status
        if others:
            head = "; ".join([f"{self.status} {self.reference}".strip(),
                              *(f"{r.status} {r.name}" for r in others)])
        phrase = self.beyond_phrase
        return f"{head} as stated · {phrase}" if phrase else head

    @property
    def beyond_phrase(self) -> str:
        """``not beyond token count`` where the beyond reading differs from the line's status
        (``beyond token count``, ``undecided beyond length``), else empty."""
        b = self.beyond
        if b is None or self.status == "not tested" or _BEYOND_STATUS.get(b.status) == \
                _BEYOND_STATUS.get(self.measured or self.status):
            return ""
        return beyond_words(b)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the ``scorecard`` key of ``report.json``)."""
        return {
            "key": self.key, "title": self.title, "source": self.source, "short": self.short,
            "status": self.status, "verdict": self.verdict, "reason": self.reason,
            "reference": self.reference, "readings": [r.to_dict() for r in self.readings],
            "basis": self.basis, "rests_on": self.rests_on, "measured": self.measured,
            "sensitivity": self.sensitivity,
            "beyond": None if self.beyond is None else {**self.beyond.to_dict(),
                                                         "words": beyond_words(self.beyond)},
            "rows": [{"id": r.id, **{k: row[k] for k in ("verdict", "expected", "estimate",
                                                           "ci", "threshold")},
                      "reading": r.details.get("reading")}
                     for r, row in ((r, r.to_dict()) for r in self.rows)],
        }


#: How a beyond reading's status reads (its name is ``beyond token count``).
_BEYOND_STATUS = {"replicated": "holds", "contradicted": "not", "undecided": "undecided"}


def beyond_words(b: Reading) -> str:
    """A beyond reading in words: ``beyond token count``, ``not beyond token count``,
    ``undecided beyond length``."""
    how = _BEYOND_STATUS.get(b.status, b.status)
    return b.name if how == "holds" else f"{how} {b.name}"


def beyond_reading(rows: Sequence[Result]) -> Reading | None:
    """The beyond reading of a line's deciding rows that declare a baseline: each row's beyond
    measurement held to its headline threshold carried to the strata (``beyond_criterion``) and
    adjusted by the line's own rule (PASS
    unadjusted: replicated needs every row; FAIL at Holm's level over the line's rows), then
    decided as the line is (:func:`decide_line`)."""

    measured = [r for r in rows if isinstance(r.details.get("beyond"), Mapping)]
    if not measured:
        return None
    names = list(dict.fromkeys(str(r.details["beyond"].get("baseline") or "baseline")
                               for r in measured))
    judged = []
    for r in measured:
        verdict = r.details["beyond"].get("verdict")
        beyond = None if r.measurement is None else r.measurement.components.get("beyond")
        judged.append(replace(
            r, verdict=Verdict(verdict) if verdict else Verdict.ERROR, measurement=beyond,
            criterion=None if r.criterion is None else (
                r.criterion.headline() if beyond is None else
                beyond_criterion(r.criterion, beyond)),
            details={k: v for k, v in r.details.items() if k != "power"}))
    status, reason = decide_line(adjust(judged, "line"))
    return Reading("beyond " + " & ".join(names), status, reason)


def _effect(r: Result) -> str:
    """``id PASS (0.47 [0.44, 0.5])``: a row as the one-sentence reasons quote it."""
    stage = f" at stage {r.details['stage']}" if "stage" in r.details else ""
    if r.measurement is None or r.measurement.sampling is None:
        return f"{r.id} {r.verdict.value}{stage}"
    return f"{r.id} {r.verdict.value}{stage} ({number(r.estimate)} {interval(r)})"


def _needs(rows: Sequence[Result]) -> str:
    """What the power analysis asks for to decide the undecided rows (the largest sample)."""
    asked = [r.details["power"] for r in rows if isinstance(r.details.get("power"), Mapping)
             and r.details["power"].get("needed") is not None]
    reachable = [p for p in asked if not p.get("out_of_reach")]
    beyond = len(asked) - len(reachable)
    out = ""
    if reachable:
        most: dict[str, Mapping[str, Any]] = {}
        for p in reachable:
            if p["setting"] not in most or p["needed"] > most[p["setting"]]["needed"]:
                most[p["setting"]] = p
        wanted = ", ".join(f"--{name} {p['needed']:,} (now {p['now']:,})"
                           for name, p in most.items())
        out = f"; to decide them the power analysis asks for about {wanted}"
    held = [p for p in asked if p.get("out_of_reach") and p.get("capacity") is not None
            and p["needed"] > p["capacity"]]
    far = beyond - len(held)
    if held:
        out += (f"; {len(held)} row{'s' * (len(held) != 1)} out of reach of these data ("
                + ", ".join(f"--{p['setting']} {p['needed']:,}, the data hold "
                            f"{p['capacity']:,}" for p in held[:2]) + ")")
    if far:
        out += (f"; {far} row{'s' * (far != 1)} out of reach (over twenty times the sample: "
                "the effect sits at the edge of its threshold)")
    return out


def decide_line(rows: Sequence[Result]) -> tuple[str, str]:
    """The status of a set of confirmatory rows (none SKIPPED, at least one) and its reason."""
    against = [r for r in rows if r.verdict in (Verdict.PASS, Verdict.FAIL)
               and r.expected is not None and r.verdict is not r.expected]
    open_ = [r for r in rows if r.verdict not in (Verdict.PASS, Verdict.FAIL)]
    if against:
        r = against[0]
        more = f" ({len(against)} of {len(rows)} rows contradict)" if len(against) > 1 else ""
        assert r.expected is not None
        return "contradicted", f"{_effect(r)} where the paper expects {r.expected.value}{more}"
    if open_:
        names = ", ".join(_effect(r) for r in open_[:2]) + (" …" if len(open_) > 2 else "")
        agree = len(rows) - len(open_)
        reason = (f"{len(open_)} of {len(rows)} rows undecided ({names}); "
                  f"{agree} agree with the paper" if agree else
                  f"{len(open_)} of {len(rows)} rows undecided ({names})")
        return "undecided", reason + _needs(open_)
    shown = ", ".join(_effect(r) for r in rows[:2]) + (" …" if len(rows) > 2 else "")
    return "replicated", (f"all {len(rows)} rows as the paper expects ({shown})" if len(rows) > 1
                          else f"as the paper expects: {shown}")


def _line(key: str, title: str, source: str, results: Sequence[Result],
          short: str = "", reference: str = "") -> Line:
    mine = [r for r in results if r.hypothesis == key]
    rows = tuple(r for r in mine if r.confirmatory and r.verdict is not Verdict.SKIPPED)
    short = short or key
    if not rows:
        skipped = [r for r in mine if r.verdict is Verdict.SKIPPED]
        if skipped:
            why = f"{skipped[0].claim} was skipped: {skipped[0].reason}"
        elif mine:
            why = (f"the paper states no expectation for this model here; its {len(mine)} "
                   "rows are exploratory")
        else:
            why = "no claim of this line was in the audit's selection"
        return Line(key, title, "not tested", why, (), source, short, reference)
    by_reading: dict[str | None, list[Result]] = {}
    for r in rows:
        by_reading.setdefault(r.details.get("reading"), []).append(r)
    deciding = by_reading.pop(None, None) or by_reading.pop(next(iter(by_reading)))
    status, reason = decide_line(deciding)
    readings = tuple(Reading(str(name), *decide_line(found)) for name, found in by_reading.items())
    for other in readings:
        if other.status != status:
            reason += f"; {other.name}: {other.status}, {other.reason}"
    beyond = beyond_reading(deciding)
    if beyond is not None and _BEYOND_STATUS.get(beyond.status) != _BEYOND_STATUS.get(status):
        reason += f"; {beyond_words(beyond)}: {beyond.reason}"
    return Line(key, title, status, reason, rows, source, short, reference if readings else "",
                readings, _basis(rows), _rests_on(deciding), beyond=beyond,
                sensitivity=sensitivity(deciding))


def _deciding_bound(r: Result) -> tuple[float, float] | None:
    """(the bound of a row's interval that decides it against its threshold or margin, how far
    that bound lies from it), at the row's own α; None when it cannot be read."""
    m, c = r.measurement, r.criterion
    if m is None or c is None or m.sampling is None:
        return None
    low, high = m.interval(1 - 2 * c.alpha)
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    if c.direction == "within":
        assert c.margin is not None
        a, b = c.margin
        pairs = [(low, abs(low - a)), (high, abs(b - high))]
        if high < a:
            pairs = [(high, a - high)]
        elif low > b:
            pairs = [(low, low - b)]
        return min(pairs, key=lambda p: p[1])
    t = float(c.threshold or 0.0)
    return min(((low, abs(low - t)), (high, abs(high - t))), key=lambda p: p[1]) \
        if r.verdict not in (Verdict.PASS, Verdict.FAIL) else (
            (low, abs(low - t)) if (r.verdict is Verdict.PASS) == (c.direction == "greater")
            else (high, abs(high - t)))


def sensitivity(rows: Sequence[Result]) -> str:
    """The criterion's sensitivity of a line, in words: the deciding row whose deciding bound
    lies nearest its threshold, and how far (``decided at the stated thresholds; the nearest
    deciding bound, 0.462 for word.norm_ic[…] against > 0.3, is 0.162 away: a threshold moved
    that far changes that row``)."""
    found = [(r, *b) for r in rows if (b := _deciding_bound(r)) is not None]
    if not found:
        return ""
    r, bound, distance = min(found, key=lambda x: x[2])
    return (f"decided at the stated thresholds; the nearest deciding bound, {number(bound)} "
            f"for {r.label} against {threshold(r)}, is {number(distance)} away: a threshold "
            "moved that far changes that row")


def deciding_rows(line: Line) -> tuple[Result, ...]:
    """The rows a line's status is decided by: those of its reference reading (the rows
    without a ``reading``, else the first reading's)."""
    by_reading: dict[Any, list[Result]] = {}
    for r in line.rows:
        by_reading.setdefault(r.details.get("reading"), []).append(r)
    if not by_reading:
        return ()
    return tuple(by_reading.get(None) or next(iter(by_reading.values())))


def deciding_row(line: Line) -> Result | None:
    """The one row whose effect says why a line has its status: for a contradicted line the
    row against the paper that decides it; for an undecided one the undecided row that needs
    the largest sample (the first where none can say); for a replicated one its weakest link,
    the row the paper expects to pass whose deciding bound lies nearest its threshold; None for
    a line not tested."""
    rows = deciding_rows(line)
    if not rows:
        return None
    status = line.measured or line.status
    if status == "contradicted":
        return next((r for r in rows if r.verdict in (Verdict.PASS, Verdict.FAIL)
                     and r.expected is not None and r.verdict is not r.expected), rows[0])
    if status == "undecided":
        open_ = [r for r in rows if r.verdict not in (Verdict.PASS, Verdict.FAIL)]

        def factor(r: Result) -> float:
            power = r.details.get("power")
            return float(power.get("factor") or 0.0) if isinstance(power, Mapping) else 0.0

        return max(open_, key=factor, default=rows[0])
    # the weakest link among the rows the paper expects to pass (the effect), else any row
    effect = [r for r in rows if r.expected is Verdict.PASS] or list(rows)
    bounds = [(r, b[1]) for r in effect if (b := _deciding_bound(r)) is not None]
    return min(bounds, key=lambda x: x[1])[0] if bounds else effect[0]


def _basis(rows: Sequence[Result]) -> str:
    """``reconstructed`` when any row's claim rests on a reconstruction, else ``stated``."""
    return "reconstructed" if any(r.details.get("reconstructed") for r in rows) else "stated"


#: How the reference values of the variant axes read in a line's ``rests_on``.
_AXIS_WORDS = {"representation": {"last": "last layer", "input": "input embeddings"},
               "transform": {"raw": "raw", "center_zipf": "Zipf-centred",
                             "whiten_zipf": "Zipf-whitened", "center_uniform": "centred",
                             "whiten_uniform": "whitened"}}


def _rests_on(rows: Sequence[Result]) -> str:
    """The analysis a line's deciding rows were judged under, in a few words: the
    representations and transforms of their variants, the sizes of their samples and the
    thresholds (``last layer, raw geometry, n 1,016–4,986, ρ > 0.3 | > 0.1``)."""
    parts: list[str] = []
    for axis, words in _AXIS_WORDS.items():
        values = list(dict.fromkeys(r.variant[axis] for r in rows if axis in r.variant))
        if values:
            parts.append(" & ".join(words.get(v, f"layer {v}" if v.isdigit() else v)
                                    for v in values))
    sizes = sorted({r.n for r in rows if r.n})
    if sizes:
        parts.append(f"n {sizes[0]:,}" + (f"–{sizes[-1]:,}" if len(sizes) > 1 else ""))
    limits = list(dict.fromkeys(threshold(r).replace("inside ", "in ") for r in rows
                                if r.criterion is not None))
    if limits:
        parts.append(" | ".join(limits))
    return ", ".join(parts)


def build(results: Sequence[Result],
          line_titles: Sequence[tuple[str, ...]] | None = None,
          controls: Sequence[Any] = ()) -> list[Line]:
    """The scorecard of a set of results: one line per ``(key, title, source[, short,
    reference])`` of ``line_titles`` (default: every declared line, in order), then any key the
    results name that the list lacks. A tested line whose ``controls``
    (:class:`~normtest.scorecard.controls.LineControls`) misbehaved is **invalid**, with why."""
    if line_titles is None:
        from normtest.claims.catalogue import declared_lines

        line_titles = [(h.key, h.title, h.source, h.short, h.reference)
                       for h in declared_lines()]
    listed = [tuple(h) for h in line_titles]
    known = {h[0] for h in listed}
    for r in results:
        if r.hypothesis is not None and r.hypothesis not in known:
            listed.append((r.hypothesis, r.hypothesis, ""))
            known.add(r.hypothesis)
    checked = {c.line: c for c in controls}
    return [_controlled(_line(h[0], h[1], h[2], results, *h[3:5]), checked.get(h[0]))
            for h in listed]


def _controlled(line: Line, controls: Any | None) -> Line:
    """The line, invalid when its controls misbehaved (the rows' own status kept aside); a line
    whose sample lacks the power it needs at its margin keeps its status (a PASS of every row or
    a Holm-adjusted FAIL is a level-α decision at any power) and says so, with the sample that
    would give the power, or that the data cannot."""
    if controls is None or line.status == "not tested":
        return line
    if not controls.valid:
        reason = (f"invalid: {controls.reason()}; the rows alone say {line.status} "
                  f"({line.reason})")
        return replace(line, status="invalid", reason=reason, measured=line.status)
    if not controls.underpowered:
        return line
    clause = controls.positive.sample_clause()
    if line.status == "undecided":
        return replace(line, reason=f"{line.reason}; this sample cannot decide the line: "
                                    f"{clause}")
    return replace(line, reason=f"{line.reason} (a level-α decision at any power; {clause})")


def counts(lines: Sequence[Line]) -> dict[str, int]:
    """How many lines ended in each status (every status listed)."""
    return {s: sum(line.status == s for line in lines) for s in STATUSES}


def titles_of(stored: Any) -> list[tuple[str, ...]] | None:
    """The ``(key, title, source, short, reference)`` of a stored ``scorecard`` list (None if
    absent)."""
    if not isinstance(stored, list):
        return None
    out: list[tuple[str, ...]] = []
    for line in stored:
        if isinstance(line, Mapping) and isinstance(line.get("key"), str):
            out.append((line["key"], str(line.get("title", line["key"])),
                        str(line.get("source", "")), str(line.get("short") or line["key"]),
                        str(line.get("reference") or "")))
    return out
