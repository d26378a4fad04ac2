"""Statistics: measurements with honest intervals, and conveniences that judge them
(docs/theory.md §8).

The ``measure_*`` functions compute: they return a :class:`normtest.verdict.measurement.Measurement`
(estimate, interval, sampling distribution) and know no threshold. The audit judges each measurement
once, against its claim's criterion. The conveniences (``correlation``, ``partial_correlation``,
``linear_growth``, ``fixed_point``, ``equivalence``) measure and judge in one call and return a
:class:`normtest.verdict.result.Result` with ``.verdict``, ``.estimate``, ``.ci``, ``.p_value`` and
``.n``; its measurement can be re-judged later.
"""
