"""The CI gate: a report held to a model's requirements.

``run`` (``decide``, ``run_gate``), ``config`` (``GateConfig``, read from ``[tool.normtest]``;
only the front ends read it) and ``regression`` (a report against a baseline report).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from normtest.base.lazy import lazy_exports

_EXPORTS = {
    "normtest.gate.run": (
        "UNVERIFIED", "BaselineComparison", "Decision", "GateConfig", "GateOutcome",
        "LineRequirement", "Requirement", "RobustRequirement", "Unshown", "compare", "decide",
        "evaluate", "run_gate", "unshown",
    ),
    "normtest.gate.config": (
        "find_config", "load_config",
    ),
}

__getattr__, __dir__ = lazy_exports(
    __name__, _EXPORTS, fallback="normtest.gate.run",
    renamed={"Comparison": ("normtest.gate.regression", "BaselineComparison")})

if TYPE_CHECKING:  # what the names above are, for type checkers
    from normtest.gate.config import find_config, load_config
    from normtest.gate.run import (
        UNVERIFIED,
        BaselineComparison,
        Decision,
        GateConfig,
        GateOutcome,
        LineRequirement,
        Requirement,
        RobustRequirement,
        Unshown,
        compare,
        decide,
        evaluate,
        run_gate,
        unshown,
    )


__all__ = ["UNVERIFIED", "BaselineComparison", "Decision", "GateConfig", "GateOutcome",
           "LineRequirement", "Requirement", "RobustRequirement", "Unshown", "compare", "decide",
           "evaluate", "find_config", "load_config", "run_gate", "unshown"]
