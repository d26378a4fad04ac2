"""Controls on the audit's own data: can this audit see the effect, and refuse it where it is
absent?

A verdict is only as good as the test that gave it. Before a line is called replicated or
contradicted, two control models built from the audit's very words, documents, sentences and
corpus, at its sample sizes, are put through the same claims, criteria and adjustment (assay
validation, as in a laboratory):

- a **positive control**, a model for which the line holds by construction: the line must come
  out *replicated* (the audit has the power to see the effect);
- a **negative control**, a model for which it fails by construction: the line must come out
  *contradicted* (the audit can refuse it);
- for a line whose rows declare a baseline (token count, length), a **confound control**: the
  model's own token counts or lengths kept, and norms that are a function of them plus noise,
  carrying no information beyond them. The line *as stated* may pass on it (the trivial
  predictor carries it), the reading *beyond* the baseline must not.

The positive control of a correlational line is planted **at the margin**: its effect is the
smallest one the line's criterion must detect (:attr:`~normtest.claims.catalogue.Claim.detect`, one
step beyond the threshold). The audit's sample gives the line a **power** there: the chance that
every row the line needs passes (joint over its rows, read from the control rows' own intervals:
:func:`~normtest.scorecard.power.line_margin_power`).

A control **misbehaves** — and the line is **invalid**, with the reason, never replicated or
contradicted (:mod:`normtest.scorecard.lines`) — when the negative control passes (replicated),
the confound control passes beyond its baseline, or the positive control fails to pass where the
sample has power :data:`MISS_POWER` for it (or comes out contradicted at any power): each a
misbehaviour a sound audit shows at most α of the time, so a line is called invalid on evidence
at the audit's own level (a positive control missed at power 0.83 happens to a sound audit one
time in six). Low
power alone is not misbehaviour: a PASS (every row) or a Holm-adjusted FAIL is a level-α
decision at any power, so a replicated or contradicted line stands; a line its rows leave
undecided stays undecided and says what sample would decide it — one the bundled data can give,
or that it is out of reach of this data. Each line names the builder of its controls next to its
claims in ``checks/`` (:func:`controls`); the builders are in
:mod:`normtest.claims.control_models`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from normtest.base import progress
from normtest.base.parallel import forked_map
from normtest.claims.catalogue import get
from normtest.claims.line_declarations import Builder, ControlContext, builder_of
from normtest.claims.measuring import remeasure
from normtest.errors import NormtestError
from normtest.scorecard.lines import beyond_reading, build, decide_line
from normtest.scorecard.power import line_margin_power
from normtest.stats.multiplicity import adjust
from normtest.verdict.result import Result

if TYPE_CHECKING:
    from normtest.data.kinds import AuditData

__all__ = ["CONTROL_KINDS", "MISS_POWER", "POWER_AT_MARGIN", "Control", "LineControls", "assess"]

#: The controls, and what each must give the line: the positive one its status replicated, the
#: negative one contradicted, the confound one a beyond reading that is not replicated.
CONTROL_KINDS: dict[str, str] = {"positive": "replicated", "negative": "contradicted",
                         "confound": "not replicated beyond its baseline"}
#: The power at the smallest effect a line must detect that a line's sample is planned for (the
#: conventional planning power); below it a line says what sample would give it.
POWER_AT_MARGIN = 0.8
#: The power at the planted effect from which a positive control left undecided misbehaves:
#: 1 − α, so that a sound audit misses it at most α of the time, as a sound audit passes its
#: negative control at most α of the time.
MISS_POWER = 0.95


@dataclass(frozen=True)
class Control:
    """One control of a line: the status the line took on it (and its beyond reading), its
    rows, and for a positive control planted at the margin, the effect planted and the power
    the audit's sample gives the criterion there."""

    kind: str
    status: str
    rows: tuple[Mapping[str, Any], ...] = ()
    note: str = ""
    #: the line's beyond reading on the control (empty: no row declares a baseline)
    beyond: str = ""
    #: the smallest effect the line must detect (one step beyond its threshold), where the
    #: positive control of a correlational line is planted
    planted: float | None = None
    #: the power of the line's criterion at ``planted`` with the audit's sample (every row
    #: passing), and what the sample must become for :data:`POWER_AT_MARGIN` (``--words 9,200``)
    power: float | None = None
    needs: str = ""
    #: where ``needs`` is more than the data can give, why (``, more than the data hold (212 at
    #: most): out of reach of this data``)
    reach: str = ""

    @property
    def expected(self) -> str:
        """What the control must give: replicated (positive), contradicted (negative), a beyond
        reading that is not replicated (confound)."""
        return CONTROL_KINDS[self.kind]

    @property
    def powered(self) -> bool:
        """Whether the sample gives the criterion the power it needs at the planted effect
        (True where no power was computed)."""
        return self.power is None or self.power >= POWER_AT_MARGIN

    @property
    def ok(self) -> bool:
        """Whether the control behaved: the negative control did not pass, the confound one did
        not pass beyond its baseline, the positive one passed — or, where the sample lacks the
        power to see its effect, was left undecided (never contradicted)."""
        if self.kind == "confound":
            return self.beyond != "replicated"
        if self.kind == "negative":
            return self.status != "replicated"
        return self.status == "replicated" or (self.status == "undecided" and (
            self.power is not None and self.power < MISS_POWER))

    @property
    def came_out(self) -> str:
        """What the control gave, in words (``undecided``, ``replicated beyond token count``,
        ``undecided with power 0.52 at the margin``)."""
        if self.kind == "confound":
            return f"{self.beyond or 'no'} beyond its baseline"
        if self.kind == "positive" and self.power is not None:
            return f"{self.status} with power {self.power:.2f} at the margin"
        return self.status

    def needed(self) -> tuple[str, int] | None:
        """(setting, value) of ``needs`` (``("words", 9200)``), None when it names none."""
        parts = self.needs.split()
        value = parts[1].replace(",", "") if len(parts) == 2 else ""
        if not parts or not parts[0].startswith("--") or not value.isdigit():
            return None
        return parts[0][2:], int(value)

    def sample_clause(self) -> str:
        """For a positive control without the power it needs: the power, and the sample that
        would give it (or that none the data hold would); empty otherwise."""
        if self.kind != "positive" or self.powered or self.power is None:
            return ""
        at = "" if self.planted is None else f"{self.planted:g}, "
        out = f"power {self.power:.2f} at its margin ({at}every row passing)"
        if self.needs:
            out += (f"; {self.needs} would give it {POWER_AT_MARGIN:g}{self.reach}" if not
                    self.reach else f"; it needs {self.needs}{self.reach}")
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"kind": self.kind, "status": self.status, "beyond": self.beyond,
                "expected": self.expected, "ok": self.ok, "note": self.note,
                "planted": self.planted,
                "power": None if self.power is None else round(self.power, 4),
                "needs": self.needs, "reach": self.reach, "rows": [dict(r) for r in self.rows]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Control:
        """Rebuild from :meth:`to_dict` output."""
        kind = str(data["kind"])
        if kind not in CONTROL_KINDS:
            raise ValueError(f"unknown control {kind!r}")
        planted, power = data.get("planted"), data.get("power")
        return cls(kind, str(data["status"]), tuple(dict(r) for r in data.get("rows", ())),
                   str(data.get("note", "")), str(data.get("beyond") or ""),
                   None if planted is None else float(planted),
                   None if power is None else float(power), str(data.get("needs") or ""),
                   str(data.get("reach") or ""))


@dataclass(frozen=True)
class LineControls:
    """The controls of one scorecard line."""

    line: str
    positive: Control | None = None
    negative: Control | None = None
    #: why the controls could not be run (an error building them), if so
    problem: str = ""
    seconds: float = 0.0
    #: the confound control, for a line whose rows declare a baseline
    confound: Control | None = None

    @property
    def ran(self) -> tuple[Control, ...]:
        """The controls that ran."""
        return tuple(c for c in (self.positive, self.negative, self.confound) if c is not None)

    @property
    def valid(self) -> bool:
        """The positive and negative controls (and the confound one, where it ran) ran and
        gave the line what they were built to give."""
        return (not self.problem and self.positive is not None and self.negative is not None
                and all(c.ok for c in self.ran))

    @property
    def underpowered(self) -> bool:
        """Whether the sample lacks the power the line needs at its margin (its positive
        control's power under :data:`POWER_AT_MARGIN`)."""
        return self.positive is not None and not self.positive.powered

    def reason(self) -> str:
        """Why the line is invalid (empty when it is valid)."""
        if self.problem:
            return f"its controls could not be run: {self.problem}"
        out = []
        for c in self.ran:
            if c.ok:
                continue
            what = {"positive": "the audit does not pass an effect it has the power to see"
                                if c.status == "undecided" else
                                "the audit refuses an effect that is there",
                    "negative": "the audit passes an effect that is absent",
                    "confound": "the beyond reading passes on norms that carry nothing beyond "
                                "the baseline"}[c.kind]
            out.append(f"the {c.kind} control (built to be {c.expected}) came out "
                       f"{c.came_out}: {what}")
        return "; ".join(out)

    def short(self) -> str:
        """``controls ok`` (``controls ok, power 0.61`` where the sample lacks the power the line
        needs at its margin) or what misbehaved (``positive undecided with power 0.93 …``)."""
        if self.problem:
            return "controls not run"
        if self.valid:
            power = self.positive.power if self.positive is not None else None
            return f"controls ok, power {power:.2f}" if self.underpowered and \
                power is not None else "controls ok"
        return ", ".join(f"{c.kind} {c.came_out}" for c in self.ran if not c.ok)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (an entry of ``controls`` in ``report.json``)."""
        return {"line": self.line, "valid": self.valid, "reason": self.reason(),
                "problem": self.problem, "seconds": round(self.seconds, 3),
                **{kind: None if c is None else c.to_dict() for kind, c in (
                    ("positive", self.positive), ("negative", self.negative),
                    ("confound", self.confound))}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LineControls:
        """Rebuild from :meth:`to_dict` output."""
        def one(key: str) -> Control | None:
            found = data.get(key)
            return None if found is None else Control.from_dict(found)

        return cls(str(data["line"]), one("positive"), one("negative"),
                   str(data.get("problem") or ""), float(data.get("seconds") or 0.0),
                   one("confound"))


class Keeper(Protocol):
    """Where the controls of a design are kept between audits (the audit's
    :class:`~normtest.audit.design_store.DesignStore`): a line's controls are a function of the
    design and its deciding rows alone, never of the model's vectors."""

    def read(self, what: str, rows: Mapping[str, Sequence[Any]],
             **more: Any) -> dict[str, Any] | None: ...

    def write(self, what: str, rows: Mapping[str, Sequence[Any]], value: Mapping[str, Any],
              **more: Any) -> None: ...


def assess(results: Sequence[Result], data: AuditData, family: str,
           lines: Sequence[str] | None = None, kept: Keeper | None = None) -> list[LineControls]:
    """The controls of every tested line that declares them (``lines`` limits which); those
    ``kept`` for this design are read, not run again, and those run are kept there."""
    import time
    import zlib


    tested = [line for line in build(results) if line.status != "not tested"
              and (lines is None or line.key in lines) and builder_of(line.key) is not None]

    def kinds(line: Any) -> list[str]:
        return [k for k in CONTROL_KINDS if k != "confound" or line.beyond is not None]

    def deciding(line: Any) -> tuple[Result, ...]:
        return tuple(r for r in line.rows if not r.details.get("reading"))

    def one(line: Any) -> LineControls:
        builder = builder_of(line.key)
        assert builder is not None
        began = time.monotonic()
        seed = data.settings.seed * 1009 + zlib.crc32(line.key.encode("utf-8"))
        ran: dict[str, Control] = {}
        problem = ""
        for kind in kinds(line):
            context = ControlContext(data, family, deciding(line), kind, seed)
            try:
                ran[kind] = _run(builder, context)
            except NormtestError as exc:
                problem = str(exc)
        return LineControls(line.key, ran.get("positive"), ran.get("negative"), problem,
                            time.monotonic() - began, ran.get("confound"))

    found: dict[str, LineControls] = {}
    for line in tested:
        stored = None if kept is None else kept.read("controls", {line.key: deciding(line)},
                                                     kinds=kinds(line))
        if stored is not None and (read := _from_state(stored, line.key)) is not None:
            found[line.key] = read
    todo = [line for line in tested if line.key not in found]
    # lines are independent: one forked process each (normtest.base.parallel)
    total = sum(len(kinds(line)) for line in todo)
    with progress.task("controls", total=total, unit="controls") as bar:
        ran = forked_map(one, todo, data.settings.workers,
                         done=lambda i: bar.update(len(kinds(todo[i]))),
                         cost=lambda line: len(line.rows))
    for line, controls in zip(todo, ran, strict=True):
        found[line.key] = controls
        if kept is not None and not controls.problem:  # a control not built is not kept
            kept.write("controls", {line.key: deciding(line)}, asdict(controls),
                       kinds=kinds(line))
    return [found[line.key] for line in tested]


def _from_state(state: Mapping[str, Any], line: str) -> LineControls | None:
    """A line's controls as kept (:func:`dataclasses.asdict`, every number whole: the shape
    :meth:`LineControls.from_dict` reads), or None where the state is not of that shape; its
    seconds are the reading's (none)."""
    try:
        out = replace(LineControls.from_dict(state), seconds=0.0)
    except (KeyError, TypeError, ValueError):
        return None
    return out if out.line == line else None


def _run(builder: Builder, context: ControlContext) -> Control:
    """One control: the line's deciding rows measured on the control data, judged, adjusted by
    the line's own rule (as the headline is), and the line decided."""

    rows, note = measure_control(builder, context)
    status = decide_line(rows)[0] if rows else "not tested"
    beyond = beyond_reading(rows)
    planted, power, needs, reach = None, None, "", ""
    if context.kind == "positive":
        found = line_margin_power(rows, POWER_AT_MARGIN, context.data.settings)
        if found is not None:
            planted, power, need = found.planted, found.power, found.needs
            if need is not None and need.setting is not None and need.needed is not None:
                needs, reach = f"--{need.setting} {need.needed:,}", need.reach()
    return Control(context.kind, status, tuple(_row(r) for r in rows), note,
                   "" if beyond is None else beyond.status, planted, power, needs, reach)


def measure_control(builder: Builder, context: ControlContext) -> tuple[list[Result], str]:
    """The line's deciding rows measured on the control data the builder makes, judged and
    adjusted by the line's own rule, and the builder's note on how it built them."""

    made, note = builder(context)
    # the readings reported beside a row decide nothing a control is judged by
    settings = replace(context.data.settings, readings=False)
    rows = []
    for r in context.rows:
        claim = get(str(r.claim))
        data = made.get(claim.id, made.get(str(claim.data)))
        if data is None:
            raise NormtestError(f"the controls of {r.hypothesis} build no data for {claim.id}")
        rows.append(remeasure(claim, data, r.variant, settings, like=r, keep=()))
    return adjust(rows, "line"), note  # the line's own decision, as the headline's


def _row(r: Result) -> dict[str, Any]:
    low, high = r.ci

    def finite(v: float) -> float | None:
        return None if not math.isfinite(v) else round(float(v), 6)

    out: dict[str, Any] = {
        "id": r.id, "verdict": r.verdict.value,
        "expected": None if r.expected is None else r.expected.value,
        "estimate": finite(r.estimate), "ci": [finite(low), finite(high)], "reason": r.reason}
    beyond = None if r.measurement is None else r.measurement.components.get("beyond")
    if beyond is not None and isinstance(r.details.get("beyond"), Mapping):
        b_low, b_high = beyond.interval(1 - 2 * (r.criterion.alpha if r.criterion else 0.05))
        out["beyond"] = {"verdict": r.details["beyond"].get("verdict"),
                         "estimate": finite(beyond.estimate),
                         "ci": [finite(b_low), finite(b_high)]}
    return out
