"""The state of a normtest pytest session: the options and configuration resolved once, an
audit session per model (built on demand), the verdicts counted, and the session as a test sees
it (:class:`BoundSession`)."""

from __future__ import annotations

import importlib.util
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from normtest.audit.report import Report
    from normtest.audit.run import AuditSettings
    from normtest.audit.selection import Selector
    from normtest.gate.regression import BaselineComparison
    from normtest.gate.run import GateConfig
    from normtest.testing.outcomes import ClaimOutcome
    from normtest.testing.session import AuditSession, PlannedCheck
    from normtest.verdict.result import Result

#: The marker of a test of a claim variant (the ``normtest_result`` fixture reads it).
MARKER = "normtest_claim"


class NormtestState:
    """Options, the audit sessions (one per model, built on demand) and the verdict counts."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.models: list[str] = list(config.getoption("normtest_models") or [])
        self.active = bool(self.models)
        self.labels: list[str] = []
        self._sessions: dict[str, AuditSession] = {}
        self._gate: GateConfig | None = None
        self._selectors: list[Selector] | None = None
        self._catalogue: Path | None = None
        self.counts: Counter[tuple[str, str]] = Counter()
        self.statuses: Counter[str] = Counter()
        self.seen = False
        self.refused = False
        self.written: list[Path] = []
        self._baseline: Report | None = None
        self._regressions: dict[str, dict[str, BaselineComparison]] = {}
        if self.active:
            from normtest.models.registry import unique_labels

            self.labels = unique_labels(self.models)

    # -- configuration -------------------------------------------------------------------------
    def option(self, name: str) -> Any:
        """A ``--normtest-*`` option's value (None when not given)."""
        return self.config.getoption(name)

    @property
    def gate(self) -> GateConfig:
        """The ``[tool.normtest]`` configuration (defaults when there is none) under the
        ``--normtest-*`` options (:meth:`~normtest.gate.config.GateConfig.with_options`)."""
        if self._gate is None:
            from normtest.gate.config import load_config

            path = self.option("normtest_config")
            self._gate = load_config(path, start=self.config.rootpath).with_options(
                vars(self.config.option), prefix="normtest_")
        return self._gate

    @property
    def values(self) -> dict[str, Any]:
        """Every setting: its default, then the configuration's, then the options."""
        from normtest.base.settings import resolve

        return resolve(self.gate.settings)

    @property
    def junit_properties(self) -> bool:
        """Whether claim items add properties to the JUnit XML."""
        return bool(self.option("normtest_junit_properties")
                    or self.config.getini("normtest_junit_properties"))

    def settings(self) -> AuditSettings:
        """Audit settings: defaults, then the configuration, then the options; with
        ``--normtest-baseline``, the baseline's sample under the configuration's, as the gate
        draws it (so that the regression test pairs)."""
        if self.baseline is not None:
            from normtest.gate.run import audit_settings as gate_settings

            return gate_settings(self.gate, self.baseline)
        from normtest.base.settings import audit_settings

        return audit_settings(self.values)

    @property
    def baseline(self) -> Report | None:
        """The ``--normtest-baseline`` report (read once, checked as the gate reads it)."""
        path = self.option("normtest_baseline")
        if path and self._baseline is None:
            from normtest.audit.report import Report

            self._baseline = Report.read(path, what="baseline report")
        return self._baseline

    def regression(self, label: str, result: Result) -> BaselineComparison | None:
        """How ``result``'s effect changed against the baseline, when the baseline has its row
        (None otherwise, or without a baseline): the gate's regression test, Holm over every
        row of the model's session compared with the baseline."""
        if self.baseline is None:
            return None
        if label not in self._regressions:
            from normtest.gate.regression import compare, under_thresholds

            gate = self.gate
            baseline = under_thresholds(self.baseline, gate.thresholds)
            found, _ = compare(baseline, self.session(label).report(), margin=gate.margin,
                               margins=gate.margins, alpha=gate.alpha,
                               exploratory=gate.exploratory)
            self._regressions[label] = {c.id: c for c in found}
        return self._regressions[label].get(result.id)

    @property
    def selectors(self) -> list[Selector]:
        """The ``--normtest-claims`` selection (empty: every claim)."""
        if self._selectors is None:
            from normtest.audit.selection import parse_selectors

            self._selectors = parse_selectors(self.option("normtest_claims"))
        return self._selectors

    def session(self, label: str) -> AuditSession:
        """The audit session of one model (loaded and shared on first use)."""
        if label not in self._sessions:
            from normtest.models.registry import load_model, load_options
            from normtest.testing.session import AuditSession

            spec = self.models[self.labels.index(label)]
            values = self.values
            adapter = load_model(spec, **load_options(spec, values))
            self._sessions[label] = AuditSession(adapter, self.settings(), label=label,
                                                 thresholds=self.gate.thresholds)
        return self._sessions[label]

    def expected(self, label: str, planned: PlannedCheck) -> str | None:
        """The reason this check is expected to fail, if it is."""
        from normtest.audit.selection import expected_failure, model_expected_failures

        mapping = {**model_expected_failures(self.session(label).adapter),
                   **dict(self.gate.expected_failures)}
        return expected_failure(mapping, planned.claim, planned.variant)

    @property
    def catalogue(self) -> Path:
        """The folder of the built-in claim modules (``normtest.checks``: ``checks/``)."""
        if self._catalogue is None:
            spec = importlib.util.find_spec("normtest.checks")
            locations = list(spec.submodule_search_locations or []) if spec else []
            self._catalogue = Path(locations[0]).resolve() if locations else Path("/nonexistent")
        return self._catalogue

    def is_catalogue(self, path: Path) -> bool:
        """Whether ``path`` is a claim module of ``normtest.checks`` (checks/<suite>.py)."""
        from normtest.claims.catalogue import SUITES

        return path.stem in SUITES and path.parent.resolve() == self.catalogue

    def is_claim_file(self, path: Path) -> bool:
        """Whether ``path`` declares claims: a catalogue module, or a file of the user's claims
        (``--normtest-checks``, ``checks = [...]``) that pytest was asked to collect."""
        if self.is_catalogue(path):
            return True
        from normtest.claims.catalogue import claims

        resolved = str(path.resolve())
        return any(c.origin == resolved for c in claims())

    def home(self, session: pytest.Session, planned: PlannedCheck) -> Path:
        """The file a check is collected under: the file that declared its claim when pytest
        collects that file (or a folder above it), else the catalogue module of its suite."""
        if planned.origin:
            origin = Path(planned.origin)
            if any(session.isinitpath(p) for p in (origin, *origin.parents)):
                return origin
        return self.catalogue / f"{planned.suite}.py"

    # -- bookkeeping -------------------------------------------------------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Count the normtest verdicts a finished test carries (xdist forwards them)."""
        records = getattr(report, "normtest", None)
        if records and report.when == "call":
            self.count(list(records))

    def count(self, records: list[dict[str, str]]) -> None:
        """Count the verdicts a test report carries."""
        self.seen = True
        for record in records:
            self.counts[(record["model"], record["verdict"])] += 1
            self.statuses[record["status"]] += 1

    @property
    def ran(self) -> int:
        """How many claim checks were measured (PASS, FAIL or INCONCLUSIVE)."""
        from normtest.testing.outcomes import MEASURED

        return sum(n for (_, verdict), n in self.counts.items() if verdict in MEASURED)

    def write_reports(self) -> None:
        """Write each model's report (``--normtest-report``)."""
        target = self.option("normtest_report")
        if not target:
            return
        measured = [(label, s) for label, s in self._sessions.items() if s.results()]
        worker = getattr(self.config, "workerinput", {}).get("workerid")
        for label, session in measured:
            path = Path(target)
            if len(self.labels) > 1:
                safe = re.sub(r"[^\w.\-]+", "_", label)
                path = path.with_name(f"{path.stem}.{safe}{path.suffix}")
            if worker:
                path = path.with_name(f"{path.stem}.{worker}{path.suffix}")
            report: Report = session.report()
            self.written.append(report.write(path))


STATE = pytest.StashKey[NormtestState]()
RECORDS = pytest.StashKey[list[dict[str, str]]]()


def state_of(config: pytest.Config) -> NormtestState | None:
    """The session's normtest state (None before ``pytest_configure``)."""
    return config.stash.get(STATE, None)


def record(item: pytest.Item, outcome: ClaimOutcome) -> None:
    """Keep a verdict on its test item (carried into the test's report)."""
    records = item.stash.setdefault(RECORDS, [])
    records.append({"model": outcome.model, "id": outcome.id,
                    "verdict": outcome.result.verdict.value, "status": outcome.status})




class BoundSession:
    """The model's shared audit session, as a test sees it: what it reads is counted."""

    def __init__(self, state: NormtestState, label: str, node: pytest.Item) -> None:
        self._state, self.label, self._node = state, label, node
        self.session = state.session(label)

    @property
    def adapter(self) -> Any:
        """The model adapter."""
        return self.session.adapter

    def result(self, selector: str) -> Result:
        """The one result an id or selector names (measured once per session)."""
        from normtest.testing.outcomes import outcome_of

        result = self.session.result(selector)
        record(self._node, outcome_of(result, model=self.label,
                                   inconclusive=self._state.gate.inconclusive))
        return result

    def check(self, selector: str) -> Result:
        """Assert a claim variant under the session's policy and expected failures."""
        from normtest.audit.selection import expected_failure, model_expected_failures
        from normtest.testing.outcomes import act, outcome_of
        from normtest.testing.session import PlannedCheck

        result = self.session.result(selector)
        mapping = {**model_expected_failures(self.adapter),
                   **dict(self._state.gate.expected_failures)}
        planned = PlannedCheck(result.claim or "", "", dict(result.variant))
        outcome = outcome_of(result, model=self.label, inconclusive=self._state.gate.inconclusive,
                         expected=expected_failure(mapping, planned.claim, planned.variant),
                         strict=self._state.gate.strict)
        record(self._node, outcome)
        if outcome.status == "xfailed":
            pytest.xfail(outcome.message)
        act(outcome)
        return result

    def report(self) -> Report:
        """Everything measured so far, as a report."""
        return self.session.report()
