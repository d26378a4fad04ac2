"""Names a package re-exports from its modules, imported on first use (PEP 562).

A stage package (``normtest.audit``, ``normtest.gate``, …) answers for the public names its
users know — ``normtest.audit.run_audit`` — without importing the module that defines them
until one is asked for, so that ``import normtest.audit.report`` does not load the whole
runner::

    __getattr__, __dir__ = lazy_exports(__name__, {"normtest.audit.run": ("run_audit", ...)})

A package that took the place of a module of release 0.1 (``normtest.audit`` was
``audit.py``) also answers, with a ``DeprecationWarning``, for that module's other public names
(``fallback``: the module that holds them now) and for its names that were renamed
(``renamed``: old name → (module, name now)).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(package: str, table: Mapping[str, Iterable[str]], *,
                 fallback: str | None = None,
                 renamed: Mapping[str, tuple[str, str]] | None = None,
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, from ``{module: names it exports}``."""
    home = {name: module for module, names in table.items() for name in names}
    renamed = dict(renamed or {})

    def __getattr__(name: str) -> Any:
        module = home.get(name)
        if module is not None:
            found = importlib.import_module(module)
            try:
                value = getattr(found, name)
            except AttributeError:  # a submodule not imported yet
                value = importlib.import_module(f"{module}.{name}")
            globals_of(package)[name] = value
            return value
        if name in renamed:
            where, now = renamed[name]
            warnings.warn(f"{package}.{name} is now {where}.{now}: the old name is deprecated "
                          "and goes in the next release", DeprecationWarning, stacklevel=2)
            return getattr(importlib.import_module(where), now)
        if fallback is not None and not name.startswith("_") \
                and importlib.util.find_spec(f"{package}.{name}") is None:
            value = getattr(importlib.import_module(fallback), name, _MISSING)
            if value is not _MISSING:
                warnings.warn(f"{package}.{name}: import it from {fallback} (the package "
                              "exports it for one more release)", DeprecationWarning,
                              stacklevel=2)
                return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(globals_of(package)) | set(home))

    return __getattr__, __dir__


_MISSING = object()


def globals_of(package: str) -> dict[str, Any]:
    """The namespace of the (imported) module ``package``."""
    return vars(sys.modules[package])
