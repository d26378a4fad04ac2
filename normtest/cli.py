"""The ``normtest`` command line.

Exit codes: 0 the command ran (whatever the verdicts), 2 a usage or input error (the message says
what to fix), 3 an internal error.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from normtest.errors import NormtestError

EXIT_OK, EXIT_USAGE, EXIT_INTERNAL = 0, 2, 3


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="normtest",
        description="Hypothesis tests for the squared-norm / information-content correspondence.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser(
        "demo", help="judge synthetic claims with known truth (a demonstration of the engine)"
    )
    demo.add_argument("--out", type=Path, default=None, help="folder for report.json")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--words", type=int, default=2000, help="synthetic word sample size")
    listing = sub.add_parser("list", help="list the claims of the catalogue")
    listing.add_argument("--suite", default="all",
                         choices=["all", "word", "conditions", "text", "cer"])
    audit = sub.add_parser("audit", help="audit a model against the catalogue")
    audit.add_argument("--model", required=True, help="embedded name, path, or hub id")
    audit.add_argument("--claims", nargs="+", default=None, metavar="ID")
    audit.add_argument("--suite", default="all",
                       choices=["all", "word", "conditions", "text", "cer"])
    audit.add_argument("--out", type=Path, default=None, help="folder for report.json")
    audit.add_argument("--seed", type=int, default=0)
    audit.add_argument("--words", type=int, default=2000, help="word sample size")
    audit.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    audit.add_argument("--device", default="cpu", help="cpu or cuda (transformers models)")
    audit.add_argument("--no-cache", action="store_true", help="do not use the embedding cache")
    show = sub.add_parser("show", help="describe one claim")
    show.add_argument("claim", help="a claim id, e.g. cer.linear")
    return parser


def _list(args: argparse.Namespace) -> int:
    from normtest.catalogue import claims

    chosen = claims(args.suite)
    width = max(len(c.id) for c in chosen)
    for c in chosen:
        mark = " (reconstructed)" if c.reconstructed else ""
        print(f"{c.id:<{width}}  {c.suite:<10}  {c.statement}{mark}")
    print(f"\n{len(chosen)} claims; `normtest show ID` describes one")
    return EXIT_OK


def _audit(args: argparse.Namespace) -> int:
    from normtest.audit import AuditSettings, run_audit
    from normtest.models import EMBEDDED, load
    from normtest.table import verdict_table

    if args.words < 10:
        raise NormtestError(f"--words must be at least 10, got {args.words}")
    options = {}
    kind = EMBEDDED[args.model][0] if args.model in EMBEDDED else None
    if kind in ("encoder", "decoder") or (kind is None and Path(args.model).is_dir()):
        options = {"device": args.device, "progress": sys.stderr.isatty()}
    adapter = load(args.model, cache=not args.no_cache, **options)
    settings = AuditSettings(seed=args.seed, words=args.words, n_resamples=args.resamples)
    report = run_audit(adapter, claim_ids=args.claims, suite=args.suite, settings=settings)
    print(f"normtest audit of {report.model['name']} ({report.model['family']})\n")
    print(verdict_table(report.results))
    for r in report.results:
        if r.verdict.value in ("SKIPPED", "ERROR"):
            print(f"  {r.verdict.value.lower()}: {r.id}: {r.reason}")
    print("\nsummary: " + ", ".join(f"{k} {v}" for k, v in report.summary.items() if v))
    if args.out is not None:
        print(f"report written to {report.write(args.out / 'report.json')}")
    return EXIT_OK


def _show(args: argparse.Namespace) -> int:
    from normtest.catalogue import describe, get

    print(describe(get(args.claim)))
    return EXIT_OK


def _demo(args: argparse.Namespace) -> int:
    from normtest.demo import run_demo
    from normtest.table import verdict_table

    if args.words < 1:
        raise NormtestError(f"--words must be positive, got {args.words}")
    report = run_demo(seed=args.seed, n_words=args.words)
    print("normtest demonstration: synthetic models built to satisfy or violate each claim\n")
    print(verdict_table(report.results))
    print("\nsummary: " + ", ".join(f"{k} {v}" for k, v in report.summary.items() if v))
    if args.out is not None:
        path = report.write(args.out / "report.json")
        print(f"report written to {path}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    try:
        commands = {"demo": _demo, "list": _list, "show": _show, "audit": _audit}
        return commands[args.command](args)
    except NormtestError as exc:
        print(f"normtest: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception:
        traceback.print_exc()
        print("normtest: internal error; please report it with the trace above", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
