"""Benchmark: what rendering one report costs — report.json, report.md and report.html.

``write_renderings(report, folder)`` writes the three files; the HTML page embeds every figure
(forest plots, word and sentence scatters, CER curves, the layer profile) as SVG. Timed
in-process, on one report:

- per format: the seconds of ``render(report, fmt)`` for ``json``, ``md`` and ``html``, and of
  ``write_renderings`` as a whole (the three files written);
- per figure kind (``forest``, ``scatter``, ``cer``, ``layers``): how many were drawn, their
  total and median seconds — by wrapping the figure-drawing functions the page calls, so a
  figure drawn twice is counted twice;
- the number of figures on the page (``<img>`` elements) and the page's size.

Every figure is the median over ``--repeats`` runs of the whole rendering (the first run, which
imports matplotlib and reads fonts, is reported apart as ``cold``).

The report: ``--report PATH`` (a ``report.json``), else a real audit run here with the default
settings — ``run_audit(load("minilm-l6"), settings=AuditSettings())``, a few minutes cold,
faster with the embedding cache warm (``--save-report PATH`` keeps it for the next run).

On the report of a default audit of MiniLM (211 rows, 58 figures: 11 forest plots, 37 scatters,
10 CER plots), 2 busy cores: 7.7–9.6 s when matplotlib drew every figure (a forest plot
0.18–0.22 s, a scatter 0.09–0.11 s, a CER plot 0.22–0.24 s; html 7.3–9.2 s, json 0.4 s), 0.78 s
with the SVG canvas (forest 3 ms, scatter 7 ms, CER 4 ms; html 0.39 s, json 0.36 s).

Usage: ``python benchmarks/bench_render.py --out bench.json [--report report.json]
[--save-report PATH] [--repeats 5] [--threads 1]``.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from unittest.mock import patch

from _common import arguments, machine, set_threads, write

#: figure kind → (module, function) the page calls to draw a figure of that kind
KINDS = {
    "forest": ("normtest.render.plots", "forest_plot"),
    "scatter": ("normtest.render.plots", "scatter_plot"),
    "cer": ("normtest.render.plots", "cer_plot"),
    "layers": ("normtest.render.layers", "layer_plot"),
}


def _wrapped(module: Any, name: str, record: Callable[[float], None]) -> Any:
    """``module.name`` replaced, while inside, by a wrapper that records each call's seconds."""
    original = getattr(module, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            record(time.perf_counter() - start)

    return patch.object(module, name, timed)


def _once(report: Any) -> dict[str, Any]:
    """One rendering of ``report`` into a temporary folder, timed per format and figure."""
    import importlib
    from contextlib import ExitStack

    import normtest.render.formats as render_module

    formats: dict[str, float] = {}
    figures: dict[str, list[float]] = {kind: [] for kind in KINDS}
    with ExitStack() as stack, tempfile.TemporaryDirectory() as folder:
        for kind, (module, name) in KINDS.items():
            stack.enter_context(_wrapped(importlib.import_module(module), name,
                                         figures[kind].append))
        render = render_module.render

        def timed_render(report: Any, fmt: str) -> str:
            start = time.perf_counter()
            text = render(report, fmt)
            formats[fmt] = formats.get(fmt, 0.0) + time.perf_counter() - start
            return text

        stack.enter_context(patch.object(render_module, "render", timed_render))
        start = time.perf_counter()
        render_module.write_renderings(report, folder)
        total = time.perf_counter() - start
        page = (Path(folder) / "report.html").read_text(encoding="utf-8")
    return {"formats": formats, "total": total, "figures": figures,
            "images": page.count("<img "), "html_bytes": len(page.encode("utf-8"))}


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def render_figures(report: Any, repeats: int = 1) -> dict[str, Any]:
    """Render ``report`` (json, md, html) ``repeats`` times; medians of the seconds per format,
    of ``write_renderings`` as a whole, and per figure kind (count, total, median per figure)."""
    runs = [_once(report) for _ in range(max(1, repeats))]
    formats = {fmt: _median([run["formats"].get(fmt, 0.0) for run in runs])
               for fmt in ("json", "md", "html")}
    kinds: dict[str, Any] = {}
    for kind in KINDS:
        counts = [len(run["figures"][kind]) for run in runs]
        kinds[kind] = {
            "count": counts[0],
            "total_s": _median([sum(run["figures"][kind]) for run in runs]),
            "median_s": _median([t for run in runs for t in run["figures"][kind]]),
        }
    drawn = sum(k["count"] for k in kinds.values())
    return {
        "repeats": len(runs),
        "write_renderings_s": _median([run["total"] for run in runs]),
        "write_renderings_runs_s": [round(run["total"], 4) for run in runs],
        "formats_s": formats,
        "figures": drawn,
        "images_on_page": runs[0]["images"],
        "html_bytes": runs[0]["html_bytes"],
        "figure_kinds": kinds,
        "figures_s": _median([sum(sum(run["figures"][k]) for k in KINDS) for run in runs]),
    }


def audit_report() -> Any:
    """A report of a real audit of MiniLM with the default settings."""
    import normtest.models.registry
    from normtest.audit.run import run_audit
    from normtest.base.settings import AuditSettings

    return run_audit(normtest.models.registry.load("minilm-l6", progress=False),
                     settings=AuditSettings())


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = arguments(__doc__)
    parser.add_argument("--report", type=Path, default=None,
                        help="a report.json to render (else a default audit of minilm-l6)")
    parser.add_argument("--save-report", type=Path, default=None,
                        help="where to keep the audited report (with no --report)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from normtest.audit.report import Report

    figures: dict[str, Any] = {"threads": set_threads(args.threads, torch=args.report is None)}
    if args.report is not None:
        report = Report.read(args.report)
        figures["report"] = str(args.report)
    else:
        start = time.perf_counter()
        report = audit_report()
        figures["report"] = "audit of minilm-l6, default settings"
        figures["audit_s"] = round(time.perf_counter() - start, 1)
        if args.save_report is not None:
            report.write(args.save_report)
    figures["rows"] = len(report.results)
    cold = render_figures(report, 1)
    figures["cold"] = {"write_renderings_s": cold["write_renderings_s"],
                       "formats_s": cold["formats_s"]}
    figures.update(render_figures(report, args.repeats))
    figures["machine"] = machine()
    write(args.out, figures)
    return figures


if __name__ == "__main__":
    main()
