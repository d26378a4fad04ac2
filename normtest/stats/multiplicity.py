"""Multiple testing within one claim's family of variants (THEORY.md §8).

Holm controls the family-wise error rate (for gated families); Benjamini–Hochberg controls the
false discovery rate (for exploratory reports). Both sides are adjusted: the p-values that
support PASS and those that support FAIL, so neither conclusion is reached more easily because a
claim was tried in many variants.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

import numpy as np

from normtest.errors import NormtestError
from normtest.result import Result, judge

_METHODS = {"holm": "holm", "bh": "fdr_bh"}


def adjust(results: Sequence[Result], method: Literal["holm", "bh"] = "holm") -> list[Result]:
    """Fill ``p_adjusted`` and re-judge every result of one family at the adjusted p-values.

    Results without a measurement, or whose measurement could not be made, pass through
    unchanged (they do not count towards the family size).
    """
    from statsmodels.stats.multitest import multipletests

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
    adj_pass = multipletests(p_pass, method=_METHODS[method])[1]
    adj_fail = multipletests(p_fail, method=_METHODS[method])[1]
    for i, pp, pf in zip(index, adj_pass, adj_fail, strict=True):
        r = out[i]
        assert r.measurement is not None and r.criterion is not None
        j = judge(r.measurement, r.criterion, p_pass=float(pp), p_fail=float(pf))
        out[i] = replace(r, verdict=j.verdict, reason=j.reason, p_adjusted=float(pp),
                         p_fail_adjusted=float(pf))
    return out

