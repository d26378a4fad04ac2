"""Progress on long work: one display on the terminal's standard error, shared by every phase.

The command line turns the display on (:func:`showing`) when standard error is a terminal and
``--quiet`` was not given; everything else only reports to it::

    with progress.task("word vectors", total=n, unit="tok") as bar:
        for batch in batches:
            ...
            bar.update(len(batch))

Without a display (a pipe, a file, ``--quiet``, the Python API, pytest) a task costs nothing and
shows nothing. The display is rich's ``Progress``, transient: each bar has a count, a rate and
the time left, and the whole display is erased before the command prints its answer, so it never
mixes into the scorecard or a table.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Bar", "active", "library_bars", "showing", "task"]

_DISPLAY: Any = None


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
    while the block runs, removed at its end; a no-op without a display."""
    display = _DISPLAY
    if display is None:
        yield Bar()
        return
    task_id = display.add_task(description, total=total, unit=unit)
    try:
        yield Bar(display, task_id)
    finally:
        display.remove_task(task_id)


@contextmanager
def showing(enabled: bool) -> Iterator[None]:
    """Turn the display on for the block (on standard error) when ``enabled``; nested calls
    share the outer display."""
    global _DISPLAY
    if not enabled or _DISPLAY is not None:
        yield
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
