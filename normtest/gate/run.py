"""Gating a model release in CI: required claims must PASS, and nothing may regress.

``normtest gate`` (or ``normtest audit --gate``) reads ``[tool.normtest]`` in ``pyproject.toml``
or a ``normtest.toml``::

    model = "glove-6b-50d"
    require = ["word.norm_ic[transform=whiten_zipf]"]   # claims, variants or suites that must PASS
    replicated = ["word_level"]                         # scorecard lines that must be replicated
    unverified = "fail"                                 # or "warn": what a report cannot show
    baseline = "baseline/report.json"                   # optional: an earlier audit to compare with
    words = 2000                                        # audit settings (default: the baseline's)
    margin = 0.05                                       # a drop smaller than this is no regression
    [tool.normtest.thresholds]
    "word.norm_ic" = 0.25                               # re-judge a claim at another threshold

A requirement judges the *confirmatory* rows it names (the paper's hypotheses; see
:mod:`normtest.scorecard.lines`), and every row it names by its variant; ``exploratory = true``
(``--exploratory``) makes requirements and regressions judge the exploratory rows too. A
``replicated`` line of the scorecard must come out *replicated* (``"all"``: every line the audit
tested).

A requirement passes only on evidence the report holds. A line required replicated rests on its
controls too (a line whose controls misbehaved is invalid, so not replicated), a line required
robust on its robustness; where the report lacks that evidence — the audit ran with
``--no-controls`` or ``--no-robustness`` — the requirement is *unverified* (:func:`unshown`), and
one rule decides for both: ``unverified = "fail"`` (the default; ``--unverified fail``) fails the
gate saying what the report could not show, ``unverified = "warn"`` passes it with that stated as
a warning in the summary and the one-line decision.

A *regression* is a statistically supported drop of an effect, not any decrease, tested by
:mod:`normtest.gate.regression` (paired by bootstrap replicates when both reports resampled the same
units, by a normal approximation otherwise; Holm over all compared results; docs/ci.md).

The gate never passes on nothing: :func:`decide` — the one function that decides, whose
:class:`Decision` the exit code, the one-line summary and the Markdown all render — fails a gate
that checked nothing, and one given a baseline of which no result could be compared (another
model, or disjoint claims), whatever the requirements say.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from normtest.audit.report import Report
from normtest.audit.samples import record_samples
from normtest.audit.selection import (
    Selector,
    apply_thresholds,
    closest,
    line_keys,
    rows_selector,
)
from normtest.base.settings import PROFILES, RENAMED, AuditSettings, resolve
from normtest.claims.catalogue import claims_of_line
from normtest.claims.line_declarations import builder_of
from normtest.claims.loading import load_checks_of
from normtest.errors import NormtestError
from normtest.gate.config import GateConfig
from normtest.gate.regression import BaselineComparison, compare, under_thresholds
from normtest.models.registry import load_model, load_options

if TYPE_CHECKING:
    from normtest.adapters.protocol import ModelAdapter
    from normtest.audit.report import Report
    from normtest.scorecard.lines import Line
    from normtest.verdict.result import Result

__all__ = ["UNVERIFIED", "BaselineComparison", "Decision", "GateConfig", "GateOutcome",
           "LineRequirement", "Requirement", "RobustRequirement", "Unshown", "compare", "decide",
           "evaluate", "run_gate", "unshown"]



def audit_settings(config: GateConfig, baseline: Report | None = None) -> AuditSettings:
    """Audit settings: the defaults, then the baseline's (so the samples match), then the
    configuration's (which holds the command line's too, see :meth:`GateConfig.with_settings`)."""
    names = {f.name for f in fields(AuditSettings)}
    recorded: dict[str, Any] = {}
    if baseline is not None:
        prov = baseline.provenance
        recorded = {RENAMED.get(k, k): prov[k] for k in ("seed", "resamples", "n_resamples",
                                                         "scope", "profile") if k in prov}
        sample = prov.get("sample")  # the requested sample of any audit (normtest.audit.report)
        recorded.update(sample if isinstance(sample, Mapping) else {})
        recorded.update({RENAMED.get(k, k): v
                         for k, v in (prov.get("audit_settings") or {}).items()})
    chosen: dict[str, Any] = {k: (tuple(v) if isinstance(v, list) else v)
                              for k, v in recorded.items() if k in names}
    profile = config.settings.get("profile") or chosen.get("profile")
    if profile in PROFILES:  # its sizes, unless the configuration gives one explicitly …
        sizes = dict(PROFILES[profile])
        if not config.settings.get("profile"):  # … or the baseline recorded its own
            sizes = {k: v for k, v in sizes.items() if k not in chosen}
        chosen.update({**sizes, "profile": profile})
    chosen.update({k: v for k, v in config.settings.items() if k in names and v is not None})
    return AuditSettings(**chosen)


# -- the gate --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Requirement:
    """A claim, variant or suite that must PASS, and the results it names."""

    selector: str
    results: tuple[Result, ...]

    @property
    def ok(self) -> bool:
        """True when it names at least one result and every one of them passed."""
        return bool(self.results) and all(r.verdict.value == "PASS" for r in self.results)


@dataclass(frozen=True)
class LineRequirement:
    """A scorecard line that must be replicated, the line the audit gave, and — for a line
    that declares controls — why the report cannot show its controls held (None: it can, or
    the line declares none; see :func:`unshown`)."""

    key: str
    line: Line | None
    #: why the line's controls are not in the report ("" when they are, or none are declared)
    missing: str = ""

    @property
    def ok(self) -> bool:
        """True when the line exists and was replicated (its controls are judged apart, by the
        gate's ``unverified`` rule)."""
        return self.line is not None and self.line.status == "replicated"


@dataclass(frozen=True)
class RobustRequirement:
    """A scorecard line whose verdict must survive its other reasonable analyses, and how it
    fared (normtest.scorecard.robustness; None: not assessed)."""

    key: str
    robustness: Any | None
    #: whether the audit tested the line (a line not tested has no robustness to show)
    tested: bool = True
    #: whether the audit assessed no line's robustness (it ran with --no-robustness)
    none_assessed: bool = False

    @property
    def assessed(self) -> bool:
        """Whether the report holds the line's robustness (else it cannot show it)."""
        return self.robustness is not None and bool(self.robustness.specifications)

    @property
    def ok(self) -> bool:
        """True when the line was assessed and is robust."""
        return self.robustness is not None and self.assessed and bool(self.robustness.robust)

    @property
    def why(self) -> str:
        """The assessment in words (or why there is none)."""
        if not self.tested:
            return "the line was not tested, so it has no robustness"
        if self.none_assessed:
            return "its robustness was not assessed (the audit ran with --no-robustness)"
        if self.robustness is None or not self.robustness.specifications:
            return ("its robustness was not assessed (the line has no analysis that can tell "
                    "at this sample)")
        return str(self.robustness.summary())


def robust_requirements(keys: Sequence[str], candidate: Report) -> list[RobustRequirement]:
    """The lines named by ``keys`` (``"all"``: every line the audit tested) with their
    robustness; an unknown key is an error naming the known ones."""
    lines = candidate.scorecard
    known = {line.key: line for line in lines}
    out: list[RobustRequirement] = []
    for key in keys:
        if key == "all":
            out += [RobustRequirement(line.key, candidate.robustness_of(line.key))
                    for line in lines if line.status != "not tested"]
        elif key in known:
            out.append(RobustRequirement(key, candidate.robustness_of(key),
                                         known[key].status != "not tested"))
        else:
            hint = closest(key, line_keys())
            raise NormtestError(f"require_robust: no scorecard line {key!r}{hint}; the lines are "
                                f"{', '.join(known)} (or all)")
    none = not candidate.robustness
    return [replace(r, none_assessed=none) for r in out]


def line_requirements(keys: Sequence[str], lines: Sequence[Line],
                      candidate: Report | None = None) -> list[LineRequirement]:
    """The scorecard lines named by ``keys`` (``"all"``: every line the audit tested), each
    with why the ``candidate`` cannot show its controls held, if so; an unknown key is an error
    naming the known ones."""
    by_key = {line.key: line for line in lines}
    out: list[LineRequirement] = []
    for key in keys:
        if key == "all":
            out += [LineRequirement(line.key, line) for line in lines
                    if line.status != "not tested"]
        elif key in by_key:
            out.append(LineRequirement(key, by_key[key]))
        else:
            hint = closest(key, line_keys())
            raise NormtestError(f"replicated: no scorecard line {key!r}{hint}; the lines are "
                                f"{', '.join(by_key)} (or 'all')")
    if candidate is None:
        return out
    return [replace(r, missing=_controls_missing(r.key, candidate)) for r in out]


def _controls_missing(key: str, candidate: Report) -> str:
    """Why the report cannot show that line ``key``'s controls held ("" when it can, or when
    the line declares no controls). Controls that ran and misbehaved are no gap: they make the
    line invalid, so it is not replicated."""

    if builder_of(key) is None or candidate.controls_of(key) is not None:
        return ""
    if not candidate.controls:
        return "its controls did not run (the audit ran with --no-controls)"
    return "the report holds no controls for it"


#: What the gate does with a requirement the report cannot show (``unverified``): fail, or
#: pass it with a stated warning.
UNVERIFIED = ("fail", "warn")


@dataclass(frozen=True)
class Unshown:
    """A requirement the candidate report cannot show: a line required replicated whose
    controls did not run, or a line required robust whose robustness was not assessed."""

    key: str
    #: ``"replicated"`` or ``"robust"``
    requirement: str
    why: str

    @property
    def text(self) -> str:
        """``word_level required replicated: its controls did not run (…)``."""
        return f"{self.key} required {self.requirement}: {self.why}"


def unshown(lines: Sequence[LineRequirement],
            robust: Sequence[RobustRequirement]) -> list[Unshown]:
    """Every requirement the report cannot show, under the one rule of the gate: a line
    required replicated passes on the evidence its controls give, a line required robust on its
    robustness; where the report lacks that evidence (the audit ran with ``--no-controls`` or
    ``--no-robustness``), the requirement is *unverified* — never silently met. A line that is
    not replicated fails on that alone."""
    out = [Unshown(r.key, "replicated", r.missing) for r in lines if r.missing and r.ok]
    out += [Unshown(r.key, "robust", r.why) for r in robust if r.tested and not r.assessed]
    return out


@dataclass(frozen=True)
class GateOutcome:
    """The gate's decision and everything behind it."""

    candidate: Report
    requirements: tuple[Requirement, ...]
    comparisons: tuple[BaselineComparison, ...] = ()
    uncompared: tuple[tuple[str, str], ...] = ()
    baseline: Report | None = None
    baseline_path: str | None = None
    margin: float = 0.05
    alpha: float = 0.05
    lines: tuple[LineRequirement, ...] = ()
    #: the model as the user named it (``--model``, ``model =``, or the candidate report's path)
    label: str | None = None
    #: what became of ``--save-report``: the path written, or why nothing was
    saved: str | None = None
    #: whether this run records the first baseline (nothing to compare with yet)
    first_baseline: bool = False
    #: scorecard lines whose verdict must be robust
    robust: tuple[RobustRequirement, ...] = ()
    #: what a requirement the report cannot show does: ``"fail"`` (the default) or ``"warn"``
    unverified: str = "fail"

    @property
    def regressions(self) -> list[BaselineComparison]:
        """The compared results whose effect dropped (supported at α after Holm)."""
        return [c for c in self.comparisons if c.regressed]

    @property
    def failed_requirements(self) -> list[Requirement]:
        """Requirements not met."""
        return [r for r in self.requirements if not r.ok]

    @property
    def failed_lines(self) -> list[LineRequirement]:
        """Scorecard lines required to be replicated that were not."""
        return [r for r in self.lines if not r.ok]

    @property
    def failed_robust(self) -> list[RobustRequirement]:
        """Scorecard lines required to be robust that were assessed and are not (a line whose
        robustness was not assessed is :attr:`unshown`)."""
        return [r for r in self.robust if not r.ok and (r.assessed or not r.tested)]

    @property
    def unshown(self) -> list[Unshown]:
        """The requirements the report cannot show (:func:`unshown`)."""
        return unshown(self.lines, self.robust)

    @property
    def decision(self) -> Decision:
        """Whether the gate passed, and why not (:func:`decide`)."""
        return decide(self)

    @property
    def passed(self) -> bool:
        """True when the gate passed (:func:`decide`)."""
        return self.decision.passed

    @property
    def compared_nothing(self) -> bool:
        """A baseline was given and not one of its results could be compared."""
        return self.baseline is not None and not self.comparisons


@dataclass(frozen=True)
class Decision:
    """The gate's outcome: passed or not, and each reason it failed. Every output renders this
    one object: the exit code (:attr:`exit_code`), the one-line summary (:attr:`line`) and
    the Markdown's headline and reasons (normtest.render.gate)."""

    passed: bool
    reasons: tuple[str, ...] = ()
    #: what the report could not show, when the gate passes them with a warning
    #: (``unverified = "warn"``)
    warnings: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        """0 when the gate passed, 1 when it failed."""
        return 0 if self.passed else 1

    @property
    def headline(self) -> str:
        """``✅ passed`` or ``❌ FAILED``."""
        return "✅ passed" if self.passed else "❌ FAILED"

    @property
    def line(self) -> str:
        """The decision in one line (what ``normtest gate`` prints on standard error)."""
        if self.passed and self.warnings:
            return (f"gate passed with {len(self.warnings)} warning"
                    f"{'s' * (len(self.warnings) != 1)}: " + "; ".join(self.warnings))
        if self.passed:
            return "gate passed"
        return "gate FAILED: " + "; ".join(self.reasons)


def decide(outcome: GateOutcome) -> Decision:
    """The gate's decision, the only place it is made: it fails on any requirement not met,
    any regression, and — never passing on nothing — when nothing was checked at all or when
    a baseline was given of which no result could be compared."""
    reasons: list[str] = []
    checked = (bool(outcome.requirements) or bool(outcome.comparisons) or bool(outcome.lines)
               or bool(outcome.robust) or outcome.first_baseline)
    if outcome.compared_nothing:
        reasons.append(_nothing_compared(outcome))
    elif not checked:
        reasons.append("nothing was checked (no requirement, and no result compared with a "
                       "baseline)")
    failed = outcome.failed_requirements
    if failed:
        reasons.append(f"{len(failed)} of {len(outcome.requirements)} required claims do not "
                       f"PASS ({', '.join(r.selector for r in failed)})")
    lines = outcome.failed_lines
    if lines:
        reasons.append(f"{len(lines)} of {len(outcome.lines)} required scorecard lines are not "
                       f"replicated ({', '.join(r.key for r in lines)})")
    robust = outcome.failed_robust
    if robust:
        reasons.append(f"{len(robust)} of {len(outcome.robust)} scorecard lines required robust "
                       f"are not ({', '.join(r.key for r in robust)})")
    gaps = outcome.unshown
    warnings: list[str] = []
    if gaps and outcome.unverified == "warn":
        warnings = [f"{gap.text}; passed unverified (unverified = \"warn\")" for gap in gaps]
    elif gaps:
        reasons.append(
            f"the report cannot show {len(gaps)} requirement{'s' * (len(gaps) != 1)}: "
            + "; ".join(gap.text for gap in gaps) + " — audit again with "
            + " and ".join(dict.fromkeys("controls" if gap.requirement == "replicated"
                                         else "robustness" for gap in gaps))
            + ", or pass unverified requirements with a warning (--unverified warn, "
            "unverified = \"warn\")")
    regressions = outcome.regressions
    if regressions:
        reasons.append(f"{len(regressions)} regression{'s' * (len(regressions) != 1)} against "
                       f"the baseline ({', '.join(c.id for c in regressions)})")
    return Decision(not reasons, tuple(reasons), tuple(warnings))


def _nothing_compared(outcome: GateOutcome) -> str:
    """Why no result of the baseline could be compared, in one clause."""
    assert outcome.baseline is not None
    base, cand = outcome.baseline, outcome.candidate
    where = f" {outcome.baseline_path}" if outcome.baseline_path else ""
    base_name = str(base.model.get("name") or "the baseline's model")
    cand_name = str(cand.model.get("name") or "the candidate's model")
    head = f"nothing could be compared with the baseline{where}, so the gate cannot pass on it"
    measured = [r for r in base.results if r.measurement is not None]
    if not measured:
        return f"{head}: the baseline holds no measured result; record the baseline again"
    base_claims = sorted({str(r.claim) for r in measured})
    cand_claims = sorted({str(r.claim) for r in cand.results if r.measurement is not None})
    if not set(base_claims) & set(cand_claims):
        return (f"{head}: the two reports measured disjoint claims (the baseline "
                f"{', '.join(base_claims)}; the candidate {', '.join(cand_claims) or 'none'}); "
                "audit the candidate on the baseline's claims")
    if base_name != cand_name or base.model.get("family") != cand.model.get("family"):
        return (f"{head}: it is another model ({base_name}, the candidate is {cand_name}) "
                "and none of its results is one the candidate has; gate against a baseline of "
                "the same kind of model")
    if not outcome.uncompared:  # every measured row of the baseline is exploratory
        return (f"{head}: the baseline's measured results are all exploratory; compare them "
                "with --exploratory (exploratory = true), or require its claims")
    return (f"{head}: none of the baseline's results was measured on the candidate (see Not "
            "compared); audit the candidate on the baseline's claims")


def evaluate(candidate: Report, config: GateConfig, baseline: Report | None = None,
             baseline_path: str | None = None) -> GateOutcome:
    """Judge a candidate report against the configuration (no model needed)."""
    if not config.require and not config.replicated and not config.require_robust \
            and baseline is None:
        raise NormtestError(
            "nothing to gate: give require = [claim ids], replicated = [scorecard lines], "
            "require_robust = [scorecard lines] and/or baseline = report.json"
        )
    results = apply_thresholds(candidate.results, config.thresholds)
    candidate = replace(candidate, results=results)
    requirements = []
    for text in config.require:
        selector = rows_selector(text, "require")
        requirements.append(Requirement(text, tuple(
            r for r in results if selector.judges(r, config.exploratory))))
    lines = line_requirements(config.replicated, candidate.scorecard, candidate)
    comparisons: list[BaselineComparison] = []
    uncompared: list[tuple[str, str]] = []
    if baseline is not None:
        baseline = under_thresholds(baseline, config.thresholds)
        comparisons, uncompared = compare(baseline, candidate, margin=config.margin,
                                          margins=config.margins, alpha=config.alpha,
                                          exploratory=config.exploratory)
    return GateOutcome(candidate, tuple(requirements), tuple(comparisons), tuple(uncompared),
                       baseline, baseline_path, config.margin, config.alpha, tuple(lines),
                       robust=tuple(robust_requirements(config.require_robust, candidate)),
                       unverified=config.unverified)


def claims_to_audit(config: GateConfig, baseline: Report | None) -> list[str]:
    """Claim ids the candidate must be audited on: the configured and required ones, the claims
    of the required scorecard lines, and every claim the baseline measured."""

    ids: dict[str, None] = {}
    for key in (*config.replicated, *config.require_robust):
        ids.update(dict.fromkeys(claims_of_line(key)))
    for text in (*config.claims, *config.require):
        for claim_id in Selector.parse(text).claim_ids():
            ids[claim_id] = None
    if baseline is not None:
        for r in baseline.results:
            if r.claim is not None and r.measurement is not None:
                ids[r.claim] = None
    return list(ids)


def run_gate(config: GateConfig, *, save_report: str | Path | None = None,
             force_save: bool = False, slim: bool = False) -> GateOutcome:
    """Audit ``config.model`` (or read ``config.report``) and judge it (:func:`evaluate`).

    ``save_report`` writes the candidate's report (``slim``: without its bootstrap replicates,
    :meth:`Report.slim`) — only when the gate passed, unless
    ``force_save``, so a failing candidate never replaces a baseline. A configured baseline that
    does not exist yet is the first one being recorded when ``save_report`` is that path (the
    gate then judges the requirements alone); otherwise it is an error that says how to record it.
    """

    first = _first_baseline(config, save_report)
    if first:
        config = replace(config, baseline=None)
    baseline = (Report.read(config.baseline, "baseline report")
                if config.baseline is not None else None)
    if config.report is not None:
        candidate = Report.read(config.report, "candidate report")
    elif config.model is not None:
        from normtest.audit.run import run_audit

        ids = claims_to_audit(config, baseline)
        if not ids and first:  # the first baseline covers the whole catalogue
            from normtest.claims.catalogue import claims

            ids = [c.id for c in claims()]
        if not ids:
            raise NormtestError("nothing to gate: give require = [claim ids], replicated = "
                                "[scorecard lines] and/or a baseline")
        settings = audit_settings(config, baseline)
        load_checks_of(config.settings)
        values = resolve(config.settings)
        adapter = load_model(config.model, **load_options(config.model, values))
        candidate = record_samples(run_audit(adapter, ids, settings=settings), adapter, settings)
    else:
        raise NormtestError("the gate needs a model (model = ... or --model) or a candidate "
                            "report (report = ... or --report)")
    if first and not (config.require or config.replicated or config.require_robust):
        # nothing to judge yet: the first baseline is recorded as audited
        outcome = GateOutcome(candidate, (), first_baseline=True)
    else:
        outcome = evaluate(candidate, config, baseline,
                           None if config.baseline is None else str(config.baseline))
        outcome = replace(outcome, first_baseline=first)
    outcome = replace(outcome, label=config.model or (str(config.report) if config.report
                                                      else None))
    if save_report is None:
        return outcome
    if outcome.passed or force_save:
        written = (candidate.slim() if slim else candidate).write(save_report)
        note = f"the candidate's report was written to `{written}`"
        if first:
            note += " (the first baseline)"
        elif not outcome.passed:
            note += " although the gate failed (--force-save)"
    else:
        note = (f"the candidate's report was **not** written to `{save_report}`: the gate failed, "
                "and a failing candidate never replaces a baseline (--force-save writes it anyway)")
    return replace(outcome, saved=note)


def _first_baseline(config: GateConfig, save_report: str | Path | None) -> bool:
    """Whether this run records the first baseline: one is configured, it does not exist yet,
    and ``save_report`` is where it goes. A missing baseline otherwise is an error."""
    if config.baseline is None or Path(config.baseline).exists():
        return False
    target = Path(config.baseline).resolve()
    if save_report is not None and Path(save_report).resolve() == target:
        return True
    raise NormtestError(
        f"the baseline report {config.baseline} does not exist yet; record the first one with "
        f"normtest gate --save-report {config.baseline} (it is written only if the gate passes)")


def gate_audit(report: Report, adapter: ModelAdapter, settings: AuditSettings,
               config: GateConfig, baseline_path: str | Path | None = None) -> GateOutcome:
    """``normtest audit --gate``: the gate's outcome on the report just audited, under the
    configuration the front end read (``config``)."""

    config = config.with_overrides(baseline=None if baseline_path is None
                                   else Path(baseline_path))
    baseline = (Report.read(config.baseline, "baseline report")
                if config.baseline is not None else None)
    return evaluate(record_samples(report, adapter, settings), config, baseline,
                    None if config.baseline is None else str(config.baseline))
