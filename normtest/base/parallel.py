"""Independent work of one audit spread over the machine's cores: forked local processes.

Once the audit's data are made, its rows, the measurements of its robustness analyses and
its lines' controls read those data and compute their own, independently of each other. A
forked process starts with everything the audit holds (vectors, transforms, draws, the stats
memo) without copying or pickling it, and only its results come back (pickled). Every number
is the same as in one process: every draw is seeded by the audit's settings, never by a
process's state.

``workers`` is the audit's ``--workers`` (None: ``$NORMTEST_WORKERS`` where set, else one per
CPU this process may use; a test suite that pytest-xdist already spreads over the cores sets the
variable to 1, as normtest's own does). The work runs in this process when there is one worker
or one item, where processes cannot be forked (Windows, or a platform whose default start method
is not ``fork``), or inside a process of a pool already. Inside a forked process torch is held
to one thread (as PyTorch's own data loader workers are: OpenMP's threads do not survive a fork)
and the progress display is off; the parent's bar advances as each item comes back.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from normtest.base import progress

__all__ = ["WORKERS_ENV", "available_cpus", "forked_map", "may_start_processes", "worker_count",
           "workers_from_environment"]

#: The default worker count where ``--workers`` is not given (else one per CPU).
WORKERS_ENV = "NORMTEST_WORKERS"

T = TypeVar("T")
R = TypeVar("R")

#: the function and items of the map in progress (read by the forked processes; never pickled)
_JOB: tuple[Callable[[Any], Any], Sequence[Any]] | None = None
#: whether this process is a worker of a map (a worker runs its own maps in-process)
_IN_WORKER = False


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity where the platform says, else all)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def worker_count(workers: int | None, items: int) -> int:
    """How many processes a map of ``items`` runs on for ``--workers`` (None:
    ``$NORMTEST_WORKERS``, else one per CPU)."""
    if workers is None:
        wanted = workers_from_environment() or available_cpus()
    else:
        wanted = int(workers)
    if not may_start_processes() or items < 2 or wanted < 2 or not _can_fork():
        return 1
    return min(wanted, items)


def workers_from_environment() -> int | None:
    """``$NORMTEST_WORKERS`` as a worker count (None where unset or empty); anything but a
    positive whole number is refused, as the same value given to ``--workers`` is."""
    told = os.environ.get(WORKERS_ENV, "").strip()
    if not told:
        return None
    if not told.isdigit() or int(told) < 1:
        from normtest.errors import NormtestError

        raise NormtestError(f"${WORKERS_ENV}={told!r}: give a whole number of worker processes, "
                            f"1 or more (1: this process only), or unset it for one per CPU")
    return int(told)


def may_start_processes() -> bool:
    """Whether this process may start processes of its own: not inside a worker of a map,
    nor in any daemonic process (multiprocessing refuses it children). Work that would spread
    over processes (counting a corpus) runs in-process there instead."""
    return not _IN_WORKER and not multiprocessing.current_process().daemon


def _can_fork() -> bool:
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def forked_map(fn: Callable[[T], R], items: Sequence[T], workers: int | None,
               done: Callable[[int], None] | None = None,
               cost: Callable[[T], float] | None = None, chunksize: int = 1) -> list[R]:
    """``[fn(item) for item in items]``, spread over up to ``workers`` forked processes.

    ``done(i)`` is called in this process as item ``i`` finishes (a progress bar); ``cost``
    orders the work, the dearest first, so that the processes finish together; ``chunksize``
    items in a row go to one process (work that shares what it computes). An exception
    raised by ``fn`` is raised here (the first in item order). Results come back in item order.
    """
    global _JOB
    count = worker_count(workers, len(items))
    if count == 1:
        out = []
        for i, item in enumerate(items):
            out.append(fn(item))
            if done is not None:
                done(i)
        return out
    order = list(range(len(items)))
    if cost is not None:
        order.sort(key=lambda i: -cost(items[i]))
    results: dict[int, tuple[bool, Any]] = {}
    _JOB = (fn, items)
    # tokenizers' Rust threads do not survive a fork either: it warns and turns them off in the
    # child; saying so beforehand keeps the warning off the user's terminal
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        with _pool(count) as pool:
            for i, ok, value in pool.imap_unordered(_run_one, order, chunksize=chunksize):
                results[i] = (ok, value)
                if done is not None:
                    done(i)
    finally:
        _JOB = None
    for i in range(len(items)):
        ok, value = results[i]
        if not ok:
            raise value
    return [results[i][1] for i in range(len(items))]


#: Held back from the moment of a fork until a worker has set its own handlers: a Python
#: handler inherited from the parent (Ray installs one for SIGTERM, which the pool sends its
#: workers when it closes) would otherwise run in the child while it is still in the parent's
#: copied stack, and raise there (SystemExit, KeyboardInterrupt) as if it were the parent.
_HELD = {signal.SIGINT, signal.SIGTERM}


def _pool(count: int) -> Any:
    """A pool of ``count`` forked workers, forked with Ctrl-C and SIGTERM held (a signal sent
    meanwhile reaches this process once the workers exist; each worker lets them in once its
    own handlers are set, :func:`_start_worker`)."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        return multiprocessing.get_context("fork").Pool(count, initializer=_start_worker)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _start_worker() -> None:
    """A forked worker: Ctrl-C is the parent's to handle, SIGTERM ends it (whatever handler
    the parent had), one torch thread, no display."""
    global _IN_WORKER
    _IN_WORKER = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _end_with_parent()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)

    progress._DISPLAY = None


def _end_with_parent() -> None:
    """Linux: this worker gets SIGTERM when the process that forked it dies, however it died
    (killed outright, it cannot terminate its pool), instead of living on, writing its result
    into a pipe no one reads."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - a C library without prctl
        pass


def _run_one(i: int) -> tuple[int, bool, Any]:
    assert _JOB is not None, "a forked worker runs only inside forked_map"
    fn, items = _JOB
    try:
        return i, True, fn(items[i])
    except BaseException as exc:  # sent back and raised in the parent, in item order
        return i, False, exc
