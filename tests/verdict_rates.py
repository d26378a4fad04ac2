"""Rates of verdicts over simulated data sets, and the checks calibration tests make of them.

Shared by tests/test_calibration.py and tests/test_paired.py (each puts this folder on
``sys.path``). A rate is "at most α" when an exact one-sided binomial test against α does not
reject at :data:`MC_LEVEL` (the Monte-Carlo error of a few hundred simulations), and
"demonstrably above α" when it does.
"""

from __future__ import annotations

from collections.abc import Sequence

from scipy import stats as sps

from normtest.verdict.result import Verdict

ALPHA = 0.05
MC_LEVEL = 0.01  # the exact binomial test's level for "beyond Monte-Carlo error"

Verdicts = tuple[Verdict, ...]


def count(verdicts: Sequence[Verdict], which: Verdict) -> int:
    return sum(v is which for v in verdicts)


def describe(verdicts: Sequence[Verdict]) -> str:
    n = len(verdicts)
    return ", ".join(f"{v.value} {count(verdicts, v)}/{n} = {count(verdicts, v) / n:.3f}"
                     for v in (Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE))


def report(label: str, verdicts: Sequence[Verdict]) -> None:
    print(f"\ncalibration: {label}: {describe(verdicts)}")


def binomial_p(verdicts: Sequence[Verdict], which: Verdict) -> float:
    """One-sided exact binomial p-value of the rate of ``which`` against α."""
    return float(sps.binomtest(count(verdicts, which), len(verdicts), ALPHA,
                               alternative="greater").pvalue)


def assert_at_most_alpha(verdicts: Sequence[Verdict], which: Verdict, label: str) -> None:
    """The rate of ``which`` must not exceed α beyond Monte-Carlo error (binomial p ≥ 0.01)."""
    k, n = count(verdicts, which), len(verdicts)
    p = binomial_p(verdicts, which)
    report(label, verdicts)
    assert p >= MC_LEVEL, (
        f"{label}: observed {which.value} rate {k / n:.3f} ({k}/{n}) exceeds α={ALPHA} beyond "
        f"Monte-Carlo error (one-sided exact binomial p={p:.2g} < {MC_LEVEL}); "
        f"all verdicts: {describe(verdicts)}"
    )


def assert_above_alpha(verdicts: Sequence[Verdict], which: Verdict, label: str) -> None:
    """The rate of ``which`` must demonstrably exceed α (binomial p < 0.01)."""
    k, n = count(verdicts, which), len(verdicts)
    p = binomial_p(verdicts, which)
    report(label, verdicts)
    assert p < MC_LEVEL, (
        f"{label}: observed {which.value} rate {k / n:.3f} ({k}/{n}) is not demonstrably above "
        f"α={ALPHA} (one-sided exact binomial p={p:.2g} ≥ {MC_LEVEL}); "
        f"all verdicts: {describe(verdicts)}"
    )


def assert_rate_at_least(verdicts: Sequence[Verdict], which: Verdict, floor: float,
                         label: str) -> None:
    k, n = count(verdicts, which), len(verdicts)
    report(label, verdicts)
    assert k / n >= floor, (
        f"{label}: observed {which.value} rate {k / n:.3f} ({k}/{n}) is below {floor}; "
        f"all verdicts: {describe(verdicts)}"
    )
