"""The pytest items of required scorecard lines: one per model and line, passing only when the
line is replicated (``--normtest-replicated KEY`` or ``replicated = [...]`` in the
configuration), collected under ``checks/axes.py``, where the lines are declared."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from normtest.catalogue import claims_of_line

if TYPE_CHECKING:
    from normtest.checking.session import AuditSession


class ScorecardFile(pytest.File):
    """``checks/axes.py``: an item per model and required scorecard line."""

    def collect(self) -> Any:
        """Plan the claims each required line needs (measured with the session's other claims)
        and yield its item."""
        from normtest.pytest_plugin import _state

        state = _state(self.config)
        assert state is not None
        for label in state.labels:
            session = state.session(label)
            for key in state.replicated:
                session.expect(claims_of_line(key))
                name = f"scorecard[{key}]" if len(state.labels) == 1 \
                    else f"{label}/scorecard[{key}]"
                yield ScorecardItem.from_parent(self, name=name, label=label, key=key)


class ScorecardItem(pytest.Item):
    """A required scorecard line on one model: passes when it is replicated."""

    def __init__(self, *, label: str, key: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.label, self.key = label, key

    def runtest(self) -> None:
        """Measure the line's claims (with the session's others), then judge the line."""
        from normtest.checking.outcomes import ClaimFailure
        from normtest.pytest_plugin import _state

        state = _state(self.config)
        assert state is not None
        session: AuditSession = state.session(self.label)
        for claim in claims_of_line(self.key):
            session.family_results(claim)
        from normtest.scorecard import build

        lines = build(session.results())
        wanted = [line for line in lines if self.key in ("all", line.key)
                  and (self.key != "all" or line.status != "not tested")]
        if not wanted:
            raise ClaimFailure(f"scorecard[{self.key}] on {self.label}: no such line; the lines "
                               f"are {', '.join(line.key for line in lines)} (or all)")
        failed = [line for line in wanted if line.status != "replicated"]
        if failed:
            raise ClaimFailure("\n".join(
                f"scorecard[{line.key}] on {self.label}: {line.status.upper()} — {line.title}\n"
                f"  reason: {line.reason}" for line in failed))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> Any:
        """The line's status and reason, without a traceback."""
        from normtest.checking.outcomes import ClaimFailure

        if isinstance(excinfo.value, ClaimFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        """Where the lines are declared, and which one this is."""
        return self.path, 0, f"normtest {self.label}: scorecard[{self.key}]"
