"""``normtest list``, ``show`` and ``explain``: the catalogue of claims, one claim, how a line, a
claim, some of its rows (a variant id) or a suite is decided."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from normtest.cli.common import (
    EXIT_OK,
    add_suite,
)


def register(sub: Any) -> None:
    """``normtest list``, ``show`` and ``explain`` on the command line's subparsers."""
    listing = sub.add_parser("list", help="list the scorecard's lines and the claims of the "
                                          "catalogue")
    add_suite(listing)
    listing.set_defaults(handler=list_claims)
    showing = sub.add_parser("show", help="describe a line, a claim (or its rows) or a suite")
    showing.add_argument("name", metavar="ID", help=ID_HELP)
    showing.set_defaults(handler=show)
    explaining = sub.add_parser(
        "explain", help="how a scorecard line, a claim or some of its rows are decided; with "
                        "--report, why this report's line got its status")
    explaining.add_argument("name", metavar="ID", help=ID_HELP)
    explaining.add_argument("--report", type=Path, default=None, metavar="REPORT",
                            help="a report.json (or its folder): explain this result — the rows "
                                 "and controls that decided it, their numbers, the analyses "
                                 "that disagree and the sample that would change it")
    explaining.set_defaults(handler=explain)


#: The ids ``show``, ``explain``, ``--claims`` and the gate take alike.
ID_HELP = ("a scorecard line (e.g. composition), a claim (e.g. cond.inner_pmi), a claim's rows "
           "by their variant (e.g. 'word.norm_ic[composition=sqrt_n]') or a suite (word)")


def list_claims(args: argparse.Namespace) -> int:
    from normtest.claims.catalogue import claims, claims_of_line, declared_lines

    chosen = claims(args.suite)
    names = {c.id for c in chosen}
    lines = [(h, [c for c in claims_of_line(h.key) if c in names]) for h in declared_lines()]
    lines = [(h, ids) for h, ids in lines if ids]
    if lines:
        width = max(len(h.key) for h, _ in lines)
        print("The scorecard's lines (normtest explain LINE; * reconstructed criterion):")
        for h, ids in lines:
            mark = "*" if any(c.reconstructed for c in chosen if c.id in ids) else " "
            print(f"  {h.key + mark.strip():<{width + 1}}  {h.short or h.title}: {', '.join(ids)}")
        print()
    width = max(len(c.id) for c in chosen)
    print("Claims (normtest show ID):")
    for c in chosen:
        mark = "*" if c.reconstructed else " "
        line = c.hypothesis or "exploratory"
        print(f"  {c.id + mark.strip():<{width + 1}}  {c.suite:<10}  {line:<12}  {c.statement}")
    print(f"\n{len(lines)} lines, {len(chosen)} claims")
    if args.suite == "all":
        from normtest.claims.comparative import comparatives

        pairs = comparatives()
        width = max(len(pair.id) for pair in pairs)
        print(f"\n{len(pairs)} comparative claims (normtest compare --model A --model B):")
        for pair in pairs:
            statement = pair.statement.format(first="A", second="B")
            print(f"  {pair.id:<{width}}  {pair.data:<10}  {statement}")
    return EXIT_OK


def show(args: argparse.Namespace) -> int:
    from normtest.audit.selection import Selector
    from normtest.claims.catalogue import claims, claims_of_line, declared_line, describe, get

    selector = Selector.parse(args.name)
    if selector.claim is not None:
        print(describe(get(selector.claim)))
        return EXIT_OK
    if selector.line is not None:
        line = declared_line(selector.line)
        print(f"{line.key}: {line.title}\n  source: {line.source}\n")
        print("\n\n".join(describe(get(c)) for c in claims_of_line(line.key)))
        return EXIT_OK
    print("\n\n".join(describe(c) for c in claims(selector.suite or "all")))
    return EXIT_OK


def explain(args: argparse.Namespace) -> int:
    from normtest.audit.explain import explain

    if args.report is None:
        print(explain(args.name))
        return EXIT_OK
    from normtest.audit.explain_report import explain_result
    from normtest.audit.report import Report

    path = args.report / "report.json" if args.report.is_dir() else args.report
    print(explain_result(args.name, Report.read(path)))
    return EXIT_OK
