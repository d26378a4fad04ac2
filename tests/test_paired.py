"""Paired differences between two models (normtest.stats.paired) and the comparison built on them.

- unit behaviour: the distance from linear growth, exact noise-free curves, invariances, the
  pairing of the bootstrap draws, not-estimable inputs and input errors;
- both ways: each comparative criterion PASSes on data where the claim holds and FAILs where
  it does not;
- calibration by simulation, in the style of tests/test_calibration.py: a null exactly at the
  criterion's threshold (false-PASS and false-FAIL rates at most α beyond Monte-Carlo error, by
  a one-sided exact binomial test at level 0.01) and the power well above it;
- end to end: ``compare_models`` on the synthetic sentence encoders of tests/encode_models.py.

Observed rates are printed: run ``pytest -s tests/test_paired.py`` to see them.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from normtest.audit.compare import Comparison, compare_models, compare_reports
from normtest.errors import NormtestError
from normtest.stats.paired import (
    RATIO_CLIP,
    linearity_distance,
    measure_correlation_difference,
    measure_linearity_gain,
)
from normtest.verdict.result import Criterion, Measurement, Result, Verdict

sys.path.insert(0, str(Path(__file__).parent))  # the shared rate checks: tests/verdict_rates.py
import verdict_rates as rates
from verdict_rates import ALPHA, Verdicts

HERE = Path(__file__).parent
POWER_FLOOR = 0.9
B = 300  # bootstrap resamples in the simulations
LOG_CLIP = math.log(RATIO_CLIP)  # the farthest distance from linear growth, log 16
#: the thresholds of the comparative claims (checks/comparisons.py)
GAIN_CRITERION = Criterion.minimum_effect(0.2).with_alpha(ALPHA)
RHO_CRITERION = Criterion.minimum_effect(0.1).with_alpha(ALPHA)



# -- simulation helpers (as in tests/test_calibration.py) -----------------------------------------












def _simulate(
    stream: int, count: int, one: Callable[[np.random.Generator, int], Measurement],
    criterion: Criterion,
) -> Verdicts:
    """Verdicts over ``count`` data sets, each with its own generator and bootstrap seed."""
    return tuple(Result.judged(one(np.random.default_rng([stream, i]), i), criterion).verdict
                 for i in range(count))


# -- growth curves of two models on the same documents --------------------------------------------
LENGTHS = np.arange(16.0, 129.0, 16.0)  # 16, 32, …, 128
MIDPOINT = (LENGTHS.min() + LENGTHS.max()) / 2  # 72: where the library splits early and late
NOISE = 8.0  # per-prefix noise sd; the curves rise by about 100 over the grid


def _kinked(lengths: np.ndarray, k: float) -> np.ndarray:
    """Slope 1 up to the midpoint, slope k after it: late/early slope ratio exactly k."""
    return np.where(lengths <= MIDPOINT, lengths, MIDPOINT + k * (lengths - MIDPOINT))


def _growth(
    rng: np.random.Generator, documents: int, k_first: float, k_second: float,
    noise: float = NOISE,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(lengths, s_first, s_second, document): each model with its own random level per
    document (sd 20) and its own row noise, on the same documents and lengths."""
    doc = np.repeat(np.arange(documents), LENGTHS.size)
    lengths = np.tile(LENGTHS, documents)
    values = []
    for k in (k_first, k_second):
        level = rng.normal(100.0, 20.0, documents)[doc]
        values.append(level + _kinked(lengths, k) + rng.normal(0.0, noise, lengths.size))
    return lengths, values[0], values[1], doc


def _gain(data: tuple[np.ndarray, ...], seed: int = 0, n_resamples: int = B,
          **kwargs: float) -> Measurement:
    return measure_linearity_gain(*data, n_resamples=n_resamples, seed=seed, **kwargs)


def _distance(ratio: float) -> float:
    """linearity_distance of one ratio."""
    return float(linearity_distance(np.array(ratio)))


def _replicates(m: Measurement) -> np.ndarray:
    assert m.sampling is not None, m.reason
    return m.sampling.replicates


# -- the distance from linear growth --------------------------------------------------------------
def test_linearity_distance_of_a_straight_line_is_zero() -> None:
    assert linearity_distance(np.array([1.0]))[0] == 0.0
    assert _distance(1.0) == 0.0


@pytest.mark.parametrize("ratio", [0.0, -0.5, -3.0, math.nan, -math.inf])
def test_undefined_or_non_positive_ratios_are_the_farthest(ratio: float) -> None:
    assert _distance(ratio) == pytest.approx(LOG_CLIP, abs=1e-12)


def test_linearity_distance_is_clipped_and_symmetric_in_log_terms() -> None:
    r = np.array([0.5, 0.8, 1.25, 3.0, 10.0, 15.9, 16.0, 40.0, 1e9])
    assert np.allclose(linearity_distance(r), linearity_distance(1 / r), atol=1e-12)
    expected = np.abs(np.log(np.clip(r, 1 / 16, 16)))
    assert np.allclose(linearity_distance(r), expected, atol=1e-12)
    assert _distance(2.0) == pytest.approx(math.log(2), abs=1e-12)
    assert np.max(linearity_distance(r)) == pytest.approx(LOG_CLIP, abs=1e-12)
    assert linearity_distance(np.ones((3, 2))).shape == (3, 2)  # elementwise, any shape


# -- exact curves -----------------------------------------------------------------------------
@pytest.mark.parametrize(("k_first", "k_second"), [
    (1.0, 0.25), (1.0, 2.0), (0.5, 1.0), (3.0, 0.1), (1.0, 0.0), (1.0, -0.5), (1.0, 40.0),
])
def test_noise_free_kinked_curves_give_their_slope_ratios(k_first: float,
                                                          k_second: float) -> None:
    """Slope 1 then k (kink at the grid's midpoint): r = k exactly, whatever each document's
    level; the gain is |log k_second| − |log k_first| (clipped at log 16)."""
    data = _growth(np.random.default_rng(1), 12, k_first, k_second, noise=0.0)
    m = _gain(data, n_resamples=100)
    assert m.statistic == "linearity_gain"
    expected = (_distance(k_second) - _distance(k_first))
    assert m.estimate == pytest.approx(expected, abs=1e-9)
    first, second = m.components["first_ratio"], m.components["second_ratio"]
    assert first.statistic == second.statistic == "late_early_ratio"
    assert first.estimate == pytest.approx(k_first, abs=1e-9)
    assert second.estimate == pytest.approx(k_second, abs=1e-9)


def test_gain_of_a_straight_line_over_a_quarter_slope_is_log_4() -> None:
    data = _growth(np.random.default_rng(2), 20, 1.0, 0.25, noise=0.0)
    m = _gain(data)
    assert m.estimate == pytest.approx(math.log(4), abs=1e-9)
    # noise-free: every resample of documents gives the same curves, so the same gain
    assert np.allclose(_replicates(m), math.log(4), atol=1e-9)


# -- invariances and the pairing ------------------------------------------------------------------
@pytest.fixture(scope="module")
def noisy() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return _growth(np.random.default_rng(3), 30, 1.0, 0.5)


def test_rescaling_a_model_changes_nothing(noisy: tuple[np.ndarray, ...]) -> None:
    lengths, first, second, doc = noisy
    base = _gain(noisy, seed=4)
    scaled = _gain((lengths, 1e-3 * first, 250.0 * second, doc), seed=4)
    assert scaled.estimate == pytest.approx(base.estimate, abs=1e-9)
    assert np.allclose(_replicates(scaled), _replicates(base), atol=1e-9)


def test_a_document_level_shift_changes_nothing(noisy: tuple[np.ndarray, ...]) -> None:
    """Every slope is within-document: adding a constant per document to a model is invisible."""
    lengths, first, second, doc = noisy
    shift = np.random.default_rng(5).normal(0.0, 1000.0, doc.max() + 1)[doc]
    base = _gain(noisy, seed=6)
    shifted = _gain((lengths, first + shift, second - shift, doc), seed=6)
    assert shifted.estimate == pytest.approx(base.estimate, abs=1e-9)
    assert np.allclose(_replicates(shifted), _replicates(base), atol=1e-9)


def test_row_order_and_document_labels_change_nothing(noisy: tuple[np.ndarray, ...]) -> None:
    lengths, first, second, doc = noisy
    order = np.random.default_rng(7).permutation(lengths.size)
    labels = np.array([f"doc-{d:03d}" for d in doc])  # sorts as the integer codes do
    base = _gain(noisy, seed=8)
    shuffled = _gain((lengths[order], first[order], second[order], labels[order]), seed=8)
    assert shuffled.estimate == pytest.approx(base.estimate, abs=1e-12)
    assert np.allclose(_replicates(shuffled), _replicates(base), atol=1e-12)


def test_swapping_the_models_negates_the_gain(noisy: tuple[np.ndarray, ...]) -> None:
    lengths, first, second, doc = noisy
    forward = _gain(noisy, seed=9)
    backward = _gain((lengths, second, first, doc), seed=9)
    assert backward.estimate == -forward.estimate
    assert np.array_equal(_replicates(backward), -_replicates(forward))
    assert (backward.components["first_ratio"].estimate
            == forward.components["second_ratio"].estimate)
    assert np.array_equal(_replicates(backward.components["second_ratio"]),
                          _replicates(forward.components["first_ratio"]))


def test_both_models_share_every_bootstrap_draw(noisy: tuple[np.ndarray, ...]) -> None:
    """Replicate b of the gain is D(second ratio in draw b) − D(first ratio in draw b): the
    components and the headline are computed on the same resamples of documents (each read
    with the few-units widening about its own estimate, undone here to compare the draws)."""
    from normtest.verdict.sampling import few_units_widening

    m = _gain(noisy, seed=10)
    factor = few_units_widening(m.settings["documents"])

    def drawn(measured: Measurement) -> np.ndarray:
        return measured.estimate + (_replicates(measured) - measured.estimate) / factor

    first, second = drawn(m.components["first_ratio"]), drawn(m.components["second_ratio"])
    assert first.size == second.size == _replicates(m).size == B
    expected = linearity_distance(second) - linearity_distance(first)
    assert np.allclose(drawn(m), expected, atol=1e-12)


def test_seeded_and_recorded(noisy: tuple[np.ndarray, ...]) -> None:
    a, b = _gain(noisy, seed=11), _gain(noisy, seed=11)
    other = _gain(noisy, seed=12)
    assert np.array_equal(_replicates(a), _replicates(b))
    assert not np.array_equal(_replicates(a), _replicates(other))
    assert a.estimate == other.estimate  # the estimate does not depend on the seed
    assert a.seed == 11 and a.n == noisy[0].size
    assert a.settings["documents"] == 30 and a.settings["n_resamples"] == B
    assert a.confidence == pytest.approx(0.90)
    assert _gain(noisy, alpha=0.1).confidence == pytest.approx(0.80)


def test_pairing_cancels_what_the_documents_share() -> None:
    """Each document bends both models alike (its own late slope, shared): the paired draws
    cancel that variation; pairing the first model's draw b with the second's draw b of
    *another* seed (an unpaired bootstrap) would not."""
    rng = np.random.default_rng(13)
    documents = 40
    doc = np.repeat(np.arange(documents), LENGTHS.size)
    lengths = np.tile(LENGTHS, documents)
    bend = rng.uniform(0.2, 1.4, documents)[doc]  # the document's own late slope

    def curve(scale: float) -> np.ndarray:
        late = MIDPOINT + scale * bend * (lengths - MIDPOINT)
        return np.where(lengths <= MIDPOINT, lengths, late) + rng.normal(0, 2.0, lengths.size)

    first, second = curve(1.0), curve(0.5)  # ratios about 0.8 and 0.4
    paired = _gain((lengths, first, second, doc), seed=14)
    other = _gain((lengths, first, second, doc), seed=15)
    unpaired = (linearity_distance(_replicates(other.components["second_ratio"]))
                - linearity_distance(_replicates(paired.components["first_ratio"])))
    print(f"\npaired sd {np.std(_replicates(paired)):.4f}, unpaired sd {np.std(unpaired):.4f}")
    assert np.std(_replicates(paired)) < 0.6 * np.std(unpaired)


# -- what cannot be estimated, and what is an error -----------------------------------------------
def _few_documents() -> tuple[np.ndarray, ...]:
    return _growth(np.random.default_rng(16), 5, 1.0, 0.5)  # 40 rows, 5 documents


def _few_points() -> tuple[np.ndarray, ...]:
    return tuple(a[:9] for a in _growth(np.random.default_rng(17), 12, 1.0, 0.5))


def _one_length() -> tuple[np.ndarray, ...]:
    lengths, first, second, doc = _growth(np.random.default_rng(18), 12, 1.0, 0.5)
    return np.full_like(lengths, 64.0), first, second, doc


def _one_length_per_document() -> tuple[np.ndarray, ...]:
    lengths, first, second, _ = _growth(np.random.default_rng(19), 12, 1.0, 0.5)
    return lengths, first, second, np.arange(lengths.size)


@pytest.mark.parametrize(("make", "words"), [
    (_few_documents, "only 5 documents"),
    (_few_points, "only 9 points"),
    (_one_length, "12 more had a single length"),
    (_one_length_per_document, "had a single length"),
])
def test_linearity_gain_not_estimable(make: Callable[[], tuple[np.ndarray, ...]],
                                      words: str) -> None:
    m = _gain(make(), seed=20)
    assert math.isnan(m.estimate) and m.sampling is None
    assert m.statistic == "linearity_gain" and m.reason and words in m.reason, m.reason
    assert m.seed == 20
    result = Result.judged(m, GAIN_CRITERION)
    assert result.verdict is Verdict.INCONCLUSIVE and words in result.reason


def test_a_constant_model_counts_as_the_farthest_from_linear(
        noisy: tuple[np.ndarray, ...]) -> None:
    """A constant s(L) has no early slope, so r is undefined: by design (the module's doc) it
    counts as the farthest from linear growth (D = log 16), not as not estimable; its own ratio
    component is not estimable and says so."""
    lengths, first, _, doc = noisy
    m = _gain((lengths, first, np.full_like(first, 3.0), doc), seed=21)
    ratio = m.components["first_ratio"].estimate
    assert m.estimate == pytest.approx(LOG_CLIP - _distance(ratio), abs=1e-9)
    flat = m.components["second_ratio"]
    assert math.isnan(flat.estimate) and flat.sampling is None and flat.reason
    # both constant: both as far as the statistic measures, so it says it cannot tell
    both = _gain((lengths, np.full_like(first, 3.0), np.full_like(first, 5.0), doc))
    assert math.isnan(both.estimate) and "neither model" in (both.reason or "")
    assert Result.judged(both, GAIN_CRITERION).verdict is Verdict.INCONCLUSIVE


@pytest.mark.parametrize("cut", ["lengths", "first", "second", "groups"])
def test_linearity_gain_mismatched_lengths_raise(noisy: tuple[np.ndarray, ...],
                                                 cut: str) -> None:
    data: dict[str, Any] = dict(zip(("lengths", "first", "second", "groups"), noisy,
                                    strict=True))
    data[cut] = data[cut][:-1]
    with pytest.raises(NormtestError):
        measure_linearity_gain(**data, n_resamples=B)


def test_linearity_gain_bad_inputs_raise(noisy: tuple[np.ndarray, ...]) -> None:
    lengths, first, second, doc = noisy
    broken = second.copy()
    broken[3] = np.nan
    with pytest.raises(NormtestError, match="non-finite"):
        measure_linearity_gain(lengths, first, broken, doc, n_resamples=B)
    with pytest.raises(NormtestError, match="n_resamples"):
        measure_linearity_gain(lengths, first, second, doc, n_resamples=10)


# -- correlation differences: unit behaviour ------------------------------------------------------
def _pearson_for_spearman(rho: float) -> float:
    """The bivariate-normal Pearson r whose population Spearman ρ is ``rho``."""
    return 2 * math.sin(math.pi * rho / 6)


def _correlated(rng: np.random.Generator, x: np.ndarray, rho: float,
                noise: np.ndarray | None = None) -> np.ndarray:
    """A variable with population Spearman ρ = ``rho`` with the standard normal ``x``."""
    r = _pearson_for_spearman(rho)
    e = rng.standard_normal(x.size) if noise is None else noise
    return r * x + math.sqrt(1 - r * r) * e


@pytest.fixture(scope="module")
def items() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(information, first, second, second's own information, cluster) of 120 items."""
    rng = np.random.default_rng(30)
    x = rng.standard_normal(120)
    x2 = x + 0.5 * rng.standard_normal(120)
    return (x, _correlated(rng, x, 0.6), _correlated(rng, x, 0.3), x2,
            np.repeat(np.arange(30), 4))


def test_rho_difference_is_the_difference_of_spearman_correlations(
        items: tuple[np.ndarray, ...]) -> None:
    x, a, b, x2, clusters = items

    def rho(u: np.ndarray, v: np.ndarray) -> float:
        return float(sps.spearmanr(u, v).statistic)

    m = measure_correlation_difference(x, a, b, n_resamples=B)
    assert m.statistic == "rho_difference"
    assert m.estimate == pytest.approx(rho(x, a) - rho(x, b), abs=1e-12)
    own = measure_correlation_difference(x, a, b, clusters, second_information=x2,
                                         n_resamples=B)
    assert own.estimate == pytest.approx(rho(x, a) - rho(x2, b), abs=1e-12)
    assert own.settings["clusters"] == 30 and "30 clusters" in own.method
    assert m.settings["clusters"] is None and "rows" in m.method
    assert m.n == own.n == 120


def test_rho_difference_invariances(items: tuple[np.ndarray, ...]) -> None:
    """Monotone transforms of any variable change nothing; swapping the models negates."""
    x, a, b, _, clusters = items
    base = measure_correlation_difference(x, a, b, clusters, n_resamples=B, seed=31)
    moved = measure_correlation_difference(np.exp(x), 7.0 * a + 3.0, b ** 3, clusters,
                                           n_resamples=B, seed=31)
    assert moved.estimate == pytest.approx(base.estimate, abs=1e-12)
    assert np.allclose(_replicates(moved), _replicates(base), atol=1e-12)
    swapped = measure_correlation_difference(x, b, a, clusters, n_resamples=B, seed=31)
    assert swapped.estimate == pytest.approx(-base.estimate, abs=1e-12)
    assert np.allclose(_replicates(swapped), -_replicates(base), atol=1e-12)


def test_rho_difference_draws_are_paired(items: tuple[np.ndarray, ...]) -> None:
    """The second model a monotone transform of the first: the same ranks in every draw, so
    every paired replicate is exactly 0 (two independent draws would not cancel)."""
    x, a, _, _, clusters = items
    m = measure_correlation_difference(x, a, np.exp(a), clusters, n_resamples=B, seed=32)
    assert m.estimate == 0.0
    assert np.all(_replicates(m) == 0.0)


def test_rho_difference_cluster_bootstrap_draws_whole_clusters(
        items: tuple[np.ndarray, ...]) -> None:
    """Rows of one cluster that are copies of each other add no information: the cluster
    bootstrap's interval is the same whether each cluster holds one row or four copies."""
    x, a, b, _, _ = items
    rows = np.repeat(np.arange(30), 4)
    one = measure_correlation_difference(x[:30], a[:30], b[:30], np.arange(30),
                                         n_resamples=B, seed=33)
    copies = measure_correlation_difference(x[:30][rows], a[:30][rows], b[:30][rows], rows,
                                            n_resamples=B, seed=33)
    assert copies.estimate == pytest.approx(one.estimate, abs=1e-12)
    lo1, hi1 = one.interval(0.9)
    lo4, hi4 = copies.interval(0.9)
    assert (lo4, hi4) == pytest.approx((lo1, hi1), abs=1e-9)
    # resampling the 120 rows instead pretends to four times the information
    naive = measure_correlation_difference(x[:30][rows], a[:30][rows], b[:30][rows],
                                           n_resamples=B, seed=33)
    lo, hi = naive.interval(0.9)
    assert hi - lo < 0.7 * (hi1 - lo1)


@pytest.mark.parametrize("which", ["information", "first", "second", "second_information"])
def test_rho_difference_constant_variable_not_estimable(items: tuple[np.ndarray, ...],
                                                        which: str) -> None:
    x, a, b, x2, _ = items
    data: dict[str, Any] = {"information": x, "first": a, "second": b,
                            "second_information": x2}
    data[which] = np.full_like(x, 2.0)
    m = measure_correlation_difference(**data, n_resamples=B, seed=34)
    assert math.isnan(m.estimate) and m.sampling is None
    assert m.reason and "constant" in m.reason and m.seed == 34
    assert Result.judged(m, RHO_CRITERION).verdict is Verdict.INCONCLUSIVE


def test_rho_difference_too_little_data_not_estimable(items: tuple[np.ndarray, ...]) -> None:
    x, a, b, _, _ = items
    few = measure_correlation_difference(x[:9], a[:9], b[:9], n_resamples=B)
    assert math.isnan(few.estimate) and few.reason and "only 9 paired items" in few.reason
    empty = measure_correlation_difference([], [], [], n_resamples=B)
    assert math.isnan(empty.estimate) and empty.reason
    clusters = np.repeat(np.arange(6), 20)  # 120 rows, 6 clusters
    grouped = measure_correlation_difference(x, a, b, clusters, n_resamples=B)
    assert math.isnan(grouped.estimate) and grouped.reason and "6 clusters" in grouped.reason
    assert Result.judged(grouped, RHO_CRITERION).verdict is Verdict.INCONCLUSIVE


@pytest.mark.parametrize("cut", ["information", "first", "second", "clusters",
                                 "second_information"])
def test_rho_difference_mismatched_lengths_raise(items: tuple[np.ndarray, ...],
                                                 cut: str) -> None:
    x, a, b, x2, clusters = items
    data: dict[str, Any] = {"information": x, "first": a, "second": b, "clusters": clusters,
                            "second_information": x2}
    data[cut] = data[cut][:-1]
    with pytest.raises(NormtestError):
        measure_correlation_difference(**data, n_resamples=B)


# -- both ways: PASS where the claim holds, FAIL where it does not --------------------------------
def test_a_clearly_more_linear_first_model_passes() -> None:
    data = _growth(np.random.default_rng(40), 30, 1.0, 0.3)
    result = Result.judged(_gain(data, seed=40), GAIN_CRITERION)
    assert result.verdict is Verdict.PASS, result.reason


def test_two_equally_linear_models_fail() -> None:
    """Both linear, independent noise, 60 documents: the gain is 0, below the minimum 0.2."""
    data = _growth(np.random.default_rng(41), 60, 1.0, 1.0)
    result = Result.judged(_gain(data, seed=41), GAIN_CRITERION)
    assert result.verdict is Verdict.FAIL, result.reason
    # and the other way round too
    lengths, first, second, doc = data
    back = Result.judged(_gain((lengths, second, first, doc), seed=41), GAIN_CRITERION)
    assert back.verdict is Verdict.FAIL, back.reason


def test_a_less_linear_first_model_fails() -> None:
    data = _growth(np.random.default_rng(42), 30, 0.3, 1.0)
    result = Result.judged(_gain(data, seed=42), GAIN_CRITERION)
    assert result.estimate < 0
    assert result.verdict is Verdict.FAIL, result.reason


def _clustered(rng: np.random.Generator, clusters: int, per: int,
               icc: float = 0.5) -> np.ndarray:
    """A standard normal variable whose rows share a cluster effect (share ``icc``)."""
    codes = np.repeat(np.arange(clusters), per)
    return (math.sqrt(icc) * rng.standard_normal(clusters)[codes]
            + math.sqrt(1 - icc) * rng.standard_normal(clusters * per))


def _two_correlations(rng: np.random.Generator, clusters: int, per: int, rho_first: float,
                      rho_second: float) -> tuple[np.ndarray, ...]:
    """(information, first, second, cluster): clustered rows, each (information, model) pair
    bivariate normal with population Spearman ρ exactly ``rho_first`` / ``rho_second``."""
    x = _clustered(rng, clusters, per)
    first = _correlated(rng, x, rho_first, _clustered(rng, clusters, per))
    second = _correlated(rng, x, rho_second, _clustered(rng, clusters, per))
    return x, first, second, np.repeat(np.arange(clusters), per)


def test_a_clearly_better_correlation_passes() -> None:
    data = _two_correlations(np.random.default_rng(43), 100, 4, 0.6, 0.3)
    result = Result.judged(measure_correlation_difference(*data, n_resamples=B, seed=43),
                           RHO_CRITERION)
    assert result.verdict is Verdict.PASS, result.reason


def test_equal_correlations_fail() -> None:
    """ρ = 0.8 for both models over 150 clusters of 4: the difference is 0, below 0.1. (Both
    track the same information closely, so their estimates err together and the paired
    difference is precise: sd ≈ 0.026 here, against ≈ 0.034 at ρ = 0.4 with 400 clusters.)"""
    x, first, second, clusters = _two_correlations(np.random.default_rng(44), 150, 4, 0.8, 0.8)
    for a, b in ((first, second), (second, first)):
        result = Result.judged(
            measure_correlation_difference(x, a, b, clusters, n_resamples=B, seed=44),
            RHO_CRITERION)
        assert result.verdict is Verdict.FAIL, result.reason


# -- calibration: the linearity gain at its threshold ---------------------------------------------
#: Nulls with population gain exactly 0.2: (late/early ratio of the first, of the second).
#: 500 data sets of 60 documents each; the rates are printed. A longer run (3000 sets per null,
#: streams 710–712) measured false PASS / false FAIL of 0.028 / 0.130 (linear vs kinked),
#: 0.060 / 0.059 (kinked vs more kinked) and 0.060 / 0.053 (superlinear vs sublinear): the
#: bootstrap over 60 documents is slightly liberal (as docs/statistics.md reports for few
#: clusters), so a stream may sit near the Monte-Carlo edge (superlinear vs sublinear: 37/500,
#: the most the binomial rule allows at N = 500).
GAIN_DOCS = 60
GAIN_SETS = 500
GAIN_NULLS = {
    # a straight line against a late slope e^(−0.2): the comparison the claim is built for
    "linear vs kinked": (1.0, math.exp(-0.2)),
    # both models away from r = 1, where |log r| has no fold
    "kinked vs more kinked": (math.exp(-0.3), math.exp(-0.5)),
    "superlinear vs sublinear": (math.exp(0.3), math.exp(-0.5)),
}


@functools.cache
def _gain_verdicts(name: str) -> Verdicts:
    k_first, k_second = GAIN_NULLS[name]
    stream = 600 + list(GAIN_NULLS).index(name)

    def one(rng: np.random.Generator, seed: int) -> Measurement:
        return _gain(_growth(rng, GAIN_DOCS, k_first, k_second), seed=seed)

    return _simulate(stream, GAIN_SETS, one, GAIN_CRITERION)


def test_gain_nulls_are_exactly_at_the_threshold() -> None:
    for k_first, k_second in GAIN_NULLS.values():
        gain = _distance(k_second) - _distance(k_first)
        assert gain == pytest.approx(0.2, abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(GAIN_NULLS))
def test_linearity_gain_false_pass_rate_at_threshold(name: str) -> None:
    """Population gain exactly 0.2: PASS ('gain > 0.2') at most α of the time."""
    rates.assert_at_most_alpha(_gain_verdicts(name), Verdict.PASS,
                          f"linearity gain 0.2 ({name}), {GAIN_DOCS} documents: false PASS")


@pytest.mark.parametrize("name", ["kinked vs more kinked", "superlinear vs sublinear"])
def test_linearity_gain_false_fail_rate_at_threshold(name: str) -> None:
    """FAIL is a claim too ('gain < 0.2'): away from r = 1 it is made at most α of the time."""
    rates.assert_at_most_alpha(_gain_verdicts(name), Verdict.FAIL,
                          f"linearity gain 0.2 ({name}), {GAIN_DOCS} documents: false FAIL")


@pytest.mark.xfail(strict=True, reason=(
    "D = |log r| folds at r = 1: with the first model exactly linear its estimated distance "
    "is biased upwards (E|log r̂| > 0), so the gain is biased downwards (mean ≈ 0.17 at a "
    "true 0.2) and FAIL is called at the threshold about 13% of the time, not at most α"))
def test_linearity_gain_false_fail_rate_when_the_first_model_is_exactly_linear() -> None:
    name = "linear vs kinked"
    rates.assert_at_most_alpha(_gain_verdicts(name), Verdict.FAIL,
                          f"linearity gain 0.2 ({name}), {GAIN_DOCS} documents: false FAIL")


def test_linearity_gain_power() -> None:
    """A straight line against a late slope 0.3 (gain −log 0.3 ≈ 1.2): PASS at least 90% of
    the time; here with 15 documents, a quarter of the calibration's, to keep it a test."""

    def one(rng: np.random.Generator, seed: int) -> Measurement:
        return _gain(_growth(rng, 15, 1.0, 0.3), seed=seed)

    verdicts = _simulate(610, 200, one, GAIN_CRITERION)
    rates.assert_rate_at_least(verdicts, Verdict.PASS, POWER_FLOOR,
                          "linearity gain ≈ 1.2, 15 documents: power")


# -- calibration: the correlation difference at its threshold -------------------------------------
RHO_CLUSTERS, RHO_PER = 100, 4


@functools.cache
def _rho_verdicts(rho_first: float, rho_second: float, stream: int, count: int) -> Verdicts:
    def one(rng: np.random.Generator, seed: int) -> Measurement:
        data = _two_correlations(rng, RHO_CLUSTERS, RHO_PER, rho_first, rho_second)
        return measure_correlation_difference(*data, n_resamples=B, seed=seed)

    return _simulate(stream, count, one, RHO_CRITERION)


def test_rho_population_values() -> None:
    """The clustered rows are marginally bivariate normal with the intended Spearman ρ."""
    x, first, second, _ = _two_correlations(np.random.default_rng(620), 50_000, 4, 0.5, 0.4)
    assert sps.spearmanr(x, first).statistic == pytest.approx(0.5, abs=0.01)
    assert sps.spearmanr(x, second).statistic == pytest.approx(0.4, abs=0.01)


@pytest.mark.slow
def test_rho_difference_false_pass_rate_at_threshold() -> None:
    """ρ_first = 0.5, ρ_second = 0.4 (difference exactly 0.1), 100 clusters of 4 rows, 1,000
    sets: enough that a rate of 0.075 fails (p = 0.0004)."""
    verdicts = _rho_verdicts(0.5, 0.4, 621, 1000)
    rates.assert_at_most_alpha(verdicts, Verdict.PASS,
                          f"ρ difference 0.1, {RHO_CLUSTERS}×{RHO_PER} rows: false PASS")


@pytest.mark.slow
def test_rho_difference_false_fail_rate_at_threshold() -> None:
    verdicts = _rho_verdicts(0.5, 0.4, 621, 1000)
    rates.assert_at_most_alpha(verdicts, Verdict.FAIL,
                          f"ρ difference 0.1, {RHO_CLUSTERS}×{RHO_PER} rows: false FAIL")


@pytest.mark.slow
def test_rho_difference_power() -> None:
    """ρ_first = 0.6, ρ_second = 0.25 (difference 0.35): PASS at least 90% of the time."""
    verdicts = _rho_verdicts(0.6, 0.25, 622, 200)
    rates.assert_rate_at_least(verdicts, Verdict.PASS, POWER_FLOOR,
                          f"ρ difference 0.35, {RHO_CLUSTERS}×{RHO_PER} rows: power")


# -- end to end: normtest compare on synthetic sentence encoders ----------------------------------
@pytest.fixture(scope="module")
def comparison() -> Comparison:
    """IndependentSum (‖e‖² ∝ L), Saturating (a fixed point) and OtherSum (∝ L, other vectors)
    compared on one sample of 40 documents."""
    import sys

    from normtest.adapters.sentence import EncodeAdapter
    from normtest.base.settings import AuditSettings

    sys.path.insert(0, str(HERE))
    try:
        import encode_models
    finally:
        sys.path.remove(str(HERE))
    models = [EncodeAdapter(m, pooling="pooled") for m in (
        encode_models.IndependentSum(), encode_models.Saturating(), encode_models.OtherSum())]
    return compare_models(models, ["compare.cer.linearity"], suite="cer",
                          settings=AuditSettings(documents=40, resamples=300))


def _row_id(first: str, second: str) -> str:
    return f"compare.cer.linearity[first={first},second={second},composition=pooled]"


@pytest.mark.parametrize(("first", "second", "verdict"), [
    ("independent-sum", "saturating", Verdict.PASS),
    ("independent-sum", "other-sum", Verdict.FAIL),
    ("saturating", "other-sum", Verdict.FAIL),
])
@pytest.mark.slow
def test_compare_models_linearity(comparison: Comparison, first: str, second: str,
                                  verdict: Verdict) -> None:
    row = comparison.result(_row_id(first, second))
    print(f"\n{row.id}: {row.verdict.value}, gain {row.estimate:.3f}, "
          f"90% CI [{row.ci[0]:.3f}, {row.ci[1]:.3f}]")
    assert row.verdict is verdict, row.reason
    assert row.measurement is not None and row.measurement.statistic == "linearity_gain"
    assert row.criterion is not None and row.criterion.threshold == 0.2
    # no expectation of the paper names these architectures: exploratory, nothing expected
    assert row.role == "exploratory" and not row.confirmatory and row.expected is None
    assert row.details["statement"].startswith(first)


def test_compare_models_rows_and_provenance(comparison: Comparison) -> None:
    assert len(comparison.results) == 3
    assert all(r.claim == "compare.cer.linearity" for r in comparison.results)
    assert comparison.provenance["prefix_unit"] == "words"
    assert comparison.provenance["models"] == ["independent-sum", "saturating", "other-sum"]
    with pytest.raises(NormtestError, match="no comparison row"):
        comparison.result(_row_id("other-sum", "independent-sum"))


def test_a_comparison_needs_two_models(comparison: Comparison) -> None:
    with pytest.raises(NormtestError, match="two models"):
        compare_reports(comparison.reports[:1], ["compare.cer.linearity"])
    with pytest.raises(NormtestError, match="two models"):
        compare_models([], ["compare.cer.linearity"], suite="cer")


def test_a_falling_curve_is_the_farthest_from_linear_growth() -> None:
    """s(L) falling in both halves has late/early ratio 1, but it does not grow: it counts as
    the farthest (log 16), so it never beats a rising model."""
    grid = np.arange(16, 129, 16, dtype=np.float64)
    documents = np.repeat(np.arange(12), grid.size)
    lengths = np.tile(grid, 12)
    rising, falling = lengths.copy(), 1000.0 - lengths
    gain = measure_linearity_gain(lengths, falling, rising, documents, n_resamples=200)
    assert gain.estimate == pytest.approx(-math.log(16))
    assert measure_linearity_gain(lengths, rising, falling, documents,
                                  n_resamples=200).estimate == pytest.approx(math.log(16))
