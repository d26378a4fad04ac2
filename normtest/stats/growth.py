"""Growth of s(L) = ‖e(prefix_L)‖² with text length L (docs/theory.md §6).

The data are one curve per group (a document): rows of (length, value[, vector]). Every statistic
is a *within-document* quantity (each document keeps its own level), and every interval resamples
whole documents, because prefixes of one document are not independent.

Statistics (all invariant to rescaling the values by a positive constant):

- ``slope``: the within-document OLS slope of s on L, with a document-clustered (CR1) standard
  error from statsmodels and Student's t on G − 1 degrees of freedom;
- ``late_early_ratio``: the within-document slope on the second half of the length range
  (L ≥ midpoint) over the slope on the first half (L ≤ midpoint); 1 for a straight line, near 0 at
  a fixed point, above 1 for superlinear growth. Undefined (NaN) where the early slope is 0;
- ``curvature``: fit s = a_doc + c1·u + c2·u² with u = L / L_max; the quadratic term's share of
  the fitted value at the largest length, c2 / (ā + c1 + c2) (NaN when that fitted value is ≤ 0);
- ``late_change``: the relative change of s over the late half, the within-document late slope
  times the late half's span over the mean level of s there; near 0 at a fixed point, about 0.5
  for s ∝ L on a grid from L_max/8 to L_max. A level, not a ratio of slopes, so it stays stable
  where the early slope is near zero (a curve flat from the start);
- ``monotonicity``: the lower median over documents of the per-document Spearman ρ(L, s);
- ``end_cosine``: per document, the cosine between the vector at its largest length and the vector
  at its first length in the late half; the lower median over documents.

Intervals for all but the slope come from a percentile bootstrap over documents.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from normtest.errors import NormtestError
from normtest.stats import bootstrap
from normtest.stats._inputs import (
    MIN_GROUPS,
    MIN_POINTS,
    as_vector,
    check_resamples,
    group_codes,
    same_length,
)
from normtest.verdict.result import Criterion, Measurement, Result
from normtest.verdict.sampling import Sampling

#: Defaults of the judging conveniences :func:`linear_growth` and :func:`fixed_point`
#: (docs/statistics.md); the CER claims declare their own criteria in ``checks/cer.py``.
RATIO_MARGIN = (0.5, 2.0)
CURVATURE_MARGIN = (-0.2, 0.2)
FIXED_POINT_MAX_CHANGE = 0.1
FIXED_POINT_MIN_COSINE = 0.95


@dataclass(frozen=True)
class _Moments:
    """Per-document within-group sums for one subset of rows."""

    sxx: np.ndarray
    sxy: np.ndarray

    def slope(self, w: np.ndarray) -> np.ndarray:
        """(b,) pooled within-document slopes under (b, G) document weights."""
        num, den = w @ self.sxy, w @ self.sxx
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


class _Curves:
    """Validated, canonically ordered growth data with the sums every statistic needs."""

    def __init__(self, lengths: ArrayLike, values: ArrayLike, groups: ArrayLike) -> None:
        length = as_vector("lengths", lengths)
        value = as_vector("values", values)
        same_length(lengths=length, values=value)
        codes = group_codes("groups", groups, length.size)
        # a document seen at one length only carries no within-document information: drop it
        # (it would otherwise count towards the number of documents and the slope's df)
        spread = np.zeros(int(codes.max()) + 1 if codes.size else 0)
        np.maximum.at(spread, codes, length)
        low = np.full_like(spread, np.inf)
        np.minimum.at(low, codes, length)
        informative = (spread - low > 0)[codes]
        self.dropped_documents = int(np.count_nonzero(spread - low <= 0))
        self.n_rows, self.kept = int(length.size), np.flatnonzero(informative)
        length, value = length[informative], value[informative]
        codes = np.unique(codes[informative], return_inverse=True)[1].astype(np.intp)
        self.n = int(length.size)
        self.order = np.lexsort((value, length, codes))
        self.length, self.value = length[self.order], value[self.order]
        self.codes = codes[self.order]
        self.n_groups = int(codes.max()) + 1 if self.n else 0
        self.problem = self._problem()
        if self.problem:
            return
        lo, hi = float(self.length.min()), float(self.length.max())
        self.midpoint = (lo + hi) / 2
        self.early = self.length <= self.midpoint
        self.late = self.length >= self.midpoint
        self.all = self._moments(np.ones(self.n, dtype=bool))
        self.first_half = self._moments(self.early)
        self.second_half = self._moments(self.late)
        self.late_span = hi - self.midpoint
        self.late_level = self._group_sum(np.where(self.late, self.value, 0.0))
        self.late_count = self._group_sum(self.late.astype(np.float64))
        self._quadratic_sums(hi)

    def _problem(self) -> str | None:
        if self.n_rows < MIN_POINTS:
            return f"only {self.n_rows} points; at least {MIN_POINTS} are needed"
        if self.n_groups < MIN_GROUPS:
            dropped = (f" ({self.dropped_documents} more had a single length)"
                       if self.dropped_documents else "")
            return (f"only {self.n_groups} documents with two or more lengths{dropped}; "
                    f"at least {MIN_GROUPS} are needed")
        if np.ptp(self.length) == 0:
            return "every row has the same length; growth with length is undefined"
        return None

    def _group_sum(self, values: np.ndarray) -> np.ndarray:
        return np.bincount(self.codes, weights=values, minlength=self.n_groups)

    def _deviation(self, values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        count = self._group_sum(mask.astype(np.float64))
        total = self._group_sum(np.where(mask, values, 0.0))
        mean = np.divide(total, count, out=np.zeros_like(total), where=count > 0)
        return np.where(mask, values - mean[self.codes], 0.0)

    def _moments(self, mask: np.ndarray) -> _Moments:
        dx = self._deviation(self.length, mask)
        dy = self._deviation(self.value, mask)
        return _Moments(sxx=self._group_sum(dx * dx), sxy=self._group_sum(dx * dy))

    def _quadratic_sums(self, longest: float) -> None:
        everything = np.ones(self.n, dtype=bool)
        u = self.length / longest
        du, dq = self._deviation(u, everything), self._deviation(u * u, everything)
        ds = self._deviation(self.value, everything)
        sums = {
            "uu": du * du, "uq": du * dq, "qq": dq * dq, "us": du * ds, "qs": dq * ds,
            "u": u, "q": u * u, "s": self.value, "count": np.ones(self.n),
        }
        self.quad = {k: self._group_sum(v) for k, v in sums.items()}

    # -- statistics as functions of (b, G) document weights ----------------------------------
    def ratio(self, w: np.ndarray) -> np.ndarray:
        """Late-half over early-half within-document slope."""
        early, late = self.first_half.slope(w), self.second_half.slope(w)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(early != 0, late / np.where(early != 0, early, 1.0), np.nan)

    def late_change(self, w: np.ndarray) -> np.ndarray:
        """Relative change over the late half: late slope × span / mean late level."""
        slope = self.second_half.slope(w)
        with np.errstate(invalid="ignore", divide="ignore"):  # a resample without late points
            level = (w @ self.late_level) / (w @ self.late_count)
            return np.where(level > 0, slope * self.late_span / level, np.nan)

    def curvature(self, w: np.ndarray) -> np.ndarray:
        """Quadratic term's share of the fitted value at the largest length."""
        s = {k: w @ v for k, v in self.quad.items()}
        det = s["uu"] * s["qq"] - s["uq"] ** 2
        with np.errstate(invalid="ignore", divide="ignore"):
            c1 = (s["qq"] * s["us"] - s["uq"] * s["qs"]) / det
            c2 = (s["uu"] * s["qs"] - s["uq"] * s["us"]) / det
            intercept = (s["s"] - c1 * s["u"] - c2 * s["q"]) / s["count"]
            fitted = intercept + c1 + c2
            share = c2 / fitted
        ok = (det > 1e-12 * np.maximum(s["uu"] * s["qq"], 1e-300)) & (fitted > 0)
        return np.where(ok, share, np.nan)

    def per_group_spearman(self) -> np.ndarray:
        """Spearman ρ(L, s) within each document (NaN for fewer than 3 points or a constant).

        All documents at once: mid-ranks within each document, then the Pearson correlation of
        the ranks from per-document sums. Ranks are half-integers, so the sums are exact and a ρ
        of exactly ½ is ½ (scipy's per-document call could land one ulp either side of it).
        """
        rx, ry = _group_ranks(self.codes, self.length), _group_ranks(self.codes, self.value)
        size = self.n_groups

        def total(v: np.ndarray) -> np.ndarray:
            return np.bincount(self.codes, weights=v, minlength=size)

        n = np.bincount(self.codes, minlength=size).astype(np.float64)
        sx, sy = total(rx), total(ry)
        with np.errstate(invalid="ignore", divide="ignore"):
            cov = total(rx * ry) - sx * sy / n
            var_x, var_y = total(rx * rx) - sx * sx / n, total(ry * ry) - sy * sy / n
            rho = cov / np.sqrt(var_x * var_y)
        ok = (n >= 3) & (var_x > 0) & (var_y > 0)
        return np.where(ok, np.clip(rho, -1.0, 1.0), np.nan)


def _bootstrapped(
    name: str, stat: Callable[[np.ndarray], np.ndarray], curves: _Curves, n_resamples: int,
    seed: int, alpha: float, method: str,
) -> Measurement:
    """Estimate at unit weights plus a bootstrap over documents."""
    return bootstrap.unit_measurement(name, stat, curves.n_groups, curves.n, method, n_resamples,
                                      seed, alpha, settings={"documents": curves.n_groups})


def _slope(curves: _Curves, alpha: float) -> Measurement:
    """Within-document slope with a document-clustered (CR1) interval, t on G − 1 df."""
    import statsmodels.api as sm

    everything = np.ones(curves.n, dtype=bool)
    dx = curves._deviation(curves.length, everything)
    dy = curves._deviation(curves.value, everything)
    fit = sm.OLS(dy, dx[:, None]).fit(cov_type="cluster", cov_kwds={"groups": curves.codes})
    estimate, se = float(fit.params[0]), float(fit.bse[0])
    return Measurement(
        statistic="slope", estimate=estimate, n=curves.n,
        method="within-document OLS, document-clustered CR1 standard error, t(G−1)",
        sampling=Sampling("t", center=estimate, scale=se, df=curves.n_groups - 1),
        confidence=1 - 2 * alpha, settings={"documents": curves.n_groups},
    )


def _ratio(curves: _Curves, n_resamples: int, seed: int, alpha: float) -> Measurement:
    return _bootstrapped(
        "late_early_ratio", curves.ratio, curves, n_resamples, seed, alpha,
        f"late/early within-document slope ratio, split at L={curves.midpoint:g}, "
        f"percentile bootstrap over {curves.n_groups} documents (B={n_resamples})",
    )


def _monotonicity(curves: _Curves, n_resamples: int, seed: int, alpha: float) -> Measurement:
    rho = curves.per_group_spearman()
    return _bootstrapped(
        "monotonicity", lambda w: bootstrap.weighted_lower_median(rho, w), curves, n_resamples,
        seed, alpha, "median per-document Spearman ρ(L, s), bootstrap over documents",
    )


def measure_monotone_share(
    lengths: ArrayLike,
    values: ArrayLike,
    groups: ArrayLike,
    *,
    min_rho: float = 0.5,
    seed: int = 0,
) -> Measurement:
    """The share of documents whose s(L) rises with L: per-document Spearman ρ(L, s) above
    ``min_rho``; exact (Clopper–Pearson) sampling over documents; no verdict.

    "The median per-document ρ exceeds ``min_rho``" is the same hypothesis as "more than half of
    the documents have ρ above it" (a sign test), and the share keeps an honest interval when
    every document rises perfectly, where a bootstrap of the median collapses to one point. A
    document whose ρ is undefined (a constant curve, fewer than three lengths) counts as not
    rising.
    """
    curves = _Curves(lengths, values, groups)
    if curves.problem:
        return _not_estimable("monotone_share", curves, seed)
    rho = curves.per_group_spearman()
    rising = int(np.count_nonzero(rho > min_rho))
    return Measurement(
        statistic="monotone_share", estimate=rising / curves.n_groups, n=curves.n_groups,
        method=f"share of documents with Spearman ρ(L, s) > {min_rho:g}, exact binomial "
               "(Clopper–Pearson) over documents",
        sampling=Sampling.binomial(rising, curves.n_groups), seed=seed,
        settings={"documents": curves.n_groups, "min_rho": min_rho,
                  "median_rho": float(np.nanmedian(rho)) if np.isfinite(rho).any() else None},
    )


def _not_estimable(statistic: str, curves: _Curves, seed: int) -> Measurement:
    assert curves.problem is not None
    return Measurement.not_estimable(statistic, curves.n_rows, "growth curve", curves.problem,
                                     seed=seed)


def measure_linear_growth(
    lengths: ArrayLike,
    values: ArrayLike,
    groups: ArrayLike,
    *,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Measurement:
    """How s(L) grows within documents, resampled by document; no verdict.

    The headline is the late/early slope ratio; its components are the pooled within-document
    ``slope``, the ``curvature`` share and the median per-document ``monotonicity`` (Spearman ρ of
    s with L).
    """
    n_resamples = check_resamples(n_resamples)
    curves = _Curves(lengths, values, groups)
    if curves.problem:
        return _not_estimable("late_early_ratio", curves, seed)
    components = {
        "slope": _slope(curves, alpha),
        "curvature": _bootstrapped(
            "curvature", curves.curvature, curves, n_resamples, seed, alpha,
            "quadratic share of the fitted value at the largest length, bootstrap over documents",
        ),
        "monotonicity": _monotonicity(curves, n_resamples, seed, alpha),
    }
    return _with_components(_ratio(curves, n_resamples, seed, alpha), components)


def measure_fixed_point(
    lengths: ArrayLike,
    values: ArrayLike,
    groups: ArrayLike,
    vectors: ArrayLike | None = None,
    *,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Measurement:
    """Whether s(L) (and, with ``vectors``, the direction of e(prefix_L)) settles; no verdict.

    The headline is the ``late_change``: how much s moves over the late half relative to its
    level there (stable where the early slope is near zero, unlike a ratio of slopes);
    components: the ``slope``, the ``late_early_ratio`` (reported) and, with vectors, the median
    per-document ``end_cosine`` between the last prefix and the first late-half prefix.
    """
    n_resamples = check_resamples(n_resamples)
    curves = _Curves(lengths, values, groups)
    matrix = None if vectors is None else _vectors(vectors, curves)
    if curves.problem:
        return _not_estimable("late_change", curves, seed)
    components: dict[str, Measurement] = {"slope": _slope(curves, alpha),
                                          "late_early_ratio": _ratio(curves, n_resamples, seed,
                                                                     alpha)}
    if matrix is not None:
        cosines = _end_cosines(curves, matrix)
        components["end_cosine"] = _bootstrapped(
            "end_cosine", lambda w: bootstrap.weighted_lower_median(cosines, w), curves,
            n_resamples, seed, alpha,
            "median per-document cosine between the last prefix and the first late-half prefix",
        )
    head = _bootstrapped(
        "late_change", curves.late_change, curves, n_resamples, seed, alpha,
        f"within-document slope over L ≥ {curves.midpoint:g} times the late span over the mean "
        f"late level, bootstrap over {curves.n_groups} documents (B={n_resamples})")
    return _with_components(head, components)


def linear_growth(
    lengths: ArrayLike,
    values: ArrayLike,
    groups: ArrayLike,
    *,
    ratio_margin: tuple[float, float] = RATIO_MARGIN,
    curvature_margin: tuple[float, float] = CURVATURE_MARGIN,
    min_slope: float = 0.0,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Result:
    """Judge whether s(L) grows linearly within documents (the CER prediction).

    PASS when the slope's lower bound is above ``min_slope`` and the late/early slope ratio and the
    curvature share each lie, with their whole (1 − 2α) interval, inside their margins; FAIL when
    any of them lies demonstrably outside (saturation, superlinear growth, or no growth);
    INCONCLUSIVE otherwise. The headline estimate is the late/early ratio. A convenience:
    :func:`measure_linear_growth`, then the criterion.
    """
    criterion = Criterion(
        "within", margin=ratio_margin, alpha=alpha,
        components={
            "slope": Criterion("greater", threshold=min_slope, alpha=alpha),
            "curvature": Criterion("within", margin=curvature_margin, alpha=alpha),
        },
    )
    return Result.judged(measure_linear_growth(lengths, values, groups, alpha=alpha,
                                               n_resamples=n_resamples, seed=seed), criterion)


def fixed_point(
    lengths: ArrayLike,
    values: ArrayLike,
    groups: ArrayLike,
    vectors: ArrayLike | None = None,
    *,
    max_change: float = FIXED_POINT_MAX_CHANGE,
    min_cosine: float = FIXED_POINT_MIN_COSINE,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Result:
    """Judge whether s(L) (and, with ``vectors``, the direction of e(prefix_L)) converges.

    PASS when the relative late change lies, with its whole (1 − 2α) interval, inside
    (−max_change, max_change) — over the second half of the lengths s moves by less than a tenth
    of its level — and, when vectors are given, the lower bound of the median end-of-text cosine
    is above ``min_cosine``; FAIL when either is demonstrably outside; INCONCLUSIVE otherwise. A
    convenience: :func:`measure_fixed_point`, then the criterion.
    """
    parts = {}
    if vectors is not None:
        parts["end_cosine"] = Criterion("greater", threshold=min_cosine, alpha=alpha)
    criterion = Criterion("within", margin=(-max_change, max_change), alpha=alpha,
                          components=parts)
    return Result.judged(measure_fixed_point(lengths, values, groups, vectors, alpha=alpha,
                                             n_resamples=n_resamples, seed=seed), criterion)


def _with_components(head: Measurement, components: dict[str, Measurement]) -> Measurement:
    return replace(head, components=components)


def _vectors(vectors: ArrayLike, curves: _Curves) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != curves.n_rows:
        raise NormtestError(
            f"vectors must be one row per (length, value) row: expected ({curves.n_rows}, d), "
            f"got shape {matrix.shape}"
        )
    bad = ~np.isfinite(matrix).all(axis=1)
    if bad.any():
        raise NormtestError(
            f"vectors has {int(bad.sum())} row(s) with NaN or infinite entries "
            f"(first at row {int(np.flatnonzero(bad)[0])}); repair or drop them"
        )
    matrix = matrix[curves.kept][curves.order]
    key = np.stack([curves.codes, curves.length], axis=1)
    if len(np.unique(key, axis=0)) != curves.n:
        raise NormtestError(
            "with vectors, each (document, length) pair must appear once; found duplicates"
        )
    return matrix


def _end_cosines(curves: _Curves, matrix: np.ndarray) -> np.ndarray:
    """Per document: cos(vector at its last length, vector at its first late-half length)."""
    out = np.full(curves.n_groups, np.nan)
    bounds = np.searchsorted(curves.codes, np.arange(curves.n_groups + 1))
    for g in range(curves.n_groups):
        rows = np.arange(bounds[g], bounds[g + 1])
        late = rows[curves.late[rows]]
        if late.size < 2:
            continue
        a, b = matrix[late[0]], matrix[rows[-1]]
        norm = np.linalg.norm(a) * np.linalg.norm(b)
        if norm > 0:
            out[g] = float(a @ b / norm)
    return out


def _group_ranks(codes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Mid-ranks (1-based, ties averaged) of ``values`` within each group of ``codes``."""
    order = np.lexsort((values, codes))
    c, v = codes[order], values[order]
    start = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    first = np.repeat(start, np.diff(np.r_[start, c.size]))
    position = np.arange(c.size) - first + 1.0
    tie = np.flatnonzero(np.r_[True, (c[1:] != c[:-1]) | (v[1:] != v[:-1])])
    sizes = np.diff(np.r_[tie, c.size])
    mid = np.add.reduceat(position, tie) / sizes
    ranks = np.empty(c.size)
    ranks[order] = np.repeat(mid, sizes)
    return ranks
