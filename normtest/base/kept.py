"""Results of pure computations kept between processes, keyed by everything they depend on.

Some of an audit's numbers are simulations of its design alone — the attenuation curve of a
beyond reading (:func:`normtest.stats.baseline.attenuation`: thousands of rank correlations per
design) — and come out the same, to the bit, every time the same inputs meet the same code. Such
a result is kept under the cache root (``kept/<what>/<digest>.json``) with the description it was
computed for: its inputs' digest and parameters, the digest of normtest's source
(:func:`source_sha256`) and the versions of the libraries that compute it. A later process reads
it back instead of computing it again, exactly (JSON keeps every float whole). A file that cannot
be read, or describes anything else, is computed again and replaced; a cache that cannot be
written keeps nothing. What the audit reads of a model is never kept here: only functions of
numbers it already has.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import platform
from collections.abc import Callable, Mapping
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from pathlib import Path
from typing import Any, TypeVar

from normtest.base.paths import atomic_write, default_cache_dir, published
from normtest.errors import NormtestError

__all__ = ["FOLDER", "LIBRARIES", "kept", "libraries", "plain", "source_sha256", "store",
           "stored"]

T = TypeVar("T")

#: The folder under the cache root.
FOLDER = "kept"
#: The libraries whose versions can move a number (tokenisation, draws, sorts, fits).
LIBRARIES = ("numpy", "scipy", "statsmodels", "tokenizers", "transformers", "wordfreq",
             "gensim")


def kept(what: str, key: Mapping[str, Any], compute: Callable[[], Any],
         decode: Callable[[Any], T]) -> T:
    """``decode(compute())``, or ``decode`` of what ``compute`` gave before for the same
    ``what`` and ``key`` (a JSON-able description of every input) under the same code and
    libraries; a kept value ``decode`` refuses (TypeError, ValueError, KeyError) is computed
    again. ``compute`` gives JSON (lists come back as lists: ``decode`` makes the value's
    types)."""
    description = {"what": what, "key": plain(dict(key)), "code": source_sha256(),
                   "libraries": libraries()}
    folder = default_cache_dir() / FOLDER / what
    found = stored(folder, description)
    if found is not None:
        with contextlib.suppress(TypeError, ValueError, KeyError):
            return decode(found)
    value = compute()
    store(folder, description, value)
    return decode(value)


def stored(folder: Path, description: Mapping[str, Any]) -> Any | None:
    """The value kept in ``folder`` for ``description`` (None: none, or the file there cannot
    be read or describes anything else)."""
    try:
        found = json.loads(_path(folder, description).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(found, dict) and found.get("description") == plain(dict(description)):
        return found.get("value")
    return None


def store(folder: Path, description: Mapping[str, Any], value: Any) -> None:
    """Keep ``value`` (JSON) in ``folder`` for ``description``, whole or not at all (a cache
    that cannot be written keeps nothing)."""
    text = json.dumps({"description": description, "value": value}, indent=1) + "\n"
    with contextlib.suppress(OSError, NormtestError):
        atomic_write(_path(folder, description), published(text))


def _path(folder: Path, description: Mapping[str, Any]) -> Path:
    """The file named by the SHA-256 of the description (its first 40 hex digits)."""
    digest = hashlib.sha256(json.dumps(description, sort_keys=True).encode("utf-8"))
    return folder / f"{digest.hexdigest()[:40]}.json"


def plain(value: Any) -> Any:
    """A value as JSON keeps it (tuples as lists; anything else by its repr)."""
    return json.loads(json.dumps(value, default=repr))


@functools.lru_cache(maxsize=1)
def libraries() -> dict[str, str | None]:
    """Python's version and those of :data:`LIBRARIES` (None: not installed)."""
    def found(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    return {"python": platform.python_version(), **{name: found(name) for name in LIBRARIES}}


@functools.lru_cache(maxsize=1)
def source_sha256() -> str:
    """SHA-256 over normtest's source: the package and the claim packages it maps, each file's
    path within its package and its bytes; read where the packages lie, without importing
    them."""
    files: dict[str, Path] = {}
    for package in ("normtest", "normtest.checks", "normtest.theorems"):
        spec = find_spec(package)
        for root in map(Path, spec.submodule_search_locations or () if spec else ()):
            for path in root.rglob("*.py"):
                files[f"{package}/{path.relative_to(root).as_posix()}"] = path
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode("utf-8") + b"\0")
        try:
            digest.update(hashlib.sha256(files[name].read_bytes()).digest())
        except OSError:
            digest.update(b"unreadable")
    return digest.hexdigest()


# the source as this process imported it: a file edited while the process runs must not have
# the old code's results kept under the new code's digest
source_sha256()
