"""``normtest report``: a stored report rendered again, under other thresholds if asked."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from normtest.cli.common import (
    EXIT_OK,
    add_all_rows,
    add_slim,
    add_width,
    output_path,
)
from normtest.errors import NormtestError


def register(sub: Any) -> None:
    """``normtest report`` on the command line's subparsers."""
    rendering = sub.add_parser(
        "report", help="re-render a stored report.json as Markdown or HTML, optionally "
                       "re-judged under other thresholds (no model needed)")
    rendering.add_argument("report", type=Path, help="a report.json written by normtest")
    from normtest.render.formats import FORMATS

    rendering.add_argument("--format", default="md", choices=[*FORMATS, "text", "layers"],
                           help=f"{', '.join(FORMATS)} (default md), text (what normtest audit "
                                "prints, as plain text), or layers (the layer profile of a "
                                "--layers audit as a figure: PNG, SVG or PDF by the --out "
                                "suffix)")
    rendering.add_argument("--out", type=output_path, default=None,
                           help="file to write (default: standard output)")
    rendering.add_argument("--data", type=output_path, default=None, metavar="DIR",
                           help="also write the report's data as tables into DIR: words.csv, "
                                "sentences.csv, curves.csv (one line per word, sentence, "
                                "document prefix; every measured variant's squared norm)")
    rendering.add_argument("--threshold", nargs="+", action="extend", default=[],
                           metavar="CLAIM=VALUE",
                           help="re-judge a claim: CLAIM=VALUE (one-sided threshold) or "
                                "CLAIM=LOW:HIGH (equivalence margin); Holm again per claim")
    add_slim(rendering, "with --format json: the report")
    add_all_rows(rendering, "with --format text: every row, the scorecard's reasons and every "
                            "reason in full, after the answer")
    add_width(rendering)
    rendering.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    from normtest.audit.report import Report
    from normtest.render.formats import render
    from normtest.render.thresholds import with_thresholds

    if args.out is not None:
        from normtest.base.paths import check_output_file

        check_output_file(args.out, "--out")
    report = with_thresholds(Report.read(args.report), args.threshold)
    if args.slim:
        if args.format != "json":
            raise NormtestError("--slim applies to --format json (the report itself); the other "
                                "formats show the same numbers either way")
        report = report.slim()
    if args.data is not None:
        from normtest.audit.tables import data_tables
        from normtest.render.locking import write_files

        tables = data_tables(report)
        if not tables:
            raise NormtestError(f"{args.report} holds no data to tabulate (it measured no word, "
                                "sentence or prefix claim, or predates plot data)")
        written = write_files(args.data, tables)
        print(f"data written to {args.data}/: {', '.join(p.name for p in written)}",
              file=sys.stderr)
    if args.format == "layers":
        from normtest.render.layers import report_profiles, save_layer_plot, why_no_profile

        found = report_profiles(report)
        if found is None:
            raise NormtestError(f"{args.report} has no layer profile: {why_no_profile(report)}")
        if args.out is None or args.out.suffix.lower() not in (".png", ".svg", ".pdf"):
            raise NormtestError("--format layers writes a figure: give --out FILE.png (or "
                                ".svg, .pdf)")
        save_layer_plot(*found, args.out, title=str(report.model.get("name", "")))
        print(f"layer profile written to {args.out}")
        return EXIT_OK
    if args.format == "text":
        from normtest.render.terminal import audit_text

        name = report.model.get("name", "unnamed model")
        width = args.width
        if width is None and args.out is None and sys.stdout.isatty():
            from normtest.render.terminal import stdout_console

            width = stdout_console().width  # a terminal: its width
        text = audit_text(report, title=f"normtest report of {name}", all_rows=args.all_rows,
                          width=width, report_path=str(args.report))
    elif args.all_rows:
        raise NormtestError("--all applies to --format text (Markdown and HTML hold every row "
                            "already)")
    else:
        text = render(report, args.format)
    if args.out is None:
        sys.stdout.write(text)
        return EXIT_OK
    if args.format == "json" and args.out.suffix == ".gz":  # compressed, as Report.write does
        report.write(args.out)
        print(f"json report written to {args.out} (gzip-compressed)")
        return EXIT_OK
    from normtest.base.paths import atomic_write, published

    try:  # whole or not at all: a full disk leaves the file that was there as it was
        atomic_write(args.out, published(text))
    except OSError as exc:
        raise NormtestError(f"cannot write {args.out}: {exc.strerror}; "
                            "the file there is left as it was") from exc
    print(f"{args.format} report written to {args.out}")
    return EXIT_OK
