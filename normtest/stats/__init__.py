"""Statistics that turn measurements into verdicts (THEORY.md §8).

Every function returns a :class:`normtest.result.Result` with ``.verdict``, ``.estimate``,
``.ci``, ``.p_value`` and ``.n``; the measurement inside it can be re-judged later.
"""

from normtest.stats.correlation import correlation, partial_correlation
from normtest.stats.equivalence import equivalence
from normtest.stats.growth import fixed_point, linear_growth
from normtest.stats.multiplicity import adjust

__all__ = [
    "adjust",
    "correlation",
    "equivalence",
    "fixed_point",
    "linear_growth",
    "partial_correlation",
]
