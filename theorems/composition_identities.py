"""Composition identities of docs/theory.md §4, exact up to float rounding.

Statements, for vectors u, v, token vectors v_1 … v_n and the ICDS family
F_{α,β}(u, v) = (u + v)/‖u + v‖ · √(α(‖u‖² + ‖v‖²) − β⟨u, v⟩) folded left to right:

1. Definition: ‖F_{α,β}(u, v)‖² = α(‖u‖² + ‖v‖²) − β⟨u, v⟩, F points along u + v, F(u, v) = F(v, u).
2. F_{1,−2}(u, v) = u + v and F_{1/4,−1/2}(u, v) = (u + v)/2 (so ``f_avg`` of two is their mean).
3. f_ind = F_{1,0}: squared norms add, ‖f_ind(v_1 … v_n)‖² = Σ ‖v_i‖².
4. f_joint = F_{1,1}: ‖f_joint(u, v)‖² = ‖u‖² + ‖v‖² − ⟨u, v⟩ at each step of the fold.
5. f_inf (β = min(‖u‖,‖v‖)/max(‖u‖,‖v‖)): ‖f_inf(u, v)‖² ≥ max(‖u‖², ‖v‖²), so the fold is never
   below the largest token's squared norm.
6. ``sqrt_n`` of n copies of v has squared norm n‖v‖²; ``mean`` of n copies is v; in general
   sqrt_n = √n · mean = sum/√n.
7. Every composition of a single vector returns it.
8. Folded ``f_avg`` is the exponentially weighted average Σ w_i v_i with w_1 = 2^{-(n-1)} and
   w_i = 2^{-(n-i+1)} for i ≥ 2 (the right fold mirrors the weights); it equals ``mean`` only for
   n ≤ 2. ``sum``, ``mean`` and ``sqrt_n`` do not depend on the fold direction.

Where u + v = 0 and the squared norm is positive, F has no direction and raises NormtestError
(the documented convention in :mod:`normtest.geometry.compose`); the properties check that too.

Source: docs/theory.md §4; Amigó et al., "Information Theory-based Compositional Distributional
Semantics", Computational Linguistics 48(4), 2022 (F_{α,β}, f_ind, f_joint, f_inf, f_avg);
Amigó et al., EMNLP Findings 2025 (the scaled average ``sqrt_n``, reconstructed).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from normtest.errors import NormtestError
from normtest.geometry.compose import (
    ZERO_SUM_RTOL,
    compose,
    composition_names,
    f_alpha_beta,
    f_composition,
)
from normtest.testing.strategies import finite_floats, token_matrices, vector_pairs

FloatPair = tuple[np.ndarray, np.ndarray]


def _sq(x: np.ndarray) -> float:
    """Squared Euclidean norm."""
    return float(np.dot(x, x))


def _no_direction(u: np.ndarray, v: np.ndarray) -> bool:
    """Whether u + v counts as zero under compose's convention."""
    return bool(np.linalg.norm(u + v) <= ZERO_SUM_RTOL * (np.linalg.norm(u) + np.linalg.norm(v)))


@st.composite
def _alpha_beta(draw: st.DrawFn) -> tuple[float, float]:
    """α, β with α ≥ |β|/2, where F's square root is defined for all inputs."""
    beta = draw(finite_floats(-4.0, 4.0))
    alpha = abs(beta) / 2.0 + draw(finite_floats(0.0, 3.0))
    return alpha, beta


@given(vector_pairs(), _alpha_beta())
def test_f_definition_norm_direction_symmetry(pair: FloatPair, ab: tuple[float, float]) -> None:
    """‖F(u, v)‖² = α(‖u‖²+‖v‖²) − β⟨u,v⟩, F ∥ u + v, and F(u, v) = F(v, u)."""
    u, v = pair
    alpha, beta = ab
    q = alpha * (_sq(u) + _sq(v)) - beta * float(np.dot(u, v))
    scale = (abs(alpha) + abs(beta)) * (_sq(u) + _sq(v)) + 1e-300
    if _no_direction(u, v) and q > 1e-12 * scale and beta != -2.0 * alpha:
        with pytest.raises(NormtestError, match="u \\+ v = 0"):
            f_alpha_beta(u, v, alpha, beta)
        return
    out = f_alpha_beta(u, v, alpha, beta)
    assert abs(_sq(out) - max(q, 0.0)) <= 1e-9 * scale
    np.testing.assert_array_equal(out, f_alpha_beta(v, u, alpha, beta))
    s = u + v
    if np.linalg.norm(out) > 1e-6 * np.sqrt(scale) and np.linalg.norm(s) > 1e-6 * np.sqrt(scale):
        cosine = np.dot(out, s) / (np.linalg.norm(out) * np.linalg.norm(s))
        assert cosine >= 1 - 1e-9


@given(vector_pairs())
def test_sum_and_average_special_cases(pair: FloatPair) -> None:
    """F_{1,−2}(u, v) = u + v and F_{1/4,−1/2}(u, v) = f_avg = (u + v)/2."""
    u, v = pair
    np.testing.assert_allclose(f_alpha_beta(u, v, 1.0, -2.0), u + v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(f_alpha_beta(u, v, 0.25, -0.5), (u + v) / 2, rtol=1e-12, atol=1e-12)
    tokens = np.stack([u, v])
    np.testing.assert_allclose(compose(tokens, "f_avg"), tokens.mean(axis=0), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(compose(tokens, "F[1,-2]"), u + v, rtol=1e-12, atol=1e-12)


def _fold_or_error(tokens: np.ndarray, name: str) -> np.ndarray | None:
    """compose(), or None when it raised because some step had u + v = 0."""
    try:
        return compose(tokens, name)
    except NormtestError as err:
        assert "u + v = 0" in str(err)
        return None


@given(token_matrices())
def test_f_ind_squared_norms_add(tokens: np.ndarray) -> None:
    """‖f_ind(v_1 … v_n)‖² = Σ ‖v_i‖², in either fold direction."""
    total = float(np.sum(tokens**2))
    for direction in ("left", "right"):
        try:
            out = compose(tokens, "f_ind", direction=direction)
        except NormtestError as err:
            assert "u + v = 0" in str(err)
            continue
        assert abs(_sq(out) - total) <= 1e-9 * (total + 1e-300)


@given(token_matrices())
def test_f_joint_step_identity(tokens: np.ndarray) -> None:
    """Each step of the f_joint fold has squared norm ‖u‖² + ‖v‖² − ⟨u, v⟩."""
    acc = tokens[0]
    for k in range(1, tokens.shape[0]):
        v = tokens[k]
        expected = _sq(acc) + _sq(v) - float(np.dot(acc, v))
        scale = _sq(acc) + _sq(v) + 1e-300
        if _no_direction(acc, v) and expected > 1e-12 * scale:
            with pytest.raises(NormtestError):
                compose(tokens[: k + 1], "f_joint")
            return
        nxt = f_alpha_beta(acc, v, 1.0, 1.0)
        assert abs(_sq(nxt) - expected) <= 1e-9 * scale
        acc = nxt
    np.testing.assert_allclose(compose(tokens, "f_joint"), acc, rtol=1e-9,
                               atol=1e-9 * np.sqrt(np.sum(tokens**2)))


@given(token_matrices())
def test_f_inf_never_below_largest_input(tokens: np.ndarray) -> None:
    """‖f_inf(u, v)‖² ≥ max(‖u‖², ‖v‖²) at each step, so the fold never drops below max_i ‖v_i‖²."""
    out = _fold_or_error(tokens, "f_inf")
    if out is None:
        return
    largest = float(np.max(np.sum(tokens**2, axis=1)))
    assert _sq(out) >= largest * (1 - 1e-12)
    u, v = tokens[0], tokens[-1]
    if not _no_direction(u, v):
        pair = compose(np.stack([u, v]), "f_inf")
        assert _sq(pair) >= max(_sq(u), _sq(v)) * (1 - 1e-12)


@given(vector_pairs(min_dim=1, max_dim=5), st.integers(1, 40))
def test_copies_sqrt_n_and_mean(pair: FloatPair, n: int) -> None:
    """sqrt_n of n copies of v has squared norm n‖v‖²; mean of n copies returns v."""
    v = pair[0]
    copies = np.tile(v, (n, 1))
    assert abs(_sq(compose(copies, "sqrt_n")) - n * _sq(v)) <= 1e-12 * n * (_sq(v) + 1e-300)
    np.testing.assert_allclose(compose(copies, "mean"), v, rtol=1e-13, atol=0)


@given(token_matrices())
def test_sum_mean_sqrt_n_relations(tokens: np.ndarray) -> None:
    """sqrt_n = √n·mean = sum/√n, and none depends on the fold direction."""
    n = tokens.shape[0]
    total = compose(tokens, "sum")
    atol = 1e-12 * float(np.sum(np.abs(tokens)) + 1.0)
    np.testing.assert_allclose(compose(tokens, "sqrt_n"), total / np.sqrt(n), rtol=1e-12, atol=atol)
    np.testing.assert_allclose(compose(tokens, "sqrt_n"), np.sqrt(n) * compose(tokens, "mean"),
                               rtol=1e-12, atol=atol)
    for name in ("sum", "mean", "sqrt_n"):
        right = compose(tokens, name, direction="right")
        np.testing.assert_array_equal(compose(tokens, name), right)


@given(token_matrices(min_tokens=1, max_tokens=1), _alpha_beta())
def test_single_vector_is_returned(tokens: np.ndarray, ab: tuple[float, float]) -> None:
    """Every composition of one vector returns that vector, exactly."""
    for name in composition_names():
        np.testing.assert_array_equal(compose(tokens, name), tokens[0])
    np.testing.assert_array_equal(f_composition(*ab)(tokens), tokens[0])


@given(token_matrices(min_tokens=1, max_tokens=8))
def test_f_avg_fold_is_exponential_average(tokens: np.ndarray) -> None:
    """Left-folded f_avg weights v_1 by 2^-(n-1), v_i (i ≥ 2) by 2^-(n-i+1); right fold mirrors."""
    n = tokens.shape[0]
    weights = np.array([2.0 ** -(n - max(i, 2) + 1) for i in range(1, n + 1)])
    assert abs(weights.sum() - 1.0) < 1e-15
    atol = 1e-12 * float(np.max(np.abs(tokens)) + 1.0)
    np.testing.assert_allclose(compose(tokens, "f_avg"), weights @ tokens, rtol=1e-12, atol=atol)
    np.testing.assert_allclose(compose(tokens, "f_avg", direction="right"),
                               weights[::-1] @ tokens, rtol=1e-12, atol=atol)
