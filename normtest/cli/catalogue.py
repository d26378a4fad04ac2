"""``normtest list``, ``show`` and ``explain``: the catalogue of claims, one claim, how a line, a
claim, some of its rows (a variant id) or a suite is decided."""

from __future__ import annotations

import argparse
from typing import Any

from normtest.cli.common import (
    EXIT_OK,
    add_suite,
)


def register(sub: Any) -> None:
    """``normtest list``, ``show`` and ``explain`` on the command line's subparsers."""
    listing = sub.add_parser("list", help="list the claims of the catalogue")
    add_suite(listing)
    listing.set_defaults(handler=list_claims)
    showing = sub.add_parser("show", help="describe one claim")
    showing.add_argument("claim", help="a claim id, e.g. cer.linear")
    showing.set_defaults(handler=show)
    explaining = sub.add_parser(
        "explain", help="how a scorecard line, a claim or some of its rows are decided: the "
                        "paper's words, the statistic, the margin and why, the confirmatory "
                        "variants, the sample and the known-truth tests behind it")
    explaining.add_argument("name", metavar="ID",
                            help="any id the gate takes: a scorecard line (e.g. composition), a "
                                 "claim (e.g. cond.inner_pmi), a claim's rows by their variant "
                                 "(e.g. 'word.norm_ic[composition=sqrt_n]') or a suite (word)")
    explaining.set_defaults(handler=explain)


def list_claims(args: argparse.Namespace) -> int:
    from normtest.claims.catalogue import claims

    chosen = claims(args.suite)
    width = max(len(c.id) for c in chosen)
    for c in chosen:
        mark = " (reconstructed)" if c.reconstructed else ""
        print(f"{c.id:<{width}}  {c.suite:<10}  {c.statement}{mark}")
    print(f"\n{len(chosen)} claims; `normtest show ID` describes one")
    if args.suite == "all":
        from normtest.claims.comparative import comparatives

        pairs = comparatives()
        width = max(len(pair.id) for pair in pairs)
        print(f"\n{len(pairs)} comparative claims (normtest compare --model A --model B):")
        for pair in pairs:
            statement = pair.statement.format(first="A", second="B")
            print(f"{pair.id:<{width}}  {pair.data:<10}  {statement}")
    return EXIT_OK


def show(args: argparse.Namespace) -> int:
    from normtest.claims.catalogue import describe, get

    print(describe(get(args.claim)))
    return EXIT_OK


def explain(args: argparse.Namespace) -> int:
    from normtest.audit.explain import explain

    print(explain(args.name))
    return EXIT_OK
