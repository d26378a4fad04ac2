"""The PMI diagonal identity: PMI(x, x) = IC(x).

Statement. For a unit x with probability P(x) > 0, the event "x and x" is the event x, so
P(x, x) = P(x) and

    PMI(x, x) = log P(x, x) − log P(x) − log P(x) = −log P(x) = IC(x).

Because P(x, y) ≤ min(P(x), P(y)) for any two events, PMI(x, y) ≤ min(IC(x), IC(y)): every row of
the PMI matrix attains its maximum on the diagonal.

Source: docs/theory.md §2 (the identity PMI(x, x) = IC(x)); Amigó et al., "Information Theory-based
Compositional Distributional Semantics", Computational Linguistics 48(4), 2022, where the
self-information of a unit appears as its PMI with itself; Amigó et al., EMNLP Findings 2025 (C2).

Checked on (1) random joint distributions built by :mod:`normtest.models.synthetic` and (2)
co-occurrence probabilities computed from scratch: words are random events (sets of windows) in a
finite sample space of windows with random probabilities, so nothing is assumed beyond probability
itself.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from normtest.models.synthetic import JointDistribution
from normtest.testing.strategies import joint_distributions, unigram_distributions


@given(joint_distributions(max_words=10))
def test_pmi_diagonal_equals_information_content(dist: JointDistribution) -> None:
    """The diagonal of the PMI matrix is IC, to rounding."""
    np.testing.assert_allclose(np.diag(dist.pmi()), dist.information_content(), rtol=1e-12,
                               atol=1e-15)


@st.composite
def _window_events(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """Window probabilities (k,) and word occurrence masks (n_words, k), each word in ≥ 1 window."""
    probs = draw(unigram_distributions(min_words=2, max_words=12))
    k = probs.size
    n = draw(st.integers(1, 6))
    masks = draw(hnp.arrays(np.bool_, (n, k)))
    masks[np.arange(n), draw(hnp.arrays(np.int64, n, elements=st.integers(0, k - 1)))] = True
    return probs, masks


@given(_window_events())
def test_event_pmi_diagonal_is_ic_and_row_maximum(events: tuple[np.ndarray, np.ndarray]) -> None:
    """From events: PMI(x, x) = IC(x) and PMI(x, y) ≤ min(IC(x), IC(y)) wherever x, y co-occur."""
    probs, masks = events
    p_word = masks.astype(float) @ probs  # P(x): probability that a window contains x
    p_joint = (masks[:, None, :] & masks[None, :, :]).astype(float) @ probs  # P(x, y)
    ic = -np.log(p_word)
    together = p_joint > 0
    log_joint = np.where(together, np.log(np.where(together, p_joint, 1.0)), -np.inf)
    pmi = log_joint - np.log(p_word)[:, None] - np.log(p_word)[None, :]
    np.testing.assert_allclose(np.diag(pmi), ic, rtol=1e-12, atol=1e-13)
    bound = np.minimum.outer(ic, ic)
    slack = 1e-12 * (1.0 + np.abs(bound))
    assert np.all(pmi[together] <= (bound + slack)[together])
    # Hence the diagonal is each row's maximum.
    assert np.all(pmi.max(axis=1) <= np.diag(pmi) + 1e-12 * (1.0 + ic))
