"""``check_model`` and ``parametrize_with_claims``: checking a model against the catalogue from
Python and from a pytest test module (after scikit-learn's ``check_estimator`` and
``parametrize_with_checks``)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from normtest.audit.selection import expected_failure, model_expected_failures, parse_selectors
from normtest.errors import NormtestError, nothing_ran, with_article
from normtest.models.registry import load_model, model_label
from normtest.testing.outcomes import (
    MEASURED,
    POLICIES,
    ClaimError,
    ClaimFailure,
    ClaimOutcome,
    act,
    outcome_of,
)
from normtest.testing.session import AuditSession, PlannedCheck, plan, scope_of

if TYPE_CHECKING:
    import pytest

    from normtest.adapters.protocol import ModelAdapter
    from normtest.audit.report import Report
    from normtest.base.settings import AuditSettings
    from normtest.verdict.result import Result


@dataclass(frozen=True)
class CheckReport:
    """What ``check_model`` found: the audit report and one outcome per check."""

    model: str
    report: Report
    outcomes: tuple[ClaimOutcome, ...]

    @property
    def counts(self) -> dict[str, int]:
        """Checks per verdict (PASS, FAIL, INCONCLUSIVE, ERROR, SKIPPED)."""
        found = Counter(o.result.verdict.value for o in self.outcomes)
        return {v: found.get(v, 0) for v in ("PASS", "FAIL", "INCONCLUSIVE", "ERROR", "SKIPPED")}

    @property
    def statuses(self) -> dict[str, int]:
        """Checks per test outcome (passed, failed, error, skipped, xfailed, xpassed)."""
        found = Counter(o.status for o in self.outcomes)
        return {s: found.get(s, 0) for s in ("passed", "failed", "error", "skipped", "xfailed",
                                             "xpassed")}

    @property
    def ran(self) -> int:
        """How many checks were measured (PASS, FAIL or INCONCLUSIVE)."""
        return sum(o.result.verdict.value in MEASURED for o in self.outcomes)

    @property
    def failures(self) -> list[ClaimOutcome]:
        """The checks that fail (failed, error, strict unexpected pass)."""
        return [o for o in self.outcomes if o.failed]

    @property
    def ok(self) -> bool:
        """True when at least one claim ran and no check failed."""
        return self.ran > 0 and not self.failures

    def raise_for_failures(self) -> None:
        """Raise ``ClaimFailure`` listing every failed check (or that none ran)."""
        if self.ran == 0:
            raise ClaimFailure(f"no claim ran on {self.model}: {self.summary()}")
        if self.failures:
            body = "\n".join(o.message for o in self.failures)
            raise ClaimFailure(f"{len(self.failures)} of {len(self.outcomes)} checks failed on "
                               f"{self.model}:\n{body}")

    def summary(self) -> str:
        """One line: checks per verdict and expected failures."""
        counts = ", ".join(f"{k} {v}" for k, v in self.counts.items())
        s = self.statuses
        return (f"{self.model}: {self.ran} ran; {counts}; expected failures {s['xfailed']}, "
                f"unexpected passes {s['xpassed'] + sum(o.unexpected_pass for o in self.outcomes)}")


def check_model(
    adapter: ModelAdapter,
    claims: Iterable[str] | None = None,
    *,
    expected_failures: Mapping[str, str] | None = None,
    strict: bool = False,
    inconclusive: str = "fail",
    settings: AuditSettings | None = None,
    thresholds: Mapping[str, Any] | None = None,
    words: Sequence[str] | None = None,
    source: Any | None = None,
    exploratory: bool = False,
) -> CheckReport:
    """Check a model against the catalogue (or the selected claims, suites or variants).

    One audit measures every selected claim (data shared; Holm over the confirmatory rows,
    Benjamini–Hochberg over the exploratory rows). Expected
    failures come from ``expected_failures`` and the adapter's own ``expected_failures``
    attribute. Only confirmatory rows (the paper's hypotheses) and the variants ``claims``
    names are checked unless ``exploratory``. A run in which no claim could be measured raises
    NormtestError.
    """
    if inconclusive not in POLICIES:
        raise NormtestError(f"inconclusive must be one of {POLICIES}, got {inconclusive!r}")
    selectors = parse_selectors(claims)
    session = AuditSession(adapter, settings, words=words, source=source, thresholds=thresholds)
    planned = session.plan(selectors, exploratory)
    if not planned:
        raise NormtestError("no claim matches the selection; `normtest list` shows the claims "
                            "(exploratory rows need exploratory=True or a variant named)")
    session.measure(p.claim for p in planned)
    mapping = {**model_expected_failures(adapter), **dict(expected_failures or {})}
    outcomes = []
    for check in planned:
        result = session.result_for(check)
        outcomes.append(outcome_of(result, model=session.label, inconclusive=inconclusive,
                               expected=expected_failure(mapping, check.claim, check.variant),
                               strict=strict))
    report = CheckReport(session.label, session.report(), tuple(outcomes))
    if report.ran == 0:
        raise nothing_ran(session.label, [(o.id, o.result.reason) for o in outcomes])
    return report


# -- parametrize_with_claims ----------------------------------------------------------------------
@dataclass(frozen=True)
class ModelSpec:
    """A model to parametrize over: a label, how to load it, and (to defer loading until the
    first check runs) its family and special states."""

    label: str
    load: Callable[[], Any]
    family: str | None = None
    states: tuple[str, ...] | None = None
    #: what identifies the model across specs (the name or path; else the loader)
    key: str = ""

    @classmethod
    def of(cls, model: Any, label: str | None = None) -> ModelSpec:
        """A spec from a name or path, a ``(label, factory)`` pair, a spec or an adapter."""
        if isinstance(model, ModelSpec):
            return model
        if isinstance(model, str):
            from normtest.models.registry import EMBEDDED

            known = EMBEDDED.get(model)  # its family and states are known before loading
            return cls(label or model_label(model), lambda: load_model(model),
                       known.family if known else None, known.states if known else None,
                       key=model)
        if isinstance(model, tuple) and len(model) == 2 and isinstance(model[0], str):
            return cls(model[0], model[1]) if callable(model[1]) else cls.of(model[1], model[0])
        if hasattr(model, "capabilities") and hasattr(model, "name"):
            return cls(label or str(model.name), lambda: model)
        raise NormtestError(
            f"cannot use {type(model).__name__} as a model: give a name or path, a "
            "(label, factory) pair, a ModelSpec or an adapter"
        )


_SESSIONS: dict[tuple[str, str, str, str], AuditSession] = {}


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


def _session(spec: ModelSpec, settings: AuditSettings | None,
             thresholds: Mapping[str, Any] | None) -> AuditSession:
    key = (spec.label, spec.key or str(id(spec.load)), repr(settings),
           json.dumps(thresholds or {}, sort_keys=True, default=str))
    if key not in _SESSIONS:
        _SESSIONS[key] = AuditSession(spec.load(), settings, label=spec.label,
                                      thresholds=thresholds)
    return _SESSIONS[key]


@dataclass(eq=False)
class ClaimCheck:
    """One claim variant on one model; calling it measures (once per process) and asserts."""

    model: ModelSpec
    planned: PlannedCheck
    inconclusive: str = "fail"
    expected_failure: str | None = None
    strict: bool = False
    settings: AuditSettings | None = None
    thresholds: Mapping[str, Any] | None = None
    result: Result | None = None
    #: the claims planned for this model with it (measured, and adjusted, together)
    together: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        """The check's result id."""
        return self.planned.id

    def __call__(self) -> Result:
        """Measure the claim's family if needed, then pass, fail, skip per the policy."""
        session = _session(self.model, self.settings, self.thresholds)
        if self.model.family not in (None, session.family):
            raise ClaimError(f"{self.model.label} is {with_article(session.family)} model, not the "
                             f"{self.model.family} its ModelSpec declares; fix the spec")
        session.expect(self.together)
        self.result = session.result_for(self.planned)
        act(outcome_of(self.result, model=self.model.label, inconclusive=self.inconclusive,
                   expected=self.expected_failure, strict=self.strict))
        return self.result

    def __repr__(self) -> str:
        return f"ClaimCheck({self.model.label}/{self.id})"


def parametrize_with_claims(
    models: Any,
    claims: Iterable[str] | None = None,
    *,
    expected_failures: Mapping[str, str] | None = None,
    strict: bool = False,
    inconclusive: str = "fail",
    settings: AuditSettings | None = None,
    thresholds: Mapping[str, Any] | None = None,
    argname: str = "check",
    exploratory: bool = False,
) -> pytest.MarkDecorator:
    """A ``pytest.mark.parametrize`` over every (model, claim variant) check, with stable ids.

    ``models``: one or a list of names or paths, ``(label, factory)`` pairs, ``ModelSpec`` or
    adapters. Embedded models and a ``ModelSpec`` with ``family`` and ``states`` are loaded when
    their first check runs; others are loaded now (their variants depend on the model).
    """
    import pytest

    if inconclusive not in POLICIES:
        raise NormtestError(f"inconclusive must be one of {POLICIES}, got {inconclusive!r}")
    listed = list(models) if isinstance(models, (list, tuple)) and not (
        len(models) == 2 and isinstance(models, tuple) and callable(models[1])) else [models]
    specs = [ModelSpec.of(m) for m in listed]
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise NormtestError(f"model labels must be unique, got {labels}; pass (label, factory)")
    selectors = parse_selectors(claims)
    params = []
    for spec in specs:
        adapter = None
        if spec.family is None or spec.states is None:
            from normtest.adapters.protocol import adapter_info

            adapter = spec.load()
            info = adapter_info(adapter)
            spec = replace(spec, load=_constant(adapter), family=info.family, states=info.states,
                           key=spec.key or str(id(spec.load)))
        assert spec.family is not None and spec.states is not None
        mapping = {**(model_expected_failures(adapter) if adapter is not None else {}),
                   **dict(expected_failures or {})}
        planned_checks = plan(spec.family, spec.states, selectors, adapter=adapter,
                              scope=scope_of(settings), exploratory=exploratory)
        together = tuple(dict.fromkeys(p.claim for p in planned_checks))
        for planned in planned_checks:
            reason = expected_failure(mapping, planned.claim, planned.variant)
            check = ClaimCheck(spec, planned, inconclusive, reason, strict, settings, thresholds,
                               together=together)
            marks = [pytest.mark.normtest_claim(planned.claim)]
            if reason is not None:
                marks.append(pytest.mark.xfail(reason=reason, strict=False, raises=ClaimFailure))
            check_id = planned.id if len(specs) == 1 else f"{spec.label}/{planned.id}"
            params.append(pytest.param(check, id=check_id, marks=marks))
    if not params:
        raise NormtestError("no claim matches the selection; `normtest list` shows the claims "
                            "(exploratory rows need exploratory=True or a variant named)")
    return pytest.mark.parametrize(argname, params)
