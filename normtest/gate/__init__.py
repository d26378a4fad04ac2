"""The CI gate: a report held to a model's requirements.

``run`` (``decide``, ``run_gate``), ``config`` (``GateConfig``, read from ``[tool.normtest]``;
only the front ends read it) and ``regression`` (a report against a baseline report).
"""
