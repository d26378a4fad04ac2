"""The base layer: what every stage reads and nothing of normtest's own stages.

``settings`` (the audit's settings table and ``[tool.normtest]``), ``paths`` (cache and data
folders), ``progress`` (the terminal's progress display), ``fingerprint`` (digests of inputs),
``byte_memo`` (a size-bounded memo), ``parallel`` (forked workers), ``lazy`` (a package's
re-exports, imported on use) and ``version``.
"""
