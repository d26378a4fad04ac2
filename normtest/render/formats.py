"""The renderings of one report: which formats there are, and writing a report's files.

::

    from normtest.render.formats import render, write_renderings

    render(report, "md")                       # scorecard, claims, rows; exploratory ones folded
    render(report, "html")                     # scorecard and contents, plots, rows folded
    write_renderings(report, "reports/glove")  # report.json, report.md, report.html
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from normtest.audit.tables import metrics_jsonl, rows_csv
from normtest.errors import NormtestError
from normtest.render.html import render_html
from normtest.render.locking import write_files
from normtest.render.markdown import render_markdown

if TYPE_CHECKING:
    from normtest.audit.report import Report


@dataclass(frozen=True)
class Format:
    """A rendering of a report: its file suffix and the function that writes it."""

    suffix: str
    render: Callable[[Report], str]


def _json(report: Report) -> str:
    return report.to_json() + "\n"


def _markdown(report: Report) -> str:

    return render_markdown(report)


def _html(report: Report) -> str:

    return render_html(report)


#: The renderings of a report, in the order ``normtest audit`` writes them: a new format is one
#: function and one entry here (``--format`` of ``audit``, ``demo`` and ``report`` offer it):
#: the report itself, Markdown, HTML, and the flat tables (:mod:`normtest.audit.tables`).
RENDERERS: dict[str, Format] = {"json": Format(".json", _json), "md": Format(".md", _markdown),
                                "html": Format(".html", _html),
                                "csv": Format(".csv", rows_csv),
                                "metrics": Format(".metrics.jsonl", metrics_jsonl)}
#: Their names.
FORMATS: tuple[str, ...] = tuple(RENDERERS)
#: The renderings an audit writes when ``--format`` is not given.
DEFAULT_FORMATS: tuple[str, ...] = ("json", "md", "html")


def render(report: Report, fmt: str) -> str:
    """The report as one of :data:`FORMATS` (``json``, ``md`` Markdown, ``html``)."""
    if fmt not in RENDERERS:
        raise NormtestError(f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")
    return RENDERERS[fmt].render(report)


def write_renderings(report: Report, folder: str | Path,
                     formats: Iterable[str] = DEFAULT_FORMATS,
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
