"""Where claims come from: a user's claim files, folders and modules (``--checks``,
``checks = [...]`` in ``[tool.normtest]``, ``--normtest-checks`` in pytest).

The built-in claims and installed plug-ins register through the ``normtest.checks``
entry-point group (:func:`normtest.claims.catalogue.load_builtin`); this module loads the rest,
each under a name of its own, and says in every message where the source was named.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from normtest.claims.catalogue import claim_ids, load_builtin
from normtest.errors import NormtestError

_LOADED_CHECKS: dict[str, list[str]] = {}


class ClaimSource(str):
    """A claim file, folder or module name that remembers where it was named, for messages:
    ``named`` is, say, ``pyproject.toml: checks = 'lab_claims.py'`` for an entry of the
    configuration file (a plain string is taken as given with ``--checks``)."""

    named: str

    def __new__(cls, value: str, named: str = "") -> ClaimSource:
        made = super().__new__(cls, value)
        made.named = named
        return made


def _named(spec: str, shown: str | os.PathLike[str] | None = None) -> str:
    """How messages name a claim source: where it was given, and the file meant."""
    named = getattr(spec, "named", "")
    shown = spec if shown is None else os.fspath(shown)
    if not named:
        return f"--checks {shown}"
    return named if shown == spec else f"{named} ({shown})"


def load_checks(spec: str | os.PathLike[str]) -> list[str]:
    """Load a user's claims: a ``.py`` file, a folder of them, or an importable module name.

    Returns the ids the file, folder or module declared. Loading the same source twice is free.
    Errors name the source as it was given (``--checks PATH``, or the configuration file and
    its ``checks`` key for a :class:`ClaimSource`).
    """
    load_builtin()
    key = os.fspath(spec)
    if key in _LOADED_CHECKS:
        return _LOADED_CHECKS[key]
    before = claim_ids()
    path = Path(key).expanduser()
    if path.is_dir():
        files = sorted(p for p in path.glob("*.py") if not p.name.startswith("_"))
        if not files:
            raise NormtestError(f"{_named(key)}: the folder holds no .py file of claims")
        for file in files:
            _import_file(file, _named(key, file))
    elif path.suffix == ".py" or path.exists():
        if not path.is_file():
            raise NormtestError(f"{_named(key)}: no such file")
        _import_file(path, _named(key))
    else:
        try:
            importlib.import_module(key)
        except ImportError as exc:
            missing = getattr(exc, "name", None) or ""
            if isinstance(exc, ModuleNotFoundError) and missing and \
                    (key == missing or key.startswith(missing + ".")):
                raise NormtestError(
                    f"{_named(key)}: not a file, a folder or an importable module ({exc})"
                ) from exc
            raise NormtestError(
                f"{_named(key)}: importing it failed: {type(exc).__name__}: {exc}"
            ) from exc
        except NormtestError as exc:
            raise NormtestError(f"{_named(key)}: {exc}") from exc
        except Exception as exc:  # the user's code: say where it failed, without a traceback
            raise NormtestError(
                f"{_named(key)}: importing it failed: {type(exc).__name__}: {exc}"
            ) from exc
    declared = sorted(claim_ids() - before)
    _LOADED_CHECKS[key] = declared
    return declared


def _import_file(path: Path, named: str) -> None:
    """Import a claim file under a name of its own (two files may share a stem); ``named``
    says in messages where the file was given."""
    resolved = path.resolve()
    digest = hashlib.sha256(str(resolved).encode("utf-8")).hexdigest()[:12]
    name = f"normtest_user_checks.{path.stem}_{digest}"
    if name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise NormtestError(f"{named}: cannot be imported as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except NormtestError as exc:
        del sys.modules[name]
        raise NormtestError(f"{named}: {exc}") from exc
    except Exception as exc:  # the user's code: say where it failed, without a traceback
        del sys.modules[name]
        raise NormtestError(
            f"{named}: importing it failed: {type(exc).__name__}: {exc}"
        ) from exc


def load_checks_of(values: Mapping[str, Any]) -> list[str]:
    """Load the claim files, folders or modules the ``checks`` setting names; their ids."""
    from normtest.claims.loading import load_checks

    ids: list[str] = []
    for spec in values.get("checks") or ():
        ids += load_checks(spec)
    return ids
