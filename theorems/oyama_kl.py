"""Oyama's relation: ‖u_w‖² ≈ 2·KL(w) for a log-linear model with Zipfian-whitened contexts.

Statement. Let contexts c have probabilities p(c) and vectors v_c, and let a word w with vector u
generate contexts by the log-linear model P(c | w) = p(c)·exp⟨u, v_c⟩ / Z(u). Its information gain
is KL(w) = Σ_c P(c | w) log(P(c | w)/p(c)) = E_{P(·|w)}[PMI(w, c)]. Writing Σ_p for the p-weighted
covariance of the context vectors and W = max_c⟨û, v_c⟩ − min_c⟨û, v_c⟩ for their spread along
û = u/‖u‖,

    |2·KL(w) − uᵀ Σ_p u| ≤ ‖u‖³ W³ / 6.

Proof sketch: with A(t) = log Σ_c p(c) e^{t⟨û, v_c⟩}, KL = t A′(t) − A(t) = ∫_0^t s A″(s) ds at
t = ‖u‖; A″(s) is the variance of ⟨û, v⟩ under the tilted distribution and |A‴(s)| (its third
central moment) ≤ W · W²/4, so |A″(s) − A″(0)| ≤ s W³/4 and A″(0) = ûᵀ Σ_p û. After Zipfian
whitening (centre with the p-weighted mean, make Σ_p the identity;
:mod:`normtest.geometry.transforms`) the relation becomes Oyama's

    ‖u‖² = 2·KL(w) + r,   |r| ≤ ‖u‖³ W³ / 6,  i.e. relative error ≤ ‖u‖ W³ / 6,

a second-order approximation that is accurate in the small-norm regime ‖u‖ W³ ≪ 1 (for example
within 5 % when ‖u‖ W³ ≤ 0.3). The remainder is third order: it does not vanish in general.

Source: Oyama, Yokoi & Shimodaira, "Norm of Word Embedding Encodes Information Gain", EMNLP 2023
(‖u_w‖² ≈ 2·KL(w) for SGNS-like models with whitened contexts); Yokoi et al., "Zipfian Whitening",
NeurIPS 2024 (the p-weighted centring and whitening); docs/theory.md §2 (KL) and §3 (C2′). The
explicit remainder bound is derived here (proof sketch above).
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given

from normtest.errors import NormtestError
from normtest.geometry.transforms import make_transform
from normtest.testing.strategies import ContextModel, context_models


def _kl_and_pmi(contexts: np.ndarray, probs: np.ndarray, u: np.ndarray) -> tuple[float, float]:
    """KL(P(·|w) ‖ p) computed stably, and E_{P(·|w)}[PMI(w, c)] computed from the definition."""
    scores = contexts @ u
    shift = float(scores.max())
    log_z = shift + float(np.log(probs @ np.exp(scores - shift)))  # A(u) = log Σ p e^{⟨u,v⟩}
    posterior = probs * np.exp(scores - log_z)  # P(c | w)
    kl = float(posterior @ scores) - log_z  # ⟨u, E[v]⟩ − A(u)
    pmi = np.log(posterior) - np.log(probs)  # log P(c|w)/p(c) = log P(w,c) − log P(w) − log P(c)
    return kl, float(posterior @ pmi)


def _word_in(model: ContextModel, dim: int) -> np.ndarray:
    """The model's word vector moved into ``dim`` coordinates, keeping its norm."""
    word = model.word
    raw = word[:dim] if word.size >= dim else np.pad(word, (0, dim - word.size))
    peak = float(np.max(np.abs(raw)))
    unit = np.eye(dim)[0] if peak == 0.0 else raw / peak
    return np.asarray(unit / np.linalg.norm(unit) * float(np.linalg.norm(model.word)))


@given(context_models())
def test_kl_second_order_bound_raw_contexts(model: ContextModel) -> None:
    """|2·KL − uᵀΣ_p u| ≤ ‖u‖³W³/6 for raw (unwhitened) context vectors, and KL = E[PMI]."""
    v, p = model.contexts, model.context_probs
    u = model.word
    t = float(np.linalg.norm(u))
    spread = float(np.ptp(v @ (u / t)))
    assume(t * spread <= 20.0)  # keep e^{t·W} within float range for the direct PMI form
    mean = p @ v
    cov = (v - mean).T @ (p[:, None] * (v - mean))
    kl, expected_pmi = _kl_and_pmi(v, p, u)
    quad = float(u @ cov @ u)
    bound = t**3 * spread**3 / 6.0
    rounding = 1e-10 * (1.0 + quad + t * spread)
    assert abs(2.0 * kl - quad) <= bound + rounding
    assert abs(kl - expected_pmi) <= 1e-9 * (1.0 + abs(kl) + t * spread)
    assert kl >= -rounding


@given(context_models())
def test_oyama_norm_equals_twice_kl_after_zipfian_whitening(model: ContextModel) -> None:
    """With Zipf-whitened contexts, |‖u‖² − 2·KL| ≤ ‖u‖³W³/6; within 5 % when ‖u‖W³ ≤ 0.3."""
    v, p = model.contexts, model.context_probs
    transform = make_transform("whiten_zipf")
    try:
        whitened = transform.fit_apply(v, p)
    except NormtestError:  # only a sample without spread may refuse whitening
        assert np.ptp(v, axis=0).max() <= 1e-12 * (np.abs(v).max() + 1e-300)
        return
    # The transform delivers the geometry the theorem needs, Σ p(c) v_c = 0 and Σ_p = I, up to
    # rounding amplified by the sample's condition number κ (whitening divides by s_min).
    assert transform.singular_values_ is not None
    kappa = float(np.sqrt(p @ np.sum(v**2, axis=1)) / transform.singular_values_.min())
    cov = whitened.T @ (p[:, None] * whitened)
    cov_error = float(np.max(np.abs(cov - np.eye(cov.shape[0]))))
    assert cov_error <= 1e-9 + 10 * np.finfo(float).eps * kappa * cov.shape[0]
    assert float(np.max(np.abs(p @ whitened))) <= 1e-9 + 10 * np.finfo(float).eps * kappa
    u = _word_in(model, whitened.shape[1])
    t = float(np.linalg.norm(u))
    spread = float(np.ptp(whitened @ (u / t)))
    assume(t * spread <= 20.0)
    kl, _ = _kl_and_pmi(whitened, p, u)
    bound = t**3 * spread**3 / 6.0
    whitening_error = abs(t**2 - float(u @ cov @ u))  # ≤ cov_error · t², rounding of the fit
    assert abs(t**2 - 2.0 * kl) <= bound + whitening_error + 1e-10 * (1.0 + t**2)
    if t * spread**3 <= 0.3:  # the small-norm regime: the second-order relation is within 5 %
        assert abs(2.0 * kl / t**2 - 1.0) <= 0.05 + cov_error + 1e-9
