"""Geometry transforms fitted on a vocabulary sample, then applied (docs/theory.md §5).

Norms depend on where the origin is and on the metric, so every word-level claim can be evaluated
under one of five transforms, each fitted on a sample ``E`` (n, d) with unigram weights ``p``:

* ``raw``: the vectors as they are (a float64 copy).
* ``center_uniform``: subtract the plain mean.
* ``center_zipf``: subtract the p-weighted mean ``μ = Σ p(w) e(w)``.
* ``whiten_uniform``: centre with the plain mean, then map so that the plain (population, 1/n)
  covariance of the sample is the identity.
* ``whiten_zipf``: centre with μ, then map so that the p-weighted covariance ``Σ p(w)(e(w) −
  μ)(e(w) − μ)ᵀ`` is the identity (Zipfian whitening; Yokoi et al., NeurIPS 2024): the SVD
  ``diag(√p)(E − μ) = U S Vᵀ`` gives the map ``x ↦ (x − μ) V S⁻¹``.

Usage is scikit-learn-like: ``make_transform("whiten_zipf").fit(E, p).apply(E2)``. Every
transform accepts ``weights`` in ``fit`` (so one loop can run all five); the uniform ones and
``raw`` ignore them after validation, the Zipfian ones require them. Weights must be finite and
non-negative with a positive sum; they are normalised to sum to one.

Rank-deficient samples: whitening keeps the singular directions of ``diag(√p)(E − μ)`` with
``s > rank_rtol · ‖E‖_p``, where ``‖E‖_p = √(Σ p(w)‖e(w)‖²)`` is the weighted RMS norm of the
*uncentred* sample (centring cannot resolve spread below the rounding error of the mean, which
scales with it), and drops the rest, so the output has ``rank_`` coordinates (principal axes of the
sample, not the input's axes; norms and inner products do not depend on that choice). The SVD is
always computed in float64. The default ``rank_rtol`` is ``max(d · eps_in, max(n, d) · eps64)``:
``d · eps_in`` covers the rounding of the input itself (``eps_in`` is the machine epsilon of float32
for float32 input and of float64 otherwise; rounding every entry perturbs the normalised,
√p-weighted matrix by about ``eps_in`` relative to ``‖E‖_p`` whatever n is), and
``max(n, d) · eps64`` is ``numpy.linalg.matrix_rank``'s bound for the float64 arithmetic (mean,
centring, SVD). The tolerance therefore does not grow with n at the input's precision: float32 and
float64 copies of the same sample keep the same directions unless one lies within float32
rounding of zero (the full GloVe-6B-50d vocabulary, 400k × 50 float32, keeps all 50). A sample
with no direction above the tolerance (all vectors equal, a single vector, one positive weight)
cannot be whitened and raises. The sign of each retained axis is fixed (largest-magnitude loading
positive), so fitting is deterministic.
"""

from __future__ import annotations

import difflib
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from normtest.errors import NormtestError

__all__ = ["TRANSFORM_NAMES", "Transform", "make_transform", "weighted_mean"]

FloatArray = NDArray[np.float64]
TransformName = Literal["raw", "center_uniform", "center_zipf", "whiten_uniform", "whiten_zipf"]

#: The transforms of docs/theory.md §5, in the order reports list them.
TRANSFORM_NAMES: tuple[str, ...] = (
    "raw",
    "center_uniform",
    "center_zipf",
    "whiten_uniform",
    "whiten_zipf",
)


def _sample_matrix(vectors: ArrayLike, what: str) -> tuple[FloatArray, float]:
    """Return (finite float64 (n, d) array with n ≥ 1, eps of the input precision) or raise."""
    raw = np.asarray(vectors)
    if raw.ndim != 2:
        raise NormtestError(
            f"{what} must be a 2-D (n_vectors, dim) array, got shape {raw.shape}; "
            "for a single vector v pass v[None, :]"
        )
    if raw.shape[0] == 0 or raw.shape[1] == 0:
        raise NormtestError(f"{what} are empty (shape {raw.shape}); pass at least one vector")
    eps = float(np.finfo(np.float32).eps) if raw.dtype == np.float32 else float(
        np.finfo(np.float64).eps
    )
    arr = raw.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(arr), axis=1))[0])
        raise NormtestError(
            f"{what} contain NaN or infinity (first at row {bad}); drop or fix those vectors"
        )
    return arr, eps


def _normalised_weights(weights: ArrayLike, n: int) -> FloatArray:
    """Validate unigram weights for n vectors and scale them to sum to one."""
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,):
        raise NormtestError(f"weights must have shape ({n},), one per vector; got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise NormtestError("weights must be finite and non-negative (unigram probabilities)")
    total = float(w.sum())
    if total <= 0:
        raise NormtestError("weights sum to zero; at least one vector needs a positive weight")
    return w / total


def weighted_mean(vectors: ArrayLike, weights: ArrayLike | None = None) -> FloatArray:
    """The p-weighted mean Σ p(w) e(w) with p normalised (plain mean when weights is None)."""
    arr, _ = _sample_matrix(vectors, "vectors")
    if weights is None:
        return np.asarray(arr.mean(axis=0), dtype=np.float64)
    p = _normalised_weights(weights, arr.shape[0])
    return np.asarray(p @ arr, dtype=np.float64)


#: The Gram matrix's eigendecomposition stands in for the SVD of the centred sample where its
#: relative error on whitened squared norms is known to be at most this, the tolerance at which
#: reports are held equal to the SVD's. It is known a priori where eps·κ² is at most this (κ: the
#: ratio of the largest kept singular value to the smallest, eps: float64's): the Gram matrix
#: squares the condition number, and the error was measured below eps·κ² (tests/test_transforms.py:
#: a thirtieth to a fifth of it, 3e-8 to 6e-8 at eps·κ² of 6e-7 to 1e-6). Zipf weights alone make
#: κ large (a 2,500-word sample's √p spans four to five decades), and eps·κ² is a worst case:
#: above it the fit is checked a posteriori instead (:func:`_whitening_residual`).
GRAM_GUARD = 1e-6


def _distinct_rows(unit: FloatArray, p: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The sample's distinct rows (first seen first) and each one's summed weight.

    Repeated vectors (a decoder's first-token vectors of words that begin alike) add nothing to
    the weighted covariance that their summed weight does not: Σ p(w)(e(w) − μ)(e(w) − μ)ᵀ is
    the same sum over distinct rows. Merging them takes away exact zero singular values, which
    the Gram matrix cannot place on either side of the rank threshold (it would send the fit
    to the SVD); the fit is otherwise the same up to rounding."""
    index: dict[bytes, int] = {}
    inverse = np.fromiter((index.setdefault((row + 0.0).tobytes(), len(index))  # −0.0 is 0.0
                           for row in unit),
                          dtype=np.intp, count=unit.shape[0])
    if len(index) == unit.shape[0]:
        return unit, p
    first = np.unique(inverse, return_index=True)[1]
    return unit[first], np.bincount(inverse, weights=p, minlength=len(index)).astype(np.float64)


def _svd_spectrum(spread: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Singular values and right singular vectors (rows) of ``spread``, by the SVD."""
    n, d = spread.shape
    if n > d:  # R of a QR has the same singular values and right vectors, and an SVD
        spread = np.asarray(np.linalg.qr(spread, mode="r"))  # of d × d skips U
    elif n < d:  # spread = Rᵀ Qᵀ (a QR of its transpose): the SVD of the n × n Rᵀ, its right
        q, r = np.linalg.qr(spread.T)  # vectors taken back through Q (a third faster than
        _, s, vt = np.linalg.svd(r.T)  # the SVD of the whole at 2,500 × 4096)
        return s, vt @ q.T
    _, s, vt = np.linalg.svd(spread, full_matrices=False)
    return s, vt


def _gram_spectrum(spread: FloatArray, threshold: float,
                   null: FloatArray | None = None
                   ) -> tuple[FloatArray, FloatArray, float] | None:
    """The same from the eigendecomposition of the smaller Gram matrix (Xᵀ X, or X Xᵀ with the
    right vectors recovered as Xᵀ u / s), about three times faster than the SVD at 2,500 × 4096,
    and the bound on its relative error on whitened squared norms that admitted it (eps·κ², or
    the a posteriori one); None — use the SVD — where it would not be accurate: a value so
    near the rank threshold that the Gram's error could move it across (the two paths must keep
    the same directions), or an error on whitened squared norms that cannot be held below
    :data:`GRAM_GUARD` — eps·κ² of the kept values above it, and then either a direction
    dropped or the a posteriori bound of :func:`_whitening_residual` above it too.

    ``null``: a vector the rows of ``spread`` are known to sum to zero against (centring's:
    the square roots of the weights). With n ≤ d it is taken out exactly first (a Householder
    reflection onto the first row, which is then dropped): the Gram matrix would otherwise give
    that direction an eigenvalue of rounding size, eps·λ_max, which lies above a float64
    sample's rank threshold and would send every such fit back to the SVD."""
    n, d = spread.shape
    eps64 = float(np.finfo(np.float64).eps)
    if null is not None and n <= d and n > 1:
        q = null / np.linalg.norm(null)
        v = q.copy()
        v[0] += 1.0 if q[0] >= 0 else -1.0
        v /= np.linalg.norm(v)
        spread = (spread - 2.0 * np.outer(v, v @ spread))[1:]  # H·spread; its first row is 0
        n -= 1
    if n > d:
        values, vectors = np.linalg.eigh(spread.T @ spread)
    else:
        values, vectors = np.linalg.eigh(spread @ spread.T)
    values, vectors = values[::-1], vectors[:, ::-1]
    top = float(values[0]) if values.size else 0.0
    if not top > 0:
        return None
    s = np.sqrt(np.clip(values, 0.0, None))
    keep = s > threshold
    if not np.any(keep):
        return None
    if np.any(np.abs(values - threshold**2) <= max(n, d) * eps64 * top):
        return None  # too near the threshold to tell which side it lies on
    kept = int(np.count_nonzero(keep))
    bound = eps64 * (s[0] / s[kept - 1]) ** 2
    if bound > GRAM_GUARD and kept < min(n, d):
        return None  # the a posteriori bound needs every direction kept
    right = vectors.T if n > d else ((spread.T @ vectors[:, :kept]) / s[:kept]).T
    if bound > GRAM_GUARD:
        bound = _whitening_residual(spread, s[:kept], right[:kept])
        if bound > GRAM_GUARD:
            return None
    return s[:right.shape[0]], right, bound


def _whitening_residual(spread: FloatArray, s: FloatArray, right: FloatArray) -> float:
    """A bound on the relative error, on every whitened squared norm, of whitening by the right
    singular vectors ``right`` (rows) and values ``s`` that the Gram matrix gave for ``spread``,
    all of whose directions they keep; the Gram matrix's a priori estimate eps·κ² is a worst
    case and overstates the error by orders of magnitude (the 4,096-d synthetic audit's two
    Zipf halves it refused: 2.5e-9 and 1.3e-9 measured, eps·κ² 2.1e-6 and 1.4e-6).

    With W = V S⁻¹ and M = Wᵀ(spreadᵀ spread)W (ZᵀZ, Z = spread·W the fitted sample
    whitened), the exact whitened squared norm of y is uᵀM⁻¹u with u = Wᵀy (W spans the
    sample's directions: all are kept), so ‖u‖² is within δ_Z = ‖M − I‖ of it, relative. In
    the input's axes, ‖V u‖² = uᵀ(VᵀV)u adds δ_V = ‖VᵀV − I‖. Both are taken as Frobenius
    norms, which bound the spectral ones; the bound returned, (1 + δ_Z)(1 + δ_V) − 1, holds for
    both forms (and the symmetric whitening V S⁻¹ Vᵀ is the exact one to O(δ)). Rounding in the
    check itself is about n·eps, far below the guard. Its price: three products of the sample's
    size, about half the Gram route's own time and a fifth of the SVD's at 2,500 × 4096."""
    z = (spread @ right.T) / s
    eye = np.eye(s.size)
    delta_z = float(np.linalg.norm(z.T @ z - eye))
    delta_v = float(np.linalg.norm(right @ right.T - eye))
    return (1 + delta_z) * (1 + delta_v) - 1


class Transform:
    """One geometry transform (docs/theory.md §5): ``fit`` on a sample, ``apply`` to vectors."""

    def __init__(self, name: str, *, rank_rtol: float | None = None) -> None:
        """Create an unfitted transform; ``rank_rtol`` overrides the whitening rank tolerance."""
        if name not in TRANSFORM_NAMES:
            close = difflib.get_close_matches(name, TRANSFORM_NAMES, n=2)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise NormtestError(
                f"unknown transform {name!r}.{hint} Known: {', '.join(TRANSFORM_NAMES)}."
            )
        if rank_rtol is not None and not (0.0 <= rank_rtol < 1.0):
            raise NormtestError(f"rank_rtol must lie in [0, 1), got {rank_rtol}")
        self.name = name
        self.rank_rtol = rank_rtol
        self.centre: Literal["none", "uniform", "zipf"] = (
            "none" if name == "raw" else ("zipf" if name.endswith("zipf") else "uniform")
        )
        self.whiten = name.startswith("whiten")
        self.dim_: int | None = None
        self.mean_: FloatArray | None = None
        self.components_: FloatArray | None = None
        self.singular_values_: FloatArray | None = None
        self.rank_: int | None = None
        #: how the whitening was fitted: ``gram`` (the Gram matrix's eigendecomposition, where
        #: the spectrum allows it) or ``svd``; None before a whitening fit
        self.solver_: str | None = None
        #: for a ``gram`` fit, the bound on its whitened squared norms' relative error that
        #: admitted it (eps·κ² where that is within :data:`GRAM_GUARD`, else the a posteriori
        #: bound of the check, within it too); None otherwise
        self.error_bound_: float | None = None

    def __repr__(self) -> str:
        """Name and fitted state."""
        state = "unfitted" if self.dim_ is None else f"fitted on dim {self.dim_}"
        return f"Transform({self.name!r}, {state})"

    @property
    def fitted(self) -> bool:
        """Whether ``fit`` has run."""
        return self.dim_ is not None

    def fit(self, vectors: ArrayLike, weights: ArrayLike | None = None) -> Transform:
        """Fit on an (n, d) sample with optional unigram weights (required by the Zipf variants)."""
        arr, eps = _sample_matrix(vectors, "sample vectors")
        n, d = arr.shape
        if weights is not None:
            p = _normalised_weights(weights, n)
        elif self.centre == "zipf":
            raise NormtestError(
                f"{self.name} needs unigram weights p(w), one per sample vector: "
                "call fit(vectors, weights=p)"
            )
        else:
            p = np.full(n, 1.0 / n)
        if self.centre == "uniform":
            p = np.full(n, 1.0 / n)
        self.dim_ = d
        self.mean_ = None if self.centre == "none" else np.asarray(p @ arr, dtype=np.float64)
        self.components_ = None
        self.singular_values_ = None
        self.rank_ = None
        self.solver_ = None
        self.error_bound_ = None
        if self.whiten:
            assert self.mean_ is not None
            # Work on the sample divided by its largest |entry| so that no square under- or
            # overflows; the tolerance is relative to the weighted RMS norm of the uncentred
            # sample, the scale of the rounding error that centring leaves behind.
            peak = float(np.max(np.abs(arr)))
            unit = arr / peak if peak > 0 else arr
            reference = float(np.sqrt(p @ np.sum(unit**2, axis=1)))
            eps64 = float(np.finfo(np.float64).eps)
            rtol = max(d * eps, max(n, d) * eps64) if self.rank_rtol is None else self.rank_rtol
            rows, merged = _distinct_rows(unit, p)
            spread = np.sqrt(merged)[:, None] * (rows - p @ unit)
            found = _gram_spectrum(spread, rtol * reference, null=np.sqrt(merged))
            self.solver_ = "gram" if found is not None else "svd"
            if found is None:
                s, vt = _svd_spectrum(spread)
            else:
                s, vt, self.error_bound_ = found
            keep = s > rtol * reference
            if not np.any(keep):
                self.dim_ = None
                raise NormtestError(
                    f"{self.name}: the sample has no spread after centring (all vectors equal up "
                    "to rounding, or only one with positive weight); whitening needs at least "
                    "two distinct vectors"
                )
            components = vt[keep].T.copy()
            flip = np.sign(components[np.argmax(np.abs(components), axis=0), np.arange(keep.sum())])
            components *= np.where(flip == 0, 1.0, flip)
            self.singular_values_ = s[keep] * peak
            self.components_ = components / self.singular_values_
            self.rank_ = int(keep.sum())
        return self

    def apply(self, vectors: ArrayLike, *, input_axes: bool = False) -> FloatArray:
        """Apply the fitted transform to an (m, d) array; whitening returns (m, rank_).

        ``input_axes=True`` expresses a whitened result in the input's coordinates, (m, d):
        ``x ↦ (x − μ) V S⁻¹ Vᵀ`` (symmetric, ZCA-style whitening on the kept directions). Norms
        and inner products are the same; the coordinates no longer depend on the fitting sample's
        principal axes, so vectors whitened by two fits on different samples can be compared.
        """
        if self.dim_ is None:
            raise NormtestError(f"transform {self.name!r} is not fitted: call fit(sample) first")
        arr, _ = _sample_matrix(vectors, "vectors")
        if arr.shape[1] != self.dim_:
            raise NormtestError(
                f"vectors have dimension {arr.shape[1]}, but {self.name} was fitted on "
                f"dimension {self.dim_}"
            )
        out = arr if self.mean_ is None else arr - self.mean_
        if self.components_ is not None:
            out = out @ self.components_
            if input_axes:
                assert self.singular_values_ is not None
                out = out @ (self.components_ * self.singular_values_).T
        return np.array(out, dtype=np.float64, copy=True)

    def fit_apply(self, vectors: ArrayLike, weights: ArrayLike | None = None) -> FloatArray:
        """Fit on the sample and return the sample transformed."""
        return self.fit(vectors, weights).apply(vectors)


def make_transform(name: str, *, rank_rtol: float | None = None) -> Transform:
    """Create an unfitted transform by name (one of :data:`TRANSFORM_NAMES`)."""
    return Transform(name, rank_rtol=rank_rtol)
