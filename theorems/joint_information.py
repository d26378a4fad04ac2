"""Joint information: IC(x, y) = IC(x) + IC(y) − PMI(x, y), and f_joint reproduces it.

Statement. With IC(x, y) = −log P(x, y),

    IC(x, y) = IC(x) + IC(y) − PMI(x, y),   IC(x, x) = IC(x),
    max(IC(x), IC(y)) ≤ IC(x, y),   and   IC(x, y) ≤ IC(x) + IC(y)  ⇔  PMI(x, y) ≥ 0.

Corollary for embeddings. If ⟨e(x), e(y)⟩ = a·PMI(x, y) + b for all x, y, the diagonal included
(C1 and C2), the composition f_joint = F_{1,1}, whose squared norm is ‖u‖² + ‖v‖² − ⟨u, v⟩, gives

    ‖f_joint(e(x), e(y))‖² = a·IC(x, y) + b,

the same affine map that relates single-word squared norms to IC: f_joint carries the
correspondence from words to pairs.

Source: docs/theory.md §2 (joint information) and §3 (the theorem's composition clause); Amigó et
al., Computational Linguistics 48(4), 2022 (ICDS, F_{α,β} with α = β = 1); Amigó et al., EMNLP
Findings 2025.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from normtest.errors import NormtestError
from normtest.geometry.compose import ZERO_SUM_RTOL, compose, compose_batch
from normtest.models.synthetic import JointDistribution, OracleModel
from normtest.testing.strategies import exact_oracles, joint_distributions


@given(joint_distributions(max_words=10))
def test_joint_information_decomposes(dist: JointDistribution) -> None:
    """−log P(x, y) = IC(x) + IC(y) − PMI(x, y), with IC(x, x) = IC(x)."""
    ic = dist.information_content()
    joint = dist.joint_information()
    predicted = ic[:, None] + ic[None, :] - dist.pmi()
    np.testing.assert_allclose(joint, predicted, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.diag(joint), ic, rtol=1e-12, atol=1e-15)


@given(joint_distributions(max_words=10))
def test_joint_information_bounds(dist: JointDistribution) -> None:
    """IC(x, y) ≥ max(IC(x), IC(y)); IC(x, y) ≤ IC(x) + IC(y) exactly where PMI ≥ 0."""
    ic = dist.information_content()
    joint = dist.joint_information()
    pmi = dist.pmi()
    tol = 1e-12 * (1.0 + np.abs(joint))
    assert np.all(joint >= np.maximum.outer(ic, ic) - tol)
    subadditive = joint <= ic[:, None] + ic[None, :] + tol
    clear = np.abs(pmi) > 1e-9
    assert np.array_equal(subadditive[clear], (pmi >= 0)[clear])


@given(exact_oracles(max_words=7))
def test_f_joint_reproduces_joint_information(model: OracleModel) -> None:
    """‖f_joint(e(x), e(y))‖² = a·IC(x, y) + b for every pair x ≠ y of an exact C1+C2 embedding."""
    e = model.vectors
    rows, cols = np.triu_indices(len(model.words), 1)
    # F needs the direction of e(x) + e(y); antipodal pairs (possible in a rank-deficient oracle)
    # have none, and compose() raises for them by convention, so they are checked separately.
    sums = np.linalg.norm(e[rows] + e[cols], axis=1)
    scale_uv = np.linalg.norm(e[rows], axis=1) + np.linalg.norm(e[cols], axis=1)
    directed = sums > ZERO_SUM_RTOL * scale_uv
    flat = np.stack([e[rows[directed]], e[cols[directed]]], axis=1).reshape(-1, e.shape[1])
    offsets = np.arange(0, flat.shape[0] + 1, 2)
    joint = model.distribution.joint_information()[rows[directed], cols[directed]]
    if flat.shape[0]:
        composed = compose_batch(flat, offsets, "f_joint")
        squared = np.sum(composed**2, axis=1)
        scale = model.a * float(np.max(np.abs(joint))) + model.b + 1.0
        np.testing.assert_allclose(squared, model.a * joint + model.b, rtol=0, atol=1e-8 * scale)
    for i, j in zip(rows[~directed], cols[~directed], strict=True):
        with pytest.raises(NormtestError, match="u \\+ v = 0"):
            compose(e[[i, j]], "f_joint")
