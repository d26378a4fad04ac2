"""What the subcommands share: the exit codes, where progress shows, output paths checked before
any work, and the one line that says where the renderings went."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_USAGE, EXIT_INTERNAL = 0, 2, 3
EXIT_GATE_FAILED = 1
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C


def shows_progress(args: argparse.Namespace) -> bool:
    """Progress on standard error when it is a terminal and --quiet was not given."""
    return sys.stderr.isatty() and not getattr(args, "quiet", False)


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse unwritable output paths before any work is done (not after a long audit)."""
    from normtest.render import check_writable_file, check_writable_folder

    if getattr(args, "out", None) is not None:
        check_writable_folder(args.out, "--out")
    for option in ("summary", "save_report"):
        if getattr(args, option, None) is not None:
            check_writable_file(getattr(args, option), "--" + option.replace("_", "-"))


def say_written(report: Any, folder: Path, formats: Sequence[str]) -> None:
    """Write the renderings and say where, in one line."""
    from normtest.render import write_renderings

    written = write_renderings(report, folder, formats)
    print(f"reports written to {folder}/: {', '.join(p.name for p in written)}")
