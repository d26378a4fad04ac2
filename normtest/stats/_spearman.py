"""Spearman's ρ (and the partial ρ) as a function of resampling weights, with the side every
variant of a claim shares computed once per chunk of draws.

A claim is measured once per variant: the same x (the words' information content) against a
different y (each variant's squared norms), under the same draws (:mod:`normtest.stats.bootstrap`
keeps them). The *x side* — x's ranks within each resample and, for a partial correlation, the
covariates' ranks, their orthonormal basis and x's residual — depends on the draws and on x and
the covariates only, so it is computed once per chunk of kept draws
(:func:`~normtest.stats.bootstrap.derived`, keyed by a digest of x and the covariates in row
order) and every variant computes only y's ranks and one weighted inner product with each shared
array.

Arithmetic. With C the cumulative weight in y's order, y's centred rank is b = C − w/2 − W/2
(W = Σw), so for any shared array u, Σ u·b = Σ u·C − ½ Σ u·w − (W/2) Σ u: one permutation of
the weights, one cumulative sum (in blocks, :class:`_Blocked`), one permutation back and one
inner product per u. An untied y's Σ w·b² is (W³ − Σ w³)/12, from the draws alone. Bootstrap
weights are integers: below a total of 2²⁴ they and their cumulative sums are exact in float32,
which halves the bytes permuted (the inner products are taken in float64). For Spearman's ρ every
moment is then a sum of multiples of ¼ far below 2⁵³ (n up to ~200,000), so it is exact in
float64 whatever the order of the sums: the replicates are bit-identical to ranking both
variables and correlating them (:meth:`Spearman.explicit`, the reference the tests hold this
to). A partial ρ reads the residual variance of y as Σ w·b² − Σ c_k² (c_k = Σ w·b·e_k, e_k
orthonormal): rows where the covariates explain all but a 10⁻⁶ share of y's variance, where that
difference loses digits, are recomputed explicitly; the partial ρ agrees with the explicit
residuals to rounding (~1e-15), not bit for bit.
"""

from __future__ import annotations

import threading

import numpy as np

from normtest.stats import _draws as _memo
from normtest.stats.bootstrap import Ranker, derived, digest, pearson_of_moments, weighted_pearson

#: Residual variance below this share of the variance before partialling means the covariates
#: explain the variable (up to rounding): its partial correlation is undefined, not noise.
EXPLAINED = 1e-10
#: Below this share, a partial ρ's residual variance is recomputed explicitly (see above).
_RECHECK = 1e-6
#: Integers below 2²⁴ are exact in float32: the weights' cumulative sums are, below this total.
_EXACT32 = 2.0**24
#: Positions per block of :class:`_Blocked` (rows of n/8 columns).
_BLOCK = 8


def _dot(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", u, v)


def _scratch(slot: int, shape: tuple[int, ...], dtype: type = np.float64) -> np.ndarray:
    """A reusable work array of ``shape`` (one per slot, dtype and thread), kept in the memo and
    counted in its budget: a fresh array of tens of MB costs its page faults on every call, more
    than the permutation written into it. With the memo off, a fresh array."""
    key = ("scratch", threading.get_ident(), slot, np.dtype(dtype).str)
    size = int(np.prod(shape))
    flat = _memo.lookup(key)
    if flat is None or flat.size < size:
        flat = np.empty(size, dtype=dtype)
        _memo.store(key, flat)
    return flat[:size].reshape(shape)


def orthonormal_basis(z: np.ndarray, w: np.ndarray) -> list[np.ndarray]:
    """(r, n, k) covariates centred and made orthonormal under each row's weights (modified
    Gram–Schmidt); a covariate the earlier ones explain becomes 0."""
    total = w.sum(axis=1, keepdims=True)
    basis: list[np.ndarray] = []
    for j in range(z.shape[2]):
        q = _centred(z[:, :, j], w, total)
        size = _inner(q, q, w)
        for e in basis:
            q = q - _inner(q, e, w) * e
        left = _inner(q, q, w)
        with np.errstate(invalid="ignore", divide="ignore"):
            basis.append(np.where(left > EXPLAINED * size, q / np.sqrt(left), 0.0))
    return basis


def residual(target: np.ndarray, basis: list[np.ndarray], w: np.ndarray) -> np.ndarray:
    """Weighted OLS residual of (r, n) ``target`` on an orthonormal basis plus an intercept; NaN
    rows where the residual variance is a vanishing share of the variance."""
    resid = _centred(target, w, w.sum(axis=1, keepdims=True))
    before = _inner(resid, resid, w)[:, 0]
    for e in basis:
        resid = resid - _inner(resid, e, w) * e
    explained = _inner(resid, resid, w)[:, 0] <= EXPLAINED * before
    return np.where(explained[:, None], np.nan, resid)


def residualise(
    a: np.ndarray, b: np.ndarray, z: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted OLS residuals of (r, n) a and b on (r, n, k) covariates plus an intercept.

    The covariates are centred and made orthonormal under each row's weights (modified
    Gram–Schmidt; a covariate the earlier ones explain is dropped), then projected out: the same
    residuals as the normal equations, in a few element-wise passes instead of batched matrix
    algebra. A row whose residual variance is a vanishing share of its variance (the covariates
    explain the variable exactly) is set to NaN, so the correlation of rounding noise is never
    reported.
    """
    basis = orthonormal_basis(z, w)
    return residual(a, basis, w), residual(b, basis, w)


def _centred(v: np.ndarray, w: np.ndarray, total: np.ndarray) -> np.ndarray:
    return v - np.einsum("rn,rn->r", w, v)[:, None] / total


def _inner(u: np.ndarray, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.einsum("rn,rn->r", w * u, v)[:, None]


class _Blocked:
    """Cumulative sums of weights along a permutation of the columns, in blocks.

    A cumulative sum along a row is one chain of dependent additions. Here the permuted weights
    are laid out as K rows of n/K columns (position i of the order at row i mod K, column
    i div K): K − 1 additions of whole rows (independent, vectorised) give every block's own
    cumulative sums, one short cumulative sum of the block totals their offsets, and one
    addition places them; a last permutation brings the sums back to the original columns.
    The weights are integers: every sum is exact, the same as ``np.cumsum`` in any order.
    """

    def __init__(self, order: np.ndarray, block: int = _BLOCK) -> None:
        n = order.size
        self.n, self.k = n, block if n >= 4 * block else 1
        self.m = -(-n // self.k)
        position = np.arange(self.m * self.k)
        self.gather = np.empty(position.size, dtype=np.intp)  # padded with the last column
        self.gather[(position % self.k) * self.m + position // self.k] = order[
            np.minimum(position, n - 1)]
        rank = np.empty(n, dtype=np.intp)
        rank[order] = np.arange(n)
        self.back = (rank % self.k) * self.m + rank // self.k

    def cumulative(self, weights: np.ndarray) -> np.ndarray:
        """(b, n) inclusive cumulative weight of each column in the order, in column order (a
        reused work array: read it before the next call)."""
        b, dtype = weights.shape[0], weights.dtype.type
        laid = np.take(weights, self.gather, axis=1, mode="clip",
                       out=_scratch(0, (b, self.k * self.m), dtype))
        if self.k == 1:
            np.cumsum(laid, axis=1, out=laid)
        else:
            rows = laid.reshape(b, self.k, self.m)
            for j in range(1, self.k):
                np.add(rows[:, j, :], rows[:, j - 1, :], out=rows[:, j, :])
            offsets = np.cumsum(rows[:, -1, :-1], axis=1)
            rows[:, :, 1:] += offsets[:, None, :]
        return np.take(laid, self.back, axis=1, mode="clip", out=_scratch(1, (b, self.n), dtype))


class _Side:
    """What every variant reads under one chunk of weights: the shared arrays u (x's weighted
    ranks, or its weighted residual and the weighted basis) and their moments."""

    def __init__(self, w: np.ndarray, rank_x: Ranker, rank_cov: list[Ranker]) -> None:
        self.total = w.sum(axis=1)
        self.half_total = self.total / 2.0
        a = rank_x.ranks(w)
        if rank_cov:
            z = np.stack([r.ranks(w) for r in rank_cov], axis=2)
            basis = orthonormal_basis(z, w)
            del z
            a = residual(a, basis, w)
        else:
            basis = []
        us = [w * a]
        self.saa = _dot(us[0], a)
        del a
        us += [w * e for e in basis]
        self.sums = [u.sum(axis=1) for u in us]
        self.with_w = [_dot(u, w) for u in us]  # Σ u·w
        # Σ w·ra·e_k and Σ w·e_k: zero up to rounding, kept so the moments match the residuals
        self.a_on_basis = [_dot(us[0], e) for e in basis]
        self.cubes = _dot(w * w, w)  # Σ w³: an untied variable's Σ w·rank² is (W³ − Σw³)/12
        # the weights in float32 when every cumulative weight is an integer below 2²⁴ (exact):
        # half the bytes to permute; the inner products are taken in float64
        exact = float(self.total.max()) < _EXACT32 and bool((np.floor(w) == w).all())
        self.w32 = w.astype(np.float32) if exact else None
        for u in us:
            u.setflags(write=False)
        self.us = us

    @property
    def nbytes(self) -> int:
        return sum(u.nbytes for u in self.us) + (0 if self.w32 is None else self.w32.nbytes)


class Spearman:
    """Spearman's ρ of x and y (partialling out ``cov``) as a function of (b, n) weights.

    Calling it gives the replicates (the x side shared per chunk of kept draws);
    :meth:`explicit` ranks both variables and correlates them (the point estimate, and the
    reference of the tests).
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, cov: np.ndarray | None = None) -> None:
        self.rank_x, self.rank_y = Ranker(x), Ranker(y)
        self.rank_cov = [] if cov is None else [Ranker(c) for c in cov.T]
        self.tag = ("spearman-side", digest(x, cov))
        self._blocked = _Blocked(self.rank_y.order)

    def explicit(self, w: np.ndarray) -> np.ndarray:
        """ρ per row of weights, from both variables' ranks (:func:`weighted_pearson`)."""
        a, b = self.rank_x.ranks(w), self.rank_y.ranks(w)
        if self.rank_cov:
            z = np.stack([r.ranks(w) for r in self.rank_cov], axis=2)
            a, b = residualise(a, b, z, w)
        return weighted_pearson(a, b, w)

    def __call__(self, w: np.ndarray) -> np.ndarray:
        side = derived(w, self.tag, lambda: _Side(w, self.rank_x, self.rank_cov))
        dots, sbb = self._y_moments(w, side)
        if not self.rank_cov:
            return pearson_of_moments(side.total, side.sums[0], np.zeros_like(sbb), side.saa,
                                      sbb, dots[0])
        c = dots[1:]
        after = sbb - sum((ck * ck for ck in c), np.zeros_like(sbb))
        sab = dots[0] - sum((ck * ak for ck, ak in zip(c, side.a_on_basis, strict=True)),
                            np.zeros_like(sbb))
        sb = -sum((ck * sk for ck, sk in zip(c, side.sums[1:], strict=True)), np.zeros_like(sbb))
        r = pearson_of_moments(side.total, side.sums[0], sb, side.saa, after, sab)
        recheck = np.flatnonzero(~(after > _RECHECK * sbb))
        if recheck.size:  # explained (NaN), or too close to it for the difference above
            r[recheck] = self.explicit(w[recheck])
        return r

    def _y_moments(self, w: np.ndarray, side: _Side) -> tuple[list[np.ndarray], np.ndarray]:
        """Σ u·b for every shared u, and Σ w·b², b y's centred ranks under ``w``."""
        ranker = self.rank_y
        if ranker.tied:
            b = ranker.ranks(w)
            return [_dot(u, b) for u in side.us], _dot(w * b, b)
        # the inclusive cumulative weight in y's order, back in row order (integers: exact in
        # float32 below 2²⁴, the bound _Side checked, and in any order of the sums)
        weights = w if side.w32 is None else side.w32
        cumulative = self._blocked.cumulative(weights)
        dots = [_dot(u, cumulative) - 0.5 * uw - side.half_total * us
                for u, uw, us in zip(side.us, side.with_w, side.sums, strict=True)]
        sbb = (side.total ** 3 - side.cubes) / 12.0
        return dots, sbb
