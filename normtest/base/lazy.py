"""Names a package re-exports from its modules, imported on first use (PEP 562).

A stage package (``normtest.audit``, ``normtest.gate``, …) answers for the public names its
users know — ``normtest.audit.run_audit`` — without importing the module that defines them
until one is asked for, so that ``import normtest.audit.report`` does not load the whole
runner::

    __getattr__, __dir__ = lazy_exports(__name__, {"normtest.audit.run": ("run_audit", ...)})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(package: str, table: Mapping[str, Iterable[str]]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, from ``{module: names it exports}``."""
    home = {name: module for module, names in table.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        found = importlib.import_module(module)
        try:
            value = getattr(found, name)
        except AttributeError:  # a submodule not imported yet
            value = importlib.import_module(f"{module}.{name}")
        globals_of(package)[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals_of(package)) | set(home))

    return __getattr__, __dir__


def globals_of(package: str) -> dict[str, Any]:
    return vars(sys.modules[package])
