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

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from normtest.base.settings import add_cli_options
from normtest.pytest.items import ClaimFile, ScorecardFile
from normtest.pytest.state import MARKER, RECORDS, STATE, BoundSession, NormtestState, state_of

if TYPE_CHECKING:
    from normtest.verdict.result import Result


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
    group.addoption("--normtest-baseline", default=None, metavar="REPORT",
                    help="the gate's regression mode: a baseline report.json (or .json.gz); a "
                         "claim item whose effect dropped by more than the margin against it "
                         "fails (the sample drawn as the baseline's, as normtest gate does)")
    group.addoption("--normtest-junit-properties", action="store_true", default=None,
                    help="add each claim's estimate, interval, threshold and verdict to the "
                         "JUnit XML (--junitxml) as properties")
    # the audit and loading settings, one name each (normtest.base.settings): --normtest-words …
    add_cli_options(group, pytest=True)
    parser.addini("normtest_junit_properties", type="bool", default=False,
                  help="add per-claim properties to the JUnit XML (normtest)")


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker and the session state (no import of the engine while inactive).

    When active, the configuration (``[tool.normtest]`` or ``--normtest-config``) and the
    settings are read and validated here, at start-up: a bad value is one ``pytest.UsageError``
    with the message ``normtest audit`` gives, before anything is collected."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}(id): a test of a normtest claim or variant (the normtest_result fixture "
        "reads it; collected claim items carry it)",
    )
    state = NormtestState(config)
    if state.active:
        from normtest.errors import NormtestError

        try:
            state.values  # noqa: B018  (the configuration and the settings, validated)
        except NormtestError as exc:
            raise pytest.UsageError(f"normtest: {exc}") from None
    config.stash[STATE] = state
    config.pluginmanager.register(state, "normtest-state")


# -- collection ------------------------------------------------------------------------------------
@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """Validate the selection and load the models before collecting (errors are usage errors)."""
    state = state_of(session.config)
    if state is None or not state.active or session.config.pluginmanager.has_plugin("dsession"):
        return  # inactive, or the pytest-xdist controller (its workers collect)
    from normtest.audit.selection import rows_selector
    from normtest.claims.catalogue import get
    from normtest.errors import NormtestError

    try:
        from normtest.claims.loading import load_checks_of

        load_checks_of(state.values)  # the user's claims join the catalogue before planning
        state.selectors  # noqa: B018  (parsed and validated here)
        for key in state.gate.expected_failures:
            rows_selector(key, "expected_failures")
        for claim in state.gate.thresholds:
            get(claim)
        for label in state.labels:
            state.session(label)
    except NormtestError as exc:
        raise pytest.UsageError(f"normtest: {exc}") from None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Claim modules of ``normtest.checks`` become files of claim items (when enabled)."""
    state = state_of(parent.config)
    if state is None or not state.active or file_path.suffix != ".py":
        return None
    if file_path.stem == "axes" and file_path.parent.resolve() == state.catalogue \
            and state.gate.replicated:
        return ScorecardFile.from_parent(parent, path=file_path)
    if not state.is_claim_file(file_path):
        return None
    return ClaimFile.from_parent(parent, path=file_path)


# -- reporting ------------------------------------------------------------------------------------
@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Carry the verdicts of a test into its report (also across pytest-xdist workers)."""
    report = yield
    if call.when == "call":
        records = item.stash.get(RECORDS, None)
        if records is None and "normtest.testing.api" in sys.modules:
            records = _parametrized_records(item)
        if records:
            report.normtest = records
    return report


def _parametrized_records(item: pytest.Item) -> list[dict[str, str]] | None:
    from normtest.testing.api import ClaimCheck
    from normtest.testing.outcomes import outcome_of

    found = []
    for value in getattr(item, "funcargs", {}).values():
        if isinstance(value, ClaimCheck) and value.result is not None:
            outcome = outcome_of(value.result, model=value.model.label,
                             inconclusive=value.inconclusive, expected=value.expected_failure,
                             strict=value.strict)
            found.append({"model": outcome.model, "id": outcome.id,
                          "verdict": outcome.result.verdict.value, "status": outcome.status})
    return found or None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the reports; refuse a session in which no claim ran."""
    state = state_of(session.config)
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
    state = state_of(config)
    if state is None or not (state.active or state.seen) or config.option.collectonly \
            or exitstatus == pytest.ExitCode.USAGE_ERROR:  # pytest shows the usage error alone
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
        terminalreporter.write_line(f"inconclusive policy: {state.gate.inconclusive}")
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
    state = state_of(metafunc.config)
    if state is not None and len(state.labels) > 1:
        metafunc.parametrize("normtest_model", state.labels, indirect=True, scope="session")


@pytest.fixture(scope="session")
def normtest_model(request: pytest.FixtureRequest) -> str:
    """The label of the model under test (skips when no --normtest-model is given)."""
    state = state_of(request.config)
    if state is None or not state.active:
        pytest.skip("no --normtest-model given")
    return str(getattr(request, "param", state.labels[0]))


@pytest.fixture(scope="session")
def normtest_adapter(request: pytest.FixtureRequest, normtest_model: str) -> Any:
    """The loaded model adapter (shared with the claim items)."""
    state = state_of(request.config)
    assert state is not None
    return state.session(normtest_model).adapter


@pytest.fixture
def normtest_session(request: pytest.FixtureRequest, normtest_model: str) -> BoundSession:
    """The model's audit session, shared across the test session (claims measured once)."""
    state = state_of(request.config)
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

