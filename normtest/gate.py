"""Gating a model release in CI: required claims must PASS, and nothing may regress.

``normtest gate`` (or ``normtest audit --gate``) reads ``[tool.normtest]`` in ``pyproject.toml``
or a ``normtest.toml``::

    model = "glove-6b-50d"
    require = ["word.norm_ic[transform=whiten_zipf]"]   # claims, variants or suites that must PASS
    replicated = ["word_level"]                         # scorecard lines that must be replicated
    baseline = "baseline/report.json"                   # optional: an earlier audit to compare with
    words = 2000                                        # audit settings (default: the baseline's)
    margin = 0.05                                       # a drop smaller than this is no regression
    [tool.normtest.thresholds]
    "word.norm_ic" = 0.25                               # re-judge a claim at another threshold

A requirement judges the *confirmatory* rows it names (the paper's hypotheses; see
:mod:`normtest.scorecard`), and every row it names by its variant; ``exploratory = true``
(``--exploratory``) makes requirements and regressions judge the exploratory rows too. A
``replicated`` line of the scorecard must come out *replicated* (``"all"``: every line the audit
tested).

A *regression* is a statistically supported drop of an effect, not any decrease: for each result
id in both reports, H1: effect(candidate) < effect(baseline) − margin, tested at α with Holm over
all compared results. The effect is the estimate in the claim's favourable direction (minus it
for a "less" claim; minus the distance to the margin's centre for an equivalence claim). The test
is *paired* when both measurements resampled the same units with the same seed (same sample
digest, n, seed and number of replicates): the replicate-by-replicate differences give a
bias-corrected bootstrap p-value. Otherwise the two estimates are independent and a normal
approximation uses each interval's width. docs/ci.md explains both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from normtest.checking.samples import record_samples, sample_fingerprints, sample_of
from normtest.checking.selection import Selector, apply_thresholds
from normtest.checking.session import load_model
from normtest.config import GateConfig, find_config, load_config
from normtest.errors import NormtestError
from normtest.settings import (
    PROFILES,
    RENAMED,
    AuditSettings,
    given,
    load_checks_of,
    load_options,
    resolve,
)
from normtest.stats.multiplicity import holm

if TYPE_CHECKING:
    from normtest.adapters.protocol import ModelAdapter
    from normtest.report import Report
    from normtest.result import Criterion, Result
    from normtest.scorecard import Line

__all__ = ["Comparison", "GateConfig", "GateOutcome", "LineRequirement", "Requirement",
           "RobustRequirement", "compare",
           "evaluate", "find_config", "load_config", "run_gate"]

#: Two-sided confidence of the intervals the summary shows (their ends: one-sided 95% bounds).
Z_95 = 1.6448536269514722


def audit_settings(config: GateConfig, baseline: Report | None = None) -> AuditSettings:
    """Audit settings: the defaults, then the baseline's (so the samples match), then the
    configuration's (which holds the command line's too, see :meth:`GateConfig.with_settings`)."""
    names = {f.name for f in fields(AuditSettings)}
    recorded: dict[str, Any] = {}
    if baseline is not None:
        prov = baseline.provenance
        recorded = {RENAMED.get(k, k): prov[k] for k in ("seed", "resamples", "n_resamples",
                                                         "scope", "profile") if k in prov}
        recorded.update({RENAMED.get(k, k): v
                         for k, v in (prov.get("audit_settings") or {}).items()})
    chosen: dict[str, Any] = {k: (tuple(v) if isinstance(v, list) else v)
                              for k, v in recorded.items() if k in names}
    profile = config.settings.get("profile") or chosen.get("profile")
    if profile in PROFILES:  # its sizes, unless the configuration gives one explicitly
        chosen.update({**PROFILES[profile], "profile": profile})
    chosen.update({k: v for k, v in config.settings.items() if k in names and v is not None})
    return AuditSettings(**chosen)


# -- the regression test ---------------------------------------------------------------------
def _target(criterion: Criterion) -> float:
    assert criterion.margin is not None
    low, high = criterion.margin
    return math.sqrt(low * high) if low > 0 else (low + high) / 2


def effect(values: Any, criterion: Criterion | None) -> np.ndarray:
    """The estimate(s) in the claim's favourable direction: larger is better."""
    x = np.asarray(values, dtype=np.float64)
    if criterion is None or criterion.direction == "greater":
        return x
    if criterion.direction == "less":
        return -x
    return -np.abs(x - _target(criterion))


@dataclass(frozen=True)
class Comparison:
    """One result id in both reports, and whether its effect dropped by more than the margin."""

    id: str
    baseline: Result
    candidate: Result
    difference: float
    interval: tuple[float, float]
    margin: float
    p_value: float
    paired: bool
    p_adjusted: float = math.nan
    regressed: bool = False

    @property
    def method(self) -> str:
        """How the difference was tested."""
        return "paired bootstrap" if self.paired else "unpaired normal"


def _pairing(base: Result, cand: Result, key: str | None, base_samples: Mapping[str, str],
             cand_samples: Mapping[str, str], same_version: bool) -> bool:
    """Whether two measurements resampled the same units (sample ``key``) draw for draw."""
    bm, cm = base.measurement, cand.measurement
    assert bm is not None and cm is not None and bm.sampling and cm.sampling
    return bool(
        same_version and key is not None
        and base_samples.get(key) is not None and base_samples.get(key) == cand_samples.get(key)
        and bm.sampling.kind == cm.sampling.kind == "bootstrap"
        and bm.sampling.replicates.size == cm.sampling.replicates.size
        and bm.seed is not None and bm.seed == cm.seed and bm.n == cm.n
        and bm.method == cm.method and bm.statistic == cm.statistic
        and not _sorted(bm.sampling.replicates) and not _sorted(cm.sampling.replicates)
    )


def _sorted(replicates: np.ndarray) -> bool:
    """Replicates stored in sorted order (reports of normtest before resampling order was
    kept) cannot be paired: pairing sorted arrays would understate the spread."""
    finite = replicates[~np.isnan(replicates)]
    return finite.size > 2 and bool(np.all(np.diff(finite) >= 0))


def compare_results(base: Result, cand: Result, *, margin: float, alpha: float,
                    paired: bool) -> Comparison:
    """Test H1: effect(cand) < effect(base) − margin for one pair of results."""
    from normtest.sampling import Sampling

    bm, cm = base.measurement, cand.measurement
    assert bm is not None and cm is not None and bm.sampling and cm.sampling
    criterion = cand.criterion or base.criterion
    difference = float(effect(cm.estimate, criterion) - effect(bm.estimate, criterion))
    if paired:
        reps = effect(cm.sampling.replicates, criterion) - effect(bm.sampling.replicates,
                                                                  criterion)
        sampling = Sampling.bootstrap(reps, difference)
    else:
        spread = []
        for m in (bm, cm):
            low, high = m.interval(0.90)
            spread.append((high - low) / (2 * Z_95))
        scale = math.hypot(*spread)
        if not math.isfinite(scale):
            return Comparison(base.id, base, cand, difference, (math.nan, math.nan), margin,
                              1.0, False)
        sampling = Sampling("normal", center=difference, scale=scale)
    return Comparison(base.id, base, cand, difference, sampling.interval(1 - 2 * alpha),
                      margin, float(sampling.p_less(-margin)), paired)


def compare(baseline: Report, candidate: Report, *, margin: float = 0.05,
            margins: Mapping[str, float] | None = None, alpha: float = 0.05,
            exploratory: bool = True,
            ) -> tuple[list[Comparison], list[tuple[str, str]]]:
    """Every result id measured in both reports (only the baseline's confirmatory rows unless
    ``exploratory``), tested for a regression (Holm over all compared).

    Returns the comparisons and the ids that could not be compared, with the reason.
    """

    base_samples, cand_samples = sample_fingerprints(baseline), sample_fingerprints(candidate)
    same_version = baseline.provenance.get("normtest") == candidate.provenance.get("normtest")
    by_id = {i: r for r in candidate.results for i in reversed(r.ids)}
    found: list[Comparison] = []
    skipped: list[tuple[str, str]] = []
    for base in baseline.results:
        if base.measurement is None or base.measurement.sampling is None \
                or not math.isfinite(base.estimate):
            continue
        if not exploratory and base.role == "exploratory":
            continue
        cand = by_id.get(base.id)
        why = None
        if cand is None:
            why = "not in the candidate's report"
        elif cand.measurement is None or cand.measurement.sampling is None \
                or not math.isfinite(cand.estimate):
            why = f"not measured on the candidate ({cand.verdict.value}: {cand.reason})"
        elif cand.measurement.statistic != base.measurement.statistic:
            why = (f"different statistics ({base.measurement.statistic} vs "
                   f"{cand.measurement.statistic})")
        if why is not None or cand is None:
            skipped.append((base.id, why or ""))
            continue
        claim_margin = (margins or {}).get(base.claim or "", margin)
        paired = _pairing(base, cand, sample_of(base.claim), base_samples, cand_samples,
                          same_version)
        found.append(compare_results(base, cand, margin=claim_margin, alpha=alpha,
                                     paired=paired))
    if found:
        adjusted = holm([c.p_value for c in found])
        found = [replace(c, p_adjusted=float(p), regressed=bool(p < alpha))
                 for c, p in zip(found, adjusted, strict=True)]
    return found, skipped


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
    """A scorecard line that must be replicated, and the line the audit gave."""

    key: str
    line: Line | None

    @property
    def ok(self) -> bool:
        """True when the line exists and was replicated."""
        return self.line is not None and self.line.status == "replicated"


@dataclass(frozen=True)
class RobustRequirement:
    """A scorecard line whose verdict must survive its other reasonable analyses, and how it
    fared (normtest.robustness; None: not assessed)."""

    key: str
    robustness: Any | None

    @property
    def ok(self) -> bool:
        """True when the line was assessed and is robust."""
        return self.robustness is not None and bool(self.robustness.specifications) \
            and self.robustness.robust

    @property
    def why(self) -> str:
        """The assessment in words (or why there is none)."""
        if self.robustness is None or not self.robustness.specifications:
            return ("its robustness was not assessed (the line was not tested, or the audit ran "
                    "with --no-robustness)")
        return str(self.robustness.summary())


def robust_requirements(keys: Sequence[str], candidate: Report) -> list[RobustRequirement]:
    """The lines named by ``keys`` (``"all"``: every line the audit tested) with their
    robustness; an unknown key is an error naming the known ones."""
    lines = candidate.scorecard
    known = {line.key for line in lines}
    out: list[RobustRequirement] = []
    for key in keys:
        if key == "all":
            out += [RobustRequirement(line.key, candidate.robustness_of(line.key))
                    for line in lines if line.status != "not tested"]
        elif key in known:
            out.append(RobustRequirement(key, candidate.robustness_of(key)))
        else:
            raise NormtestError(f"require_robust: no scorecard line {key!r}; the lines are "
                                f"{', '.join(sorted(known))} (or all)")
    return out


def line_requirements(keys: Sequence[str], lines: Sequence[Line]) -> list[LineRequirement]:
    """The scorecard lines named by ``keys`` (``"all"``: every line the audit tested); an
    unknown key is an error naming the known ones."""
    by_key = {line.key: line for line in lines}
    out: list[LineRequirement] = []
    for key in keys:
        if key == "all":
            out += [LineRequirement(line.key, line) for line in lines
                    if line.status != "not tested"]
        elif key in by_key:
            out.append(LineRequirement(key, by_key[key]))
        else:
            raise NormtestError(f"replicated: no scorecard line {key!r}; the lines are "
                                f"{', '.join(by_key)} (or 'all')")
    return out


@dataclass(frozen=True)
class GateOutcome:
    """The gate's decision and everything behind it."""

    candidate: Report
    requirements: tuple[Requirement, ...]
    comparisons: tuple[Comparison, ...] = ()
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

    @property
    def regressions(self) -> list[Comparison]:
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
        """Scorecard lines required to be robust that were not."""
        return [r for r in self.robust if not r.ok]

    @property
    def passed(self) -> bool:
        """True when every requirement holds and nothing regressed (and something was
        checked: a gate with no requirement and nothing compared fails)."""
        checked = (bool(self.requirements) or bool(self.comparisons) or bool(self.lines)
                   or bool(self.robust) or self.first_baseline)
        return (checked and not self.failed_requirements and not self.regressions
                and not self.failed_lines and not self.failed_robust)

    def markdown(self) -> str:
        """A Markdown summary fit for a pull-request comment."""
        from normtest.render.gate import gate_markdown

        return gate_markdown(self)


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
        selector = Selector.parse(text)
        requirements.append(Requirement(text, tuple(
            r for r in results if selector.judges(r, config.exploratory))))
    lines = line_requirements(config.replicated, candidate.scorecard)
    comparisons: list[Comparison] = []
    uncompared: list[tuple[str, str]] = []
    if baseline is not None:
        baseline = replace(baseline, results=apply_thresholds(baseline.results,
                                                              config.thresholds))
        comparisons, uncompared = compare(baseline, candidate, margin=config.margin,
                                          margins=config.margins, alpha=config.alpha,
                                          exploratory=config.exploratory)
    return GateOutcome(candidate, tuple(requirements), tuple(comparisons), tuple(uncompared),
                       baseline, baseline_path, config.margin, config.alpha, tuple(lines),
                       robust=tuple(robust_requirements(config.require_robust, candidate)))


def claims_to_audit(config: GateConfig, baseline: Report | None) -> list[str]:
    """Claim ids the candidate must be audited on: the configured and required ones, the claims
    of the required scorecard lines, and every claim the baseline measured."""
    from normtest.catalogue import claims_of_line

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
             force_save: bool = False) -> GateOutcome:
    """Audit ``config.model`` (or read ``config.report``) and judge it (:func:`evaluate`).

    ``save_report`` writes the candidate's report — only when the gate passed, unless
    ``force_save``, so a failing candidate never replaces a baseline. A configured baseline that
    does not exist yet is the first one being recorded when ``save_report`` is that path (the
    gate then judges the requirements alone); otherwise it is an error that says how to record it.
    """
    from normtest.report import Report

    first = _first_baseline(config, save_report)
    if first:
        config = replace(config, baseline=None)
    baseline = (Report.read(config.baseline, "baseline report")
                if config.baseline is not None else None)
    if config.report is not None:
        candidate = Report.read(config.report, "candidate report")
    elif config.model is not None:
        from normtest.audit import run_audit

        ids = claims_to_audit(config, baseline)
        if not ids and first:  # the first baseline covers the whole catalogue
            from normtest.catalogue import claims

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
        written = candidate.write(save_report)
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


# -- the command -----------------------------------------------------------------------------------
def command(args: Any) -> int:
    """``normtest gate``: 0 the gate passed, 1 it failed (2 and 3 come from the CLI)."""
    config = load_config(args.config, required=args.model is None and args.report is None
                         and not args.require and not args.replicated
                         and not args.require_robust)
    config = config.with_overrides(
        model=args.model, report=args.report, baseline=args.baseline,
        require=tuple(args.require) if args.require else None,
        replicated=tuple(args.replicated) if args.replicated else None,
        require_robust=tuple(args.require_robust) if args.require_robust else None,
        exploratory=True if args.exploratory else None,
        claims=tuple(args.claims) if args.claims else None, margin=args.margin,
        alpha=args.alpha).with_settings(given(args))
    outcome = run_gate(config, save_report=args.save_report, force_save=args.force_save)
    return emit(outcome, args.summary)


def emit(outcome: GateOutcome, summary: str | Path | None = None) -> int:
    """Print the Markdown summary (and write it to ``summary``); the gate's exit code."""
    text = outcome.markdown()
    print(text, end="")
    if summary is not None:
        target = Path(summary)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return 0 if outcome.passed else 1


def gate_audit(report: Report, adapter: ModelAdapter, settings: AuditSettings,
               config_path: str | Path | None = None, baseline_path: str | Path | None = None,
               summary: str | Path | None = None) -> int:
    """``normtest audit --gate``: gate the report just audited; the gate's exit code."""
    from normtest.report import Report

    config = load_config(config_path, required=baseline_path is None)
    config = config.with_overrides(baseline=None if baseline_path is None
                                   else Path(baseline_path))
    baseline = (Report.read(config.baseline, "baseline report")
                if config.baseline is not None else None)
    outcome = evaluate(record_samples(report, adapter, settings), config, baseline,
                       None if config.baseline is None else str(config.baseline))
    return emit(outcome, summary)
