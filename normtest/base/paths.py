"""Where normtest keeps what it caches and writes: the cache root, the results folder, and the
variables that move them.

The root holds the embedding database (:mod:`normtest.models.cache`), SmolLM2's float32 copy
(``<root>/models/``) and matplotlib's font cache (``<root>/matplotlib/``, unless ``$MPLCONFIGDIR``
is set: :func:`use_own_matplotlib_dir`), so that normtest writes nothing outside its folders.
It is ``$NORMTEST_CACHE_DIR`` when set, otherwise the user's cache directory for normtest
(``~/.cache/normtest`` on Linux). This module imports nothing from
normtest, so the cache and the model adapters can both use it without importing each other.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from filelock import FileLock

__all__ = ["CACHE_ENV", "MATPLOTLIB_ENV", "RESULTS_ENV", "atomic_write", "default_cache_dir",
           "default_results_dir", "file_lock", "folder_name", "use_own_matplotlib_dir"]

CACHE_ENV = "NORMTEST_CACHE_DIR"
RESULTS_ENV = "NORMTEST_RESULTS_DIR"


def default_cache_dir() -> Path:
    """``$NORMTEST_CACHE_DIR``, else the platform's user cache directory for normtest."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    try:
        from platformdirs import user_cache_dir

        return Path(user_cache_dir("normtest"))
    except ImportError:  # pragma: no cover - platformdirs is a core dependency
        return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "normtest"


#: matplotlib's own variable for its configuration and font-cache folder.
MATPLOTLIB_ENV = "MPLCONFIGDIR"


def use_own_matplotlib_dir() -> None:
    """Keep matplotlib's font cache under normtest's cache root: set ``$MPLCONFIGDIR`` to
    ``<cache root>/matplotlib`` before matplotlib is first imported (it otherwise writes
    ``~/.cache/matplotlib``), unless the user set it or matplotlib was already imported (it has
    then chosen its folder). Where that folder cannot be made (a read-only cache), a private
    temporary folder is used, as matplotlib itself would, without its warning."""
    if os.environ.get(MATPLOTLIB_ENV) or "matplotlib" in sys.modules:
        return
    folder = default_cache_dir() / "matplotlib"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise PermissionError(str(folder))
    except OSError:
        folder = Path(tempfile.mkdtemp(prefix="normtest-matplotlib-"))
    os.environ[MATPLOTLIB_ENV] = str(folder)


def folder_name(part: str) -> str:
    """A name or revision as one folder name: letters, digits, ``.``, ``_`` and ``-`` only."""
    cleaned = "".join(c if c.isalnum() or c in "._-" else "-" for c in part).strip(".-")
    return cleaned or "unnamed"


def default_results_dir(model: str, revision: str) -> Path:
    """Where an audit writes its reports when no ``--out`` is given, as MTEB does: one folder
    per model and revision, ``reports/<model>/<revision>/`` under the current folder (or under
    ``$NORMTEST_RESULTS_DIR``), so audits of two revisions never overwrite each other."""
    root = Path(os.environ.get(RESULTS_ENV) or "reports")
    return root / folder_name(model) / folder_name(revision)


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Held while one process makes something several may want at once (a model's float32
    copy, a text set's surprisal): another one waits here, then finds it made (check again
    inside) instead of making it too. ``path`` is the lock file, left in place (removing it
    would race) and kept out of the folders it guards; the system frees the lock if its holder
    dies. Where the lock file cannot be written (a read-only cache), the work goes on unlocked.
    """
    lock: FileLock | None = FileLock(str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()  # type: ignore[union-attr]
    except OSError:
        lock = None
    try:
        yield
    finally:
        if lock is not None:
            lock.release()


def atomic_write(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write a file whole or not at all: ``write`` fills a temporary file in the same folder,
    which then replaces ``path`` (``os.replace``); on any error the temporary file is removed and
    the error raised. The folder is created if needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            write(out)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def published(payload: bytes) -> Callable[[BinaryIO], None]:
    """A writer for :func:`normtest.base.paths.atomic_write` that writes ``payload`` into a file
    with the permissions a plain write gives (:func:`publish`)."""
    def write(out: BinaryIO) -> None:
        publish(out)
        out.write(payload)

    return write


def publish(out: Any) -> None:
    """Give a temporary file (``mkstemp`` makes it readable by its owner alone) the
    permissions a plain write gives: 0666 less the umask."""
    mask = os.umask(0)
    os.umask(mask)
    os.fchmod(out.fileno(), 0o666 & ~mask)
