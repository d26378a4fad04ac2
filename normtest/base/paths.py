"""Where normtest keeps what it caches and writes: the cache root, the results folder, and the
variables that move them.

The root holds the embedding database (:mod:`normtest.models.cache`), SmolLM2's float32 copy
(``<root>/models/``) and matplotlib's font cache (``<root>/matplotlib/``, unless ``$MPLCONFIGDIR``
is set: :func:`use_own_matplotlib_dir`), so that normtest writes nothing outside its folders.
It is ``$NORMTEST_CACHE_DIR`` when set, otherwise the user's cache directory for normtest
(``~/.cache/normtest`` on Linux). This module imports nothing from
normtest but its error type, so the cache and the model adapters can both use it without
importing each other.

**Every file normtest writes** goes through :func:`atomic_write`: a temporary sibling, renamed
over a *regular file or nothing*. A device, a FIFO, a symbolic link or a folder standing where
the file goes is refused (:class:`NotReplaceable`) before anything is written, so that
``--summary /dev/stdout`` cannot replace ``/dev/stdout`` and a full disk leaves the old file
whole. The front ends check their output paths with :func:`check_output_file` and
:func:`check_output_folder` before any work.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from filelock import FileLock

from normtest.errors import NormtestError

__all__ = ["CACHE_ENV", "MATPLOTLIB_ENV", "RESULTS_ENV", "NotReplaceable", "atomic_write",
           "check_output_file", "check_output_folder", "check_replaceable", "default_cache_dir",
           "default_results_dir", "file_lock", "folder_name", "publish", "published",
           "use_own_matplotlib_dir", "utf8"]

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


class NotReplaceable(NormtestError, OSError):
    """Something other than a regular file stands where normtest would write one.

    A :class:`~normtest.errors.NormtestError` for the user (exit 2, the message says what to
    give instead) and an ``OSError`` for the cache's writers, which keep working without
    storing when a write fails."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.strerror = message


def _kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, kind in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"  # pragma: no cover - every POSIX kind is named above


def check_replaceable(path: Path, option: str = "") -> None:
    """Refuse a ``path`` that holds anything but a regular file (a missing one is fine): the
    file normtest writes there replaces what stands at the path, and only a regular file may
    be replaced. ``option`` names the command-line option the path came from, for the message."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        where = f"{option + ' ' if option else ''}{path}"
        raise NotReplaceable(f"{where}: cannot look there ({exc.strerror}); give a "
                             "path in a folder you can write") from exc
    if stat.S_ISREG(info.st_mode):
        return
    kind = _kind_of(info.st_mode)
    hint = ""
    if stat.S_ISLNK(info.st_mode):
        with contextlib.suppress(OSError):
            hint = f" (to {os.readlink(path)}); give the path it points to, or another name"
    else:
        hint = ("; normtest writes a file only over a regular file or a new name: give one "
                "(what normtest prints goes to standard output already)")
    raise NotReplaceable(f"{option + ' ' if option else ''}{path} is {kind}{hint}")


def _nonempty(path: str | Path, option: str) -> Path:
    if str(path) == "" or str(path).strip() == "":
        raise NormtestError(f"{option} is empty; give a path (for the current folder, {option} .)")
    return Path(path)


def check_output_file(path: str | Path, option: str) -> Path:
    """Refuse, before any work, an output file that cannot be written: an empty path, a folder
    or anything but a regular file at the path (:func:`check_replaceable`), or a folder that
    cannot be created or written."""
    target = _nonempty(path, option)
    try:
        is_dir = target.is_dir()
    except OSError as exc:  # a folder on the way that cannot be searched
        raise NormtestError(
            f"{option} {target}: cannot write there ({exc.strerror}); give a writable folder"
        ) from exc
    if is_dir:
        raise NormtestError(f"{option} {target} is a folder; give a file name")
    check_replaceable(target, option)
    check_output_folder(target.parent, option)
    return target


def check_output_folder(folder: str | Path, option: str = "--out") -> Path:
    """Refuse, before any work, a folder for output files that is empty, is not a folder, or
    cannot be created or written."""
    target = _nonempty(folder, option)
    try:
        if target.exists() and not target.is_dir():
            raise NormtestError(f"{option} {target} is a file; give a folder for the reports")
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=target, prefix=".normtest-write-check-"):
            pass
    except OSError as exc:
        raise NormtestError(
            f"{option} {target}: cannot write there ({exc.strerror}); give a writable folder"
        ) from exc
    return target


def atomic_write(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write a file whole or not at all: ``write`` fills a temporary file in the same folder,
    which then replaces ``path`` (``os.replace``) if ``path`` is a regular file or nothing
    (:func:`check_replaceable`, checked before and again just before the rename); on any error
    (a full disk, an interruption) the temporary file is removed, the file at ``path`` is left
    as it was, and the error raised. The folder is created if needed."""
    check_replaceable(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                                         dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            write(out)
        check_replaceable(path)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def published(payload: bytes | str) -> Callable[[BinaryIO], None]:
    """A writer for :func:`atomic_write` that writes ``payload`` into a file with the
    permissions a plain write gives (:func:`publish`); text as UTF-8 (:func:`utf8`)."""
    data = utf8(payload) if isinstance(payload, str) else payload

    def write(out: BinaryIO) -> None:
        publish(out)
        out.write(data)

    return write


def utf8(text: str) -> bytes:
    """Text as UTF-8 for a file normtest writes; what UTF-8 cannot hold (a path's undecodable
    byte, kept by Python as a lone surrogate) is written as a backslash escape."""
    return text.encode("utf-8", "backslashreplace")


def publish(out: Any) -> None:
    """Give a temporary file (``mkstemp`` makes it readable by its owner alone) the
    permissions a plain write gives: 0666 less the umask."""
    mask = os.umask(0)
    os.umask(mask)
    os.fchmod(out.fileno(), 0o666 & ~mask)
