"""An audit that sizes itself before it reads the model's geometry.

The power a line has at the smallest effect it must detect depends only on the audit's design —
its words, their token counts and IC, its sentences, their lengths, surprisal and documents —
never on the model's vectors: the positive controls are built from the design with made-up
norms (:mod:`normtest.scorecard.controls`). So it costs no α to solve for the sample first. With
``AuditSettings.autosize`` naming the sizes the audit may choose (``normtest audit`` fills it
with the sizes not given explicitly, under the ``quick`` and ``standard`` profiles), the audit:

1. builds the design at the profile's sizes (the pilot: no embedding is computed);
2. runs each line's positive control on it and reads the line's joint power at its margin and
   the sample that would give it :data:`~normtest.scorecard.controls.POWER_AT_MARGIN`
   (:func:`~normtest.scorecard.power.line_margin_power`);
3. takes, for each size, the largest such sample any line asks for — never below the profile's
   size, never above what the bundled data give (:mod:`normtest.data.capacity`); a line whose
   sample the data cannot give is left out of the choice and reported out of reach;
4. checks the choice — the √n extrapolation is a planning figure — by building the design at
   those sizes and running the controls again, growing them where a line still falls short
   (at most :data:`ROUNDS` rounds in all: the audit's own controls then repeat the last check);
5. audits at the chosen sizes; the report records what was chosen and why
   (``provenance["sizing"]``), and the line's own controls report the power it then has.

The equivalence lines (growth, fixed points) plant a clear effect and carry no power figure, so
they do not move ``--documents``; ``--words`` follows the word, composition and conditions lines,
``--sentences`` the text line.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from normtest.audit.design_store import DesignStore
from normtest.base import progress
from normtest.base.parallel import forked_map
from normtest.base.settings import SIZABLE
from normtest.claims.catalogue import get
from normtest.claims.line_declarations import ControlContext, builder_of
from normtest.data.capacity import capacity
from normtest.data.kinds import AuditData
from normtest.errors import NormtestError
from normtest.scorecard.controls import POWER_AT_MARGIN, measure_control
from normtest.scorecard.power import SAMPLE_SETTING, line_margin_power
from normtest.verdict.result import Result, Verdict

if TYPE_CHECKING:
    from normtest.adapters.protocol import ModelAdapter
    from normtest.base.settings import AuditSettings
    from normtest.claims.catalogue import Claim

__all__ = ["LineNeed", "Sizing", "choose", "size_audit", "stored_lines"]


@dataclass(frozen=True)
class LineNeed:
    """What one line's positive control says of the pilot: its power at the margin and the
    sample that would give it the target power (or that the data cannot)."""

    line: str
    setting: str | None
    power: float
    needed: int | None
    out_of_reach: bool
    #: the power of the line's reading beyond its baseline at the margin, and the sample that
    #: would give it the target (reported, not chosen: the line's status is the reading as
    #: stated; None: no baseline, or it has the power)
    beyond_power: float | None = None
    beyond_needed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "setting": self.setting, "power": round(self.power, 4),
                "needed": self.needed, "out_of_reach": self.out_of_reach,
                "beyond_power": None if self.beyond_power is None else
                round(self.beyond_power, 4), "beyond_needed": self.beyond_needed}


@dataclass(frozen=True)
class Sizing:
    """The sizes an audit chose for itself, from what, and why."""

    pilot: dict[str, int]
    chosen: dict[str, int]
    #: what each line's positive control said at the pilot sizes
    lines: tuple[LineNeed, ...]
    seconds: float = 0.0
    #: each later round: the sizes tried and what the lines said there (the last one confirms
    #: the choice, or the rounds ran out)
    rounds: tuple[tuple[dict[str, int], tuple[LineNeed, ...]], ...] = ()
    #: read from what an earlier audit of the same design chose (normtest.audit.design_store)
    kept: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``provenance["sizing"]``)."""
        return {"pilot": dict(self.pilot), "chosen": dict(self.chosen),
                "lines": [n.to_dict() for n in self.lines], "seconds": round(self.seconds, 2),
                "rounds": [{"sizes": dict(sizes), "lines": [n.to_dict() for n in lines]}
                           for sizes, lines in self.rounds],
                "why": self.why(), **({"kept": True} if self.kept else {})}

    def state(self) -> dict[str, Any]:
        """Every field, every number whole (what the design store keeps; :meth:`to_dict`
        rounds the powers for the report)."""
        return {"pilot": dict(self.pilot), "chosen": dict(self.chosen),
                "lines": [asdict(n) for n in self.lines], "seconds": self.seconds,
                "rounds": [{"sizes": dict(sizes), "lines": [asdict(n) for n in lines]}
                           for sizes, lines in self.rounds]}

    @classmethod
    def from_state(cls, data: Mapping[str, Any]) -> Sizing:
        """Rebuild from :meth:`state`, every field of its type (KeyError, TypeError or
        ValueError where it is not of that shape)."""
        def count(value: Any) -> int | None:
            return None if value is None else int(value)

        def needs(found: Any) -> tuple[LineNeed, ...]:
            return tuple(LineNeed(str(n["line"]), None if n["setting"] is None
                                  else str(n["setting"]), float(n["power"]),
                                  count(n["needed"]), bool(n["out_of_reach"]),
                                  None if n["beyond_power"] is None
                                  else float(n["beyond_power"]), count(n["beyond_needed"]))
                         for n in found)

        return cls({str(k): int(v) for k, v in data["pilot"].items()},
                   {str(k): int(v) for k, v in data["chosen"].items()}, needs(data["lines"]),
                   float(data["seconds"]),
                   tuple(({str(k): int(v) for k, v in r["sizes"].items()}, needs(r["lines"]))
                         for r in data["rounds"]))

    def why(self) -> str:
        """One clause per size: what it is and which line asked for it; the lines out of
        reach; the beyond readings short of the power; the check at the sizes chosen."""

        parts = []
        for setting, value in self.chosen.items():
            asker = _asker(self.lines, setting)
            if value > self.pilot[setting] and asker is not None:
                parts.append(f"--{setting} {value:,}: the {asker.line} line's power at its "
                             f"margin is {asker.power:.2f} at {self.pilot[setting]:,}")
            else:
                parts.append(f"--{setting} {value:,}: every line has power "
                             f"{POWER_AT_MARGIN:g} at its margin there")
        for n in self.lines:
            if n.out_of_reach and n.needed is not None:
                parts.append(f"the {n.line} line would need --{n.setting} {n.needed:,}, more "
                             "than the data hold: out of reach of this data")
            chosen = self.chosen.get(n.setting or "", 0)
            if n.beyond_needed is not None and n.beyond_power is not None \
                    and n.beyond_needed > chosen:
                at = self.pilot.get(n.setting or "", 0)
                parts.append(f"the {n.line} line's reading beyond its baseline has power "
                             f"{n.beyond_power:.2f} at its margin at {at:,} (not sized for: "
                             f"about --{n.setting} {n.beyond_needed:,} would give it "
                             f"{POWER_AT_MARGIN:g})")
        if self.rounds:
            sizes, lines = self.rounds[-1]
            tried = ", ".join(f"--{k} {v:,}" for k, v in sizes.items())
            powers = ", ".join(f"{n.line} {n.power:.2f}" for n in lines)
            parts.append(f"checked at {tried}: {powers}" + (
                "" if sizes == self.chosen else
                f"; the {ROUNDS} rounds ran out, so the sizes chosen were not checked"))
        return "; ".join(parts)


#: The most rounds of sizing: the pilot, then the sizes it asks for, checked (and grown again
#: where the check falls short: a √n extrapolation is a planning figure).
ROUNDS = 3


def size_audit(adapter: ModelAdapter, settings: AuditSettings, family: str,
               chosen: Sequence[Claim], planned: Mapping[str, Sequence[Mapping[str, str]]],
               words: Sequence[str] | None = None,
               source: Any | None = None) -> tuple[AuditSettings, Sizing | None]:
    """The settings with the sizes ``settings.autosize`` names chosen for power
    :data:`~normtest.scorecard.controls.POWER_AT_MARGIN` at every line's margin (see the module
    doc), and the record of the choice; the settings unchanged and None when there is nothing
    to size (no size to choose, controls off, the user's own words, or no line of the
    ``chosen`` claims — ``planned``: each one's variants — follows a size it may choose)."""
    import time


    sizable = [s for s in settings.autosize if s in SIZABLE]
    if not sizable or not settings.controls or words is not None:
        return settings, None
    began = time.monotonic()
    lines = _deciding_rows(chosen, planned, family, sizable)
    if not lines:
        return settings, None
    store = DesignStore.of(adapter, settings, family, words=words, source=source)
    kept = _kept(store.read("sizing", lines))
    if kept is not None:
        with progress.task("sizing the audit: as an earlier audit of this design chose"):
            pass
        return _sized(settings, kept.chosen), replace(kept, seconds=time.monotonic() - began,
                                                      kept=True)
    most = {s: capacity(s, settings) for s in sizable}
    sizes = {s: int(getattr(settings, s)) for s in sizable}
    first: tuple[LineNeed, ...] = ()
    rounds: list[tuple[dict[str, int], tuple[LineNeed, ...]]] = []
    # a line's need at sizes it was measured at before: its design is the same (the same
    # sample, seed and rows), so is what its control says (a later round grows one size only)
    known: dict[tuple[str, tuple[int, ...]], LineNeed | None] = {}
    failed = False
    with progress.task("sizing the audit", total=ROUNDS * len(lines), unit="lines") as bar:
        for round_ in range(ROUNDS):
            trial = _sized(settings, sizes)
            design = AuditData(adapter, trial, family, None, source)
            at = {line: (line, tuple(int(getattr(trial, s)) for s in _settings_of(rows)))
                  for line, rows in lines.items()}
            todo = [line for line in lines if at[line] not in known]
            bar.update(len(lines) - len(todo))
            _prepare(design, [lines[line] for line in todo])
            found = forked_map(functools.partial(_need_of, lines, design, family, trial),
                               todo, trial.workers, done=lambda _: bar.update(1),
                               cost=lambda line: len(lines[line]))
            failed |= any(isinstance(need, NormtestError) for need in found)
            known.update({at[line]: None if isinstance(need, NormtestError) else need
                          for line, need in zip(todo, found, strict=True)})
            needs = [need for line in lines if (need := known[at[line]]) is not None]
            if round_ == 0:
                first = tuple(needs)
            else:
                rounds.append((dict(sizes), tuple(needs)))
            grown = choose(sizes, needs, most)
            if grown == sizes:
                break
            sizes = grown
    sizing = Sizing({s: int(getattr(settings, s)) for s in sizable}, sizes, first,
                    time.monotonic() - began, tuple(rounds))
    if not failed:  # a control that could not be built is not a choice to keep
        store.write("sizing", lines, sizing.state())
    return _sized(settings, sizes), sizing


def _kept(found: Mapping[str, Any] | None) -> Sizing | None:
    """The kept sizing, where it reads back whole with a size for each it chose (None: size
    again; its pilot and sizes are the settings' the design store keyed it by)."""
    if found is None:
        return None
    try:
        kept = Sizing.from_state(found)
    except (KeyError, TypeError, ValueError):
        return None
    return kept if all(v > 0 for v in kept.chosen.values()) else None


def _need_of(lines: Mapping[str, tuple[Any, ...]], design: AuditData, family: str,
             settings: AuditSettings, line: str) -> LineNeed | NormtestError | None:
    """A line's need, or the error that kept its control from being built."""
    try:
        return _line_need(line, lines[line], design, family, settings)
    except NormtestError as exc:
        return exc


def _prepare(design: AuditData, lines: Sequence[tuple[Any, ...]]) -> None:
    """Build, once and before the lines fork, the data their controls read: each kind of
    data, and the reference corpus where a line reads PMI (kept in this process for the next
    round's design)."""
    for rows in lines:
        for claim in {str(r.claim): get(str(r.claim)) for r in rows}.values():
            design.get(str(claim.data))
            if {"pmi", "information_gain"} & set(claim.quantities):
                design.word().corpus()


def _settings_of(rows: tuple[Any, ...]) -> tuple[str, ...]:
    """The sample sizes a line's deciding rows follow (``words``, ``sentences``)."""
    return tuple(sorted({SAMPLE_SETTING[get(str(r.claim)).suite] for r in rows
                         if get(str(r.claim)).suite in SAMPLE_SETTING}))


def _sized(settings: AuditSettings, sizes: dict[str, int]) -> AuditSettings:
    return replace(settings, words=sizes.get("words", settings.words),
                   sentences=sizes.get("sentences", settings.sentences))


def _asker(lines: Sequence[Any], setting: str) -> Any:
    """The line within reach that asks the most of ``setting`` (None: none asks)."""
    asked = [n for n in lines if _get(n, "setting") == setting
             and not _get(n, "out_of_reach") and isinstance(_get(n, "needed"), int)]
    return max(asked, key=lambda n: _get(n, "needed")) if asked else None


def _get(need: Any, key: str) -> Any:
    """A field of a :class:`LineNeed` or of its stored form."""
    return need.get(key) if isinstance(need, dict) else getattr(need, key)


def choose(now: dict[str, int], needs: Sequence[LineNeed],
           most: dict[str, int | None]) -> dict[str, int]:
    """Each size: the largest any line within reach asks for, never below ``now``, never above
    the ``most`` the data give (None: no bound)."""
    out = {}
    for setting, value in now.items():
        asked = [n.needed for n in needs if n.setting == setting and n.needed is not None
                 and not n.out_of_reach]
        chosen = max([value, *asked])
        bound = most.get(setting)
        out[setting] = chosen if bound is None else max(value, min(chosen, bound))
    return out


def _deciding_rows(chosen: Sequence[Claim], planned: Mapping[str, Sequence[Mapping[str, str]]],
                   family: str, sizable: Sequence[str]) -> dict[str, tuple[Any, ...]]:
    """Each line's deciding rows as the audit plans them (claim, variant, expectation, role;
    nothing measured), for the lines whose power a chosen size follows."""

    by_line: dict[str, list[Any]] = {}
    for claim in chosen:
        if SAMPLE_SETTING.get(claim.suite) not in sizable or claim.id not in planned:
            continue
        for variant in planned[claim.id]:
            if claim.role(family, variant) != "confirmatory" \
                    or claim.reading_of(family, variant) is not None:
                continue
            line = claim.hypothesis_of(family, variant)
            if line is None or builder_of(line) is None:
                continue
            by_line.setdefault(line, []).append(Result(
                Verdict.INCONCLUSIVE, "planned", claim=claim.id, variant=dict(variant),
                expected=claim.expectation(family, variant), role="confirmatory",
                hypothesis=line))
    return {line: tuple(rows) for line, rows in by_line.items()}


def _line_need(line: str, rows: tuple[Any, ...], pilot: Any, family: str,
               settings: AuditSettings) -> LineNeed | None:
    """The line's positive control on the pilot design: its power and the sample for the
    target power (None where it carries no power figure; NormtestError where it cannot be
    built)."""
    import zlib


    builder = builder_of(line)
    assert builder is not None
    seed = settings.seed * 1009 + zlib.crc32(line.encode("utf-8"))
    measured, _ = measure_control(builder, ControlContext(pilot, family, rows, "positive", seed))
    found = line_margin_power(measured, POWER_AT_MARGIN, settings)
    if found is None:
        return None
    beyond = line_margin_power(measured, POWER_AT_MARGIN, settings, beyond=True)
    need = found.needs
    setting = SAMPLE_SETTING.get(get(str(rows[0].claim)).suite)
    return LineNeed(line, setting, found.power, None if need is None else need.needed,
                    need is not None and need.out_of_reach,
                    None if beyond is None else beyond.power,
                    None if beyond is None or beyond.needs is None else beyond.needs.needed)


def stored_lines(sizing: Any) -> list[str]:
    """What an audit that sized itself chose and why, from its report's ``provenance["sizing"]``
    (two lines), and the lines out of reach of the data; empty for an audit that did not."""
    if not isinstance(sizing, dict) or not isinstance(sizing.get("chosen"), dict):
        return []
    found = sizing.get("pilot")
    pilot = {k: v for k, v in (found if isinstance(found, dict) else {}).items()
             if isinstance(v, int)}
    stored = sizing.get("lines")
    # a report is read back from a file: only entries of the shape the audit writes count
    lines = [n for n in (stored if isinstance(stored, list) else []) if isinstance(n, dict)
             and isinstance(n.get("line"), str) and isinstance(n.get("setting"), str)
             and isinstance(n.get("power"), int | float)
             and (n.get("needed") is None or isinstance(n.get("needed"), int))]
    chosen = {k: v for k, v in sizing["chosen"].items() if isinstance(v, int)}
    if not chosen:
        return []
    parts = []
    for setting, value in chosen.items():
        asker = _asker(lines, setting)
        why = (f" ({asker['line']} line: {asker['power']:.2f} at "
               f"{pilot.get(setting, 0):,})" if asker is not None
               and value > pilot.get(setting, value) else "")
        parts.append(f"--{setting} {value:,}{why}")
    out = ["sample sized before the model was read, for power 0.8 at every line's margin:",
           ", ".join(parts)]
    out += [f"the {n['line']} line needs --{n['setting']} {n['needed']:,}, more than the data "
            "hold: out of reach" for n in lines if n.get("out_of_reach") and n.get("needed")]
    return out
