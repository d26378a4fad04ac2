"""What the subcommands share: the exit codes, the options several of them declare, where progress
shows, output paths checked before any work, and the reports written before anything is
printed."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_USAGE, EXIT_INTERNAL = 0, 2, 3
EXIT_GATE_FAILED = 1
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C


def output_path(text: str) -> Path:
    """An argparse ``type`` for a path normtest writes: an empty one is a usage error (a Path
    of "" is the current folder, where the reports already there would be replaced)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; give a path (for the current folder: .)")
    return Path(text)


def shows_progress(args: argparse.Namespace) -> str | None:
    """Progress on standard error unless --quiet was given: ``"bar"`` on a terminal, ``"lines"``
    (one plain line per phase) anywhere else (:func:`normtest.base.progress.showing`)."""
    if getattr(args, "quiet", False):
        return None
    return "bar" if sys.stderr.isatty() else "lines"


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse unwritable output paths before any work is done (not after a long audit)."""
    from normtest.base.paths import check_output_file, check_output_folder

    if getattr(args, "out", None) is not None:
        check_output_folder(args.out, "--out")
    for option in ("summary", "save_report"):
        if getattr(args, option, None) is not None:
            check_output_file(getattr(args, option), "--" + option.replace("_", "-"))


def write_reports(report: Any, folder: Path, formats: Sequence[str]) -> str:
    """Write the renderings — before anything is printed, so that an error on standard output
    (a full disk, a closed pipe, an encoding) never loses them — and return the one line that
    says where they went, for the caller to print last."""
    from normtest.render.formats import write_renderings

    written = write_renderings(report, folder, formats)
    return f"reports written to {folder}/: {', '.join(p.name for p in written)}"


# -- options several subcommands declare --------------------------------------------------------
MODEL_HELP = "embedded name, path, hub id (owner/name[@revision]), or module:attribute"


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """``-q/--quiet``: no progress display."""
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress on standard error (live bars on a terminal, one "
                             "line per phase anywhere else)")


def add_formats(parser: argparse.ArgumentParser) -> None:
    """``--format``: which renderings ``--out`` receives (:data:`normtest.render.FORMATS`)."""
    from normtest.render.formats import DEFAULT_FORMATS, FORMATS

    parser.add_argument("--format", nargs="+", dest="formats", default=list(DEFAULT_FORMATS),
                        choices=FORMATS, metavar="FORMAT",
                        help=f"which renderings --out receives: {', '.join(FORMATS)} "
                             f"(default: {' '.join(DEFAULT_FORMATS)}; csv: one line per row, "
                             "metrics: JSON lines for a tracker)")


def add_suite(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """``--suite``: one suite of the catalogue, or all."""
    from normtest.claims.catalogue import SUITES

    parser.add_argument("--suite", default="all", choices=["all", *SUITES], help=help)


def add_claims(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """``--claims ID …``."""
    parser.add_argument("--claims", nargs="+", default=None, metavar="ID", help=help)


def add_width(parser: argparse.ArgumentParser) -> None:
    """``--width N``: the columns of the printed answer."""
    parser.add_argument("--width", type=_columns, default=None, metavar="N",
                        help="columns of the printed answer (default: the terminal's width on "
                             "a terminal; anywhere else — a pipe, a file, a CI log — lines are "
                             "never cut)")


def _columns(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 40:
        raise argparse.ArgumentTypeError(f"--width takes a number of columns, 40 or more; got "
                                         f"{text!r}")
    return value


def add_slim(parser: argparse.ArgumentParser, what: str) -> None:
    """``--slim``: a report without its bootstrap replicates (Report.slim)."""
    parser.add_argument("--slim", action="store_true",
                        help=f"{what} without its bootstrap replicates (about a fifth of the "
                             "size; every interval, verdict and p-value kept, each bootstrap "
                             "distribution as its 101 percentiles): a baseline to commit. It "
                             "cannot be re-judged, and the gate compares it unpaired")


def add_all_rows(parser: argparse.ArgumentParser, help: str) -> None:
    """``--all/-v/--verbose``."""
    parser.add_argument("--all", "-v", "--verbose", dest="all_rows", action="store_true",
                        help=help)
