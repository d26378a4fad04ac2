"""Progress on long work: one display on the terminal's standard error, shared by every phase.

The command line turns the display on (:func:`showing`) unless ``--quiet`` was given: live bars
when standard error is a terminal, one plain line per phase anywhere else (a pipe, a file, a CI
log); everything else only reports to it::

    with progress.task("word vectors", total=n, unit="tok") as bar:
        for batch in batches:
            ...
            bar.update(len(batch))

Without a display (``--quiet``, the Python API, pytest) a task costs nothing and shows
nothing. The display is rich's ``Progress``, transient: each bar has a count, a rate and
the time left, and the whole display is erased before the command prints its answer, so it never
mixes into the scorecard or a table.

The same tasks are the audit's stage timer: while :func:`timings` is active, every task adds its
wall time to a record keyed by its description, with or without a display (a benchmark reads
where an audit's time went from it: ``benchmarks/bench_stages.py``)::

    with progress.timings() as recorded:
        run_audit(model)
    recorded.seconds["robustness"], recorded.own["measuring claims"], recorded.calls

Outside :func:`timings` a task records nothing and costs what it did.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["PROGRESS_LINE", "Bar", "Timings", "active", "library_bars", "showing", "task",
           "timings", "without_progress"]

_DISPLAY: Any = None
#: The active records of :func:`timings` (innermost last); empty: tasks record nothing.
_TIMINGS: tuple[Timings, ...] = ()
_TIMINGS_LOCK = threading.Lock()


def active() -> bool:
    """Whether a progress display is on (an adapter then reports to it, not to its own bars)."""
    return _DISPLAY is not None


class Bar:
    """What a phase reports to: ``update(n)`` advances by n, ``describe(text)`` renames it."""

    def __init__(self, display: Any = None, task_id: Any = None) -> None:
        self._display, self._task = display, task_id

    def update(self, n: float = 1) -> None:
        """Advance by ``n`` (tokens, texts, claims, …)."""
        if self._display is not None:
            self._display.advance(self._task, n)

    def describe(self, text: str) -> None:
        """Say what the phase is doing now."""
        if self._display is not None:
            self._display.update(self._task, description=text)


@contextmanager
def task(description: str, total: float | None = None, unit: str = "") -> Iterator[Bar]:
    """A phase of the work: a bar of ``total`` ``unit`` (a spinner when the total is unknown)
    while the block runs, removed at its end; a no-op without a display. While
    :func:`timings` is active its wall time is recorded under ``description`` (what
    :meth:`Bar.describe` shows later does not change the key)."""
    display, records = _DISPLAY, _TIMINGS
    if display is None and not records:
        yield Bar()
        return
    frames = [record._enter(description) for record in records]
    try:
        if display is None:
            yield Bar()
        else:
            task_id = display.add_task(description, total=total, unit=unit)
            try:
                yield Bar(display, task_id)
            finally:
                display.remove_task(task_id)
    finally:
        for record, frame in zip(records, frames, strict=True):
            record._exit(frame)


class Timings:
    """Wall seconds of the :func:`task` blocks run while :func:`timings` is active, by
    description (every task of one description added up):

    * ``seconds``: inclusive, the whole time a task's block ran (a task nested in another
      counts in both);
    * ``own``: exclusive, less the time of the tasks nested in it *in the same thread* (a task
      another thread runs meanwhile is not taken off);
    * ``calls``: how many tasks of the description ended.

    Tasks in any thread of the process are recorded; each thread nests its own. Tasks that run
    in a forked process (``--workers``) are not: only the parent's task around them is. A task
    that began before :func:`timings` did is not recorded. What is a task is the code's choice:
    a transformers adapter's forward passes (``"<model> <what>"``) are one only while a display
    is on (otherwise they show their own tqdm bar), so a record made without a display lacks
    them; a sentence-transformers adapter's encoding is one always.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.own: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self._lock = threading.Lock()
        self._threads = threading.local()
        self._open: dict[int, tuple[str, float]] = {}

    def running(self) -> list[tuple[str, float]]:
        """The tasks running now, in any thread, in the order they began: each one's
        description and the seconds it has run so far."""
        now = time.perf_counter()
        with self._lock:
            begun = list(self._open.values())
        return [(description, now - start) for description, start in begun]

    def _enter(self, description: str) -> list[Any]:
        stack: list[list[Any]] | None = getattr(self._threads, "stack", None)
        if stack is None:
            stack = self._threads.stack = []
        frame: list[Any] = [description, time.perf_counter(), 0.0]  # …, nested seconds
        stack.append(frame)
        with self._lock:
            self._open[id(frame)] = (description, frame[1])
        return frame

    def _exit(self, frame: list[Any]) -> None:
        description, start, nested = frame
        elapsed = time.perf_counter() - start
        stack: list[list[Any]] = getattr(self._threads, "stack", [])
        at = next((i for i in range(len(stack) - 1, -1, -1) if stack[i] is frame), None)
        if at is not None:  # (not the last: a task left out of order; those above it go)
            del stack[at:]
            if stack:
                stack[-1][2] += elapsed
        with self._lock:
            self._open.pop(id(frame), None)
            self.seconds[description] = self.seconds.get(description, 0.0) + elapsed
            self.own[description] = self.own.get(description, 0.0) + elapsed - nested
            self.calls[description] = self.calls.get(description, 0) + 1


@contextmanager
def timings() -> Iterator[Timings]:
    """Record the wall time of every :func:`task` that runs while the block does (see
    :class:`Timings`); the record is read during the block or after it. Nested blocks each
    record what runs within them. Nothing else changes: no display is turned on, no task
    behaves otherwise."""
    global _TIMINGS
    record = Timings()
    with _TIMINGS_LOCK:
        _TIMINGS = (*_TIMINGS, record)
    try:
        yield record
    finally:
        with _TIMINGS_LOCK:
            _TIMINGS = tuple(r for r in _TIMINGS if r is not record)


def _forget_timings() -> None:
    """A forked process records nothing (its parent could not read it; its locks are new)."""
    global _TIMINGS, _TIMINGS_LOCK
    _TIMINGS, _TIMINGS_LOCK = (), threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_timings)


#: One progress line of the plain display: ``normtest: [  12 s] measuring claims``.
PROGRESS_LINE = re.compile(r"^normtest: \[\s*\d+ s\] .*\n?", re.MULTILINE)


def without_progress(text: str) -> str:
    """Standard error as a log holds it, without the plain display's progress lines (what a
    script that reads the errors wants)."""
    return PROGRESS_LINE.sub("", text)


class _Lines:
    """The display off a terminal (a pipe, a file, a CI log): one plain line on standard error
    as each phase begins — the top-level phases and the ones directly inside them — with the
    seconds since the display began; bars, rates and descriptions that change are left out."""

    #: how deep a phase may be nested and still get its line
    DEPTH = 2

    def __init__(self, stream: Any) -> None:
        self.stream, self.start = stream, time.perf_counter()
        self.open: list[int] = []
        self.next_id = 0

    def add_task(self, description: str, total: float | None = None, unit: str = "") -> int:
        self.next_id += 1
        if len(self.open) < self.DEPTH:
            elapsed = time.perf_counter() - self.start
            print(f"normtest: [{elapsed:5.0f} s] {'  ' * len(self.open)}{description}",
                  file=self.stream, flush=True)
        self.open.append(self.next_id)
        return self.next_id

    def advance(self, task_id: int, n: float) -> None:
        pass

    def update(self, task_id: int, description: str = "") -> None:
        pass

    def remove_task(self, task_id: int) -> None:
        if task_id in self.open:
            self.open.remove(task_id)


@contextmanager
def showing(mode: bool | str | None) -> Iterator[None]:
    """Turn the display on for the block, on standard error: ``"bar"`` (or True) rich's live
    bars, for a terminal; ``"lines"`` one plain line per phase, for a pipe or a log; a false
    value none. Nested calls share the outer display."""
    global _DISPLAY
    if not mode or _DISPLAY is not None:
        yield
        return
    if mode == "lines":
        import sys

        _DISPLAY = _Lines(sys.stderr)
        try:
            yield
        finally:
            _DISPLAY = None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    display = Progress(
        SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[unit]}"), TimeElapsedColumn(), TextColumn("elapsed,"),
        TimeRemainingColumn(), TextColumn("left"), console=console, transient=True,
        refresh_per_second=8,
    )
    display.start()
    _DISPLAY = display
    try:
        yield
    finally:
        _DISPLAY = None
        display.stop()


@contextmanager
def library_bars(show: bool) -> Iterator[None]:
    """transformers' own progress bars ("Loading weights", "Converting … GGUF tensors") only
    when ``show`` and standard error is a terminal without normtest's display on it."""
    import sys

    from transformers.utils import logging as hf_logging

    hide = not show or _DISPLAY is not None or not sys.stderr.isatty()
    was_enabled = hf_logging.is_progress_bar_enabled()
    if hide and was_enabled:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if hide and was_enabled:
            hf_logging.enable_progress_bar()
