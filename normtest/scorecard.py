"""The scorecard: the paper's hypotheses, each replicated, contradicted, undecided or not tested.

Each line is one hypothesis of the paper (declared with :func:`normtest.catalogue.hypothesis`, in
the paper's order). The confirmatory rows of an audit — the variants for which the paper states
a verdict, adjusted together by Holm — decide the lines they count towards:

- **replicated**: every confirmatory row of the line was decided, and as the paper expects;
- **contradicted**: at least one was decided (PASS or FAIL) against the paper's expectation;
- **undecided**: none contradicts, but at least one is INCONCLUSIVE or ERROR — undecided is never
  counted as disagreement;
- **not tested**: the audit has no confirmatory row for the line (not selected, skipped, or the
  paper states no expectation for this model family).

Exploratory rows never move a line. The scorecard is computed from the results alone, so a stored
report gives the same scorecard as the audit that wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from normtest.result import Result, Verdict

#: The statuses of a line, best news first (the order reports list their counts in).
STATUSES: tuple[str, ...] = ("replicated", "contradicted", "undecided", "not tested")


@dataclass(frozen=True)
class Line:
    """One scorecard line: a hypothesis, what the audit concluded, why, and the rows behind it."""

    key: str
    title: str
    status: str
    reason: str
    rows: tuple[Result, ...] = ()
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the ``scorecard`` key of ``report.json``)."""
        return {
            "key": self.key, "title": self.title, "source": self.source,
            "status": self.status, "reason": self.reason,
            "rows": [{"id": r.id, **{k: row[k] for k in ("verdict", "expected", "estimate",
                                                           "ci", "threshold")}}
                     for r, row in ((r, r.to_dict()) for r in self.rows)],
        }


def _effect(r: Result) -> str:
    """``id PASS (0.47 [0.44, 0.5])``: a row as the one-sentence reasons quote it."""
    from normtest.render._format import interval, number

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
    if beyond:
        out += (f"; {beyond} row{'s' * (beyond != 1)} out of reach (over twenty times the sample: "
                "the effect sits at the edge of its threshold)")
    return out


def _line(key: str, title: str, source: str, results: Sequence[Result]) -> Line:
    mine = [r for r in results if r.hypothesis == key]
    rows = tuple(r for r in mine if r.confirmatory and r.verdict is not Verdict.SKIPPED)
    if not rows:
        skipped = [r for r in mine if r.verdict is Verdict.SKIPPED]
        if skipped:
            why = f"{skipped[0].claim} was skipped: {skipped[0].reason}"
        elif mine:
            why = (f"the paper states no expectation for this model here; its {len(mine)} "
                   "rows are exploratory")
        else:
            why = "no claim of this line was in the audit's selection"
        return Line(key, title, "not tested", why, (), source)
    against = [r for r in rows if r.verdict in (Verdict.PASS, Verdict.FAIL)
               and r.expected is not None and r.verdict is not r.expected]
    open_ = [r for r in rows if r.verdict not in (Verdict.PASS, Verdict.FAIL)]
    if against:
        r = against[0]
        more = f" ({len(against)} of {len(rows)} rows contradict)" if len(against) > 1 else ""
        assert r.expected is not None
        reason = (f"{_effect(r)} where the paper expects {r.expected.value}{more}")
        return Line(key, title, "contradicted", reason, rows, source)
    if open_:
        names = ", ".join(_effect(r) for r in open_[:2]) + (" …" if len(open_) > 2 else "")
        agree = len(rows) - len(open_)
        reason = (f"{len(open_)} of {len(rows)} rows undecided ({names}); "
                  f"{agree} agree with the paper" if agree else
                  f"{len(open_)} of {len(rows)} rows undecided ({names})")
        return Line(key, title, "undecided", reason + _needs(open_), rows, source)
    shown = ", ".join(_effect(r) for r in rows[:2]) + (" …" if len(rows) > 2 else "")
    reason = (f"all {len(rows)} rows as the paper expects ({shown})" if len(rows) > 1
              else f"as the paper expects: {shown}")
    return Line(key, title, "replicated", reason, rows, source)


def build(results: Sequence[Result],
          hypotheses: Sequence[tuple[str, str, str]] | None = None) -> list[Line]:
    """The scorecard of a set of results: one line per hypothesis ``(key, title, source)``
    (default: every declared hypothesis, in order), then any key the results name that the list
    lacks."""
    if hypotheses is None:
        from normtest.catalogue import hypotheses as declared

        hypotheses = [(h.key, h.title, h.source) for h in declared()]
    listed = list(hypotheses)
    known = {key for key, _, _ in listed}
    for r in results:
        if r.hypothesis is not None and r.hypothesis not in known:
            listed.append((r.hypothesis, r.hypothesis, ""))
            known.add(r.hypothesis)
    return [_line(key, title, source, results) for key, title, source in listed]


def counts(lines: Sequence[Line]) -> dict[str, int]:
    """How many lines ended in each status (every status listed)."""
    return {s: sum(line.status == s for line in lines) for s in STATUSES}


def titles_of(stored: Any) -> list[tuple[str, str, str]] | None:
    """The ``(key, title, source)`` of a stored ``scorecard`` list (None if absent)."""
    if not isinstance(stored, list):
        return None
    out = []
    for line in stored:
        if isinstance(line, Mapping) and isinstance(line.get("key"), str):
            out.append((line["key"], str(line.get("title", line["key"])),
                        str(line.get("source", ""))))
    return out
