"""``normtest compare``: several models on one paired sample, or their stored reports."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from normtest.base import progress
from normtest.base.settings import add_cli_options, audit_settings, given, resolve
from normtest.claims.loading import load_checks_of
from normtest.cli.common import (
    EXIT_OK,
    add_claims,
    add_quiet,
    add_suite,
    check_outputs,
    output_path,
    shows_progress,
)
from normtest.errors import NormtestError


def register(sub: Any) -> None:
    """``normtest compare`` on the command line's subparsers."""
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
    comparing.add_argument("--reference", action="append", dest="sources",
                           type=lambda v: ("reference", v), metavar="NAME",
                           help="a reference report that ships with normtest (glove-6b-50d, "
                                "minilm-l6, smollm2-135m, gemma-3-270m, nomic-embed-text-v1.5): "
                                "the model beside it is audited on its sample, the reference "
                                "is not audited again")
    add_claims(comparing, "comparative claims (default: every one whose data the audits hold; "
                          "normtest list shows them)")
    add_suite(comparing, "audit only this suite's claims (cer and text: the growth and text "
                         "comparisons)")
    comparing.add_argument("--out", type=output_path, default=None,
                           help="folder for comparison.json/.md/.html and each model's report "
                                "(default: reports/compare/A-vs-B/)")
    add_cli_options(comparing)
    add_quiet(comparing)
    comparing.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    """``normtest compare``: audit the models on one paired sample (or read stored reports),
    judge the comparative claims, print the answer and write the renderings."""
    from normtest.audit.compare import (
        adopted_sample,
        audit_claims,
        check_same_sample,
        compare_reports,
        model_key,
        planned_identity,
        sample_identity,
    )
    from normtest.audit.references import read_reference
    from normtest.audit.report import Report
    from normtest.audit.several_models import audit_models
    from normtest.base.paths import folder_name
    from normtest.claims.comparative import comparatives, get_comparative
    from normtest.gate.config import load_config
    from normtest.render.comparison import (
        print_comparison,
        render_comparison_html,
        render_comparison_markdown,
    )
    from normtest.render.terminal import stdout_console

    models = [v for kind, v in args.sources if kind == "model"]
    if len(args.sources) < 2:
        raise NormtestError("compare needs two models or more: --model A --model B (or stored "
                            "reports with --report, shipped ones with --reference)")
    check_outputs(args)
    stored = {v: read_reference(v) if kind == "reference" else Report.read(v)
              for kind, v in args.sources if kind != "model"}
    origins = [str(v) if kind == "report" else f"--{kind} {v}" for kind, v in args.sources]
    # models audited next to stored reports draw the stored reports' sample unless told
    # otherwise (an explicit setting that differs is refused below, before any audit)
    values = {**resolve(adopted_sample(stored.values()), load_config(None).settings,
                        given(args)),
              "prefix_unit": "words"}
    load_checks_of(values)
    audited = audit_claims(args.claims, args.suite)
    if not audited and models:
        raise NormtestError(f"no claim of suite {args.suite!r} reads the data the chosen "
                            "comparative claims need")
    kinds = list(dict.fromkeys(c.data for c in ([get_comparative(i) for i in args.claims]
                                                if args.claims else comparatives())))
    planned = planned_identity(audit_settings(values), kinds)
    check_same_sample(
        [sample_identity(stored[v], [k for k in kinds if k in stored[v].data])
         if kind != "model" else planned for kind, v in args.sources],
        [f"{stored[v].model.get('name')} ({v})" if kind == "report" else f"--{kind} {v}"
         for kind, v in args.sources],
        [model_key(stored[v]) if kind != "model" else None for kind, v in args.sources])
    with progress.showing(shows_progress(args)):
        fresh = iter(audit_models(models, values, audited, args.suite) if models else [])
        reports = [stored[v] if kind != "model" else next(fresh) for kind, v in args.sources]
        comparison = compare_reports(reports, args.claims, audit_settings(values), origins)
    names = comparison.provenance["models"]
    folder = args.out or Path("reports", "compare", "-vs-".join(folder_name(n) for n in names))
    from normtest.render.formats import write_renderings
    from normtest.render.locking import write_files

    write_files(folder, {"comparison.json": comparison.to_json(),
                         "comparison.md": render_comparison_markdown(comparison),
                         "comparison.html": render_comparison_html(comparison)})
    folders: list[str] = []
    for name, report in zip(names, comparison.reports, strict=True):
        sub = folder_name(name)
        while sub in folders:  # two names that map to one folder name
            sub += "_"
        folders.append(sub)
        write_renderings(report, folder / sub)
    print_comparison(comparison, stdout_console())  # after the files: nothing printed loses them
    print(f"comparison written to {folder}/: comparison.json, comparison.md, comparison.html "
          f"(and each model's report in {', '.join(f + '/' for f in folders)})")
    return EXIT_OK
