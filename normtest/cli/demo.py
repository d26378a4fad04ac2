"""``normtest demo``: the engine on synthetic models built to satisfy or violate each claim."""

from __future__ import annotations

import argparse
from typing import Any

from normtest.base.settings import add_cli_options, given, resolve
from normtest.cli.common import (
    EXIT_OK,
    add_all_rows,
    add_formats,
    check_outputs,
    output_path,
    write_reports,
)


def register(sub: Any) -> None:
    """``normtest demo`` on the command line's subparsers."""
    demo = sub.add_parser(
        "demo", help="judge synthetic claims with known truth (a demonstration of the engine)")
    demo.add_argument("--out", type=output_path, default=None,
                      help="folder for report.json, report.md and report.html")
    add_formats(demo)
    add_cli_options(demo, names=("seed", "words"))
    add_all_rows(demo, "also the reasons in full (the demonstration always prints every row)")
    demo.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    """Judge the synthetic claims, print every row, write the renderings if asked."""
    from normtest.audit.demo import run_demo
    from normtest.render.terminal import print_rows, stdout_console

    values = resolve(given(args))
    check_outputs(args)
    report = run_demo(seed=values["seed"], n_words=values["words"])
    written = None if args.out is None else write_reports(report, args.out, args.formats)
    print_rows(report, stdout_console(), reasons=args.all_rows,
               title="normtest demonstration: synthetic models built to satisfy or violate each "
                     "claim",
               then="a real model: normtest audit --model minilm-l6; how a claim is judged: "
                    "normtest explain word.norm_ic")
    if written is not None:
        print(written)
    return EXIT_OK
