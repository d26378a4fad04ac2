"""Renderings of the one report object: Markdown, a self-contained HTML page, and JSON.

::

    from normtest.render import render, write_renderings, with_thresholds

    render(report, "md")                       # scorecard, claims, rows; exploratory ones folded
    render(report, "html")                     # scorecard and contents, plots, rows folded
    write_renderings(report, "reports/glove")  # report.json, report.md, report.html
    with_thresholds(report, ["word.norm_ic=0.5", "cer.linear=0.8:1.25"])   # re-judged copy

Every renderer reads :class:`normtest.audit.report.Report` and nothing else, so a stored audit
re-renders (and re-judges under other thresholds) without the model. Plots need matplotlib
(the ``models`` or ``report`` extra); without it the HTML page says so and shows the rest. Every
string that comes from data or the user (words, model names, paths, reasons, claim ids) is
escaped: HTML-escaped in the page, Markdown-escaped in the summary. What each part of the page
shows: ``docs/reports.md``.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from normtest.base.paths import check_replaceable, publish, utf8
from normtest.errors import NormtestError

if TYPE_CHECKING:
    from normtest.audit.report import Report

__all__ = ["FORMATS", "LOCK_NAME", "RENDERERS", "Format", "folder_lock", "parse_threshold",
           "render", "with_thresholds", "write_files", "write_renderings"]

@dataclass(frozen=True)
class Format:
    """A rendering of a report: its file suffix and the function that writes it."""

    suffix: str
    render: Callable[[Report], str]


def _json(report: Report) -> str:
    return report.to_json() + "\n"


def _markdown(report: Report) -> str:
    from normtest.render.markdown import render_markdown

    return render_markdown(report)


def _html(report: Report) -> str:
    from normtest.render.html import render_html

    return render_html(report)


#: The renderings of a report, in the order ``normtest audit`` writes them: a new format is one
#: function and one entry here (``--format`` of ``audit``, ``demo`` and ``report`` offer it).
RENDERERS: dict[str, Format] = {"json": Format(".json", _json), "md": Format(".md", _markdown),
                                "html": Format(".html", _html)}
#: Their names.
FORMATS: tuple[str, ...] = tuple(RENDERERS)


def render(report: Report, fmt: str) -> str:
    """The report as one of :data:`FORMATS` (``json``, ``md`` Markdown, ``html``)."""
    if fmt not in RENDERERS:
        raise NormtestError(f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")
    return RENDERERS[fmt].render(report)


def write_renderings(report: Report, folder: str | Path, formats: Iterable[str] = FORMATS,
                     stem: str = "report") -> list[Path]:
    """Write ``report.json``/``.md``/``.html`` (those of ``formats``) into ``folder``, as one
    set (:func:`write_files`): every rendering is made before any file is touched, and the
    renderings of another format that a previous write left there are removed, so that the
    folder never holds the files of two audits side by side."""
    chosen = list(dict.fromkeys(formats))
    unknown = [f for f in chosen if f not in FORMATS]
    if unknown:
        raise NormtestError(f"unknown report format {unknown[0]!r}; use {', '.join(FORMATS)}")
    files = {f"{stem}{RENDERERS[fmt].suffix}": render(report, fmt) for fmt in chosen}
    stale = [f"{stem}{RENDERERS[fmt].suffix}" for fmt in FORMATS if fmt not in chosen]
    return write_files(folder, files, stale=stale)


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


def parse_threshold(spec: str) -> tuple[str, float | tuple[float, float]]:
    """``CLAIM=VALUE`` (a one-sided threshold) or ``CLAIM=LOW:HIGH`` (an equivalence margin)."""
    claim, sep, value = spec.partition("=")
    claim, value = claim.strip(), value.strip()
    if not sep or not claim or not value:
        raise NormtestError(
            f"--threshold {spec!r}: write CLAIM=VALUE (e.g. word.norm_ic=0.5) or CLAIM=LOW:HIGH "
            "for an equivalence margin (e.g. cer.linear=0.8:1.25)"
        )
    try:
        if ":" in value:
            low_text, high_text = value.split(":", 1)
            low, high = float(low_text), float(high_text)
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise ValueError(value)
            return claim, (low, high)
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(value)
        return claim, number
    except ValueError:
        raise NormtestError(
            f"--threshold {spec!r}: {value!r} is not a finite number nor a margin LOW:HIGH with "
            "LOW < HIGH"
        ) from None


def with_thresholds(report: Report, specs: Sequence[str]) -> Report:
    """A copy of ``report`` re-judged under new thresholds, Holm again within each family.

    ``specs`` are ``CLAIM=VALUE`` or ``CLAIM=LOW:HIGH`` (see :meth:`Report.with_thresholds`).
    """
    parsed = dict(parse_threshold(s) for s in specs)
    try:
        return report.with_thresholds(parsed)
    except NormtestError as exc:
        raise NormtestError(
            f"--threshold: {exc} (write CLAIM=VALUE for one threshold, e.g. word.norm_ic=0.5, "
            "or CLAIM=LOW:HIGH for a margin, e.g. cer.linear=0.8:1.25)"
        ) from exc
