"""From a verdict to a test outcome under the policy: PASS passes, FAIL fails, INCONCLUSIVE
follows ``inconclusive="fail"|"skip"|"pass"``, expected failures and strict unexpected passes.
A confirmatory row the paper expects to FAIL is an expected failure, strictly: its FAIL is the
model behaving as the paper says (xfailed), its PASS a disagreement (failed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from normtest.errors import NormtestError
from normtest.verdict.formatting import number, threshold

if TYPE_CHECKING:
    from normtest.gate.regression import BaselineComparison
    from normtest.verdict.result import Result

Policy = Literal["fail", "skip", "pass"]
POLICIES: tuple[str, ...] = ("fail", "skip", "pass")
Status = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed"]
#: Verdicts that mean a claim was measured (a run where none was is refused).
MEASURED = ("PASS", "FAIL", "INCONCLUSIVE")


class ClaimFailure(AssertionError):
    """A claim's verdict failed the check (FAIL, or INCONCLUSIVE under the ``fail`` policy)."""


def _four(value: float) -> str:
    """Four significant digits (a failing check's message), an ASCII minus."""
    return number(value, digits=4, minus="-")


class ClaimError(AssertionError):
    """A claim could not be measured (verdict ERROR)."""


class UnexpectedPass(AssertionError):
    """A claim expected to fail passed, and the check is strict."""


def regression_message(change: BaselineComparison, model: str, baseline: str) -> str:
    """What a check that regressed against the baseline shows."""
    from normtest.render.labels import p_value

    low, high = change.interval
    return "\n".join([
        f"{change.id} on {model}: regressed against the baseline {baseline}",
        f"  baseline:  {_four(change.baseline.estimate)}   candidate: "
        f"{_four(change.candidate.estimate)}",
        f"  change in effect: {_four(change.difference)} [{_four(low)}, {_four(high)}] "
        f"(90%), below -{_four(change.margin)} at p (Holm) {p_value(change.p_adjusted)} "
        f"({change.method})"])


def failure_message(result: Result, model: str = "", note: str = "") -> str:
    """What a failing check shows: the estimate, the interval, the threshold and the criterion."""

    head = f"{result.id}" + (f" on {model}" if model else "") + f": {result.verdict.value}"
    lines = [head + (f" ({note})" if note else "")]
    if result.measurement is not None and result.measurement.sampling is None:
        m = result.measurement
        lines.append(f"  estimate:  not estimable ({m.statistic}, n={m.n})")
    elif result.measurement is not None:
        m = result.measurement
        low, high = result.ci
        alpha = result.criterion.alpha if result.criterion else 0.05
        lines += [
            f"  estimate:  {_four(result.estimate)} ({m.statistic}, n={m.n})",
            f"  interval:  [{_four(low)}, {_four(high)}] ({100 * (1 - 2 * alpha):g}% "
            f"two-sided; its ends are the one-sided {100 * (1 - alpha):g}% bounds)",
        ]
    if result.criterion is not None:
        adjusted = "" if result.p_adjusted is None else (
            ", Holm over the audit's confirmatory rows" if result.confirmatory
            else ", Benjamini–Hochberg over the audit's exploratory rows")
        lines += [f"  threshold: {threshold(result, lambda v: f'{v:g}')}",
                  f"  criterion: {result.criterion.describe()}{adjusted}"]
    lines.append(f"  reason:    {result.reason}")
    if result.role is not None:
        lines.append(f"  role:      {result.role}")
    if result.expected is not None:
        lines.append(f"  the paper expects {result.expected.value} here")
    return "\n".join(lines)


@dataclass(frozen=True)
class ClaimOutcome:
    """One check's result and what it means as a test outcome."""

    model: str
    result: Result
    status: Status
    message: str
    expected_failure: str | None = None
    unexpected_pass: bool = False

    @property
    def id(self) -> str:
        """The result id (``claim[axis=value,...]``)."""
        return self.result.id

    @property
    def failed(self) -> bool:
        """Whether this check fails a test run (failed or error; a strict unexpected pass)."""
        return self.status in ("failed", "error")


def outcome_of(result: Result, *, model: str = "", inconclusive: str = "fail",
           expected: str | None = None, strict: bool = False) -> ClaimOutcome:
    """Turn a verdict into a test outcome under the policy (see the module doc)."""
    if inconclusive not in POLICIES:
        raise NormtestError(f"inconclusive must be one of {POLICIES}, got {inconclusive!r}")
    v = result.verdict.value
    if v == "SKIPPED":
        return ClaimOutcome(model, result, "skipped", f"{result.id}: {result.reason}", expected)
    if v == "ERROR":
        return ClaimOutcome(model, result, "error", failure_message(result, model), expected)
    if expected is None and result.confirmatory and result.expected is not None \
            and result.expected.value == "FAIL":
        # a row the paper expects to FAIL (the plain mean, a CLS state's growth): its FAIL is
        # the model behaving as the paper says, and its PASS the disagreement
        expected, strict = "the paper expects FAIL here", True
    failing = v == "FAIL" or (v == "INCONCLUSIVE" and inconclusive != "skip")
    if v == "INCONCLUSIVE" and inconclusive == "skip":
        return ClaimOutcome(model, result, "skipped",
                            f"{result.id}: INCONCLUSIVE (policy skip): {result.reason}", expected)
    if v == "INCONCLUSIVE" and inconclusive == "pass" and expected is None:
        return ClaimOutcome(model, result, "passed",
                            f"{result.id}: INCONCLUSIVE (policy pass): {result.reason}")
    if expected is not None:
        if failing:
            return ClaimOutcome(model, result, "xfailed",
                                failure_message(result, model, f"expected: {expected}"), expected)
        note = f"expected to fail ({expected}) but passed"
        if strict:
            return ClaimOutcome(model, result, "failed", failure_message(result, model, note),
                                expected, unexpected_pass=True)
        return ClaimOutcome(model, result, "xpassed", failure_message(result, model, note),
                            expected)
    if failing:
        note = "INCONCLUSIVE fails under the policy 'fail'" if v == "INCONCLUSIVE" else ""
        return ClaimOutcome(model, result, "failed", failure_message(result, model, note))
    return ClaimOutcome(model, result, "passed", f"{result.id}: PASS")


def act(outcome: ClaimOutcome) -> None:
    """Raise what pytest needs for an outcome (a failure, an error, a skip)."""
    if outcome.status in ("passed", "xpassed"):
        return
    if outcome.status == "skipped":
        import pytest

        pytest.skip(outcome.message)
    if outcome.status == "xfailed":  # expected: by the user, the model, or the paper
        import pytest

        pytest.xfail(outcome.message)
    if outcome.unexpected_pass:
        raise UnexpectedPass(outcome.message)
    if outcome.status == "error":
        raise ClaimError(outcome.message)
    raise ClaimFailure(outcome.message)

