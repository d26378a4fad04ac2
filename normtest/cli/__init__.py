"""The ``normtest`` command line.

Exit codes: 0 the command ran (whatever the verdicts), 1 a gate failed (``normtest gate``,
``normtest audit --gate``), 2 a usage or input error (the message says what to fix), 3 an
internal error, 130 interrupted (Ctrl-C; the embedding cache keeps what was computed).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from normtest import progress
from normtest.cli import audit, catalogue, compare, plan, report
from normtest.cli.common import (
    EXIT_GATE_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    check_outputs,
    say_written,
    shows_progress,
)
from normtest.errors import NormtestError
from normtest.settings import (
    add_cli_options,
    given,
    resolve,
)

__all__ = ["EXIT_GATE_FAILED", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE",
           "main", "run"]


def _parser() -> argparse.ArgumentParser:
    from normtest import __version__

    parser = argparse.ArgumentParser(
        prog="normtest",
        description="Hypothesis tests for the squared-norm / information-content correspondence.",
    )
    parser.add_argument("--version", action="version", version=f"normtest {__version__}")
    from normtest.catalogue import SUITES

    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser(
        "demo", help="judge synthetic claims with known truth (a demonstration of the engine)"
    )
    demo.add_argument("--out", type=Path, default=None,
                      help="folder for report.json, report.md and report.html")
    demo.add_argument("--format", nargs="+", dest="formats", default=["json", "md", "html"],
                      choices=["json", "md", "html"], metavar="FORMAT",
                      help="which renderings --out receives: json, md, html (default: all)")
    add_cli_options(demo, names=("seed", "words"))
    demo.add_argument("--all", "-v", "--verbose", dest="all_rows", action="store_true",
                      help="also the reasons in full (the demonstration always prints every row)")
    listing = sub.add_parser("list", help="list the claims of the catalogue")
    listing.add_argument("--suite", default="all",
                         choices=["all", *SUITES])
    audit = sub.add_parser("audit", help="audit a model against the catalogue")
    audit.add_argument("--model", required=True, action="append",
                       help="embedded name, path, hub id, or module:attribute (an adapter, a "
                            "class or a function returning one, or an object with encode); "
                            "repeat it to audit several models, each into its own folder (as "
                            "Ray tasks with --executor ray)")
    audit.add_argument("--claims", nargs="+", default=None, metavar="ID")
    audit.add_argument("--suite", default="all",
                       choices=["all", *SUITES])
    audit.add_argument("--out", type=Path, default=None,
                       help="folder for report.json, report.md and report.html (default: "
                            "reports/MODEL/REVISION/, under $NORMTEST_RESULTS_DIR when set)")
    audit.add_argument("--format", nargs="+", dest="formats", default=["json", "md", "html"],
                       choices=["json", "md", "html"], metavar="FORMAT",
                       help="which renderings --out receives: json, md, html (default: all)")
    add_cli_options(audit)
    _add_quiet(audit)
    audit.add_argument("--all", "-v", "--verbose", dest="all_rows", action="store_true",
                       help="print every row (every variant of every claim), the scorecard's "
                            "reasons and every reason in full, after the answer")
    audit.add_argument("--until-decided", action="store_true",
                       help="a sequential audit: grow the sample in stages until every "
                            "confirmatory row is decided (O'Brien–Fleming alpha spending)")
    audit.add_argument("--stages", type=int, default=None, metavar="N",
                       help="with --until-decided: at most this many stages, each twice the "
                            "sample of the one before (default 3; 1 to 30, and as many as the "
                            "word list holds: 5 with the default 5,000 words)")
    audit.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                       help="with --until-decided: stop before a stage that would not fit in "
                            "this many seconds (a positive number; default: no limit)")
    audit.add_argument("--config", type=Path, default=None,
                       help="normtest.toml or pyproject.toml whose [tool.normtest] settings "
                            "apply (default: found from here)")
    audit.add_argument("--gate", action="store_true",
                       help="then gate the report ([tool.normtest] or normtest.toml; exit 1 if "
                            "it fails)")
    audit.add_argument("--baseline", type=Path, default=None, help="baseline report.json")
    audit.add_argument("--summary", type=Path, default=None, help="write the gate's Markdown here")
    comparing = sub.add_parser(
        "compare", help="audit several models on one paired sample and test claims about the "
                        "difference of their effects (a leaderboard with intervals)")
    comparing.add_argument("--model", action="append", dest="sources", default=[],
                           type=lambda v: ("model", v),
                           help="a model as for audit; two or more, with --report (each "
                                "earlier one is 'first' against each later one)")
    comparing.add_argument("--report", action="append", dest="sources",
                           type=lambda v: ("report", Path(v)),
                           help="a stored report.json to compare instead of auditing a model "
                                "(audited with --prefix-unit words for the growth claims)")
    comparing.add_argument("--claims", nargs="+", default=None, metavar="ID",
                           help="comparative claims (default: every one whose data the "
                                "audits hold; normtest list shows them)")
    comparing.add_argument("--suite", default="all", choices=["all", *SUITES],
                           help="audit only this suite's claims (cer and text: the growth and "
                                "text comparisons)")
    comparing.add_argument("--out", type=Path, default=None,
                           help="folder for comparison.json/.md/.html and each model's report "
                                "(default: reports/compare/A-vs-B/)")
    add_cli_options(comparing)
    _add_quiet(comparing)
    planning = sub.add_parser(
        "plan", help="run a small pilot audit and say what sample decides each of the paper's "
                     "hypotheses")
    planning.add_argument("--model", required=True,
                          help="embedded name, path, hub id, or module:attribute")
    planning.add_argument("--claims", nargs="+", default=None, metavar="ID")
    planning.add_argument("--suite", default="all", choices=["all", *SUITES])
    add_cli_options(planning)
    _add_quiet(planning)
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
    gate.add_argument("--exploratory", action="store_true",
                      help="requirements and regressions judge exploratory rows too (default: "
                           "confirmatory rows, and any row a requirement names by variant)")
    gate.add_argument("--claims", nargs="+", default=None, metavar="ID",
                      help="further claims to audit (and compare with the baseline)")
    gate.add_argument("--margin", type=float, default=None,
                      help="smallest drop that counts as a regression (default 0.05)")
    gate.add_argument("--alpha", type=float, default=None, help="level of the regression test")
    gate.add_argument("--summary", type=Path, default=None,
                      help="also write the Markdown summary here (a pull-request comment)")
    gate.add_argument("--force-save", action="store_true",
                      help="write --save-report even when the gate failed")
    gate.add_argument("--save-report", type=Path, default=None,
                      help="write the candidate's report.json here (a future baseline)")
    add_cli_options(gate)
    _add_quiet(gate)
    show = sub.add_parser("show", help="describe one claim")
    show.add_argument("claim", help="a claim id, e.g. cer.linear")
    explaining = sub.add_parser(
        "explain", help="how a scorecard line or a claim is decided: the paper's words, the "
                        "statistic, the margin and why, the confirmatory variants, the sample "
                        "and the known-truth tests behind it")
    explaining.add_argument("name", metavar="LINE_OR_CLAIM",
                            help="a scorecard line (e.g. composition) or a claim id (e.g. "
                                 "cond.inner_pmi)")
    rendering = sub.add_parser(
        "report", help="re-render a stored report.json as Markdown or HTML, optionally "
                       "re-judged under other thresholds (no model needed)")
    rendering.add_argument("report", type=Path, help="a report.json written by normtest")
    rendering.add_argument("--format", default="md",
                           choices=["md", "html", "json", "text", "layers"],
                           help="md (default), html, json, text (what normtest audit prints, "
                                "as plain text), or layers (the layer profile of a --layers "
                                "audit as a figure: PNG, SVG or PDF by the --out suffix)")
    rendering.add_argument("--out", type=Path, default=None,
                           help="file to write (default: standard output)")
    rendering.add_argument("--threshold", nargs="+", action="extend", default=[],
                           metavar="CLAIM=VALUE",
                           help="re-judge a claim: CLAIM=VALUE (one-sided threshold) or "
                                "CLAIM=LOW:HIGH (equivalence margin); Holm again per claim")
    from normtest.model_store import add_parser as add_models_parser

    add_models_parser(sub)
    return parser


def _add_quiet(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress display (it shows only when standard error is a "
                             "terminal)")


def _demo(args: argparse.Namespace) -> int:
    from normtest.demo import run_demo
    from normtest.render.console import print_rows, stdout_console

    values = resolve(given(args))
    check_outputs(args)
    report = run_demo(seed=values["seed"], n_words=values["words"])
    print_rows(report, stdout_console(), reasons=args.all_rows,
               title="normtest demonstration: synthetic models built to satisfy or violate each "
                     "claim")
    if args.out is not None:
        say_written(report, args.out, args.formats)
    return EXIT_OK


def _models(args: argparse.Namespace) -> int:
    from normtest.model_store import command

    return command(args)


def _gate(args: argparse.Namespace) -> int:
    from normtest.gate import command

    check_outputs(args)
    with progress.showing(shows_progress(args)):
        return command(args)


def _silence_stdout() -> None:
    """Point standard output at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real file descriptor (captured output): nothing to do
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    previous, previous_hook = warnings.showwarning, sys.unraisablehook
    warnings.showwarning = _one_line_warning
    sys.unraisablehook = _keep_interrupts
    try:
        commands = {"demo": _demo, "list": catalogue.list_claims, "show": catalogue.show,
                    "explain": catalogue.explain, "audit": audit.command, "gate": _gate,
                    "report": report.command, "plan": plan.command, "compare": compare.command,
                    "models": _models}
        code = commands[args.command](args)
        sys.stdout.flush()  # a closed pipe is reported here, inside the handlers below
        return code
    except NormtestError as exc:
        print(f"normtest: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\nnormtest: interrupted; every finished batch of vectors is in the embedding "
              "cache, and running the same command again resumes from it", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader of standard output went away (`| head`): nothing left to say to it
        _silence_stdout()
        return EXIT_OK
    except Exception:
        traceback.print_exc()
        print("normtest: internal error; please report it with the trace above", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        warnings.showwarning, sys.unraisablehook = previous, previous_hook
        for pending in _REDELIVERIES:
            pending.cancel()
        _REDELIVERIES.clear()


#: Ctrl-Cs scheduled for delivery again (cancelled when the command ends, so that none fires
#: after the interruption was handled).
_REDELIVERIES: list[Any] = []


def _keep_interrupts(unraisable: Any) -> None:
    """A Ctrl-C that lands inside a finaliser (``__del__``, run by the garbage collector) cannot
    propagate there: Python prints "Exception ignored" with a traceback and carries on, and the
    audit would run to its end. Deliver it again a moment later from another thread, so that the
    main thread raises it once it is out of the finaliser (should it land in one again, this
    repeats)."""
    if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
        import _thread
        import threading

        again = threading.Timer(0.01, _thread.interrupt_main)
        again.daemon = True
        _REDELIVERIES.append(again)
        again.start()
        return
    sys.__unraisablehook__(unraisable)


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str,
                      lineno: int, file: Any = None, line: str | None = None) -> None:
    """normtest's own warnings as one line on the terminal (no file name, no source line)."""
    print(f"normtest: warning: {message}", file=file or sys.stderr)


def run() -> None:
    """The console script: :func:`main`'s exit code. A Ctrl-C that arrives after the command
    already handled one (a second press, or one delivered again from a finaliser just as the
    command ended) exits 130 quietly instead of a traceback."""
    try:
        code = main()
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    sys.exit(code)


if __name__ == "__main__":
    run()
