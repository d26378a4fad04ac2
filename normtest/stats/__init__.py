"""Statistics: measurements with honest intervals, and conveniences that judge them
(docs/theory.md §8).

The ``measure_*`` functions compute: they return a :class:`normtest.verdict.measurement.Measurement`
(estimate, interval, sampling distribution) and know no threshold. The audit judges each measurement
once, against its claim's criterion. The conveniences (``correlation``, ``partial_correlation``,
``linear_growth``, ``fixed_point``, ``equivalence``) measure and judge in one call and return a
:class:`normtest.verdict.result.Result` with ``.verdict``, ``.estimate``, ``.ci``, ``.p_value`` and
``.n``; its measurement can be re-judged later.
"""

from normtest.stats.contrast import contrast, measure_contrast, measure_correlation_contrast
from normtest.stats.correlation import (
    correlation,
    measure_correlation,
    measure_partial_correlation,
    partial_correlation,
)
from normtest.stats.equivalence import equivalence, measure_mean
from normtest.stats.growth import (
    fixed_point,
    linear_growth,
    measure_fixed_point,
    measure_linear_growth,
    measure_monotone_share,
)
from normtest.stats.multiplicity import adjust, adjust_audit

__all__ = [
    "adjust",
    "adjust_audit",
    "contrast",
    "correlation",
    "equivalence",
    "fixed_point",
    "linear_growth",
    "measure_contrast",
    "measure_correlation",
    "measure_correlation_contrast",
    "measure_fixed_point",
    "measure_linear_growth",
    "measure_mean",
    "measure_monotone_share",
    "measure_partial_correlation",
    "partial_correlation",
]
