"""``normtest gate`` (and ``normtest audit --gate``): the gate's options and configuration
resolved, the gate run (:mod:`normtest.gate.run`), its Markdown printed and written, its exit
code."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from normtest.base import progress
from normtest.base.settings import add_cli_options
from normtest.cli.common import (
    add_claims,
    add_quiet,
    add_slim,
    check_outputs,
    output_path,
    shows_progress,
)
from normtest.errors import NormtestError

if TYPE_CHECKING:
    from normtest.gate.run import GateOutcome


def register(sub: Any) -> None:
    """``normtest gate`` on the command line's subparsers."""
    gate = sub.add_parser("gate", help="gate a model release: required claims PASS and no "
                                       "regression against a baseline (exit 1 if not)")
    gate.add_argument("--config", type=Path, default=None,
                      help="normtest.toml or pyproject.toml (default: found from here)")
    gate.add_argument("--model", default=None, help="the candidate model (overrides the config)")
    gate.add_argument("--report", type=Path, default=None,
                      help="gate this report.json instead of auditing the model")
    gate.add_argument("--baseline", type=Path, default=None, help="baseline report.json")
    gate.add_argument("--require", nargs="+", default=None, metavar="ID",
                      help="claims, variants or suites that must PASS")
    gate.add_argument("--replicated", nargs="+", default=None, metavar="LINE",
                      help="scorecard lines that must be replicated (keys such as word_level, "
                           "or all)")
    gate.add_argument("--require-robust", nargs="+", default=None, metavar="LINE",
                      help="scorecard lines whose verdict must be robust: the same under at "
                           "least 90%% of their reasonable specifications (keys, or all)")
    gate.add_argument("--unverified", choices=("fail", "warn"), default=None,
                      help="a requirement the report cannot show — a line required replicated "
                           "whose controls did not run (--no-controls), a line required robust "
                           "whose robustness was not assessed (--no-robustness): fail the gate "
                           "(default) or pass it with a stated warning (also unverified = ... "
                           "in the configuration)")
    gate.add_argument("--exploratory", action="store_true",
                      help="requirements and regressions judge exploratory rows too (default: "
                           "confirmatory rows, and any row a requirement names by variant)")
    add_claims(gate, "further claims to audit (and compare with the baseline)")
    gate.add_argument("--margin", type=float, default=None,
                      help="smallest drop that counts as a regression (default 0.05)")
    gate.add_argument("--alpha", type=float, default=None, help="level of the regression test")
    gate.add_argument("--summary", type=output_path, default=None,
                      help="also write the Markdown summary here (a pull-request comment)")
    gate.add_argument("--force-save", action="store_true",
                      help="write --save-report even when the gate failed")
    gate.add_argument("--save-report", type=output_path, default=None,
                      help="write the candidate's report.json here (a future baseline; "
                           "gzip-compressed when PATH ends in .gz)")
    add_slim(gate, "with --save-report: write the report")
    add_cli_options(gate)
    add_quiet(gate)
    gate.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    """``normtest gate``: 0 the gate passed, 1 it failed (2 and 3 come from the CLI)."""
    from normtest.gate.config import load_config
    from normtest.gate.run import run_gate

    check_outputs(args)
    config = load_config(args.config, required=args.model is None and args.report is None
                         and not args.require and not args.replicated
                         and not args.require_robust)
    config = config.with_options(args)
    with progress.showing(shows_progress(args)):
        outcome = run_gate(config, save_report=args.save_report, force_save=args.force_save,
                           slim=args.slim)
    return emit(outcome, args.summary)


def emit(outcome: GateOutcome, summary: str | Path | None = None) -> int:
    """Print the Markdown summary (and write it to ``summary``) and the decision's one line
    on standard error; the gate's exit code. All three render one
    :class:`~normtest.gate.run.Decision`."""
    from normtest.base.paths import atomic_write, published
    from normtest.render.gate import gate_markdown

    decision = outcome.decision
    text = gate_markdown(outcome, decision)
    if summary is not None:  # the file first: an error on standard output never loses it
        try:
            atomic_write(Path(summary), published(text))
        except OSError as exc:
            raise NormtestError(f"cannot write {summary}: {exc.strerror}") from exc
    print(text, end="")
    sys.stdout.flush()
    print(f"normtest: {decision.line}", file=sys.stderr)
    return decision.exit_code
