"""Writing a folder's files as one set, under the folder's writer lock.

Two audits given one ``--out`` take turns (an ``fcntl.flock`` on ``.normtest.lock`` in the
folder) and each writes its files whole or not at all, so the folder never holds a mix.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from normtest.base.paths import check_replaceable, publish, utf8
from normtest.errors import NormtestError

#: The lock file in a report folder that serialises writers (``fcntl.flock``; left in place).
LOCK_NAME = ".normtest.lock"
#: How long a writer waits for another one writing the same folder before it gives up.
LOCK_WAIT_S = 120.0


def write_files(folder: str | Path, files: Mapping[str, str | bytes],
                stale: Iterable[str] = ()) -> list[Path]:
    """Write ``files`` (name → text or bytes) into ``folder`` as one set, the whole set or
    nothing: each goes to a temporary file in the folder first, and only when every one is
    written are they renamed into place (each rename is atomic), then the ``stale`` names
    removed. Writers of one folder take turns (:func:`folder_lock`), so two audits given one
    ``--out`` leave the complete set of one of them, never a mix. On an error while writing,
    the temporary files are removed and the files already there are left as they were (only
    a rename that fails — a folder standing where a file goes — can leave those renamed
    before it). The files get the permissions a plain write would give (the umask's)."""
    target = Path(folder)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NormtestError(f"cannot create the report folder {target}: {exc.strerror}") from exc
    payloads = {name: utf8(text) if isinstance(text, str) else text
                for name, text in files.items()}
    for name in payloads:  # only regular files are replaced (a symlink, a FIFO: refused)
        check_replaceable(target / name)
    with folder_lock(target):
        pending: list[tuple[str, Path]] = []
        current = target
        try:
            for name, payload in payloads.items():
                current = target / name
                handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp",
                                                     dir=target)
                pending.append((temporary, current))
                with os.fdopen(handle, "wb") as out:
                    publish(out)
                    out.write(payload)
        except OSError as exc:
            for temporary, _ in pending:
                Path(temporary).unlink(missing_ok=True)
            raise NormtestError(f"cannot write {current}: {exc.strerror}; nothing was "
                                f"replaced in {target}") from exc
        except BaseException:
            for temporary, _ in pending:
                Path(temporary).unlink(missing_ok=True)
            raise
        for k, (temporary, path) in enumerate(pending):
            try:
                check_replaceable(path)
                os.replace(temporary, path)
            except OSError as exc:  # e.g. a folder where the file goes: nothing is half-written
                for left, _ in pending[k:]:
                    Path(left).unlink(missing_ok=True)
                raise NormtestError(f"cannot write {path}: {exc.strerror}") from exc
        for name in stale:
            if name not in payloads:
                (target / name).unlink(missing_ok=True)
    return [path for _, path in pending]


@contextlib.contextmanager
def folder_lock(folder: Path, wait: float | None = None) -> Iterator[None]:
    """Hold the folder's writer lock (an ``fcntl.flock`` on ``folder/.normtest.lock``, removed
    again by its holder): another writer waits until it is free, at most ``wait`` seconds
    (default :data:`LOCK_WAIT_S`), then is refused. A writer that locked a lock file its holder
    had just removed notices (the path no longer names the file it locked) and tries again.
    Where ``fcntl`` does not exist (Windows) the files are still renamed into place one by
    one, without the lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    path = folder / LOCK_NAME
    deadline = time.monotonic() + (LOCK_WAIT_S if wait is None else wait)
    while True:
        try:
            handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise NormtestError(f"cannot write to the report folder {folder}: "
                                f"{exc.strerror}") from exc
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(handle)
            if time.monotonic() >= deadline:
                raise NormtestError(
                    f"another normtest is writing reports to {folder} (it holds {path}); wait "
                    "for it to finish, or give another --out") from None
            time.sleep(0.05)
            continue
        try:
            same = os.path.samestat(os.fstat(handle), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(handle)  # the holder before us removed it: lock the one there now
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(handle)  # closing releases the lock
