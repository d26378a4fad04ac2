"""Multiple testing over an audit's rows (docs/statistics.md, "Confirmatory and exploratory").

The confirmatory rows — the hypotheses the paper states in advance — decide their scorecard
line, and each line is its own decision, with the multiplicity its decision rule needs
(``"line"``): *replicated* needs every row of the line to PASS, an intersection–union test whose
level is α without adjustment (its rows' PASS p-values stay as they are); *contradicted* needs
one row to FAIL, so the FAIL p-values are adjusted by Holm over the line's rows (of one reading),
and *undecided* is what is left. A line's verdict then depends on its own rows only, never on
which other claims ran. Confirmatory rows that count towards no line (a comparison's) are
adjusted by Holm on both sides, as one family. Benjamini–Hochberg controls the false discovery
rate over the exploratory rows (every other variant), on both sides. So a hypothesis stated in
advance never pays for the variants explored around it, and neither conclusion is reached more
easily because many rows were tried.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

import numpy as np

from normtest.errors import NormtestError
from normtest.verdict.result import Result, judge


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


def unadjusted(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """The p-values as they are (an intersection–union test's PASS side needs no adjustment)."""
    return np.asarray(p_values, dtype=np.float64).copy()


# Written out rather than statsmodels' multipletests, which runs gc.collect() on every call
# (over a second each with a transformers model in memory); tests check both agree.
_METHODS = {"holm": (holm, holm), "bh": (benjamini_hochberg, benjamini_hochberg),
            "line": (unadjusted, holm)}
Method = Literal["holm", "bh", "line"]


def adjust(results: Sequence[Result], method: Method = "holm") -> list[Result]:
    """Fill ``p_adjusted`` and re-judge every result of one family at the adjusted p-values.

    ``holm`` and ``bh`` adjust both sides; ``line`` is one scorecard line's rule: the PASS
    side unadjusted (replicated needs every row: intersection–union), the FAIL side by Holm.
    Results without a measurement, or whose measurement could not be made, pass through
    unchanged (they do not count towards the family size).
    """
    if method not in _METHODS:
        raise NormtestError(f"method must be 'holm', 'bh' or 'line', got {method!r}")
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
    on_pass, on_fail = _METHODS[method]
    adj_pass, adj_fail = on_pass(p_pass), on_fail(p_fail)
    for i, pp, pf in zip(index, adj_pass, adj_fail, strict=True):
        r = out[i]
        assert r.measurement is not None and r.criterion is not None
        j = judge(r.measurement, r.criterion, p_pass=float(pp), p_fail=float(pf))
        out[i] = replace(r, verdict=j.verdict, reason=j.reason, p_adjusted=float(pp),
                         p_fail_adjusted=float(pf))
    return out



#: How each role's rows are adjusted within one audit: the confirmatory ones line by line
#: (:data:`LINE_RULE`), the exploratory ones by Benjamini–Hochberg.
METHOD_OF_ROLE: dict[str, Method] = {"confirmatory": "line", "exploratory": "bh"}
#: The per-line rule in words (reports' provenance, ``normtest explain``).
LINE_RULE = ("each scorecard line its own decision: PASS unadjusted (replicated needs every "
             "row: intersection–union), FAIL at Holm's level over the line's rows")


def adjust_audit(results: Sequence[Result]) -> list[Result]:
    """Adjust an audit's rows: the confirmatory ones of each scorecard line (and reading) by the
    line's rule, those of no line by Holm together, the exploratory ones by Benjamini–Hochberg
    (rows without a role count as exploratory); the order is kept."""
    out = list(results)
    families: dict[tuple[str, object, object], list[int]] = {}
    for i, r in enumerate(out):
        role = r.role or "exploratory"
        if role == "confirmatory":
            key = ("line", r.hypothesis, r.details.get("reading")) if r.hypothesis is not None \
                else ("holm", None, None)
        else:
            key = ("bh", None, None)
        families.setdefault(key, []).append(i)
    for (method, _, _), index in families.items():
        for i, r in zip(index, adjust([out[i] for i in index], method),  # type: ignore[arg-type]
                        strict=True):
            out[i] = r
    return out


def tested(results: Sequence[Result], role: str) -> int:
    """How many rows of a role took part in their adjustment (:func:`adjust_audit` gave them an
    adjusted p-value; rows without p-values do not count towards the family)."""
    return sum((r.role or "exploratory") == role and r.p_adjusted is not None for r in results)
