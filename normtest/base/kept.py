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

import functools
import hashlib
import json
import platform
from collections.abc import Callable, Mapping
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from pathlib import Path
from typing import Any, TypeVar, cast

from normtest.base.paths import atomic_write, default_cache_dir, published
from normtest.errors import NormtestError

__all__ = ["FOLDER", "LIBRARIES", "kept", "libraries", "plain", "source_sha256"]

T = TypeVar("T")

#: The folder under the cache root.
FOLDER = "kept"
#: The libraries whose versions can move a number (tokenisation, draws, sorts, fits).
LIBRARIES = ("numpy", "scipy", "statsmodels", "tokenizers", "transformers", "wordfreq",
             "gensim")


def kept(what: str, key: Mapping[str, Any], compute: Callable[[], T]) -> T:
    """``compute()``, or what it gave before for the same ``what`` and ``key`` (a JSON-able
    description of every input) under the same code and libraries. The value must be JSON
    (lists come back as lists)."""
    description = {"what": what, "key": plain(dict(key)), "code": source_sha256(),
                   "libraries": libraries()}
    digest = hashlib.sha256(json.dumps(description, sort_keys=True).encode("utf-8")).hexdigest()
    path = default_cache_dir() / FOLDER / what / f"{digest[:40]}.json"
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        found = None
    if isinstance(found, dict) and found.get("description") == description \
            and "value" in found:
        return cast(T, found["value"])
    value = compute()
    try:
        atomic_write(path, published(json.dumps({"description": description, "value": value})
                                     + "\n"))
    except (OSError, NormtestError):
        pass
    return value


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


@functools.lru_cache(maxsize=8)
def source_sha256(extra: tuple[str | None, ...] = ()) -> str:
    """SHA-256 over normtest's source (the package and the claim packages it maps: each file's
    path within its package and its bytes) and the ``extra`` files (modules claims come from,
    wherever they are); read where the packages lie, without importing them."""
    files: dict[str, Path] = {}
    for package in ("normtest", "normtest.checks", "normtest.theorems"):
        spec = find_spec(package)
        for root in map(Path, spec.submodule_search_locations or () if spec else ()):
            for path in root.rglob("*.py"):
                files[f"{package}/{path.relative_to(root).as_posix()}"] = path
    for name in extra:
        if name is not None:
            files.setdefault(f"extra/{name}", Path(name))
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
