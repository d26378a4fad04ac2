"""Controls on the audit's own data: can this audit see the effect, and refuse it where it is
absent?

A verdict is only as good as the test that gave it. Before a line is called replicated or
contradicted, two control models built from the audit's very words, documents, sentences and
corpus, at its sample sizes, are put through the same claims, criteria and adjustment (assay
validation, as in a laboratory):

- a **positive control**, a model for which the line holds by construction: the line must come
  out *replicated* (the audit has the power to see the effect);
- a **negative control**, a model for which it fails by construction: the line must come out
  *contradicted* (the audit can refuse it).

When a control misbehaves — the positive one undecided at this sample, say — the line is
**invalid**, with the reason, and never replicated or contradicted (:mod:`normtest.scorecard`).
Each line names the builder of its controls next to its claims in ``checks/`` (:func:`controls`);
the builders are in :mod:`normtest.control_data`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from normtest.errors import NormtestError
from normtest.result import Result, Verdict

if TYPE_CHECKING:
    from normtest.vectors import AuditData

__all__ = ["KINDS", "Control", "ControlContext", "LineControls", "assess", "builder_of",
           "controls"]

#: The two controls, and the status each must give the line.
KINDS: dict[str, str] = {"positive": "replicated", "negative": "contradicted"}


@dataclass(frozen=True)
class ControlContext:
    """What a builder reads: the audit's data, the model family, the line's deciding rows,
    which control to build, and a seed of its own."""

    data: AuditData
    family: str
    rows: tuple[Result, ...]
    kind: str
    seed: int


#: A builder: the control data each deciding claim reads, by claim id (or by the kind of data
#: it reads, ``words``/``prefixes``/``texts``, for every claim that reads it), and a note on
#: how the control was built.
Builder = Callable[[ControlContext], tuple[Mapping[str, Any], str]]
_BUILDERS: dict[str, Builder] = {}


def controls(line: str, build: Builder) -> Builder:
    """Declare the builder of a scorecard line's controls (in ``checks/``, next to its claims);
    the same builder again is free, another one for the same line an error."""
    known = _BUILDERS.get(line)
    if known is not None and known is not build:
        raise NormtestError(f"the controls of line {line!r} are declared twice")
    _BUILDERS[line] = build
    return build


def builder_of(line: str) -> Builder | None:
    """The declared builder of a line's controls (the built-in catalogue loaded first)."""
    from normtest.catalogue import hypotheses

    hypotheses()
    return _BUILDERS.get(line)


@dataclass(frozen=True)
class Control:
    """One control of a line: the status the line took on it, and its rows."""

    kind: str
    status: str
    rows: tuple[Mapping[str, Any], ...] = ()
    note: str = ""

    @property
    def expected(self) -> str:
        """The status the control must give: replicated (positive) or contradicted."""
        return KINDS[self.kind]

    @property
    def ok(self) -> bool:
        """Whether the line took the status the control was built to give."""
        return self.status == self.expected

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"kind": self.kind, "status": self.status, "expected": self.expected,
                "ok": self.ok, "note": self.note, "rows": [dict(r) for r in self.rows]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Control:
        """Rebuild from :meth:`to_dict` output."""
        kind = str(data["kind"])
        if kind not in KINDS:
            raise ValueError(f"unknown control {kind!r}")
        return cls(kind, str(data["status"]), tuple(dict(r) for r in data.get("rows", ())),
                   str(data.get("note", "")))


@dataclass(frozen=True)
class LineControls:
    """The controls of one scorecard line."""

    line: str
    positive: Control | None = None
    negative: Control | None = None
    #: why the controls could not be run (an error building them), if so
    problem: str = ""
    seconds: float = 0.0

    @property
    def ran(self) -> tuple[Control, ...]:
        """The controls that ran."""
        return tuple(c for c in (self.positive, self.negative) if c is not None)

    @property
    def valid(self) -> bool:
        """Both controls ran and gave the line the status they were built to give."""
        return not self.problem and len(self.ran) == 2 and all(c.ok for c in self.ran)

    def reason(self) -> str:
        """Why the line is invalid (empty when it is valid)."""
        if self.problem:
            return f"its controls could not be run: {self.problem}"
        out = []
        for c in self.ran:
            if not c.ok:
                what = ("the audit cannot see the effect at this sample" if c.kind == "positive"
                        else "the audit cannot refuse the effect at this sample")
                out.append(f"the {c.kind} control (built to be {c.expected}) came out "
                           f"{c.status}: {what}")
        return "; ".join(out)

    def short(self) -> str:
        """``controls ok`` or what misbehaved (``positive undecided``)."""
        if self.problem:
            return "controls not run"
        if self.valid:
            return "controls ok"
        return ", ".join(f"{c.kind} {c.status}" for c in self.ran if not c.ok)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (an entry of ``controls`` in ``report.json``)."""
        return {"line": self.line, "valid": self.valid, "reason": self.reason(),
                "problem": self.problem, "seconds": round(self.seconds, 3),
                "positive": None if self.positive is None else self.positive.to_dict(),
                "negative": None if self.negative is None else self.negative.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LineControls:
        """Rebuild from :meth:`to_dict` output."""
        def one(key: str) -> Control | None:
            found = data.get(key)
            return None if found is None else Control.from_dict(found)

        return cls(str(data["line"]), one("positive"), one("negative"),
                   str(data.get("problem") or ""), float(data.get("seconds") or 0.0))


def assess(results: Sequence[Result], data: AuditData, family: str,
           lines: Sequence[str] | None = None) -> list[LineControls]:
    """The controls of every tested line that declares them (``lines`` limits which)."""
    import time
    import zlib

    from normtest import progress
    from normtest.scorecard import build

    out = []
    tested = [line for line in build(results) if line.status != "not tested"
              and (lines is None or line.key in lines)]
    with progress.task("controls", total=2 * len(tested), unit="controls") as bar:
        for line in tested:
            builder = builder_of(line.key)
            if builder is None:
                continue
            began = time.monotonic()
            deciding = tuple(r for r in line.rows if not r.details.get("reading"))
            others = [r for r in results if r.confirmatory and r.verdict is not Verdict.SKIPPED
                      and not any(r is d for d in deciding)]
            seed = data.settings.seed * 1009 + zlib.crc32(line.key.encode("utf-8"))
            ran: dict[str, Control] = {}
            problem = ""
            for kind in KINDS:
                bar.describe(f"{kind} control of {line.key}")
                context = ControlContext(data, family, deciding, kind, seed)
                try:
                    ran[kind] = _run(builder, context, others)
                except NormtestError as exc:
                    problem = str(exc)
                bar.update(1)
            out.append(LineControls(line.key, ran.get("positive"), ran.get("negative"),
                                    problem, time.monotonic() - began))
    return out


def _run(builder: Builder, context: ControlContext, others: Sequence[Result]) -> Control:
    """One control: the line's deciding rows measured on the control data, judged, adjusted
    with the audit's other confirmatory rows (as the headline is), and the line decided."""
    from normtest.catalogue import get
    from normtest.robustness import _adjusted, _p_values
    from normtest.rows import measure_row
    from normtest.scorecard import _decide

    made, note = builder(context)
    settings = context.data.settings
    rows = []
    for r in context.rows:
        claim = get(str(r.claim))
        data = made.get(claim.id, made.get(str(claim.data)))
        if data is None:
            raise NormtestError(f"the controls of {r.hypothesis} build no data for {claim.id}")
        judged = measure_row(claim, data, r.variant, settings, claim.criterion)
        rows.append(replace(judged, expected=r.expected, role=r.role, hypothesis=r.hypothesis))
    rows = _adjusted(rows, others, _p_values(others))
    status = _decide(rows)[0] if rows else "not tested"
    return Control(context.kind, status, tuple(_row(r) for r in rows), note)


def _row(r: Result) -> dict[str, Any]:
    low, high = r.ci

    def finite(v: float) -> float | None:
        return None if not math.isfinite(v) else round(float(v), 6)

    return {"id": r.id, "verdict": r.verdict.value, "expected": None if r.expected is None
            else r.expected.value, "estimate": finite(r.estimate),
            "ci": [finite(low), finite(high)], "reason": r.reason}
