"""The descriptive fits the report's plots draw (numpy and scipy only; no plotting here).

These describe the stored data for a reader; they are not the tests. The verdicts come from the
measurements in the report (Spearman ρ with its bootstrap interval, the late/early slope ratio).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Line:
    """y = intercept + slope·x (ordinary least squares)."""

    slope: float
    intercept: float

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.intercept + self.slope * np.asarray(x, dtype=np.float64)


@dataclass(frozen=True)
class Saturating:
    """s(L) = start + rise·(1 − exp(−L/tau)): levels off at ``plateau`` (a fixed point)."""

    start: float
    rise: float
    tau: float

    @property
    def plateau(self) -> float:
        """The value s(L) tends to as L grows."""
        return self.start + self.rise

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        return self.start + self.rise * (1.0 - np.exp(-x / self.tau))


def ols(x: np.ndarray, y: np.ndarray) -> Line | None:
    """Least-squares line of y on x; None with fewer than two distinct x."""
    if x.size < 2 or np.ptp(x) == 0:
        return None
    slope, intercept = np.polyfit(x, y, 1)
    return Line(float(slope), float(intercept))


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's ρ (NaN when either side is constant or there are fewer than three points)."""
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    from scipy.stats import spearmanr

    return float(spearmanr(x, y).statistic)


def outliers(x: np.ndarray, y: np.ndarray, k: int = 3,
             line: Line | None = None) -> tuple[list[int], list[int]]:
    """Indices of the ``k`` points farthest above and below the OLS line (largest first);
    ``line``: that line, when the caller has fitted it already."""
    if line is None:
        line = ols(x, y)
    if line is None or x.size < 2 * k + 1:
        return [], []
    residual = y - line(x)
    order = np.argsort(residual)
    return [int(i) for i in order[::-1][:k]], [int(i) for i in order[:k]]


def mean_curve(lengths: np.ndarray, values: np.ndarray, documents: np.ndarray,
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lengths, mean value, documents) at each length that at least half the documents reach.

    Documents shorter than the longest prefix stop early; averaging over ever fewer of them would
    make the mean jump, so lengths reached by fewer than half the documents are left out.
    """
    n_docs = np.unique(documents).size
    grid = np.unique(lengths)
    keep_l, keep_m, keep_n = [], [], []
    for length in grid:
        at = lengths == length
        count = np.unique(documents[at]).size
        if count * 2 >= n_docs:
            keep_l.append(length)
            keep_m.append(float(values[at].mean()))
            keep_n.append(count)
    return (np.asarray(keep_l, dtype=np.float64), np.asarray(keep_m, dtype=np.float64),
            np.asarray(keep_n, dtype=np.intp))


def saturating(lengths: np.ndarray, values: np.ndarray) -> Saturating | None:
    """Least-squares ``start + rise·(1 − exp(−L/tau))``; None when it does not converge.

    ``tau`` is bounded to [min L / 10, 100 · max L]: at the upper end the curve is a straight
    line over the observed range, at the lower end it is flat from the first prefix on.
    """
    if lengths.size < 3 or np.ptp(lengths) == 0:
        return None
    from scipy.optimize import curve_fit

    def model(x: np.ndarray, start: float, rise: float, tau: float) -> np.ndarray:
        return start + rise * (1.0 - np.exp(-x / tau))

    low_tau = max(float(lengths.min()) / 10.0, 1e-6)
    high_tau = 100.0 * float(lengths.max())
    span = float(values[-1] - values[0]) or float(np.ptp(values)) or 1.0
    p0 = (float(values[0]) - span / 2, span * 1.5, float(np.median(lengths)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            params, _ = curve_fit(model, lengths, values, p0=p0, maxfev=5000,
                                  bounds=([-np.inf, -np.inf, low_tau], [np.inf, np.inf, high_tau]))
    except (RuntimeError, ValueError, TypeError):
        return None
    fit = Saturating(float(params[0]), float(params[1]), float(params[2]))
    if not all(math.isfinite(v) for v in (fit.start, fit.rise, fit.tau)):
        return None
    return fit


@dataclass(frozen=True)
class CurveFit:
    """What a CER figure and its caption show of a set of prefix curves, fitted once."""

    #: the lengths at least half the documents reach, and the mean value at each
    grid: np.ndarray
    mean: np.ndarray
    line: Line | None
    saturating: Saturating | None


def fit_curves(lengths: np.ndarray, values: np.ndarray, documents: np.ndarray) -> CurveFit:
    """The mean curve (:func:`mean_curve`) with its least-squares line and saturating fit."""
    grid, mean, _ = mean_curve(lengths, values, documents)
    return CurveFit(grid, mean, ols(grid, mean), saturating(grid, mean))
