"""Shared bootstrap draws: the memo of draws and of what is computed from them
(``normtest.stats._draws``), draws tied to units (``units=``), and the shared x side of a Spearman
bootstrap (``normtest.stats._spearman``).

What is claimed identical is tested bit for bit (``np.array_equal``): every measurement with the
memo on (filling it, then reading it) and off; the kept draws and the seeded generator's;
Spearman's ρ from the shared x side and from ranking both variables. What is claimed paired is
tested against explicit resamples: each replicate of a measurement with ``units=`` is the
correlation of the rows drawn when every unit is drawn as often as the seed's draws say, for any
y and any row order. The calibration of ``units=`` is in tests/test_calibration.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from normtest.errors import NormtestError
from normtest.stats import _spearman, bootstrap
from normtest.stats.correlation import correlation, measure_correlation, measure_partial_correlation
from normtest.stats.equivalence import measure_mean
from normtest.stats.growth import measure_fixed_point, measure_linear_growth
from normtest.stats.paired import measure_correlation_difference, measure_linearity_gain
from normtest.verdict.result import Measurement, Verdict

SEEDS = st.integers(0, 2**32 - 1)


@pytest.fixture(autouse=True)
def _fresh_memo() -> None:
    """Every test starts from an empty memo at the default budget."""
    bootstrap.clear_memo()


# -- helpers --------------------------------------------------------------------------------------
def _arrays(m: Measurement) -> list[np.ndarray]:
    """Estimate and replicates of a measurement and of each of its components."""
    out = [np.array([m.estimate])]
    if m.sampling is not None and m.sampling.replicates is not None:
        out.append(np.asarray(m.sampling.replicates))
    for name in sorted(m.components):
        out += _arrays(m.components[name])
    return out


def _first(n: int, resamples: int, seed: int) -> np.ndarray:
    """The first chunk of the kept draws of (n, B, seed)."""
    return next(iter(bootstrap.seeded_weights(n, resamples, seed)))


def _identical(a: Measurement, b: Measurement) -> None:
    xs, ys = _arrays(a), _arrays(b)
    assert len(xs) == len(ys)
    for x, y in zip(xs, ys, strict=True):
        np.testing.assert_array_equal(x, y)
    assert a.method == b.method and a.settings == b.settings


def _data(seed: int, n: int = 120) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=n), 1)  # ties, as the words' information content has
    return {
        "x": x, "y": 0.4 * x + rng.normal(size=n),
        "ytied": np.round(0.4 * x + rng.normal(size=n)),
        "z": np.column_stack([rng.integers(1, 5, n), x + rng.normal(size=n)]).astype(float),
        "clusters": rng.integers(0, 30, n),
        "units": np.array([f"u{i}" for i in rng.permutation(n)]),
    }


def _growth(seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    lengths = np.tile(np.arange(8.0, 129.0, 8.0), 20)
    docs = np.repeat(np.arange(20), 16)
    values = 30 + lengths + rng.normal(0, 5, lengths.size)
    vectors = rng.standard_normal((20, 4))[docs] + 0.1 * rng.standard_normal((lengths.size, 4))
    return lengths, values, docs, vectors


B = 200
MEASUREMENTS: dict[str, Callable[[dict[str, np.ndarray]], Measurement]] = {
    "spearman": lambda d: measure_correlation(d["x"], d["y"], n_resamples=B, seed=3),
    "spearman tied y": lambda d: measure_correlation(d["x"], d["ytied"], n_resamples=B, seed=3),
    "spearman units": lambda d: measure_correlation(d["x"], d["y"], units=d["units"],
                                                    n_resamples=B, seed=3),
    "spearman clusters": lambda d: measure_correlation(d["x"], d["y"], clusters=d["clusters"],
                                                       n_resamples=B, seed=3),
    "pearson clusters": lambda d: measure_correlation(d["x"], d["y"], "pearson",
                                                      clusters=d["clusters"], n_resamples=B),
    "kendall": lambda d: measure_correlation(d["x"][:40], d["y"][:40], "kendall",
                                             n_resamples=100),
    "partial": lambda d: measure_partial_correlation(d["x"], d["y"], d["z"], n_resamples=B),
    "partial units": lambda d: measure_partial_correlation(d["x"], d["y"], d["z"][:, 0],
                                                           units=d["units"], n_resamples=B),
    "partial clusters": lambda d: measure_partial_correlation(d["x"], d["y"], d["z"],
                                                              clusters=d["clusters"],
                                                              n_resamples=B),
    "partial pearson": lambda d: measure_partial_correlation(d["x"], d["y"], d["z"], "pearson",
                                                             clusters=d["clusters"],
                                                             n_resamples=B),
    "mean clusters": lambda d: measure_mean(d["y"], clusters=d["clusters"], n_resamples=B),
    "difference": lambda d: measure_correlation_difference(d["x"], d["y"], d["ytied"],
                                                           n_resamples=B),
    "difference clusters": lambda d: measure_correlation_difference(
        d["x"], d["y"], d["ytied"], d["clusters"], n_resamples=B),
    "linear growth": lambda d: measure_linear_growth(*_growth(1)[:3], n_resamples=B),
    "fixed point": lambda d: measure_fixed_point(*_growth(2), n_resamples=B),
    "linearity gain": lambda d: measure_linearity_gain(
        _growth(3)[0], _growth(3)[1], _growth(4)[1], _growth(3)[2], n_resamples=B),
}


# -- the memo -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(MEASUREMENTS))
def test_results_are_identical_with_the_memo_on_and_off(name: str) -> None:
    """Filling the memo, reading it, and running without it give the same bits."""
    data = _data(5)
    filling = MEASUREMENTS[name](data)
    reading = MEASUREMENTS[name](data)
    with bootstrap.memo_limit(0):
        scratch = MEASUREMENTS[name](data)
    _identical(filling, reading)
    _identical(filling, scratch)


@pytest.mark.parametrize(("n", "resamples"), [(7, 100), (60, 333), (2_000, 1_000)])
def test_kept_draws_are_the_seeds_draws_read_only_and_reused(n: int, resamples: int) -> None:
    seed = 17
    expected = np.concatenate(list(bootstrap.unit_weights(n, resamples,
                                                          np.random.default_rng(seed))))
    first = tuple(bootstrap.seeded_weights(n, resamples, seed))
    again = tuple(bootstrap.seeded_weights(n, resamples, seed))
    np.testing.assert_array_equal(np.concatenate(first), expected)
    assert all(a is b for a, b in zip(first, again, strict=True))  # drawn once
    assert not any(w.flags.writeable for w in first)
    with bootstrap.memo_limit(0):
        fresh = tuple(bootstrap.seeded_weights(n, resamples, seed))
    np.testing.assert_array_equal(np.concatenate(fresh), expected)
    assert all(w.flags.writeable for w in fresh)  # not kept: the caller's own arrays


def test_kept_row_weights_of_clusters_are_those_of_the_seed() -> None:
    codes = np.sort(np.random.default_rng(0).integers(0, 12, 90))
    expected = list(bootstrap.row_weights(90, 300, np.random.default_rng(6), codes))
    for _ in range(2):  # drawn, then read from the memo
        kept = list(bootstrap.seeded_row_weights(90, 300, 6, codes))
        for a, b in zip(kept, expected, strict=True):
            np.testing.assert_array_equal(a, b)
            assert not a.flags.writeable


def test_a_statistic_cannot_write_into_kept_weights() -> None:
    def vandal(w: np.ndarray) -> np.ndarray:
        w[:, 0] = 0.0
        return w.sum(axis=1)

    with pytest.raises(ValueError, match="read-only"):
        bootstrap.replicates(vandal, 30, 100, 0)


def test_the_memo_keeps_within_its_budget_least_recently_used_out() -> None:
    chunk = 8 * 100 * 500  # bytes of the draws of n = 100, B = 500
    with bootstrap.memo_limit(2 * chunk + chunk // 2):
        a = tuple(bootstrap.seeded_weights(100, 500, 1))
        b = tuple(bootstrap.seeded_weights(100, 500, 2))
        assert _first(100, 500, 1) is a[0]  # 1 is now the most recently used
        tuple(bootstrap.seeded_weights(100, 500, 3))  # evicts 2, the least recently used
        assert bootstrap.memo_stats()["bytes"] <= 2 * chunk + chunk // 2
        assert _first(100, 500, 1) is a[0]
        b_again = tuple(bootstrap.seeded_weights(100, 500, 2))
        assert b_again[0] is not b[0]
        np.testing.assert_array_equal(b_again[0], b[0])
    with bootstrap.memo_limit(chunk // 2):  # too large to keep: drawn afresh, the same draws
        big = tuple(bootstrap.seeded_weights(100, 500, 4))
        assert _first(100, 500, 4) is not big[0]
        assert bootstrap.memo_stats()["bytes"] <= chunk // 2


def test_derived_values_are_kept_per_chunk_and_tag_only_for_kept_chunks() -> None:
    calls: list[str] = []

    def make(label: str) -> Callable[[], np.ndarray]:
        def run() -> np.ndarray:
            calls.append(label)
            return np.zeros(3)
        return run

    (w,) = tuple(bootstrap.seeded_weights(20, 100, 0))
    first = bootstrap.derived(w, ("t", 1), make("a"))
    assert bootstrap.derived(w, ("t", 1), make("b")) is first  # kept
    bootstrap.derived(w, ("t", 2), make("c"))  # another tag
    own = np.array(w)  # an array of the caller's: never keyed (it could change in place)
    bootstrap.derived(own, ("t", 1), make("d"))
    bootstrap.derived(own, ("t", 1), make("e"))
    assert calls == ["a", "c", "d", "e"]


def test_the_digest_of_a_samples_labels_is_kept_and_the_same_with_the_memo_off() -> None:
    words = np.array(["pear", "apple", "fig", "apple"])
    first = bootstrap.labels_digest(words)
    assert bootstrap.labels_digest(list(words[::-1])) == first  # any order, a list or an array
    assert bootstrap.labels_digest(np.array(["pear", "apple", "kiwi"])) != first
    with bootstrap.memo_limit(0):  # from scratch: the same digest
        assert bootstrap.labels_digest(words) == first
    # an object array's bytes are pointers: digested by its contents, never kept by them
    boxed = np.array(["pear", "fig"], dtype=object)
    first_boxed = bootstrap.labels_digest(boxed)
    boxed[1] = "kiwi"  # the same array, other contents: another digest
    assert bootstrap.labels_digest(boxed) != first_boxed
    assert bootstrap.labels_digest(np.array(["pear", "kiwi"], dtype=object)) == \
        bootstrap.labels_digest(boxed)


# -- the shared x side ----------------------------------------------------------------------------
def _chunk(seed: int, n: int, resamples: int = 150) -> np.ndarray:
    return _first(n, resamples, seed)


@pytest.mark.slow
@settings(max_examples=150)
@given(seed=SEEDS, n=st.integers(2, 70), tied_x=st.booleans(), tied_y=st.booleans(),
       sorted_y=st.booleans())
def test_spearman_from_the_shared_side_is_bit_identical(seed: int, n: int, tied_x: bool,
                                                        tied_y: bool, sorted_y: bool) -> None:
    """Every moment is exact in float64 for ranks, so the reorganised sums give the bits that
    ranking both variables and correlating them gives (NaN where a variance is 0)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, n).astype(float) if tied_x else rng.normal(size=n)
    y = rng.integers(0, 4, n).astype(float) if tied_y else rng.normal(size=n)
    if sorted_y:
        y = np.sort(y)  # the ranker's no-permutation path
    rho = _spearman.Spearman(x, y)
    w = _chunk(seed % 1000, n)
    np.testing.assert_array_equal(rho(w), rho.explicit(w))
    again = _spearman.Spearman(x, rng.normal(size=n))  # another variant: the side is kept
    np.testing.assert_array_equal(again(w), again.explicit(w))
    np.testing.assert_array_equal(rho(np.ones((1, n))), rho.explicit(np.ones((1, n))))


def test_spearman_replicates_equal_those_of_the_previous_release() -> None:
    """Without units the draws and rows are those of the previous release; the replicates are
    what ranking every resample and correlating gives (frozen from that release)."""
    d = _data(11, 60)
    reps = measure_correlation(d["x"], d["y"], n_resamples=100, seed=2).sampling.replicates
    draws = np.random.default_rng(2).integers(0, 60, size=(100, 60))
    order = np.lexsort([d["y"], d["x"]])
    x, y = d["x"][order], d["y"][order]
    for r in range(100):
        rows = draws[r]
        assert reps[r] == pytest.approx(sps.spearmanr(x[rows], y[rows]).statistic, abs=1e-12)


@settings(max_examples=80)
@given(seed=SEEDS, n=st.integers(12, 60), k=st.integers(1, 2), tied=st.booleans())
def test_partial_spearman_from_the_shared_side_matches_the_explicit_residuals(
    seed: int, n: int, k: int, tied: bool
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    z = rng.integers(1, 4, (n, k)).astype(float) if tied else x[:, None] + rng.normal(size=(n, k))
    y = x + z.sum(axis=1) + rng.normal(size=n)
    rho = _spearman.Spearman(x, y, z)
    w = _chunk(seed % 1000, n)
    fast, slow = rho(w), rho.explicit(w)
    assert np.array_equal(np.isnan(fast), np.isnan(slow))
    np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-12)


def test_partial_spearman_where_the_covariate_explains_y() -> None:
    """y a function of the covariate: the partial ρ is undefined in every resample (NaN), as the
    explicit residuals say; nearly so, the rows are recomputed explicitly."""
    rng = np.random.default_rng(0)
    x, z = rng.normal(size=80), rng.normal(size=80)
    w = _chunk(0, 80)
    exact = _spearman.Spearman(x, z**3, z[:, None])
    assert np.isnan(exact(w)).all() and np.isnan(exact.explicit(w)).all()
    nearly = _spearman.Spearman(x, z + 1e-9 * rng.normal(size=80), z[:, None])
    np.testing.assert_allclose(nearly(w), nearly.explicit(w), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("weights", ["large", "fractional"])
def test_weights_float32_cannot_hold_take_the_float64_path(weights: str) -> None:
    """Cumulative weights of 2²⁴ or more, or weights that are not integers, are not exact in
    float32: the float64 path is used, and agrees with the explicit ranks."""
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=40), rng.normal(size=40)
    w = (rng.integers(1, 3, (4, 40)) * 2.0**22 if weights == "large"
         else rng.uniform(0.0, 3.0, (4, 40)))
    rho = _spearman.Spearman(x, y)
    assert _spearman._Side(w, rho.rank_x, []).w32 is None
    assert _spearman._Side(np.round(w / 2.0**22), rho.rank_x, []).w32 is not None
    np.testing.assert_allclose(rho(w), rho.explicit(w), rtol=1e-12)


def test_variants_share_the_x_side_once_per_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten variants of one claim (the same x and units, ten y) build the x side once per chunk
    of the draws; without the memo, once per variant and chunk."""
    built: list[int] = []

    class Counting(_spearman._Side):
        def __init__(self, *args: Any) -> None:
            built.append(1)
            super().__init__(*args)

    monkeypatch.setattr(_spearman, "_Side", Counting)
    monkeypatch.setattr(bootstrap, "_BLOCK_ELEMENTS", 300 * 100)  # three chunks of 100 resamples
    d = _data(3, 300)
    rng = np.random.default_rng(3)
    ys = [d["x"] * rng.uniform(-1, 1) + rng.normal(size=300) for _ in range(10)]
    shared = [measure_correlation(d["x"], y, units=d["units"], n_resamples=300) for y in ys]
    assert len(built) == 3
    built.clear()
    with bootstrap.memo_limit(0):
        scratch = [measure_correlation(d["x"], y, units=d["units"], n_resamples=300) for y in ys]
    assert len(built) == 30
    for a, b in zip(shared, scratch, strict=True):
        _identical(a, b)


# -- draws tied to units --------------------------------------------------------------------------
def _explicit_unit_replicates(x: np.ndarray, y: np.ndarray, labels: np.ndarray, resamples: int,
                              seed: int) -> np.ndarray:
    """ρ of the rows drawn when unit g (g-th label in sorted order) is drawn as often as the
    seed's draw of g says: the rows' own order plays no part."""
    weights = np.concatenate(list(bootstrap.unit_weights(labels.size, resamples,
                                                         np.random.default_rng(seed))))
    code = np.searchsorted(np.sort(labels), labels)
    out = np.empty(resamples)
    for r in range(resamples):
        rows = np.repeat(np.arange(labels.size), weights[r, code].astype(np.intp))
        out[r] = sps.spearmanr(x[rows], y[rows]).statistic
    return out


@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")
def test_each_unit_is_drawn_as_often_in_every_variant_and_row_order() -> None:
    """The paired property: the same unit gets the same multiplicity whatever its y (the
    variant) and wherever its row stands."""
    d = _data(21, 50)
    rng = np.random.default_rng(21)
    for y in (d["y"], d["ytied"], -d["x"] + rng.normal(size=50)):
        p = rng.permutation(50)
        for rows in (np.arange(50), p):
            m = measure_correlation(d["x"][rows], y[rows], units=d["units"][rows],
                                    n_resamples=100, seed=9)
            expected = _explicit_unit_replicates(d["x"], y, d["units"], 100, 9)
            np.testing.assert_allclose(m.sampling.replicates, expected, atol=1e-10)


def test_units_make_the_variants_of_a_claim_paired() -> None:
    """With units, the replicate-wise difference of two variants' ρ is the paired difference
    (the same draws): what measure_correlation_difference gives on rows in unit order."""
    d = _data(8, 200)
    rng = np.random.default_rng(8)
    y2 = 0.2 * d["x"] + rng.normal(size=200)
    first = measure_correlation(d["x"], d["y"], units=d["units"], n_resamples=500, seed=4)
    second = measure_correlation(d["x"], y2, units=d["units"], n_resamples=500, seed=4)
    order = np.argsort(d["units"])
    paired = measure_correlation_difference(d["x"][order], d["y"][order], y2[order],
                                            n_resamples=500, seed=4)
    np.testing.assert_array_equal(paired.sampling.replicates,
                                  first.sampling.replicates - second.sampling.replicates)


@settings(max_examples=60)
@given(seed=SEEDS, perm=SEEDS, n=st.integers(10, 60), partial=st.booleans(),
       ties=st.booleans())
def test_a_measurement_with_units_ignores_row_order(seed: int, perm: int, n: int,
                                                    partial: bool, ties: bool) -> None:
    """The verdict depends on the multiset of (unit, x, y) rows only: bit for bit for ρ (the
    sums are exact), to rounding for the partial ρ (its row order is the units' either way)."""
    d = _data(seed, n)
    x, y = (np.round(d["x"]), d["ytied"]) if ties else (d["x"], d["y"])
    p = np.random.default_rng(perm).permutation(n)
    if partial:
        a = measure_partial_correlation(x, y, d["z"], units=d["units"], n_resamples=100)
        b = measure_partial_correlation(x[p], y[p], d["z"][p], units=d["units"][p],
                                        n_resamples=100)
    else:
        a = measure_correlation(x, y, units=d["units"], n_resamples=100)
        b = measure_correlation(x[p], y[p], units=d["units"][p], n_resamples=100)
    _identical(a, b)


def test_units_change_the_replicates_not_the_estimate() -> None:
    d = _data(2, 150)
    rows = measure_correlation(d["x"], d["y"], n_resamples=B)
    units = measure_correlation(d["x"], d["y"], units=d["units"], n_resamples=B)
    assert rows.estimate == units.estimate
    assert not np.array_equal(rows.sampling.replicates, units.sampling.replicates)
    assert units.settings["units"] == 150 and rows.settings["units"] is None
    assert "drawn by unit" in units.method


@pytest.mark.parametrize("bad", ["repeated", "with clusters"])
def test_units_are_one_distinct_label_per_row(bad: str) -> None:
    d = _data(4, 40)
    units = d["units"].copy()
    with pytest.raises(NormtestError, match=r"units|clusters"):
        if bad == "repeated":
            units[3] = units[7]
            measure_correlation(d["x"], d["y"], units=units, n_resamples=B)
        else:
            measure_correlation(d["x"], d["y"], units=units, clusters=d["clusters"],
                                n_resamples=B)


def test_too_few_units_are_inconclusive() -> None:
    d = _data(4, 9)
    result = correlation(d["x"], d["y"], units=d["units"], n_resamples=B)
    assert result.verdict is Verdict.INCONCLUSIVE and "only 9 points" in result.reason


# -- the word claims ------------------------------------------------------------------------------
class _Frequencies:
    def __init__(self, words: Sequence[str], unigram: np.ndarray) -> None:
        self.p = dict(zip(words, unigram, strict=True))

    def information_content(self, words: Sequence[str]) -> Any:
        from normtest.data.information.frequency import information_content

        return information_content(np.array([self.p[w] for w in words]), words, "oracle")


@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")
def test_word_claims_draw_each_word_alike_in_every_variant() -> None:
    from normtest.base.settings import AuditSettings
    from normtest.checks.word import norm_ic
    from normtest.data.words import WordData
    from normtest.models.synthetic import make_oracle

    oracle = make_oracle(80, seed=1, b=20.0, noise=0.3)
    s = AuditSettings(words=80, resamples=100)
    data = WordData.build(oracle, s, "static", list(oracle.words),
                          _Frequencies(oracle.words, oracle.unigram))
    labels = np.asarray(data.words)
    for transform in ("raw", "center_zipf", "whiten_uniform"):
        variant = {"transform": transform}
        m = norm_ic(data, variant, s)
        assert m.settings["units"] == labels.size
        expected = _explicit_unit_replicates(data.information, data.squared_norms(variant),
                                             labels, 100, s.seed)
        np.testing.assert_allclose(m.sampling.replicates, expected, atol=1e-10)
