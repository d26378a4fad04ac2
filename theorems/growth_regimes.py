"""Growth regimes of the squared norm under a shared component (docs/theory.md §4 and §6).

Statement. Let token vectors share a component, v_i = μ + ε_i, and let s_F(L) = ‖F(v_1 … v_L)‖² be
the squared norm of the composition of the first L tokens.

1. Balanced deviations (Σ_{i ≤ n} ε_i = 0), exactly:
   s_sum(n) = n²‖μ‖² (quadratic), s_sqrt_n(n) = n‖μ‖² (linear), s_mean(n) = ‖μ‖² (fixed point),
   s_f_ind(n) = n‖μ‖² + Σ‖ε_i‖² (additive, linear).
2. Bounded deviations (‖ε_i‖ ≤ δ < ‖μ‖), for every prefix length L, with m = ‖μ‖:
   (m − δ)² ≤ s_sum(L)/L² , s_sqrt_n(L)/L , s_mean(L) ≤ (m + δ)²;
   s_f_ind(L) − s_f_ind(L − 1) = ‖v_L‖² ∈ [(m − δ)², (m + δ)²], so s_f_ind rises strictly and
   linearly; the prefix mean stays in the ball B(μ, δ), so its direction stays within
   arcsin(δ/m) of μ (fixed point); s_f_inf never decreases (each step is ≥ its larger input).
3. In expectation, for i.i.d. zero-mean ε with E‖ε‖² = σ²:
   E s_sum(n) = n²‖μ‖² + nσ², E s_sqrt_n(n) = n‖μ‖² + σ², E s_mean(n) = ‖μ‖² + σ²/n,
   checked exactly by enumerating every sequence over a small finite support.

Source: docs/theory.md §4 (the composition table's growth column) and §6 (constant entropy rate);
Amigó et al., EMNLP Findings 2025 (scaled averages grow linearly, averages converge);
Genzel & Charniak, "Entropy Rate Constancy in Text", ACL 2002 (information grows linearly with
length).
"""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from normtest.errors import NormtestError
from normtest.geometry.compose import compose, compose_batch
from normtest.testing.strategies import (
    SharedComponentSequence,
    finite_floats,
    shared_component_sequences,
    unigram_distributions,
)


def _prefix_squared_norms(tokens: np.ndarray, name: str) -> np.ndarray:
    """s(L) for L = 1 … n, all prefixes composed in one batch."""
    n = tokens.shape[0]
    flat = np.concatenate([tokens[:length] for length in range(1, n + 1)])
    offsets = np.concatenate([[0], np.cumsum(np.arange(1, n + 1))])
    return np.sum(compose_batch(flat, offsets, name) ** 2, axis=1)


@given(shared_component_sequences(balanced=True))
def test_balanced_deviations_exact_regimes(seq: SharedComponentSequence) -> None:
    """Σ ε_i = 0: sum quadratic, sqrt_n linear, mean fixed, f_ind additive, all exactly."""
    tokens = seq.tokens
    n = tokens.shape[0]
    m2 = float(seq.mu @ seq.mu)
    tol = 1e-10 * n * n * (m2 + 1.0)
    assert abs(float(np.sum(compose(tokens, "sum") ** 2)) - n * n * m2) <= tol
    assert abs(float(np.sum(compose(tokens, "sqrt_n") ** 2)) - n * m2) <= tol
    assert abs(float(np.sum(compose(tokens, "mean") ** 2)) - m2) <= tol
    f_ind = float(np.sum(compose(tokens, "f_ind") ** 2))
    assert abs(f_ind - (n * m2 + float(np.sum(seq.deviations**2)))) <= tol


@given(shared_component_sequences())
def test_bounded_deviations_growth_envelopes(seq: SharedComponentSequence) -> None:
    """‖ε_i‖ ≤ δ < ‖μ‖: every prefix lies in the quadratic / linear / constant envelopes."""
    tokens = seq.tokens
    lengths = np.arange(1, tokens.shape[0] + 1, dtype=float)
    m = float(np.linalg.norm(seq.mu))
    lo, hi = (m - seq.delta) ** 2, (m + seq.delta) ** 2
    slack = 1e-10 * (hi + 1.0)
    for name, scaled in (
        ("sum", _prefix_squared_norms(tokens, "sum") / lengths**2),
        ("sqrt_n", _prefix_squared_norms(tokens, "sqrt_n") / lengths),
        ("mean", _prefix_squared_norms(tokens, "mean")),
    ):
        assert np.all(scaled >= lo - slack), name
        assert np.all(scaled <= hi + slack), name
    f_ind = _prefix_squared_norms(tokens, "f_ind")
    steps = np.diff(np.concatenate([[0.0], f_ind]))
    assert np.all(steps >= lo - slack * lengths) and np.all(steps <= hi + slack * lengths)


@given(shared_component_sequences())
def test_mean_direction_converges_to_shared_component(seq: SharedComponentSequence) -> None:
    """Every prefix mean lies within δ of μ, so its cosine with μ is ≥ √(1 − δ²/‖μ‖²)."""
    tokens = seq.tokens
    n = tokens.shape[0]
    flat = np.concatenate([tokens[:length] for length in range(1, n + 1)])
    offsets = np.concatenate([[0], np.cumsum(np.arange(1, n + 1))])
    means = compose_batch(flat, offsets, "mean")
    m = float(np.linalg.norm(seq.mu))
    assert np.all(np.linalg.norm(means - seq.mu, axis=1) <= seq.delta * (1 + 1e-12) + 1e-12 * m)
    cosines = means @ seq.mu / (np.linalg.norm(means, axis=1) * m)
    assert np.all(cosines >= np.sqrt(1.0 - (seq.delta / m) ** 2) - 1e-9)


@given(shared_component_sequences())
def test_f_inf_prefix_norm_never_decreases(seq: SharedComponentSequence) -> None:
    """s_f_inf(L) ≥ s_f_inf(L − 1) and ≥ max_{i ≤ L} ‖v_i‖²."""
    tokens = seq.tokens
    try:
        s = _prefix_squared_norms(tokens, "f_inf")
    except NormtestError as err:  # impossible here: u + v = 0 needs opposite tokens, and
        raise AssertionError("δ < ‖μ‖ keeps every prefix in a half-space") from err
    assert np.all(np.diff(s) >= -1e-12 * s[1:])
    largest = np.maximum.accumulate(np.sum(tokens**2, axis=1))
    assert np.all(s >= largest * (1 - 1e-12))


@st.composite
def _finite_noise(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """μ, a zero-mean finite support (k, d) with probabilities, and a sequence length n."""
    d = draw(st.integers(1, 3))
    k = draw(st.integers(1, 3))
    mu = draw(hnp.arrays(np.float64, d, elements=finite_floats(-3.0, 3.0)))
    support = draw(hnp.arrays(np.float64, (k, d), elements=finite_floats(-3.0, 3.0)))
    probs = np.ones(1) if k == 1 else draw(unigram_distributions(k, k, max_logit=2.0))
    support = support - probs @ support
    n = draw(st.integers(1, 4))
    return mu, support, probs, n


@given(_finite_noise())
def test_expected_squared_norms_by_enumeration(case: tuple[np.ndarray, np.ndarray, np.ndarray,
                                                          int]) -> None:
    """Exact expectations over all k^n sequences: n²m² + nσ², nm² + σ², m² + σ²/n."""
    mu, support, probs, drawn = case
    n = int(drawn)
    m2 = float(mu @ mu)
    sigma2 = float(probs @ np.sum(support**2, axis=1))
    expected = {"sum": 0.0, "sqrt_n": 0.0, "mean": 0.0}
    for idx in itertools.product(range(len(probs)), repeat=n):
        weight = float(np.prod(probs[list(idx)]))
        tokens = mu + support[list(idx)]
        for name in expected:
            expected[name] += weight * float(np.sum(compose(tokens, name) ** 2))
    tol = 1e-9 * (n * n * m2 + n * sigma2 + 1.0)
    assert abs(expected["sum"] - (n * n * m2 + n * sigma2)) <= tol
    assert abs(expected["sqrt_n"] - (n * m2 + sigma2)) <= tol
    assert abs(expected["mean"] - (m2 + sigma2 / n)) <= tol
