"""Input discipline shared by every statistical test.

Non-finite values and mismatched lengths are user errors (NormtestError, saying how many and
where); too little data is not an error but an INCONCLUSIVE verdict, decided by the caller.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from normtest.errors import NormtestError

#: Fewest observations (rows) a test will judge; below it the verdict is INCONCLUSIVE.
MIN_POINTS = 10
#: Fewest groups (documents, clusters) a clustered test will judge. A percentile bootstrap over
#: fewer clusters is markedly liberal (measured false-PASS 0.18 at 3, 0.10 at 6, 0.07 at 20
#: clusters against α = 0.05; docs/statistics.md), so below 10 the verdict is INCONCLUSIVE.
MIN_GROUPS = 10


def as_vector(name: str, values: ArrayLike) -> np.ndarray:
    """A 1-D float64 array, or NormtestError naming the problem and where it is."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise NormtestError(f"{name} must be numbers; could not convert it ({exc})") from exc
    if arr.ndim != 1:
        raise NormtestError(f"{name} must be one-dimensional, got shape {arr.shape}")
    _require_finite(name, arr)
    return arr


def as_matrix(name: str, values: ArrayLike, n: int) -> np.ndarray:
    """A 2-D float64 (n, k) array (a 1-D input is one column)."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise NormtestError(f"{name} must be numbers; could not convert it ({exc})") from exc
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise NormtestError(f"{name} must be 1-D or 2-D (n, k), got shape {arr.shape}")
    if arr.shape[0] != n:
        raise NormtestError(f"{name} has {arr.shape[0]} rows but the data have {n}")
    _require_finite(name, arr)
    return arr


def _require_finite(name: str, arr: np.ndarray) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        where = np.argwhere(bad)
        rows = sorted({int(i[0]) for i in where})
        shown = ", ".join(str(i) for i in rows[:10]) + (" …" if len(rows) > 10 else "")
        raise NormtestError(
            f"{name} has {int(bad.sum())} non-finite value(s) (NaN or infinity) at row(s) {shown}; "
            "drop or repair those rows before testing"
        )


def same_length(**arrays: Any) -> int:
    """The common length of the named arrays, or NormtestError listing every length."""
    lengths = {name: len(a) for name, a in arrays.items() if a is not None}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{k}={v}" for k, v in lengths.items())
        raise NormtestError(f"inputs must have the same length, got {listed}")
    return next(iter(lengths.values()))


def group_codes(name: str, labels: ArrayLike, n: int) -> np.ndarray:
    """Integer codes 0..G−1 for arbitrary hashable labels, in sorted label order."""
    arr = np.asarray(labels)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise NormtestError(f"{name} must be one label per row ({n}), got shape {arr.shape}")
    if arr.dtype.kind in "fc":
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            shown = ", ".join(str(i) for i in bad[:10]) + (" …" if bad.size > 10 else "")
            raise NormtestError(
                f"{name} has {bad.size} non-finite label(s) (NaN or infinity) at row(s) {shown}; "
                "give every row a group"
            )
    try:
        _, codes = np.unique(arr, return_inverse=True)
    except TypeError as exc:
        raise NormtestError(f"{name} labels must be mutually comparable ({exc})") from exc
    return codes.astype(np.intp)


def pair_codes(name: str, labels: ArrayLike, n: int) -> np.ndarray:
    """(n, 2) integer codes 0..G−1 of the two units of each row (a pair of words), over the
    labels of both columns together, in sorted label order: two-way clusters."""
    arr = np.asarray(labels)
    if arr.ndim != 2 or arr.shape != (n, 2):
        raise NormtestError(f"{name} must be two labels per row ({n}, 2), got shape {arr.shape}")
    codes = group_codes(name, arr.reshape(-1), 2 * n)
    return codes.reshape(n, 2)


def check_resamples(n_resamples: int) -> int:
    """Validate a bootstrap size."""
    if int(n_resamples) != n_resamples or n_resamples < 100:
        raise NormtestError(f"n_resamples must be an integer ≥ 100, got {n_resamples}")
    return int(n_resamples)
