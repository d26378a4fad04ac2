"""Renderings of the one report object: Markdown, a self-contained HTML page, and JSON.

::

    from normtest.render import render, write_renderings, with_thresholds

    render(report, "md")                       # scorecard, claims, rows; exploratory ones folded
    render(report, "html")                     # scorecard and contents, plots, rows folded
    write_renderings(report, "reports/glove")  # report.json, report.md, report.html
    with_thresholds(report, ["word.norm_ic=0.5", "cer.linear=0.8:1.25"])   # re-judged copy

Every renderer reads :class:`normtest.report.Report` and nothing else, so a stored audit
re-renders (and re-judges under other thresholds) without the model. Plots need matplotlib
(the ``models`` or ``report`` extra); without it the HTML page says so and shows the rest. Every
string that comes from data or the user (words, model names, paths, reasons, claim ids) is
escaped: HTML-escaped in the page, Markdown-escaped in the summary. What each part of the page
shows: ``docs/reports.md``.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from normtest.errors import NormtestError

if TYPE_CHECKING:
    from normtest.report import Report

__all__ = ["FORMATS", "parse_threshold", "render", "with_thresholds", "write_renderings"]

#: The formats a report renders to, in the order ``normtest audit`` writes them.
FORMATS: tuple[str, ...] = ("json", "md", "html")
_SUFFIX = {"json": ".json", "md": ".md", "html": ".html"}


def render(report: Report, fmt: str) -> str:
    """The report as ``json``, ``md`` (Markdown) or ``html`` text."""
    if fmt == "json":
        return report.to_json() + "\n"
    if fmt == "md":
        from normtest.render.markdown import render_markdown

        return render_markdown(report)
    if fmt == "html":
        from normtest.render.html import render_html

        return render_html(report)
    raise NormtestError(f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")


def check_writable_folder(folder: str | Path, option: str = "--out") -> Path:
    """Refuse, before any work, a report folder that cannot be created or written."""
    target = Path(folder)
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


def check_writable_file(path: str | Path, option: str) -> Path:
    """Refuse, before any work, an output file whose folder cannot be created or written."""
    target = Path(path)
    try:
        is_dir = target.is_dir()
    except OSError as exc:  # a folder on the way that cannot be searched
        raise NormtestError(
            f"{option} {target}: cannot write there ({exc.strerror}); give a writable folder"
        ) from exc
    if is_dir:
        raise NormtestError(f"{option} {target} is a folder; give a file name")
    check_writable_folder(target.parent, option)
    return target


def write_renderings(report: Report, folder: str | Path, formats: Iterable[str] = FORMATS,
                     stem: str = "report") -> list[Path]:
    """Write ``report.json``/``.md``/``.html`` (those of ``formats``) into ``folder``."""
    chosen = list(dict.fromkeys(formats))
    unknown = [f for f in chosen if f not in FORMATS]
    if unknown:
        raise NormtestError(f"unknown report format {unknown[0]!r}; use {', '.join(FORMATS)}")
    target = Path(folder)
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NormtestError(f"cannot create the report folder {target}: {exc.strerror}") from exc
    written = []
    for fmt in chosen:
        path = target / f"{stem}{_SUFFIX[fmt]}"
        try:
            path.write_text(render(report, fmt), encoding="utf-8")
        except OSError as exc:
            raise NormtestError(f"cannot write {path}: {exc.strerror}") from exc
        written.append(path)
    return written


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
