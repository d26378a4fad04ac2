"""``normtest audit``: one model (or several, on Ray or in turn), once or stage by stage
(``--until-decided``), with the checks that refuse a bad design before the model loads."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from normtest.base import progress
from normtest.base.settings import add_cli_options, audit_settings, autosized, given, resolve
from normtest.claims.loading import load_checks_of
from normtest.cli.common import (
    EXIT_OK,
    MODEL_HELP,
    add_all_rows,
    add_claims,
    add_formats,
    add_quiet,
    add_slim,
    add_suite,
    add_width,
    check_outputs,
    output_path,
    shows_progress,
    write_reports,
)
from normtest.errors import NormtestError
from normtest.models.registry import load_options


def register(sub: Any) -> None:
    """``normtest audit`` on the command line's subparsers."""
    audit = sub.add_parser("audit", help="audit a model against the catalogue")
    audit.add_argument("--model", required=True, action="append",
                       help=f"{MODEL_HELP} (an adapter, a class or a function returning one, or "
                            "an object with encode); repeat it to audit several models, each "
                            "into its own folder (as Ray tasks with --executor ray)")
    add_claims(audit)
    add_suite(audit)
    audit.add_argument("--out", type=output_path, default=None,
                       help="folder for report.json, report.md and report.html (default: "
                            "reports/MODEL/REVISION/, under $NORMTEST_RESULTS_DIR when set)")
    add_formats(audit)
    add_slim(audit, "write report.json")
    add_cli_options(audit)
    add_quiet(audit)
    add_all_rows(audit, "print every row (every variant of every claim), the scorecard's "
                        "reasons and every reason in full, after the answer")
    add_width(audit)
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
    audit.add_argument("--summary", type=output_path, default=None,
                       help="write the gate's Markdown here")
    audit.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    from normtest.audit.run import run_audit
    from normtest.gate.config import load_config
    from normtest.models.registry import load

    # read once: the settings it gives the audit, and the requirements --gate holds it to (a
    # gate without a baseline needs one, which is said before any work)
    config = load_config(args.config, required=args.gate and args.baseline is None)
    values = resolve(config.settings, given(args))
    for path in values["corpus"]:
        if not Path(path).exists() and not any(c in path for c in "*?["):  # globs: when read
            raise NormtestError(f"--corpus {path}: no such file or folder")
    check_outputs(args)
    _check_sequential(args, values)
    load_checks_of(values)
    if args.claims:  # an unknown id is refused before the model loads, as explain refuses it
        from normtest.audit.selection import selected_claims

        selected_claims(args.claims)
    if len(args.model) > 1:
        return _audit_many(args, values)
    (model,) = args.model
    out = args.out
    _check_ray(values)
    with progress.showing(shows_progress(args)):
        with progress.task(f"loading {model}"):
            adapter = load(model, **load_options(model, values,
                                                      progress=sys.stderr.isatty()))
        if out is None:  # one folder per model and revision, as MTEB keeps its results
            from normtest.base.paths import check_output_folder, default_results_dir

            out = check_output_folder(default_results_dir(adapter.name, adapter.revision))
        settings = audit_settings(values, autosize=() if args.until_decided else autosized(
            values, {**config.settings, **given(args)}))
        if args.until_decided:
            from normtest.audit.sequential import run_sequential

            report = run_sequential(adapter, args.claims, args.suite, settings,
                                    stages=STAGES if args.stages is None else args.stages,
                                    budget=args.budget,
                                    on_stage=_stage_line)
        else:
            report = run_audit(adapter, claim_ids=args.claims, suite=args.suite,
                               settings=settings)
    from normtest.render.terminal import print_audit, stdout_console

    if args.slim:
        report = report.slim()
    written = write_reports(report, out, args.formats)  # before anything is printed
    print_audit(report, stdout_console(args.width), all_rows=args.all_rows,
                report_path=_json_path(out, args.formats), model=model)
    replaced = report.provenance.get("corpus_replaced_bytes")
    if replaced:
        print(f"note: {replaced:,} of the corpus's {report.provenance['corpus_bytes']:,} bytes "
              "were not UTF-8 and were read as U+FFFD (recorded in report.json)")
    print(written)
    if args.gate:
        from normtest.cli.gate import emit
        from normtest.gate.run import gate_audit

        print()
        return emit(gate_audit(report, adapter, settings, config, args.baseline),
                    args.summary)
    return EXIT_OK


def _json_path(folder: Path, formats: Any) -> str | None:
    """The report.json just written (for the command that explains a line), if one was."""
    return str(folder / "report.json") if "json" in formats else None


#: The stages of ``normtest audit --until-decided`` when --stages is not given.
STAGES = 3


def _check_sequential(args: argparse.Namespace, values: dict[str, Any]) -> None:
    """Refuse a sequential design that cannot run (--stages, --budget, or the word list too
    short for the last stage) before any work; --stages and --budget need --until-decided."""
    if not args.until_decided:
        for option in ("stages", "budget"):
            if getattr(args, option) is not None:
                raise NormtestError(f"--{option} applies to a sequential audit: add "
                                    f"--until-decided (or leave out --{option})")
        return
    from normtest.audit.sequential import check_budget, check_stages, check_words

    stages = STAGES if args.stages is None else args.stages
    check_stages(stages, cli=True)
    check_budget(args.budget, cli=True)
    check_words(int(values["words"]), stages, cli=True)


def _check_ray(values: dict[str, Any]) -> None:
    """One model with --executor ray: the embedding cache on (the workers' vectors land there)
    and an address where a cluster answers, checked before the model is loaded."""
    if values.get("executor") != "ray":
        return
    if not values.get("cache", True):
        raise NormtestError(
            "--executor ray cannot run with --no-cache: the Ray workers compute the vectors "
            "the embedding cache lacks, and the audit reads them from there. Drop --no-cache "
            "(to compute every vector afresh, set NORMTEST_CACHE_DIR to an empty folder), or "
            "run --no-cache with --executor local")
    from normtest.models.ray import check_address, require_ray

    require_ray()
    check_address(values.get("ray_address"))


def _audit_many(args: argparse.Namespace, values: dict[str, Any]) -> int:
    """Several models: each audited on its own (a Ray task each with --executor ray), its
    answer printed and its reports written to ``--out/MODEL`` or ``reports/MODEL/REVISION``."""
    from normtest.audit.several_models import audit_models
    from normtest.base.paths import default_results_dir, folder_name
    from normtest.render.terminal import print_audit, stdout_console

    for option in ("gate", "until_decided"):
        if getattr(args, option):
            raise NormtestError(f"--{option.replace('_', '-')} takes one model; run it for each")
    with progress.showing(shows_progress(args)):
        reports = audit_models(args.model, values, args.claims, args.suite)
    for spec, report in zip(args.model, reports, strict=True):
        name, revision = report.model["name"], report.model["revision"]
        folder = (args.out / folder_name(name) if args.out is not None
                  else default_results_dir(name, revision))
        written = write_reports(report.slim() if args.slim else report, folder, args.formats)
        print_audit(report, stdout_console(args.width), all_rows=args.all_rows,
                    report_path=_json_path(folder, args.formats), model=spec)
        print(written)
        print()
    return EXIT_OK


def _stage_line(stage: Any) -> None:
    """One line per stage of a sequential audit, on standard error."""
    s = stage.settings
    print(f"normtest: stage {stage.number}: {s.words:,} words, {s.documents} documents, "
          f"{s.sentences} sentences at α={stage.alpha:.2g} ({stage.seconds:.0f} s): "
          f"{len(stage.decided)} confirmatory rows decided, {len(stage.undecided)} undecided",
          file=sys.stderr)
