"""Hypothesis strategies for the theorems and property tests: distributions, vectors, embeddings.

Not imported by ``import normtest``; the theorem modules and tests import it. Every strategy draws
small objects (vocabularies of at most a dozen words, dimensions of at most a few), so that 200
examples per property run in well under a second each. Floats exclude NaN, infinity and subnormals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.typing import NDArray

from normtest.models.synthetic import JointDistribution, OracleModel, nearest_psd_pmi

__all__ = [
    "ContextModel",
    "SharedComponentSequence",
    "context_models",
    "exact_oracles",
    "finite_floats",
    "joint_distributions",
    "psd_joint_distributions",
    "shared_component_sequences",
    "token_matrices",
    "unigram_distributions",
    "vector_pairs",
]

FloatArray = NDArray[np.float64]


def finite_floats(low: float = -10.0, high: float = 10.0) -> st.SearchStrategy[float]:
    """Finite float64 values in [low, high], no subnormals."""
    return st.floats(low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def _matrices(
    rows: int, cols: int, low: float = -10.0, high: float = 10.0
) -> st.SearchStrategy[FloatArray]:
    """(rows, cols) float64 arrays with finite entries in [low, high]."""
    return hnp.arrays(np.float64, (rows, cols), elements=finite_floats(low, high))


def _unit(x: FloatArray) -> FloatArray:
    """x scaled to unit norm (the first axis when x is zero), safe against underflow."""
    top = float(np.max(np.abs(x)))
    if top == 0.0:
        return np.eye(x.size)[0]
    y = x / top
    return np.asarray(y / np.linalg.norm(y), dtype=np.float64)


@st.composite
def vector_pairs(
    draw: st.DrawFn, min_dim: int = 1, max_dim: int = 5, bound: float = 10.0
) -> tuple[FloatArray, FloatArray]:
    """Two vectors of one random dimension."""
    d = draw(st.integers(min_dim, max_dim))
    both = draw(_matrices(2, d, -bound, bound))
    return both[0], both[1]


@st.composite
def token_matrices(
    draw: st.DrawFn,
    min_tokens: int = 1,
    max_tokens: int = 7,
    min_dim: int = 1,
    max_dim: int = 5,
    bound: float = 10.0,
) -> FloatArray:
    """An (n, d) array of token vectors."""
    n = draw(st.integers(min_tokens, max_tokens))
    d = draw(st.integers(min_dim, max_dim))
    return draw(_matrices(n, d, -bound, bound))


@st.composite
def unigram_distributions(
    draw: st.DrawFn, min_words: int = 2, max_words: int = 8, max_logit: float = 6.0
) -> FloatArray:
    """Positive probabilities summing to one, from softmax of bounded logits."""
    n = draw(st.integers(min_words, max_words))
    logits = draw(hnp.arrays(np.float64, n, elements=finite_floats(-max_logit, max_logit)))
    w = np.exp(logits - logits.max())
    return np.asarray(w / w.sum(), dtype=np.float64)


@st.composite
def joint_distributions(
    draw: st.DrawFn, min_words: int = 2, max_words: int = 8, max_abs_pmi: float = 3.0
) -> JointDistribution:
    """A JointDistribution: random unigram, symmetric PMI in ±max_abs_pmi capped at min IC."""
    p = draw(unigram_distributions(min_words, max_words))
    n = p.size
    raw = draw(_matrices(n, n, -max_abs_pmi, max_abs_pmi))
    m = np.triu(raw, 1)
    m = m + m.T
    ic = -np.log(p)
    m = np.minimum(m, np.minimum.outer(ic, ic))
    return JointDistribution.from_pmi(p, m)


def psd_joint_distributions(
    min_words: int = 2, max_words: int = 8, max_abs_pmi: float = 3.0
) -> st.SearchStrategy[JointDistribution]:
    """Joint distributions whose PMI matrix, diagonal included, is PSD (nearest_psd_pmi)."""
    return joint_distributions(min_words, max_words, max_abs_pmi).map(nearest_psd_pmi)


@st.composite
def exact_oracles(
    draw: st.DrawFn, min_words: int = 2, max_words: int = 8, max_extra_dim: int = 3
) -> OracleModel:
    """An OracleModel with ⟨e(x), e(y)⟩ = a·PMI(x, y) + b exactly, a ∈ [0.1, 10], b ∈ [0, 10]."""
    dist = draw(psd_joint_distributions(min_words, max_words))
    a = draw(finite_floats(0.1, 10.0))
    b = draw(finite_floats(0.0, 10.0))
    dim = dist.n_words + draw(st.integers(0, max_extra_dim))
    seed = draw(st.integers(0, 2**16))
    return OracleModel(dist, a=a, b=b, dim=dim, seed=seed)


@dataclass(frozen=True)
class SharedComponentSequence:
    """Token vectors v_i = μ + ε_i with ‖ε_i‖ ≤ delta < ‖μ‖ (docs/theory.md §4, growth column)."""

    mu: FloatArray
    deviations: FloatArray
    delta: float

    @property
    def tokens(self) -> FloatArray:
        """The token vectors μ + ε_i, one row each."""
        return np.asarray(self.mu[None, :] + self.deviations, dtype=np.float64)


@st.composite
def shared_component_sequences(
    draw: st.DrawFn, min_tokens: int = 2, max_tokens: int = 24, max_dim: int = 4,
    balanced: bool = False,
) -> SharedComponentSequence:
    """A shared component μ (‖μ‖ ∈ [0.5, 5]) plus deviations of norm ≤ delta = r‖μ‖, r ≤ 0.9.

    ``balanced=True`` centres the deviations (Σ ε_i = 0); delta is then their largest norm.
    """
    n = draw(st.integers(min_tokens, max_tokens))
    d = draw(st.integers(1, max_dim))
    mu = _unit(draw(_matrices(1, d, -1.0, 1.0))[0]) * draw(finite_floats(0.5, 5.0))
    raw = draw(_matrices(n, d, -1.0, 1.0))
    if balanced:
        raw = raw - raw.mean(axis=0)
    peak = float(np.max(np.abs(raw)))
    raw = raw / peak if peak > 1e-9 else np.zeros_like(raw)  # below: only rounding residue
    ratio = draw(finite_floats(0.0, 0.9))
    top = float(np.linalg.norm(raw, axis=1).max())
    eps = raw * (0.0 if top == 0.0 else ratio * float(np.linalg.norm(mu)) / top)
    if balanced:
        eps = eps - eps.mean(axis=0)
    delta = float(np.linalg.norm(eps, axis=1).max())
    return SharedComponentSequence(mu=mu, deviations=eps, delta=delta)


@dataclass(frozen=True)
class ContextModel:
    """A log-linear model P(c|w) ∝ p(c)·exp⟨u, v_c⟩ with context vectors v_c and unigram p(c)."""

    contexts: FloatArray
    context_probs: FloatArray
    word: FloatArray


@st.composite
def context_models(
    draw: st.DrawFn, min_contexts: int = 3, max_contexts: int = 10, max_dim: int = 4,
    min_word_norm: float = 1e-3, max_word_norm: float = 2.0,
) -> ContextModel:
    """Raw context vectors (k, d), context probabilities, and a word vector of bounded norm."""
    k = draw(st.integers(min_contexts, max_contexts))
    d = draw(st.integers(1, max_dim))
    contexts = draw(_matrices(k, d, -5.0, 5.0))
    if np.ptp(contexts, axis=0).max() <= 1e-6 * (1.0 + np.abs(contexts).max()):
        contexts[0, 0] += 1.0  # contexts that (nearly) coincide carry no information to whiten
    probs = draw(unigram_distributions(k, k, max_logit=3.0))
    word = _unit(draw(_matrices(1, d, -1.0, 1.0))[0]) * draw(
        finite_floats(min_word_norm, max_word_norm)
    )
    return ContextModel(contexts=contexts, context_probs=probs, word=word)
