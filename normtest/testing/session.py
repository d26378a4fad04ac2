"""Loading models once per process, planning the checks of a selection, and the audit session
that measures each claim's family once and shares it between checks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from normtest.adapters.protocol import adapter_info
from normtest.audit.report import Report, provenance
from normtest.audit.run import profile_layers, run_audit, skip_reason, variants
from normtest.audit.samples import record_samples
from normtest.audit.selection import Selector, apply_thresholds, result_id
from normtest.base.settings import AuditSettings
from normtest.claims.catalogue import get
from normtest.errors import NormtestError
from normtest.verdict.result import Result, Verdict

if TYPE_CHECKING:
    from normtest.adapters.protocol import ModelAdapter
    from normtest.audit.report import Report
    from normtest.base.settings import AuditSettings
    from normtest.verdict.result import Result


@dataclass(frozen=True)
class PlannedCheck:
    """One check to collect: a claim, a variant of it (empty when the claim is skipped whole)."""

    claim: str
    suite: str
    variant: Mapping[str, str] = field(default_factory=dict)
    skip_reason: str | None = None
    #: the file that declared the claim (pytest collects the check there)
    origin: str | None = None
    #: ``confirmatory`` or ``exploratory`` (None for a claim skipped whole)
    role: str | None = None

    @property
    def id(self) -> str:
        """The result id this check reports (``claim[axis=value,...]``)."""
        return result_id(self.claim, self.variant)


def plan(family: str, states: Sequence[str], selectors: Sequence[Selector] = (),
         adapter: ModelAdapter | None = None, scope: str = "full",
         exploratory: bool = True,
         representations: Sequence[str] | None = None) -> list[PlannedCheck]:
    """The checks of the selected claims for a model family and variant scope, in catalogue
    order.

    With ``adapter``, a claim the model cannot run becomes one skipped check (as the audit
    reports it); without, its variants are planned and skip when measured. Without
    ``exploratory``, only confirmatory variants are planned, and those a selector names by
    their variant.
    """

    wanted = selectors or [Selector("all")]
    ids = sorted({i for s in wanted for i in s.claim_ids()})
    out = []
    for claim in (get(i) for i in ids):
        reason = skip_reason(claim, adapter) if adapter is not None else None
        if reason is not None:
            if any(s.matches(claim.id, {}) for s in wanted):
                out.append(PlannedCheck(claim.id, claim.suite, {}, reason, claim.origin))
            continue
        for variant in variants(claim, family, tuple(states), scope=scope,
                                representations=representations):
            chosen = [s for s in wanted if s.matches(claim.id, variant)]
            role = claim.role(family, variant)
            if chosen and (exploratory or role == "confirmatory"
                           or any(s.variant for s in chosen)):
                out.append(PlannedCheck(claim.id, claim.suite, variant, origin=claim.origin,
                                        role=role))
    return out


class AuditSession:
    """One model's measurements, shared by every check of a test session.

    The claims it planned are audited together, once, when a check first asks for one of them
    — so Holm over the confirmatory rows and Benjamini–Hochberg over the exploratory rows run
    over the same rows as ``normtest audit`` of that selection — and kept.
    """

    def __init__(self, adapter: ModelAdapter, settings: AuditSettings | None = None, *,
                 label: str | None = None, words: Sequence[str] | None = None,
                 source: Any | None = None, thresholds: Mapping[str, Any] | None = None) -> None:

        self.adapter = adapter
        self.settings = settings or AuditSettings()
        self.label = label or str(adapter.name)
        self.words, self.source = words, source
        self.thresholds = dict(thresholds or {})
        self.info = adapter_info(adapter)
        self.family = self.info.family
        self.states = self.info.states
        self._families: dict[str, list[Result]] = {}
        self._planned: list[str] = []
        self._provenance: dict[str, Any] = {}
        self._data: dict[str, Any] = {}
        self._model: dict[str, Any] = {}

    def plan(self, selectors: Sequence[Selector] = (),
             exploratory: bool = True) -> list[PlannedCheck]:
        """The checks of the selected claims for this model (measured together later)."""

        layers = profile_layers(self.adapter, self.family, self.settings)
        planned = plan(self.family, self.states, selectors, adapter=self.adapter,
                       scope=scope_of(self.settings), exploratory=exploratory,
                       representations=layers)
        self.expect(p.claim for p in planned)
        return planned

    def expect(self, claim_ids: Iterable[str]) -> None:
        """Claims to measure together with the first one a check asks for."""
        self._planned.extend(i for i in claim_ids if i not in self._planned)

    def measure(self, claim_ids: Iterable[str]) -> None:
        """Audit the claims not measured yet, in one pass (their data are shared)."""

        todo = [i for i in dict.fromkeys(claim_ids) if i not in self._families]
        runnable = []
        for claim in (get(i) for i in todo):
            reason = skip_reason(claim, self.adapter)
            if reason is None:
                runnable.append(claim.id)
            else:
                self._families[claim.id] = [Result(Verdict.SKIPPED, reason, claim=claim.id,
                                                   criterion=claim.criterion,
                                                   hypothesis=claim.hypothesis)]
        if not runnable:
            return
        try:
            report = run_audit(self.adapter, runnable, settings=self.settings, words=self.words,
                               source=self.source)
        except NormtestError as exc:
            if len(runnable) > 1:  # find out which claim it was
                for claim_id in runnable:
                    self.measure([claim_id])
                return
            self._families[runnable[0]] = [Result(Verdict.ERROR, str(exc), claim=runnable[0])]
            return
        results = apply_thresholds(report.results, self.thresholds)
        for claim_id in runnable:
            self._families[claim_id] = [r for r in results if r.claim == claim_id]
        self._model = dict(report.model)
        self._provenance.update(report.provenance)
        for key, value in report.data.items():
            if isinstance(value, dict) and isinstance(self._data.get(key), dict):
                merged = dict(self._data[key])
                for k, v in value.items():
                    if isinstance(v, dict) and isinstance(merged.get(k), dict):
                        merged[k] = {**merged[k], **v}
                    else:
                        merged[k] = v
                self._data[key] = merged
            else:
                self._data[key] = value

    def family_results(self, claim_id: str) -> list[Result]:
        """Every result of one claim (measured on first use, with every planned claim)."""
        if claim_id not in self._families:
            self.measure([claim_id, *self._planned])
        return self._families[claim_id]

    def result_for(self, check: PlannedCheck) -> Result:
        """The result of a planned check (ERROR with the reason if the audit produced none)."""

        family = self.family_results(check.claim)
        for r in family:
            if check.id in r.ids:
                return r
        if len(family) == 1 and family[0].verdict in (Verdict.SKIPPED, Verdict.ERROR) \
                and not family[0].variant:
            return replace(family[0], variant=dict(check.variant)) if check.variant \
                else family[0]
        return Result(Verdict.ERROR, f"the audit produced no result for {check.id} on "
                      f"{self.label} (its variants: {', '.join(r.id for r in family)})",
                      claim=check.claim, variant=dict(check.variant))

    def result(self, selector: str) -> Result:
        """The one result an id or selector names (an error if it names none or several)."""
        chosen = Selector.parse(selector)
        if chosen.claim is None:
            raise NormtestError(f"{selector!r} is a suite; name a claim or one of its variants")
        found = [r for r in self.family_results(chosen.claim) if chosen.matches_result(r)]
        if len(found) != 1:
            listed = ", ".join(r.id for r in self.family_results(chosen.claim))
            raise NormtestError(
                f"{selector!r} names {len(found)} results on {self.label}; name exactly one "
                f"of: {listed}"
            )
        return found[0]

    def results(self) -> list[Result]:
        """Every result measured so far, in claim order."""
        return [r for claim in sorted(self._families) for r in self._families[claim]]

    def report(self) -> Report:
        """What this session measured, as one report (schema ``normtest.report/1``)."""

        model = self._model or {"name": self.info.name, "revision": self.info.revision,
                                "family": str(self.family), "dim": self.info.dim}
        prov = dict(self._provenance) or provenance(seed=self.settings.seed,
                                                    resamples=self.settings.resamples,
                                                    alpha=self.settings.alpha)
        report = Report(results=self.results(), model=model, provenance=prov, data=self._data)
        return record_samples(report, self.adapter, self.settings, self.words, self.source)


def scope_of(settings: AuditSettings | None) -> str:
    """The variant scope the audit will use (``full`` for settings without one)."""

    return str(getattr(settings or AuditSettings(), "scope", "full"))

