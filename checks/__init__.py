"""The paper's claim catalogue (docs/theory.md §7), shipped as ``normtest.checks``.

One module per suite; each claim is declared, measured and judged in its module (``word``,
``conditions``, ``text``, ``cer``), through :func:`normtest.catalogue.measures`.
"""
