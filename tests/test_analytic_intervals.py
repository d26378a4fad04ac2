"""Analytic intervals (what the robustness analysis reads its many specifications with): a
Spearman ρ by Fisher's z with the Bonett–Wright standard error, and the difference of two
dependent Spearman ρ sharing x by the delta method. Calibrated at their thresholds by simulation
at the sizes an audit has, and close to the bootstrap they stand in for.

The simulated data are a Gaussian copula with known population Spearman ρ (tests/test_contrast.py
describes it): x ~ N(0, 1), z_v = r_v·x + √(1 − r_v²)·(√c·s + √(1 − c)·e_v), ρ_v =
(6/π)·arcsin(r_v/2). Run ``pytest -s`` to see the rates.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from normtest.stats.contrast import measure_correlation_contrast
from normtest.stats.correlation import measure_correlation
from normtest.verdict.result import Criterion, Result, Verdict

sys.path.insert(0, str(Path(__file__).parent))  # the shared rate checks: tests/verdict_rates.py
import verdict_rates as rates

RUNS = 500


def _r(rho: float) -> float:
    return 2 * math.sin(math.pi * rho / 6)


def _data(rng: np.random.Generator, n: int, rho_a: float, rho_b: float = 0.0,
          shared: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, s = rng.standard_normal(n), rng.standard_normal(n)

    def y(rho: float) -> np.ndarray:
        e = math.sqrt(shared) * s + math.sqrt(1 - shared) * rng.standard_normal(n)
        return _r(rho) * x + math.sqrt(1 - _r(rho) ** 2) * e

    return x, y(rho_a), y(rho_b)


def _verdicts(n: int, rho: float, threshold: float, seed: int) -> list[Verdict]:
    rng = np.random.default_rng(seed)
    criterion = Criterion.minimum_effect(threshold)
    out = []
    for _ in range(RUNS):
        x, y, _ = _data(rng, n, rho)
        out.append(Result.judged(measure_correlation(x, y, interval="analytic"), criterion)
                   .verdict)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("n", [200, 1400, 5000, 8300])
def test_spearman_analytic_interval_is_calibrated_at_the_threshold(n: int) -> None:
    """At a population ρ of exactly 0.3 (the word claims' threshold): false PASS and false FAIL
    each at most α beyond Monte-Carlo error."""
    verdicts = _verdicts(n, 0.3, 0.3, seed=n)
    rates.assert_at_most_alpha(verdicts, Verdict.PASS, f"Bonett–Wright ρ = 0.3, n = {n}")
    rates.assert_at_most_alpha(verdicts, Verdict.FAIL, f"Bonett–Wright ρ = 0.3, n = {n}")


def test_spearman_analytic_interval_has_power() -> None:
    verdicts = _verdicts(400, 0.45, 0.3, seed=1)
    rates.report("Bonett–Wright ρ = 0.45 against 0.3, n = 400", verdicts)
    assert rates.count(verdicts, Verdict.PASS) / RUNS > 0.85


def _contrast_verdicts(n: int, rho_a: float, rho_b: float, shared: float,
                       seed: int) -> list[Verdict]:
    rng = np.random.default_rng(seed)
    criterion = Criterion.minimum_effect(0.1)
    out = []
    for _ in range(RUNS):
        x, a, b = _data(rng, n, rho_a, rho_b, shared)
        measured = measure_correlation_contrast(x, a, b, interval="analytic")
        out.append(Result.judged(measured, criterion).verdict)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("n,rho_a,rho_b,shared", [(400, 0.5, 0.4, 0.8), (1400, 0.3, 0.2, 0.0),
                                                  (5000, 0.55, 0.45, 0.5),
                                                  (8300, 0.4, 0.3, 0.7)])
def test_the_analytic_contrast_is_calibrated_at_the_margin(n: int, rho_a: float, rho_b: float,
                                                           shared: float) -> None:
    """A true difference of exactly 0.1 (the contrast's margin), the two variants sharing noise
    or not: false PASS and false FAIL each at most α beyond Monte-Carlo error."""
    verdicts = _contrast_verdicts(n, rho_a, rho_b, shared, seed=n)
    label = f"analytic contrast {rho_a} − {rho_b}, shared {shared}, n = {n}"
    rates.assert_at_most_alpha(verdicts, Verdict.PASS, label)
    rates.assert_at_most_alpha(verdicts, Verdict.FAIL, label)


@pytest.mark.slow
def test_the_analytic_contrast_has_power() -> None:
    verdicts = _contrast_verdicts(400, 0.6, 0.3, 0.5, seed=2)
    rates.report("analytic contrast 0.6 − 0.3, n = 400", verdicts)
    assert rates.count(verdicts, Verdict.PASS) / RUNS > 0.9


#: The audit's word sample by token count (about 60% one token, then fewer with each more), the
#: strata of the beyond reading (a ρ within each token count, pooled by Fisher's z).
TOKEN_SHARES = (0.6, 0.25, 0.1, 0.05)


@pytest.mark.slow
@pytest.mark.parametrize("n", [1400, 8300])
def test_the_pooled_within_strata_interval_is_calibrated_at_the_threshold(
        n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The beyond reading of an exploratory word row, read analytically: a population ρ of
    exactly 0.3 within every token-count stratum, strata as the audit's word sample has them.
    False PASS and false FAIL each at most α beyond Monte-Carlo error. (The attenuation curve
    the measurement also reports, a simulation that reads no interval, is left out here.)"""
    import normtest.stats.baseline as baseline
    from normtest.stats.baseline import measure_within_strata

    monkeypatch.setattr(baseline, "attenuation", lambda x, codes: [])

    rng = np.random.default_rng(n + 7)
    criterion = Criterion.minimum_effect(0.3)
    counts = np.repeat(np.arange(1, len(TOKEN_SHARES) + 1),
                       [round(share * n) for share in TOKEN_SHARES])
    verdicts = []
    for _ in range(RUNS):
        x, y, _ = _data(rng, counts.size, 0.3)
        shifted = y + 0.8 * counts  # the baseline moves the norms between strata only
        measured = measure_within_strata(x, shifted, counts, interval="analytic")
        verdicts.append(Result.judged(measured, criterion).verdict)
    label = f"pooled within-strata ρ = 0.3, n = {counts.size}"
    rates.assert_at_most_alpha(verdicts, Verdict.PASS, label)
    rates.assert_at_most_alpha(verdicts, Verdict.FAIL, label)


def test_analytic_and_bootstrap_intervals_agree() -> None:
    """On one sample the two readings give nearly the same interval (a few thousandths)."""
    rng = np.random.default_rng(3)
    x, a, b = _data(rng, 2000, 0.5, 0.35, 0.6)
    units = np.array([f"w{i}" for i in range(x.size)])
    boot = measure_correlation(x, a, units=units, n_resamples=2000)
    analytic = measure_correlation(x, a, interval="analytic")
    assert analytic.estimate == pytest.approx(boot.estimate)
    assert np.allclose(analytic.ci, boot.ci, atol=0.01)
    assert analytic.draws is None and "Bonett–Wright" in analytic.method
    boot_d = measure_correlation_contrast(x, a, b, units=units, n_resamples=2000)
    analytic_d = measure_correlation_contrast(x, a, b, units=units, interval="analytic")
    assert analytic_d.estimate == pytest.approx(boot_d.estimate)
    assert np.allclose(analytic_d.ci, boot_d.ci, atol=0.01)
    # identical variants: no difference to measure, whichever reading
    same = measure_correlation_contrast(x, a, a, units=units, interval="analytic")
    assert same.sampling is None and "one measurement" in str(same.reason)


def test_clustered_correlations_keep_their_bootstrap() -> None:
    """No analytic interval holds for clustered rows: the bootstrap stays."""
    rng = np.random.default_rng(4)
    x, y, _ = _data(rng, 300, 0.4)
    clusters = np.repeat(np.arange(30), 10)
    measured = measure_correlation(x, y, clusters=clusters, n_resamples=200,
                                   interval="analytic")
    assert measured.sampling is not None and measured.sampling.kind == "bootstrap"


@pytest.mark.slow
def test_an_audit_reads_its_exploratory_rows_analytically_and_nothing_else(glove: Any) -> None:
    """The default audit: exploratory word rows read analytically (a Fisher z or the contrast's
    normal law), every confirmatory row bootstrapped, and the confirmatory rows — the scorecard,
    controls included — exactly what an all-bootstrap audit gives."""
    from normtest.audit.run import AuditSettings, run_audit

    settings = AuditSettings(words=600, resamples=300, robustness=False)
    mixed = run_audit(glove, suite="word", settings=settings)
    boot = run_audit(glove, suite="word", settings=AuditSettings(
        words=600, resamples=300, robustness=False, exploratory_intervals="bootstrap"))
    kinds = {(r.role, r.measurement.interval_kind) for r in mixed.results
             if r.measurement is not None and r.measurement.sampling is not None}
    assert ("exploratory", "analytic") in kinds and ("confirmatory", "bootstrap") in kinds
    assert ("confirmatory", "analytic") not in kinds
    assert {r.measurement.interval_kind for r in boot.results
            if r.measurement is not None and r.measurement.sampling is not None} == {"bootstrap"}

    def decided(report: Any) -> list[tuple[str, str, float, tuple[float, float]]]:
        return [(r.id, r.verdict.value, r.estimate, r.ci) for r in report.results
                if r.role == "confirmatory"]

    assert decided(mixed) == decided(boot)
    assert [(line.key, line.status) for line in mixed.scorecard] == [
        (line.key, line.status) for line in boot.scorecard]
    def controls(report: Any) -> list[dict[str, Any]]:  # all but the time they took
        return [{k: v for k, v in c.to_dict().items() if k != "seconds"}
                for c in report.controls]

    assert controls(mixed) == controls(boot)
