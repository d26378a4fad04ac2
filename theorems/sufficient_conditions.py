"""The sufficient-conditions theorem: C1 and C2 imply ‖e(x)‖² = a·IC(x) + b.

Statement (docs/theory.md §3, reconstructed). For an embedding e(·):

* C1: for distinct units x ≠ y, ⟨e(x), e(y)⟩ = a·PMI(x, y) + b with a > 0;
* C2: the same relation holds at x = y.

Then, since PMI(x, x) = IC(x) (see ``pmi_diagonal``), ‖e(x)‖² = ⟨e(x), e(x)⟩ = a·IC(x) + b: the
squared norm is an affine, increasing function of information content. Operationally (claim
``cond.self_pmi``): the affine map fitted to the off-diagonal pairs alone, carried to the diagonal,
predicts every squared norm. With ε-approximate conditions, |⟨e(x), e(y)⟩ − (a·PMI + b)| ≤ ε on the
diagonal gives |‖e(x)‖² − (a·IC(x) + b)| ≤ ε.

C2 is not implied by C1: off-diagonal inner products do not constrain the norms. Appending to each
e(x) a private coordinate c_x (orthogonal to every other word's) keeps every ⟨e(x), e(y)⟩, x ≠ y,
and adds c_x² to ‖e(x)‖²; with c_x² = 2a(max IC − IC(x)) the squared norm becomes decreasing in IC
while C1 still holds exactly.

Corollary (composition clause): f_ind = F_{1,0} gives ‖f_ind(e(x), e(y))‖² = a(IC(x) + IC(y)) + 2b,
the affine image of the information of x and y taken as independent.

Source: Amigó et al., "On the Correspondence between the Squared Norm and Information Content in
Text Embeddings", Findings of EMNLP 2025 (the two sufficient conditions; exact wording
reconstructed in docs/theory.md §3); Amigó et al., Computational Linguistics 48(4), 2022.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from normtest.geometry.compose import ZERO_SUM_RTOL, compose_batch
from normtest.models.synthetic import OracleModel
from normtest.testing.strategies import exact_oracles, finite_floats


def _offdiagonal_fit(model: OracleModel) -> tuple[float, float, float]:
    """Least-squares (a, b) of ⟨e(x), e(y)⟩ on PMI(x, y) over pairs x < y, and the PMI spread."""
    gram = model.vectors @ model.vectors.T
    rows, cols = np.triu_indices(len(model.words), 1)
    pmi = model.pmi[rows, cols]
    design = np.column_stack([pmi, np.ones_like(pmi)])
    (slope, intercept), *_ = np.linalg.lstsq(design, gram[rows, cols], rcond=None)
    return float(slope), float(intercept), float(np.ptp(pmi))


@given(exact_oracles(min_words=3, max_words=8))
def test_c1_and_c2_give_affine_norms(model: OracleModel) -> None:
    """On an exact oracle, ‖e(x)‖² = a·IC(x) + b for every word."""
    squared = np.sum(model.vectors**2, axis=1)
    ic = model.information_content
    scale = model.a * float(np.max(ic)) + model.b + 1.0
    np.testing.assert_allclose(squared, model.a * ic + model.b, rtol=0, atol=1e-9 * scale)


@given(exact_oracles(min_words=3, max_words=8))
def test_offdiagonal_fit_carried_to_diagonal(model: OracleModel) -> None:
    """The (a, b) fitted on pairs x ≠ y alone recovers the truth and predicts the squared norms."""
    slope, intercept, spread = _offdiagonal_fit(model)
    ic = model.information_content
    scale = model.a * float(np.max(np.abs(model.pmi))) + model.b + 1.0
    squared = np.sum(model.vectors**2, axis=1)
    if spread * model.a > 1e-6 * scale:  # the pairs identify the slope
        assert abs(slope - model.a) <= 1e-6 * scale / spread
        prediction = slope * ic + intercept
        assert np.max(np.abs(prediction - squared)) <= 1e-6 * scale * (1.0 + np.max(ic) / spread)
    else:  # all pairs have one PMI value: only a·PMI + b is identified, and it is exact
        assert abs(slope * model.pmi[0, 1] + intercept - (model.a * model.pmi[0, 1] + model.b)) <= (
            1e-9 * scale
        )


@given(exact_oracles(min_words=3, max_words=8), st.data())
def test_approximate_conditions_bound_the_norm_error(
    model: OracleModel, data: st.DataObject
) -> None:
    """Perturbed vectors: the diagonal C2 error bounds the norm error |‖e‖² − (a·IC + b)|."""
    noise = data.draw(finite_floats(0.0, 0.5))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    e = model.vectors + noise * rng.normal(size=model.vectors.shape)
    gram = e @ e.T
    target = model.a * model.pmi + model.b
    eps = float(np.max(np.abs(np.diag(gram) - np.diag(target))))
    norm_error = np.abs(np.sum(e**2, axis=1) - (model.a * model.information_content + model.b))
    assert np.all(norm_error <= eps * (1 + 1e-12) + 1e-12)


@given(exact_oracles(min_words=3, max_words=8))
def test_c1_alone_does_not_fix_the_norms(model: OracleModel) -> None:
    """Private coordinates keep C1 exact yet make ‖e(x)‖² decreasing in IC: C2 is needed."""
    ic = model.information_content
    private = np.sqrt(2.0 * model.a * (ic.max() - ic))
    e = np.hstack([model.vectors, np.diag(private)])
    gram = e @ e.T
    original = model.vectors @ model.vectors.T
    off = ~np.eye(len(ic), dtype=bool)
    assert np.array_equal(gram[off], original[off])  # C1 untouched (the new blocks are zero)
    squared = np.diag(gram)
    expected = model.b + 2.0 * model.a * ic.max() - model.a * ic
    np.testing.assert_allclose(squared, expected, rtol=1e-9, atol=1e-9)
    order = np.argsort(ic, kind="stable")
    distinct = np.diff(ic[order]) > 1e-6 * (1.0 + ic.max())
    assert np.all(np.diff(squared[order])[distinct] < 0)


@given(exact_oracles(min_words=2, max_words=7))
def test_f_ind_adds_information_of_independent_units(model: OracleModel) -> None:
    """‖f_ind(e(x), e(y))‖² = a·(IC(x) + IC(y)) + 2b for x ≠ y."""
    e = model.vectors
    rows, cols = np.triu_indices(len(model.words), 1)
    sums = np.linalg.norm(e[rows] + e[cols], axis=1)
    directed = sums > ZERO_SUM_RTOL * (
        np.linalg.norm(e[rows], axis=1) + np.linalg.norm(e[cols], axis=1)
    )
    rows, cols = rows[directed], cols[directed]
    if rows.size == 0:
        return
    flat = np.stack([e[rows], e[cols]], axis=1).reshape(-1, e.shape[1])
    composed = compose_batch(flat, np.arange(0, flat.shape[0] + 1, 2), "f_ind")
    ic = model.information_content
    expected = model.a * (ic[rows] + ic[cols]) + 2.0 * model.b
    scale = model.a * float(ic.max()) + model.b + 1.0
    np.testing.assert_allclose(np.sum(composed**2, axis=1), expected, rtol=0, atol=1e-8 * scale)
