"""``normtest plan``: a pilot audit and the sample that would decide each confirmatory row."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from normtest.base import progress
from normtest.base.settings import add_cli_options, audit_settings, given, resolve
from normtest.claims.loading import load_checks_of
from normtest.cli.common import (
    EXIT_OK,
    MODEL_HELP,
    add_claims,
    add_quiet,
    add_suite,
    shows_progress,
)
from normtest.errors import NormtestError
from normtest.models.registry import load_options


def register(sub: Any) -> None:
    """``normtest plan`` on the command line's subparsers."""
    planning = sub.add_parser(
        "plan", help="run a small pilot audit and say what sample decides each of the paper's "
                     "hypotheses")
    planning.add_argument("--model", required=True, help=MODEL_HELP)
    add_claims(planning)
    add_suite(planning)
    add_cli_options(planning)
    add_quiet(planning)
    planning.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    from normtest.audit.run import run_audit
    from normtest.models.registry import load
    from normtest.render.terminal import plan_text
    from normtest.scorecard.power import PILOT, plan

    chosen = given(args)
    values = resolve({k: v for k, v in PILOT.items() if k not in chosen}, chosen)
    load_checks_of(values)
    options = _plan_options(args)
    _check_plannable(args, options)
    with progress.showing(shows_progress(args)):
        with progress.task(f"loading {args.model}"):
            adapter = load(args.model, **load_options(args.model, values,
                                                      progress=sys.stderr.isatty()))
        settings = audit_settings(values)
        report = run_audit(adapter, claim_ids=args.claims, suite=args.suite, settings=settings)
    planned = plan(report.results, settings, report.controls)
    if not planned.rows:
        raise NormtestError(_nothing_planned(args, report.results, options))
    print(plan_text(planned, args.model, options=options))
    return EXIT_OK


def _plan_options(args: argparse.Namespace) -> str:
    """The options of ``normtest plan`` that its recommended ``normtest audit`` keeps: all the
    user gave (claims, suite, seed, model and data options, …) but the pilot's sample sizes,
    which the plan recommends; quoted for a shell."""
    import shlex

    from normtest.base.settings import SETTINGS
    from normtest.scorecard.power import PILOT

    out: list[str] = []
    if args.claims:
        out += ["--claims", *args.claims]
    if args.suite != "all":
        out += ["--suite", args.suite]
    for setting in SETTINGS:
        value = getattr(args, setting.name, None)
        if value is None or setting.name in PILOT:
            continue
        if setting.kind == "bool":
            out.append(setting.option)
        elif setting.kind in ("paths", "names"):
            out += [setting.option, *(str(v) for v in value)]
        else:
            out += [setting.option, str(value)]
    return shlex.join(out)


def _audit_command(args: argparse.Namespace, options: str) -> str:
    import shlex

    return f"normtest audit --model {shlex.quote(args.model)}" + (f" {options}" if options else "")


def _check_plannable(args: argparse.Namespace, options: str) -> None:
    """Refuse, before the pilot, claims none of which can have a confirmatory row (the paper
    states no expectation for any of their variants): the plan powers confirmatory rows only."""
    from normtest.audit.selection import selected_claims
    from normtest.claims.catalogue import claims, get

    chosen = [get(i) for i in selected_claims(args.claims)] if args.claims \
        else claims(args.suite)
    if not chosen or any(c.expected for c in chosen):
        return
    names = ", ".join(c.id for c in chosen)
    raise NormtestError(
        f"nothing to plan: {names} {'has' if len(chosen) == 1 else 'have'} no confirmatory row "
        f"(the paper states no expectation for {'it' if len(chosen) == 1 else 'them'}, so "
        "every row is exploratory), and a plan "
        "sizes the sample for confirmatory rows only. Plan claims with confirmatory rows "
        "(normtest show ID lists a claim's expectations), or audit these as they are: "
        + _audit_command(args, options))


def _nothing_planned(args: argparse.Namespace, results: Sequence[Any], options: str) -> str:
    """Why a pilot left no confirmatory row to plan: none for this model, or none measured."""
    confirmatory = [r for r in results if r.confirmatory]
    chosen = " ".join(args.claims) if args.claims else f"suite {args.suite}"
    if confirmatory:
        skipped = "; ".join(dict.fromkeys(f"{r.id}: {r.reason}" for r in confirmatory))
        why = f"none of the confirmatory rows of {chosen} could be measured on it ({skipped})"
    else:
        why = (f"{chosen} has no confirmatory row for it (the paper states no expectation for "
               "this kind of model, so every row is exploratory)")
    return (f"nothing to plan for {args.model}: {why}, and a plan sizes the sample for "
            "confirmatory rows only. Plan other claims (normtest show ID lists a claim's "
            "expectations), or audit these as they are: " + _audit_command(args, options))
