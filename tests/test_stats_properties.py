"""Invariance properties of the statistics, and their input discipline.

Properties (hypothesis, under the repository's derandomised profile):

- a verdict depends on the multiset of rows, not on their order: permuting rows changes neither
  the verdict nor the estimate, interval or p-value (correlation with and without clusters,
  partial correlation, linear_growth, fixed_point, equivalence);
- rank methods (Spearman, Kendall) see only ranks: a strictly increasing transform of x, of y
  (or of a covariate) changes nothing;
- growth statistics are scale-free: multiplying the values (or the vectors) by a positive
  constant changes no verdict, leaves the late/early ratio, the curvature share and the end
  cosine unchanged and multiplies the slope by the constant.

Most data are built with numpy from a drawn seed (cheap to generate and to shrink); a few tests
draw the arrays themselves with ``hypothesis.extra.numpy``. Bootstraps use the smallest sizes the
library accepts (100–200 resamples): the properties hold for any B. Each property test records
the verdicts it saw as hypothesis events (``--hypothesis-show-statistics``), to show that
PASS, FAIL and INCONCLUSIVE cases are all exercised.

Input discipline (direct tests): fewer than 10 points or 3 groups give INCONCLUSIVE with a
reason that states the count; non-finite inputs and mismatched lengths raise NormtestError
saying how many values and where.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats as sps

from normtest.errors import NormtestError
from normtest.stats._inputs import MIN_GROUPS
from normtest.stats.correlation import correlation, partial_correlation
from normtest.stats.equivalence import equivalence
from normtest.stats.growth import fixed_point, linear_growth
from normtest.verdict.result import Result, Verdict

B = 200
SEEDS = st.integers(0, 2**32 - 1)


# -- comparing two results ------------------------------------------------------------------------
def _close(a: float, b: float, rtol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=rtol, abs_tol=1e-12)


def _assert_same(a: Result, b: Result, rtol: float = 1e-12, scale: float = 1.0) -> None:
    """Same verdict; estimate, interval and p-value equal within ``rtol``.

    ``scale`` is the factor by which the *slope* component is expected to differ (rescaling);
    the headline and every other component must be unchanged.
    """
    event(f"verdict {a.verdict.value}")
    assert a.verdict is b.verdict, f"{a.verdict} ≠ {b.verdict}\n  {a.reason}\n  {b.reason}"
    assert _close(a.estimate, b.estimate, rtol), (a.estimate, b.estimate)
    for x, y in zip(a.ci, b.ci, strict=True):
        assert _close(x, y, rtol), (a.ci, b.ci)
    assert _close(a.p_value, b.p_value, rtol), (a.p_value, b.p_value)
    if a.measurement is None or b.measurement is None:
        assert a.measurement is b.measurement
        return
    ca, cb = a.measurement.components, b.measurement.components
    assert ca.keys() == cb.keys()
    for name in ca:
        factor = scale if name == "slope" else 1.0
        assert _close(ca[name].estimate * factor, cb[name].estimate, rtol), (
            name, ca[name].estimate, cb[name].estimate,
        )
        for x, y in zip(ca[name].ci, cb[name].ci, strict=True):
            assert _close(x * factor, y, rtol), (name, ca[name].ci, cb[name].ci)


# -- data -----------------------------------------------------------------------------------------
def _xy(seed: int, n: int, ties: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Correlated pairs with a random correlation in (−0.9, 0.9) and 8–15 cluster labels."""
    rng = np.random.default_rng(seed)
    r = rng.uniform(-0.9, 0.9)
    x = rng.standard_normal(n)
    y = r * x + math.sqrt(1 - r * r) * rng.standard_normal(n)
    if ties:
        x, y = np.round(x, 1), np.round(y, 1)
    clusters = rng.integers(0, rng.integers(8, 16), n)  # some below MIN_GROUPS, most above
    return x, y, clusters


def _growth(
    seed: int, docs: int, unique_lengths: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Growth curves: level + linear, saturating or power-law (L^p, p in [0.2, 2]) + noise.

    Each document has 3–16 prefixes at random lengths in 1..64 (distinct within a document when
    ``unique_lengths``, as vectors require). Also returns one 4-d vector per row, scattered
    (noise 0.01–0.5) around a direction of its document's own.
    """
    rng = np.random.default_rng(seed)
    process = rng.integers(3)
    lengths, groups = [], []
    for d in range(docs):
        k = int(rng.integers(3, 17))
        chosen = (rng.choice(np.arange(1, 65), size=k, replace=False) if unique_lengths
                  else rng.integers(1, 65, k))
        lengths.append(chosen.astype(float))
        groups.append(np.full(k, d))
    length, group = np.concatenate(lengths), np.concatenate(groups)
    if process == 0:
        mean = length
    elif process == 1:
        mean = 64 * (1 - np.exp(-length / rng.uniform(3, 20)))
    else:
        mean = length ** rng.uniform(0.2, 2.0)
    noise = rng.normal(0, rng.uniform(0.05, 2), length.size)
    values = rng.normal(5, 2, docs)[group] + rng.uniform(0.1, 1) * mean + noise
    direction = rng.standard_normal((docs, 4))[group]
    vectors = direction + rng.standard_normal(direction.shape) * rng.uniform(0.01, 0.5)
    return length, values, group, vectors


def _permutation(seed: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).permutation(n)


# -- permutation invariance -----------------------------------------------------------------------
@pytest.mark.slow
@given(seed=SEEDS, perm=SEEDS, n=st.integers(8, 80),
       method=st.sampled_from(["spearman", "pearson"]), clustered=st.booleans(),
       ties=st.booleans())
def test_correlation_ignores_row_order(
    seed: int, perm: int, n: int, method: str, clustered: bool, ties: bool
) -> None:
    x, y, clusters = _xy(seed, n, ties)
    c = clusters if clustered else None
    p = _permutation(perm, n)
    kw: dict[str, Any] = {"method": method, "n_resamples": B, "seed": seed % 1000}
    a = correlation(x, y, clusters=c, **kw)
    b = correlation(x[p], y[p], clusters=None if c is None else c[p], **kw)
    _assert_same(a, b)


@pytest.mark.slow
@settings(max_examples=30)
@given(seed=SEEDS, perm=SEEDS, n=st.integers(8, 40), clustered=st.booleans(),
       ties=st.booleans())
def test_kendall_ignores_row_order(
    seed: int, perm: int, n: int, clustered: bool, ties: bool
) -> None:
    """Kendall calls scipy once per resample: fewer examples, the minimum B."""
    x, y, clusters = _xy(seed, n, ties)
    c = clusters if clustered else None
    p = _permutation(perm, n)
    a = correlation(x, y, method="kendall", clusters=c, n_resamples=100, seed=seed % 1000)
    b = correlation(x[p], y[p], method="kendall", clusters=None if c is None else c[p],
                    n_resamples=100, seed=seed % 1000)
    _assert_same(a, b)


@pytest.mark.slow
@settings(max_examples=100)
@given(data=st.data(), n=st.integers(10, 50))
def test_correlation_ignores_row_order_on_drawn_arrays(data: st.DataObject, n: int) -> None:
    """Arrays drawn by hypothesis itself: heavy ties, repeated rows, extreme magnitudes."""
    values = st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False)
    x = data.draw(hnp.arrays(np.float64, n, elements=values), label="x")
    y = data.draw(hnp.arrays(np.float64, n, elements=values), label="y")
    y = y + data.draw(st.sampled_from([0.0, 1.0, -1.0]), label="coupling") * x
    clusters = data.draw(hnp.arrays(np.int64, n, elements=st.integers(0, 4)), label="clusters")
    p = data.draw(st.permutations(range(n)), label="permutation")
    for c in (None, clusters):
        a = correlation(x, y, clusters=c, n_resamples=B)
        b = correlation(x[p], y[p], clusters=None if c is None else c[p], n_resamples=B)
        _assert_same(a, b)


@pytest.mark.slow
@given(seed=SEEDS, perm=SEEDS, n=st.integers(10, 80), k=st.integers(1, 2),
       method=st.sampled_from(["spearman", "pearson"]), clustered=st.booleans(),
       ties=st.booleans())
def test_partial_correlation_ignores_row_order(
    seed: int, perm: int, n: int, k: int, method: str, clustered: bool, ties: bool
) -> None:
    x, y, clusters = _xy(seed, n, ties)
    z = np.random.default_rng(seed + 1).standard_normal((n, k)) + x[:, None]
    if ties:
        z = np.round(z, 1)
    c = clusters if clustered else None
    p = _permutation(perm, n)
    kw: dict[str, Any] = {"method": method, "n_resamples": B, "seed": seed % 1000}
    a = partial_correlation(x, y, z, clusters=c, **kw)
    b = partial_correlation(x[p], y[p], z[p], clusters=None if c is None else c[p], **kw)
    _assert_same(a, b)


@pytest.mark.slow
@settings(max_examples=100)
@given(seed=SEEDS, perm=SEEDS, docs=st.integers(8, 14),
       which=st.sampled_from(["linear_growth", "fixed_point", "fixed_point+vectors"]))
def test_growth_ignores_row_order(seed: int, perm: int, docs: int, which: str) -> None:
    with_vectors = which.endswith("vectors")
    lengths, values, groups, vectors = _growth(seed, docs, unique_lengths=with_vectors)
    p = _permutation(perm, lengths.size)
    kw: dict[str, Any] = {"n_resamples": B, "seed": seed % 1000}
    if which == "linear_growth":
        a = linear_growth(lengths, values, groups, **kw)
        b = linear_growth(lengths[p], values[p], groups[p], **kw)
    else:
        v = vectors if with_vectors else None
        a = fixed_point(lengths, values, groups, v, **kw)
        b = fixed_point(lengths[p], values[p], groups[p], None if v is None else v[p], **kw)
    _assert_same(a, b)


@given(seed=SEEDS, perm=SEEDS, n=st.integers(5, 60), clustered=st.booleans())
def test_equivalence_ignores_row_order(seed: int, perm: int, n: int, clustered: bool) -> None:
    rng = np.random.default_rng(seed)
    data = rng.normal(rng.uniform(-1, 1), 1, n)
    c = rng.integers(0, 5, n) if clustered else None
    p = _permutation(perm, n)
    a = equivalence(data, -0.5, 0.5, clusters=c, n_resamples=B, seed=seed % 1000)
    b = equivalence(data[p], -0.5, 0.5, clusters=None if c is None else c[p], n_resamples=B,
                    seed=seed % 1000)
    _assert_same(a, b)


# -- rank methods see only ranks ------------------------------------------------------------------
# Strictly increasing in exact arithmetic; floating point rounding can still merge two close
# inputs into one output (a new tie) for some of them, so every use checks that the ranks are
# unchanged and discards the rare example where they are not.
INCREASING: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "identity": lambda v: v,
    "cube_plus": lambda v: v**3 + v,
    "exp": np.exp,
    "arctan": lambda v: np.arctan(0.7 * v),
    "affine": lambda v: 4.0 * v - 7.0,
    "sinh": np.sinh,
}


def _transformed(values: np.ndarray, name: str) -> np.ndarray:
    out = INCREASING[name](values)
    assume(np.array_equal(sps.rankdata(out), sps.rankdata(values)))
    return out


@pytest.mark.slow
@given(seed=SEEDS, n=st.integers(8, 80), fx=st.sampled_from(sorted(INCREASING)),
       fy=st.sampled_from(sorted(INCREASING)), clustered=st.booleans(), ties=st.booleans())
def test_spearman_invariant_under_increasing_transforms(
    seed: int, n: int, fx: str, fy: str, clustered: bool, ties: bool
) -> None:
    x, y, clusters = _xy(seed, n, ties)
    x, y = 3 * x, 3 * y  # a range on which exp, sinh and the cube separate values well
    c = clusters if clustered else None
    a = correlation(x, y, clusters=c, n_resamples=B, seed=seed % 1000)
    b = correlation(_transformed(x, fx), _transformed(y, fy), clusters=c, n_resamples=B,
                    seed=seed % 1000)
    _assert_same(a, b)


@pytest.mark.slow
@settings(max_examples=30)
@given(seed=SEEDS, n=st.integers(8, 40), fx=st.sampled_from(sorted(INCREASING)),
       fy=st.sampled_from(sorted(INCREASING)), clustered=st.booleans(), ties=st.booleans())
def test_kendall_invariant_under_increasing_transforms(
    seed: int, n: int, fx: str, fy: str, clustered: bool, ties: bool
) -> None:
    x, y, clusters = _xy(seed, n, ties)
    c = clusters if clustered else None
    kw: dict[str, Any] = {"method": "kendall", "clusters": c, "n_resamples": 100,
                          "seed": seed % 1000}
    a = correlation(x, y, **kw)
    b = correlation(_transformed(x, fx), _transformed(y, fy), **kw)
    _assert_same(a, b)


@pytest.mark.slow
@settings(max_examples=100)
@given(data=st.data(), n=st.integers(10, 50), method=st.sampled_from(["spearman", "kendall"]))
def test_rank_methods_invariant_on_drawn_arrays(data: st.DataObject, n: int, method: str) -> None:
    """Hypothesis-drawn arrays (ties, repeated values) through v³ + v and arctan."""
    values = st.floats(-100, 100, allow_nan=False, allow_subnormal=False)
    x = data.draw(hnp.arrays(np.float64, n, elements=values), label="x")
    y = data.draw(hnp.arrays(np.float64, n, elements=values), label="y")
    b_size = 100 if method == "kendall" else B
    a = correlation(x, y, method=method, n_resamples=b_size)  # type: ignore[arg-type]
    b = correlation(_transformed(x, "cube_plus"), _transformed(y, "arctan"), method=method,  # type: ignore[arg-type]
                    n_resamples=b_size)
    _assert_same(a, b)


@pytest.mark.slow
@given(seed=SEEDS, n=st.integers(10, 80), k=st.integers(1, 2),
       fx=st.sampled_from(sorted(INCREASING)), fz=st.sampled_from(sorted(INCREASING)),
       clustered=st.booleans())
def test_partial_spearman_invariant_under_increasing_transforms(
    seed: int, n: int, k: int, fx: str, fz: str, clustered: bool
) -> None:
    """Ranks of x, y and every covariate are all the partial Spearman uses."""
    x, y, clusters = _xy(seed, n, ties=False)
    x, y = 3 * x, 3 * y
    z = np.random.default_rng(seed + 1).standard_normal((n, k)) + x[:, None] / 3
    c = clusters if clustered else None
    a = partial_correlation(x, y, z, clusters=c, n_resamples=B, seed=seed % 1000)
    zt = np.column_stack([_transformed(z[:, j], fz) for j in range(k)])
    b = partial_correlation(_transformed(x, fx), y, zt, clusters=c, n_resamples=B,
                            seed=seed % 1000)
    _assert_same(a, b)


# -- growth is scale-free -------------------------------------------------------------------------
# A power of two rescales every intermediate exactly (no rounding changes), so results agree to
# the last bit. Other constants change the rounding of sums and means at the 1e-16 level: the
# estimates then agree to ~1e-12 and a verdict could only change if a bootstrap replicate or a
# p-value sat within rounding of a margin, which continuous random data never do. Data with
# exactly constant stretches (hypothesis-drawn arrays) are tested with powers of two only: there
# a mean of equal values can round to a different neighbour and turn an exactly zero slope into
# ±1e-17 of either sign.
FACTORS = [2.0**-30, 0.25, 2.0, 1024.0, 0.1, 3.0, 7.3, 1e6]


@pytest.mark.slow
@settings(max_examples=100)
@given(seed=SEEDS, docs=st.integers(8, 14), factor=st.sampled_from(FACTORS),
       vector_factor=st.sampled_from(FACTORS),
       which=st.sampled_from(["linear_growth", "fixed_point", "fixed_point+vectors"]))
def test_growth_invariant_under_rescaling(
    seed: int, docs: int, factor: float, vector_factor: float, which: str
) -> None:
    with_vectors = which.endswith("vectors")
    lengths, values, groups, vectors = _growth(seed, docs, unique_lengths=with_vectors)
    kw: dict[str, Any] = {"n_resamples": B, "seed": seed % 1000}
    if which == "linear_growth":
        a = linear_growth(lengths, values, groups, **kw)
        b = linear_growth(lengths, factor * values, groups, **kw)
    else:
        v = vectors if with_vectors else None
        a = fixed_point(lengths, values, groups, v, **kw)
        b = fixed_point(lengths, factor * values, groups,
                        None if v is None else vector_factor * v, **kw)
    exact = math.frexp(factor)[0] == 0.5 and math.frexp(vector_factor)[0] == 0.5
    _assert_same(a, b, rtol=1e-15 if exact else 1e-9, scale=factor)


@pytest.mark.slow
@settings(max_examples=100)
@given(data=st.data(), docs=st.integers(10, 12), per_doc=st.integers(3, 6),
       exponent=st.integers(-20, 20))
def test_growth_invariant_under_power_of_two_rescaling_on_drawn_arrays(
    data: st.DataObject, docs: int, per_doc: int, exponent: int
) -> None:
    n = docs * per_doc
    lengths = data.draw(hnp.arrays(np.float64, n, elements=st.integers(1, 64).map(float)),
                        label="lengths")
    # magnitudes below 1e-6 become 0 so that no product underflows (underflow is not exact)
    elements = st.floats(-1e3, 1e3, allow_nan=False, allow_subnormal=False).map(
        lambda v: v if abs(v) >= 1e-6 else 0.0)
    noise = data.draw(hnp.arrays(np.float64, n, elements=elements), label="noise")
    values = data.draw(st.sampled_from([0.0, 3.0, -2.0]), label="slope") * lengths + noise
    groups = np.repeat(np.arange(docs), per_doc)
    factor = 2.0**exponent
    for statistic in (linear_growth, fixed_point):
        a = statistic(lengths, values, groups, n_resamples=B)
        b = statistic(lengths, factor * values, groups, n_resamples=B)
        _assert_same(a, b, rtol=0.0, scale=factor)


# -- input discipline -----------------------------------------------------------------------------
def _small(n: int) -> dict[str, np.ndarray]:
    """n rows over MIN_GROUPS documents (each seen at several lengths once n ≥ 2·MIN_GROUPS)."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n)
    return {"x": x, "y": x + rng.standard_normal(n), "z": rng.standard_normal((n, 2)),
            "lengths": np.arange(n) // MIN_GROUPS + 1.0, "docs": np.arange(n) % MIN_GROUPS,
            "vectors": rng.standard_normal((n, 3))}


TOO_FEW: dict[str, Callable[[dict[str, np.ndarray]], Result]] = {
    "spearman": lambda d: correlation(d["x"], d["y"], n_resamples=B),
    "pearson": lambda d: correlation(d["x"], d["y"], method="pearson"),
    "kendall": lambda d: correlation(d["x"], d["y"], method="kendall", n_resamples=100),
    "clustered": lambda d: correlation(d["x"], d["y"], clusters=d["docs"], n_resamples=B),
    "partial": lambda d: partial_correlation(d["x"], d["y"], d["z"], n_resamples=B),
    "linear_growth": lambda d: linear_growth(d["lengths"], d["y"], d["docs"], n_resamples=B),
    "fixed_point": lambda d: fixed_point(d["lengths"], d["y"], d["docs"], d["vectors"],
                                         n_resamples=B),
    "equivalence": lambda d: equivalence(d["y"], -1, 1, n_resamples=B),
}


@pytest.mark.parametrize("name", sorted(TOO_FEW))
def test_too_few_points_are_inconclusive_with_the_count(name: str) -> None:
    n = 11 if name == "partial" else 9  # partial with 2 covariates needs 12 points
    result = TOO_FEW[name](_small(n))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert re.search(rf"\b{n}\b", result.reason), result.reason
    assert result.n == n
    # one more point than needed is judged (not INCONCLUSIVE for want of data)
    grouped = name in ("clustered", "linear_growth", "fixed_point")
    enough = TOO_FEW[name](_small(n + 1 if name == "partial" else 2 * MIN_GROUPS if grouped
                                  else 12))
    assert "only" not in enough.reason, enough.reason


TWO_GROUPS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], Result]] = {
    "correlation": lambda x, y, g: correlation(x, y, clusters=g, n_resamples=B),
    "kendall": lambda x, y, g: correlation(x, y, method="kendall", clusters=g, n_resamples=100),
    "pearson": lambda x, y, g: correlation(x, y, method="pearson", clusters=g, n_resamples=B),
    "partial": lambda x, y, g: partial_correlation(x, y, x + y, clusters=g, n_resamples=B),
    "linear_growth": lambda x, y, g: linear_growth(np.arange(x.size) % 7 + 1.0, y, g,
                                                   n_resamples=B),
    "fixed_point": lambda x, y, g: fixed_point(np.arange(x.size) % 20 + 1.0, y, g,
                                               n_resamples=B),
    "equivalence": lambda x, y, g: equivalence(y, -1, 1, clusters=g, n_resamples=B),
}


@pytest.mark.parametrize("name", sorted(TWO_GROUPS))
def test_fewer_than_min_groups_are_inconclusive(name: str) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal(80)
    y = x + rng.standard_normal(80)
    few = np.repeat([f"doc-{i}" for i in range(MIN_GROUPS - 1)], 80 // (MIN_GROUPS - 1) + 1)[:80]
    result = TWO_GROUPS[name](x, y, few)
    assert result.verdict is Verdict.INCONCLUSIVE
    assert re.search(rf"only {MIN_GROUPS - 1} (clusters|documents)", result.reason), result.reason
    # MIN_GROUPS groups are enough to be judged on these grounds
    enough = np.repeat([f"doc-{i}" for i in range(MIN_GROUPS)], 80 // MIN_GROUPS)
    judged = TWO_GROUPS[name](x, y, enough)
    assert "only" not in judged.reason, judged.reason


def _with_bad(values: np.ndarray, rows: list[int], bad: float) -> np.ndarray:
    """A copy with ``bad`` at ``rows`` (in the first column of a matrix)."""
    out = np.array(values, dtype=float)
    if out.ndim == 2:
        out[rows, 0] = bad
    else:
        out[rows] = bad
    return out


NONFINITE: dict[str, Callable[[dict[str, np.ndarray], float], Any]] = {
    "x": lambda d, v: correlation(_with_bad(d["x"], [3, 7], v), d["y"], n_resamples=B),
    "y": lambda d, v: correlation(d["x"], _with_bad(d["y"], [3, 7], v), method="pearson"),
    "covariates": lambda d, v: partial_correlation(
        d["x"], d["y"], _with_bad(d["z"], [3, 7], v), n_resamples=B),
    "lengths": lambda d, v: linear_growth(_with_bad(d["lengths"], [3, 7], v), d["y"], d["docs"],
                                          n_resamples=B),
    "values": lambda d, v: fixed_point(d["lengths"], _with_bad(d["y"], [3, 7], v), d["docs"],
                                       n_resamples=B),
    "data": lambda d, v: equivalence(_with_bad(d["y"], [3, 7], v), -1, 1, n_resamples=B),
}


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("name", sorted(NONFINITE))
def test_nonfinite_input_raises_saying_how_many_and_where(name: str, bad: float) -> None:
    data = _small(30)
    with pytest.raises(NormtestError) as info:
        NONFINITE[name](data, bad)
    message = str(info.value)
    assert name in message, message
    assert re.search(r"\b2 non-finite", message), message
    assert "3, 7" in message, message


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_nonfinite_vectors_raise_saying_how_many_and_where(bad: float) -> None:
    data = _small(30)
    vectors = data["vectors"].copy()
    vectors[4, 1] = bad
    vectors[9, :] = bad
    with pytest.raises(NormtestError) as info:
        fixed_point(data["lengths"], data["y"], data["docs"], vectors, n_resamples=B)
    message = str(info.value)
    assert "vectors" in message and re.search(r"\b2 row", message), message
    assert re.search(r"\b4\b", message), message


@pytest.mark.parametrize("bad", [math.nan, math.inf])
@pytest.mark.parametrize("where", ["clusters", "groups"])
def test_nonfinite_group_labels_raise_saying_how_many_and_where(where: str, bad: float) -> None:
    data = _small(30)
    labels = _with_bad(data["docs"], [3, 7], bad)
    with pytest.raises(NormtestError) as info:
        if where == "clusters":
            correlation(data["x"], data["y"], clusters=labels, n_resamples=B)
        else:
            linear_growth(data["lengths"], data["y"], labels, n_resamples=B)
    message = str(info.value)
    assert where in message, message
    assert re.search(r"\b2\b", message), f"message does not say how many: {message}"
    assert "3, 7" in message, f"message does not say where: {message}"


MISMATCHED: dict[str, Callable[[dict[str, np.ndarray]], Any]] = {
    "x vs y": lambda d: correlation(d["x"], d["y"][:-1], n_resamples=B),
    "pearson": lambda d: correlation(d["x"][:-1], d["y"], method="pearson"),
    "clusters": lambda d: correlation(d["x"], d["y"], clusters=d["docs"][:-1], n_resamples=B),
    "covariates": lambda d: partial_correlation(d["x"], d["y"], d["z"][:-1], n_resamples=B),
    "partial x vs y": lambda d: partial_correlation(d["x"][:-1], d["y"], d["z"], n_resamples=B),
    "values": lambda d: linear_growth(d["lengths"], d["y"][:-1], d["docs"], n_resamples=B),
    "groups": lambda d: linear_growth(d["lengths"], d["y"], d["docs"][:-1], n_resamples=B),
    "fixed_point groups": lambda d: fixed_point(d["lengths"], d["y"], d["docs"][:-1],
                                                n_resamples=B),
    "vectors": lambda d: fixed_point(d["lengths"], d["y"], d["docs"], d["vectors"][:-1],
                                     n_resamples=B),
    "equivalence clusters": lambda d: equivalence(d["y"], -1, 1, clusters=d["docs"][:-1],
                                                  n_resamples=B),
}


@pytest.mark.parametrize("name", sorted(MISMATCHED))
def test_mismatched_lengths_raise(name: str) -> None:
    with pytest.raises(NormtestError) as info:
        MISMATCHED[name](_small(30))
    message = str(info.value)
    assert "30" in message and "29" in message, message


@pytest.mark.slow
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40))
def test_holm_and_bh_agree_with_statsmodels(p: list[float]) -> None:
    """The hand-written adjustments (statsmodels' multipletests runs gc.collect per call, why
    they are hand-written; that collection, a fifth of a second with the models of the session
    in memory, is left out here: it frees memory and changes no number)."""
    from unittest import mock

    from statsmodels.stats.multitest import multipletests

    from normtest.stats.multiplicity import benjamini_hochberg, holm

    with mock.patch("gc.collect", return_value=0):
        expected_holm = multipletests(p, method="holm")[1]
        expected_bh = multipletests(p, method="fdr_bh")[1]
    np.testing.assert_allclose(holm(p), expected_holm, atol=1e-12)
    np.testing.assert_allclose(benjamini_hochberg(p), expected_bh, atol=1e-12)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(trials=st.integers(1, 60), data=st.data(),
       threshold=st.floats(0.0, 1.0), alpha=st.sampled_from([0.01, 0.05, 0.1, 0.25]))
def test_a_binomial_share_reads_bounds_and_p_values_alike(trials: int, data: Any,
                                                          threshold: float, alpha: float) -> None:
    """Clopper–Pearson bounds and binomial tail p-values agree: lower(α) > t ⇔ p_greater(t) < α
    (and the mirror image), the estimate k/n lies inside every interval, and the distribution
    survives the report's JSON."""
    from normtest.verdict.sampling import Sampling

    successes = data.draw(st.integers(0, trials))
    sampling = Sampling.binomial(successes, trials)
    assert (sampling.lower(alpha) > threshold) == (sampling.p_greater(threshold) < alpha)
    assert (sampling.upper(alpha) < threshold) == (sampling.p_less(threshold) < alpha)
    low, high = sampling.interval(1 - 2 * alpha)
    assert 0.0 <= low <= successes / trials <= high <= 1.0 and low < high
    again = Sampling.from_dict(sampling.to_dict())
    assert again.interval(0.9) == sampling.interval(0.9)
