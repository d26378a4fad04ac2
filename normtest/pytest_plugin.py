"""The normtest pytest plugin: the claim catalogue as test items, fixtures, a verdict summary.

Registered as the ``normtest`` ``pytest11`` entry point, so installing normtest enables it. It is
inert unless ``--normtest-model`` is given (only the ``normtest_claim`` marker is registered),
and importing it imports pytest and the standard library only: the engine, numpy and the models
load when a session asks for them.

::

    pytest checks --normtest-model glove-6b-50d                  # from a clone
    pytest --pyargs normtest.checks --normtest-model glove-6b-50d  # from an installed normtest

Each claim variant is one item, ``checks/word.py::word.norm_ic[transform=raw]`` (prefixed by the
model, ``glove-6b-50d/word.norm_ic[...]``, when several models are given). Options, fixtures and
the verdict policy are described in docs/ci.md.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from normtest.settings import add_cli_options

if TYPE_CHECKING:
    from normtest.audit import AuditSettings
    from normtest.checking import AuditSession, ClaimOutcome, PlannedCheck, Selector
    from normtest.gate import GateConfig
    from normtest.report import Report
    from normtest.result import Result

MARKER = "normtest_claim"


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--normtest-*`` options and the ``normtest_junit_properties`` ini value."""
    group = parser.getgroup("normtest", "normtest: check embedding models against the claims")
    group.addoption("--normtest-model", action="append", default=[], metavar="MODEL",
                    dest="normtest_models",
                    help="model to check: embedded name, path, hub id or module:attribute "
                         "(repeatable; enables the plugin)")
    group.addoption("--normtest-claims", action="append", default=[], metavar="IDS",
                    help="claims, variants such as 'word.norm_ic[transform=raw]', or suites, "
                         "comma-separated (repeatable; default: every claim)")
    group.addoption("--normtest-inconclusive", choices=("fail", "skip", "pass"), default=None,
                    help="what an INCONCLUSIVE verdict does to its test (default fail)")
    group.addoption("--normtest-report", default=None, metavar="PATH",
                    help="write the session's report.json (schema normtest.report/1) here")
    group.addoption("--normtest-config", default=None, metavar="PATH",
                    help="normtest.toml or pyproject.toml with [tool.normtest] (expected "
                         "failures, thresholds, settings; default: found from the rootdir)")
    group.addoption("--normtest-strict", action="store_true", default=None,
                    help="a claim expected to fail that passes fails its test")
    group.addoption("--normtest-replicated", action="append", default=[], metavar="LINES",
                    help="scorecard lines that must be replicated (keys such as word_level, or "
                         "all; comma-separated, repeatable): an item each under checks/axes.py")
    group.addoption("--normtest-exploratory", action="store_true", default=None,
                    help="collect the exploratory rows too (default: the confirmatory rows — "
                         "the paper's hypotheses — and any variant --normtest-claims names)")
    group.addoption("--normtest-junit-properties", action="store_true", default=None,
                    help="add each claim's estimate, interval, threshold and verdict to the "
                         "JUnit XML (--junitxml) as properties")
    # the audit and loading settings, one name each (normtest.settings): --normtest-words …
    add_cli_options(group, pytest=True)
    parser.addini("normtest_junit_properties", type="bool", default=False,
                  help="add per-claim properties to the JUnit XML (normtest)")


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker and the session state (no import of the engine)."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}(id): a test of a normtest claim or variant (the normtest_result fixture "
        "reads it; collected claim items carry it)",
    )
    state = NormtestState(config)
    config.stash[STATE] = state
    config.pluginmanager.register(state, "normtest-state")


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
        if self.active:
            from normtest.checking.session import unique_labels

            self.labels = unique_labels(self.models)

    # -- configuration -------------------------------------------------------------------------
    def option(self, name: str) -> Any:
        """A ``--normtest-*`` option's value (None when not given)."""
        return self.config.getoption(name)

    @property
    def gate(self) -> GateConfig:
        """The ``[tool.normtest]`` configuration (defaults when there is none)."""
        if self._gate is None:
            from normtest.gate import load_config

            path = self.option("normtest_config")
            self._gate = load_config(path, start=self.config.rootpath)
        return self._gate

    @property
    def values(self) -> dict[str, Any]:
        """Every setting: its default, then the configuration's, then the options."""
        from normtest.settings import given, resolve

        return resolve(self.gate.settings, given(vars(self.config.option), prefix="normtest_"))

    @property
    def inconclusive(self) -> str:
        """The INCONCLUSIVE policy: the option, else the configuration's, else fail."""
        return str(self.option("normtest_inconclusive") or self.gate.inconclusive)

    @property
    def strict(self) -> bool:
        """Whether an unexpected pass fails."""
        given = self.option("normtest_strict")
        return bool(given) if given is not None else self.gate.strict

    @property
    def replicated(self) -> list[str]:
        """The scorecard lines that must be replicated (the option, else the configuration's)."""
        given = [k.strip() for text in self.option("normtest_replicated") or []
                 for k in text.split(",") if k.strip()]
        return given or list(self.gate.replicated)

    @property
    def exploratory(self) -> bool:
        """Whether exploratory rows are collected (the option, else the configuration's)."""
        given = self.option("normtest_exploratory")
        return bool(given) if given is not None else self.gate.exploratory

    @property
    def junit_properties(self) -> bool:
        """Whether claim items add properties to the JUnit XML."""
        return bool(self.option("normtest_junit_properties")
                    or self.config.getini("normtest_junit_properties"))

    def settings(self) -> AuditSettings:
        """Audit settings: defaults, then the configuration, then the options."""
        from normtest.settings import audit_settings

        return audit_settings(self.values)

    @property
    def selectors(self) -> list[Selector]:
        """The ``--normtest-claims`` selection (empty: every claim)."""
        if self._selectors is None:
            from normtest.checking.selection import parse_selectors

            self._selectors = parse_selectors(self.option("normtest_claims"))
        return self._selectors

    def session(self, label: str) -> AuditSession:
        """The audit session of one model (loaded and shared on first use)."""
        if label not in self._sessions:
            from normtest.checking import AuditSession, load_model
            from normtest.settings import load_options

            spec = self.models[self.labels.index(label)]
            values = self.values
            adapter = load_model(spec, **load_options(spec, values))
            self._sessions[label] = AuditSession(adapter, self.settings(), label=label,
                                                 thresholds=self.gate.thresholds)
        return self._sessions[label]

    def expected(self, label: str, planned: PlannedCheck) -> str | None:
        """The reason this check is expected to fail, if it is."""
        from normtest.checking.selection import expected_failure, model_expected_failures

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
        from normtest.catalogue import SUITES

        return path.stem in SUITES and path.parent.resolve() == self.catalogue

    def is_claim_file(self, path: Path) -> bool:
        """Whether ``path`` declares claims: a catalogue module, or a file of the user's claims
        (``--normtest-checks``, ``checks = [...]``) that pytest was asked to collect."""
        if self.is_catalogue(path):
            return True
        from normtest.catalogue import claims

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
        from normtest.checking.outcomes import MEASURED

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


def _state(config: pytest.Config) -> NormtestState | None:
    return config.stash.get(STATE, None)


# -- collection ------------------------------------------------------------------------------------
@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """Validate the selection and load the models before collecting (errors are usage errors)."""
    state = _state(session.config)
    if state is None or not state.active or session.config.pluginmanager.has_plugin("dsession"):
        return  # inactive, or the pytest-xdist controller (its workers collect)
    from normtest.catalogue import get
    from normtest.checking import Selector
    from normtest.errors import NormtestError

    try:
        from normtest.settings import load_checks_of

        load_checks_of(state.values)  # the user's claims join the catalogue before planning
        state.selectors  # noqa: B018  (parsed and validated here)
        for key in state.gate.expected_failures:
            Selector.parse(key)
        for claim in state.gate.thresholds:
            get(claim)
        for label in state.labels:
            state.session(label)
    except NormtestError as exc:
        raise pytest.UsageError(f"normtest: {exc}") from None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Claim modules of ``normtest.checks`` become files of claim items (when enabled)."""
    state = _state(parent.config)
    if state is None or not state.active or file_path.suffix != ".py":
        return None
    if file_path.stem == "axes" and file_path.parent.resolve() == state.catalogue \
            and state.replicated:
        from normtest.checking.scorecard_items import ScorecardFile

        return ScorecardFile.from_parent(parent, path=file_path)
    if not state.is_claim_file(file_path):
        return None
    return ClaimFile.from_parent(parent, path=file_path)


class ClaimFile(pytest.File):
    """A file of claims (``checks/word.py``, or a user's claim file): an item per model and
    claim variant declared there."""

    def collect(self) -> Any:
        """Plan the file's checks for every model, in catalogue order."""
        from normtest.checking import ClaimFailure
        from normtest.errors import NormtestError

        state = _state(self.config)
        assert state is not None
        for label in state.labels:
            try:
                session = state.session(label)
                here = self.path.resolve()
                planned = [p for p in session.plan(state.selectors, state.exploratory)
                           if state.home(self.session, p) == here]
            except NormtestError as exc:
                raise self.CollectError(f"normtest: {exc}") from None
            for check in planned:
                name = check.id if len(state.labels) == 1 else f"{label}/{check.id}"
                item = ClaimItem.from_parent(self, name=name, label=label, planned=check)
                reason = state.expected(label, check)
                if reason is not None:
                    item.add_marker(pytest.mark.xfail(reason=reason, strict=False,
                                                      raises=ClaimFailure))
                yield item


class ClaimItem(pytest.Item):
    """One claim variant on one model; its outcome follows the verdict and the policy."""

    def __init__(self, *, label: str, planned: PlannedCheck, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.label = label
        self.planned = planned
        self.add_marker(getattr(pytest.mark, MARKER)(planned.id))

    def runtest(self) -> None:
        """Measure the claim's family (once per session), then pass, fail or skip."""
        from normtest.checking.outcomes import act, decide

        state = _state(self.config)
        assert state is not None
        result = state.session(self.label).result_for(self.planned)
        outcome = decide(result, model=self.label, inconclusive=state.inconclusive,
                         expected=state.expected(self.label, self.planned), strict=state.strict)
        _record(self, outcome)
        if state.junit_properties:
            self.user_properties.extend(_properties(result, self.label))
        try:
            act(outcome)
        except pytest.skip.Exception as exc:
            exc._use_item_location = True  # report the skip at the claim's declaration
            raise

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> Any:
        """The claim's estimate, interval, threshold and criterion, without a traceback."""
        from normtest.checking import ClaimError, ClaimFailure, UnexpectedPass

        if isinstance(excinfo.value, (ClaimFailure, ClaimError, UnexpectedPass)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the claim is declared, and what is checked."""
        return self.path, _declared_line(self.path, self.planned.claim), \
            f"normtest {self.label}: {self.planned.id}"


def _declared_line(path: Path, claim: str) -> int:
    """The 0-based line of ``id="claim"`` in a claim module (0 when not found)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return 0
    needle = f'id="{claim}"'
    return next((i for i, line in enumerate(lines) if needle in line), 0)


def _record(item: pytest.Item, outcome: ClaimOutcome) -> None:
    records = item.stash.setdefault(RECORDS, [])
    records.append({"model": outcome.model, "id": outcome.id,
                    "verdict": outcome.result.verdict.value, "status": outcome.status})


def _properties(result: Result, label: str) -> list[tuple[str, object]]:
    low, high = result.ci
    threshold = result.threshold
    return [
        ("normtest_model", label),
        ("normtest_claim", result.id),
        ("normtest_verdict", result.verdict.value),
        ("normtest_estimate", _text(result.estimate)),
        ("normtest_ci_low", _text(low)),
        ("normtest_ci_high", _text(high)),
        ("normtest_threshold", "" if threshold is None else
         (f"[{threshold[0]:g}, {threshold[1]:g}]" if isinstance(threshold, tuple)
          else f"{threshold:g}")),
        ("normtest_criterion", result.criterion.describe() if result.criterion else ""),
        ("normtest_expected", result.expected.value if result.expected else ""),
        ("normtest_role", result.role or ""),
    ]


def _text(value: float) -> str:
    return "" if value != value or value in (float("inf"), float("-inf")) else repr(float(value))


# -- reporting ------------------------------------------------------------------------------------
@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Carry the verdicts of a test into its report (also across pytest-xdist workers)."""
    report = yield
    if call.when == "call":
        records = item.stash.get(RECORDS, None)
        if records is None and "normtest.checking.api" in sys.modules:
            records = _parametrized_records(item)
        if records:
            report.normtest = records
    return report


def _parametrized_records(item: pytest.Item) -> list[dict[str, str]] | None:
    from normtest.checking import ClaimCheck, decide

    found = []
    for value in getattr(item, "funcargs", {}).values():
        if isinstance(value, ClaimCheck) and value.result is not None:
            outcome = decide(value.result, model=value.model.label,
                             inconclusive=value.inconclusive, expected=value.expected_failure,
                             strict=value.strict)
            found.append({"model": outcome.model, "id": outcome.id,
                          "verdict": outcome.result.verdict.value, "status": outcome.status})
    return found or None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the reports; refuse a session in which no claim ran."""
    state = _state(session.config)
    if state is None:
        return
    state.write_reports()
    if hasattr(session.config, "workerinput") or session.config.option.collectonly:
        return
    if (state.active or state.seen) and state.ran == 0 and exitstatus in (
            pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        state.refused = True
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int,
                            config: pytest.Config) -> None:
    """Claims per verdict and model; a session in which no claim ran is refused."""
    state = _state(config)
    if state is None or not (state.active or state.seen) or config.option.collectonly:
        return
    terminalreporter.section("normtest")
    labels = list(dict.fromkeys([*state.labels, *(label for label, _ in state.counts)]))
    for label in labels:
        n = {v: state.counts[(label, v)] for v in ("PASS", "FAIL", "INCONCLUSIVE", "SKIPPED",
                                                 "ERROR")}
        ran = n["PASS"] + n["FAIL"] + n["INCONCLUSIVE"]
        line = (f"{label}: {ran} claim checks ran: PASS {n['PASS']}, FAIL {n['FAIL']}, "
                f"INCONCLUSIVE {n['INCONCLUSIVE']}; SKIPPED {n['SKIPPED']}")
        if n["ERROR"]:
            line += f", ERROR {n['ERROR']}"
        terminalreporter.write_line(line)
    if state.statuses["xfailed"] or state.statuses["xpassed"]:
        terminalreporter.write_line(f"expected failures: {state.statuses['xfailed']} failed as "
                                    f"expected, {state.statuses['xpassed']} passed unexpectedly")
    if state.active:
        terminalreporter.write_line(f"inconclusive policy: {state.inconclusive}")
    for path in state.written:
        terminalreporter.write_line(f"normtest report written to {path}")
    if state.refused:
        terminalreporter.write_line(
            "normtest: no claim ran (every check was skipped, or none was collected), so this "
            "session fails: check --normtest-claims, the path (`pytest checks` or `--pyargs "
            "normtest.checks`), and that the model has what the claims need (`normtest show "
            "ID`)", red=True, bold=True)


# -- fixtures -----------------------------------------------------------------------------------
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests that use the model fixtures run once per ``--normtest-model`` (when several)."""
    if "normtest_model" not in metafunc.fixturenames:
        return
    state = _state(metafunc.config)
    if state is not None and len(state.labels) > 1:
        metafunc.parametrize("normtest_model", state.labels, indirect=True, scope="session")


@pytest.fixture(scope="session")
def normtest_model(request: pytest.FixtureRequest) -> str:
    """The label of the model under test (skips when no --normtest-model is given)."""
    state = _state(request.config)
    if state is None or not state.active:
        pytest.skip("no --normtest-model given")
    return str(getattr(request, "param", state.labels[0]))


@pytest.fixture(scope="session")
def normtest_adapter(request: pytest.FixtureRequest, normtest_model: str) -> Any:
    """The loaded model adapter (shared with the claim items)."""
    state = _state(request.config)
    assert state is not None
    return state.session(normtest_model).adapter


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
        from normtest.checking import decide

        result = self.session.result(selector)
        _record(self._node, decide(result, model=self.label,
                                   inconclusive=self._state.inconclusive))
        return result

    def check(self, selector: str) -> Result:
        """Assert a claim variant under the session's policy and expected failures."""
        from normtest.checking.outcomes import act, decide
        from normtest.checking.selection import expected_failure, model_expected_failures
        from normtest.checking.session import PlannedCheck

        result = self.session.result(selector)
        mapping = {**model_expected_failures(self.adapter),
                   **dict(self._state.gate.expected_failures)}
        planned = PlannedCheck(result.claim or "", "", dict(result.variant))
        outcome = decide(result, model=self.label, inconclusive=self._state.inconclusive,
                         expected=expected_failure(mapping, planned.claim, planned.variant),
                         strict=self._state.strict)
        _record(self._node, outcome)
        if outcome.status == "xfailed":
            pytest.xfail(outcome.message)
        act(outcome)
        return result

    def report(self) -> Report:
        """Everything measured so far, as a report."""
        return self.session.report()


@pytest.fixture
def normtest_session(request: pytest.FixtureRequest, normtest_model: str) -> BoundSession:
    """The model's audit session, shared across the test session (claims measured once)."""
    state = _state(request.config)
    assert state is not None
    return BoundSession(state, normtest_model, request.node)


@pytest.fixture
def normtest_result(request: pytest.FixtureRequest, normtest_session: BoundSession) -> Result:
    """The result of the claim variant named by the test's ``normtest_claim`` marker."""
    marker = request.node.get_closest_marker(MARKER)
    if marker is None or not marker.args:
        raise pytest.UsageError(
            f"{request.node.nodeid} uses normtest_result without "
            f"@pytest.mark.{MARKER}('claim[axis=value]')")
    return normtest_session.result(str(marker.args[0]))

