"""The paper's claim catalogue (docs/theory.md §7), shipped as ``normtest.checks``.

One module per suite; each claim is declared, measured and judged in its module (``word``,
``conditions``, ``text``, ``cer``), through :func:`normtest.claims.catalogue.measures`.
"""

# Registered in this order (the catalogue's order): normtest declares this package in its own
# ``normtest.checks`` entry point, so importing it is what registers the built-in claims.
from normtest.checks import axes, cer, comparisons, conditions, text, word  # noqa: F401
