"""The pytest items normtest collects: a claim variant on a model (:class:`ClaimItem`, from a
claim file such as ``checks/word.py``), and a required scorecard line (:class:`ScorecardItem`,
under ``checks/axes.py``, where the lines are declared; ``--normtest-replicated KEY`` or
``replicated = [...]`` in the configuration)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from normtest.pytest.state import MARKER, record, state_of

if TYPE_CHECKING:
    from normtest.testing.session import AuditSession, PlannedCheck
    from normtest.verdict.result import Result


class ClaimFile(pytest.File):
    """A file of claims (``checks/word.py``, or a user's claim file): an item per model and
    claim variant declared there."""

    def collect(self) -> Any:
        """Plan the file's checks for every model, in catalogue order."""
        from normtest.errors import NormtestError
        from normtest.testing.outcomes import ClaimFailure

        state = state_of(self.config)
        assert state is not None
        for label in state.labels:
            try:
                session = state.session(label)
                here = self.path.resolve()
                planned = [p for p in session.plan(state.selectors, state.gate.exploratory)
                           if state.home(self.session, p) == here]
            except NormtestError as exc:
                raise self.CollectError(f"normtest: {exc}") from None
            for check in planned:
                name = node_name(check.claim, check.variant)
                name = name if len(state.labels) == 1 else f"{label}/{name}"
                item = ClaimItem.from_parent(self, name=name, label=label, planned=check)
                reason = state.expected(label, check)
                if reason is not None:
                    item.add_marker(pytest.mark.xfail(reason=reason, strict=False,
                                                      raises=ClaimFailure))
                yield item


def node_name(claim: str, variant: Mapping[str, str]) -> str:
    """A check's pytest name: the claim and its variant's values, as pytest names a
    parametrized test (``word.norm_ic[sqrt_n-last-raw]``): short, stable (the claim's axes in
    their declared order) and usable with ``-k`` (no ``=`` or ``,``)."""
    values = "-".join(variant.values())
    return f"{claim}[{values}]" if values else claim


class ClaimItem(pytest.Item):
    """One claim variant on one model; its outcome follows the verdict and the policy."""

    def __init__(self, *, label: str, planned: PlannedCheck, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.label = label
        self.planned = planned
        self.add_marker(getattr(pytest.mark, MARKER)(planned.id))

    def runtest(self) -> None:
        """Measure the claim's family (once per session), then pass, fail or skip."""
        from normtest.testing.outcomes import ClaimFailure, act, outcome_of, regression_message

        state = state_of(self.config)
        assert state is not None
        result = state.session(self.label).result_for(self.planned)
        outcome = outcome_of(result, model=self.label, inconclusive=state.gate.inconclusive,
                         expected=state.expected(self.label, self.planned),
                         strict=state.gate.strict)
        record(self, outcome)
        if state.junit_properties:
            self.user_properties.extend(_properties(result, self.label))
        try:
            act(outcome)
        except pytest.skip.Exception as exc:
            exc._use_item_location = True  # report the skip at the claim's declaration
            raise
        change = state.regression(self.label, result)
        if change is not None and change.regressed:
            raise ClaimFailure(regression_message(change, self.label,
                                                  str(state.option("normtest_baseline"))))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> Any:
        """The claim's estimate, interval, threshold and criterion, without a traceback."""
        from normtest.testing.outcomes import ClaimError, ClaimFailure, UnexpectedPass

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


def _properties(result: Result, label: str) -> list[tuple[str, object]]:
    from normtest.verdict.formatting import general, threshold

    low, high = result.ci
    return [
        ("normtest_model", label),
        ("normtest_claim", result.id),
        ("normtest_verdict", result.verdict.value),
        ("normtest_estimate", _text(result.estimate)),
        ("normtest_ci_low", _text(low)),
        ("normtest_ci_high", _text(high)),
        ("normtest_threshold", threshold(result, general, bare=True)),
        ("normtest_criterion", result.criterion.describe() if result.criterion else ""),
        ("normtest_expected", result.expected.value if result.expected else ""),
        ("normtest_role", result.role or ""),
    ]


def _text(value: float) -> str:
    return "" if value != value or value in (float("inf"), float("-inf")) else repr(float(value))


class ScorecardFile(pytest.File):
    """``checks/axes.py``: an item per model and required scorecard line."""

    def collect(self) -> Any:
        """Plan the claims each required line needs (measured with the session's other claims)
        and yield its item."""
        state = state_of(self.config)
        assert state is not None
        from normtest.claims.catalogue import claims_of_line, declared_lines

        # ``all``: one item per declared line (a line the model cannot be tested on is skipped)
        every = "all" in state.gate.replicated
        keys = list(dict.fromkeys(
            k for key in state.gate.replicated
            for k in ([h.key for h in declared_lines()] if key == "all" else [key])))
        for label in state.labels:
            session = state.session(label)
            for key in keys:
                session.expect(claims_of_line(key))
                name = f"scorecard[{key}]" if len(state.labels) == 1 \
                    else f"{label}/scorecard[{key}]"
                yield ScorecardItem.from_parent(self, name=name, label=label, key=key,
                                                optional=every)


class ScorecardItem(pytest.Item):
    """A required scorecard line on one model: passes when it is replicated."""

    def __init__(self, *, label: str, key: str, optional: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: ``optional``: asked for by ``all``, so a line the model cannot be tested on skips
        self.label, self.key, self.optional = label, key, optional

    def runtest(self) -> None:
        """Measure the line's claims (with the session's others), then judge the line."""
        from normtest.testing.outcomes import ClaimFailure
        state = state_of(self.config)
        assert state is not None
        session: AuditSession = state.session(self.label)
        from normtest.claims.catalogue import claims_of_line

        for claim in claims_of_line(self.key):
            session.family_results(claim)
        from normtest.scorecard.lines import build

        lines = build(session.results())
        wanted = [line for line in lines if self.key in ("all", line.key)
                  and (self.key != "all" or line.status != "not tested")]
        if not wanted:
            raise ClaimFailure(f"scorecard[{self.key}] on {self.label}: no such line; the lines "
                               f"are {', '.join(line.key for line in lines)} (or all)")
        if self.optional and all(line.status == "not tested" for line in wanted):
            pytest.skip(f"scorecard[{self.key}] on {self.label}: not tested ("
                        f"{wanted[0].reason})")
        failed = [line for line in wanted if line.status != "replicated"]
        if failed:
            raise ClaimFailure("\n".join(
                f"scorecard[{line.key}] on {self.label}: {line.status.upper()} — {line.title}\n"
                f"  reason: {line.reason}" for line in failed))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> Any:
        """The line's status and reason, without a traceback."""
        from normtest.testing.outcomes import ClaimFailure

        if isinstance(excinfo.value, ClaimFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        """Where the lines are declared, and which one this is."""
        return self.path, 0, f"normtest {self.label}: scorecard[{self.key}]"
