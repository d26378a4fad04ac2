"""Multiple testing over an audit's rows (docs/statistics.md, "Confirmatory and exploratory").

Holm controls the family-wise error rate over the confirmatory rows — the hypotheses the paper
states in advance — of one whole audit; Benjamini–Hochberg controls the false discovery rate over
the exploratory rows (every other variant). The two sets are adjusted separately, so a hypothesis
stated in advance never pays for the variants explored around it. Both sides are adjusted: the
p-values that support PASS and those that support FAIL, so neither conclusion is reached more
easily because many rows were tried.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

import numpy as np

from normtest.errors import NormtestError
from normtest.result import Result, judge


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error rate), capped at 1."""
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    steps = (p.size - np.arange(p.size)) * p[order]
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(np.maximum.accumulate(steps), 1.0)
    return adjusted


def benjamini_hochberg(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (false discovery rate), capped at 1."""
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")[::-1]  # largest first: rank n, n − 1, …
    steps = p[order] * p.size / (p.size - np.arange(p.size))
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(np.minimum.accumulate(steps), 1.0)
    return adjusted


# Written out rather than statsmodels' multipletests, which runs gc.collect() on every call
# (over a second each with a transformers model in memory); tests check both agree.
_METHODS = {"holm": holm, "bh": benjamini_hochberg}


def adjust(results: Sequence[Result], method: Literal["holm", "bh"] = "holm") -> list[Result]:
    """Fill ``p_adjusted`` and re-judge every result of one family at the adjusted p-values.

    Results without a measurement, or whose measurement could not be made, pass through
    unchanged (they do not count towards the family size).
    """
    if method not in _METHODS:
        raise NormtestError(f"method must be 'holm' or 'bh', got {method!r}")
    judged = []
    for i, r in enumerate(results):
        if r.measurement is None or r.criterion is None or r.measurement.sampling is None:
            continue
        j = judge(r.measurement, r.criterion)
        if math.isnan(j.p_pass) or math.isnan(j.p_fail):
            continue  # nothing to test: it neither counts towards nor disturbs the family
        judged.append((i, j.p_pass, j.p_fail))
    out = list(results)
    if not judged:
        return out
    index = [i for i, _, _ in judged]
    p_pass = np.array([p for _, p, _ in judged])
    p_fail = np.array([p for _, _, p in judged])
    adj_pass, adj_fail = _METHODS[method](p_pass), _METHODS[method](p_fail)
    for i, pp, pf in zip(index, adj_pass, adj_fail, strict=True):
        r = out[i]
        assert r.measurement is not None and r.criterion is not None
        j = judge(r.measurement, r.criterion, p_pass=float(pp), p_fail=float(pf))
        out[i] = replace(r, verdict=j.verdict, reason=j.reason, p_adjusted=float(pp),
                         p_fail_adjusted=float(pf))
    return out



#: How each role's rows are adjusted within one audit.
METHOD_OF_ROLE: dict[str, Literal["holm", "bh"]] = {"confirmatory": "holm", "exploratory": "bh"}


def adjust_audit(results: Sequence[Result]) -> list[Result]:
    """Adjust an audit's rows: Holm over the confirmatory ones, Benjamini–Hochberg over the
    exploratory ones (rows without a role count as exploratory); the order is kept."""
    out = list(results)
    for role, method in METHOD_OF_ROLE.items():
        index = [i for i, r in enumerate(out)
                 if (r.role or "exploratory") == role]
        for i, r in zip(index, adjust([out[i] for i in index], method), strict=True):
            out[i] = r
    return out


def tested(results: Sequence[Result], role: str) -> int:
    """How many rows of a role took part in their adjustment (:func:`adjust_audit` gave them an
    adjusted p-value; rows without p-values do not count towards the family)."""
    return sum((r.role or "exploratory") == role and r.p_adjusted is not None for r in results)
