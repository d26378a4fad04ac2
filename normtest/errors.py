"""The one exception type a user of normtest can cause and fix."""

from __future__ import annotations


class NormtestError(ValueError):
    """Bad input or configuration; the message says what to do about it.

    Every error a user can cause (unknown model, unreadable file, NaN vectors, an empty sample,
    mismatched lengths) raises this type, so callers need to catch only one thing. Data that are
    merely too few for a test do not raise: the test returns an INCONCLUSIVE verdict with a reason.
    """
