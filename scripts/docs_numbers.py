"""The numbers the docs quote, regenerated from fresh reports: nothing here is measured.

Each *block* is a paragraph of the docs written from a generated data file under
``docs/numbers/``: this script reads the default reports of the embedded models, writes the data
file, and rewrites the block between its markers::

    <!-- generated: robustness (scripts/docs_numbers.py; docs/numbers/robustness.json) -->
    ...
    <!-- /generated -->

``tests/test_docs_numbers.py`` renders each block again from its data file and fails when the
docs' text differs — a hand-edited number, or a data file regenerated without its block. To
regenerate (the default audits of three embedded models, about ten minutes on two cores)::

    normtest audit --model minilm-l6 --out reports/minilm-l6
    normtest audit --model smollm2-135m --out reports/smollm2-135m
    normtest audit --model nomic-embed-text-v1.5 --out reports/nomic-embed-text-v1.5
    python scripts/docs_numbers.py reports/minilm-l6 reports/smollm2-135m \\
        reports/nomic-embed-text-v1.5
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NUMBERS = ROOT / "docs" / "numbers"

#: The scorecard lines in the paper's order, and how the docs name them.
LINES = {"word_level": "word level", "composition": "composition", "conditions": "conditions",
         "cer_growth": "linear growth", "fixed_points": "fixed points",
         "text_level": "text level"}


def robustness_numbers(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the robustness block quotes, from each report: the model, its sample, and per line
    the headline status, the multiverse label, whether robust, the sampling stability and the
    heterogeneity panel."""
    models = []
    for report in reports:
        provenance = report.get("provenance", {})
        lines = {}
        for item in report.get("robustness", []):
            lines[item["line"]] = {
                "status": item["status"], "label": item["label"], "robust": item["robust"],
                "stability": item.get("stability", {}),
                "heterogeneity": [[h["value"], h["status"]]
                                  for h in item.get("heterogeneity", [])]}
        models.append({"model": report["model"]["name"], "words": provenance.get("words"),
                       "sentences": provenance.get("sentences"), "lines": lines})
    return {"models": models}


def robustness_block(numbers: Mapping[str, Any]) -> str:
    """The worked example of docs/statistics.md, "Robustness", from its numbers: a list per
    model, a line per scorecard line."""
    out = []
    for model in numbers["models"]:
        size = ", ".join(x for x in (f"{model['words']:,} words" if model["words"] else "",
                                     f"{model['sentences']:,} sentences"
                                     if model["sentences"] else "") if x)
        out.append(f"**{model['model']}** ({size}):\n")
        for key, name in LINES.items():
            line = model["lines"].get(key)
            if line is None:
                continue
            text = f"- {name}: {line['status']}; {line['label']}"
            if line["robust"]:
                text += " (robust)"
            halves = line["stability"]
            if halves.get("halves"):
                text += f"; halves agree {halves['agree']} of {halves['halves']}"
            if line["heterogeneity"]:
                text += "; by subpopulation: " + ", ".join(f"{v} {s}"
                                                           for v, s in line["heterogeneity"])
            out.append(text + "\n")
        out.append("\n")
    return "".join(out).rstrip("\n")


#: The sample factors the power block reads each undecided row's power at.
FACTORS = (1.0, 2.0, 4.0, 8.0)


def power_numbers(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the power block quotes: per model, how many confirmatory rows the audit decided,
    and each undecided one's power at 1×, 2×, 4× and 8× the sample and the sample for 0.9, at
    its line's levels (``normtest.scorecard.power``: ``power_at``, ``required``)."""
    from normtest.audit.report import Report
    from normtest.scorecard.power import line_levels, power_at, required
    from normtest.verdict.result import Verdict

    models = []
    for data in reports:
        report = Report.from_json(json.dumps(data))
        rows = [r for r in report.results if r.confirmatory and r.measurement is not None
                and r.measurement.sampling is not None]
        decided = [r for r in rows if r.verdict in (Verdict.PASS, Verdict.FAIL)]
        undecided = []
        for r in rows:
            if r in decided:
                continue
            alpha, fail_alpha = line_levels(r, report.results)
            powers = [power_at(r, alpha, f, fail_alpha) for f in FACTORS]
            need = required(r, alpha, fail_alpha=fail_alpha)
            undecided.append({"id": r.id, "verdict": r.verdict.value,
                              "power": [None if v is None else round(v, 2) for v in powers],
                              "factor": None if need is None else float(f"{need.factor:.2g}")})
        models.append({"model": report.model.get("name"), "decided": len(decided),
                       "confirmatory": len(rows), "undecided": undecided})
    return {"factors": list(FACTORS), "models": models}


def power_block(numbers: Mapping[str, Any]) -> str:
    """The undecided confirmatory rows of each default audit and their power curves' points."""
    factors = numbers["factors"]
    out = []
    for model in numbers["models"]:
        name = model["model"]
        if not model["undecided"]:
            out.append(f"{name}: {model['decided']} of {model['confirmatory']} confirmatory "
                       "rows decided.\n\n")
            continue
        out.append(f"{name}: {model['decided']} of {model['confirmatory']} confirmatory rows "
                   "decided; the others, at their lines' levels (PASS at α, FAIL at α over the "
                   "line's rows):\n\n")
        out.append(f"| {name}: undecided confirmatory row | verdict | "
                   + " | ".join(f"power at {f:g}×" for f in factors)
                   + " | sample for power 0.9 |\n")
        out.append("|---|---|" + "---|" * len(factors) + "---|\n")
        for row in model["undecided"]:
            cells = " | ".join("—" if v is None else f"{v:.2f}" for v in row["power"])
            factor = "—" if row["factor"] is None else f"{row['factor']:g}×"
            out.append(f"| `{row['id']}` | {row['verdict']} | {cells} | {factor} |\n")
        out.append("\n")
    return "".join(out).rstrip("\n")


def answer_numbers(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The answer ``normtest audit`` prints for the first report (the embedded default model),
    as plain text: the terminal view re-rendered from the stored report
    (``normtest.render.terminal.audit_text``, what a pipe receives)."""
    from normtest.audit.report import Report
    from normtest.render.terminal import audit_text

    report = Report.from_json(json.dumps(reports[0]))
    return {"model": report.model.get("name"), "text": audit_text(report).rstrip("\n")}


def answer_block(numbers: Mapping[str, Any]) -> str:
    """README's quick look: the answer up to the scorecard's tally."""
    lines = numbers["text"].splitlines()
    end = next(i for i, line in enumerate(lines) if line.startswith("scorecard:"))
    return "```\n" + "\n".join(lines[:end + 1]) + "\n```"


def answer_full_block(numbers: Mapping[str, Any]) -> str:
    """The guide's first example: the whole answer, and where the reports went."""
    return ("```\n" + numbers["text"] + "\nreports written to reports/: report.json, "
            "report.md, report.html\n```")


#: Each block: the data file it is written from, how to compute it, how to render it, and the
#: document it lives in.
BLOCKS: dict[str, tuple[str, Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]],
                        Callable[[Mapping[str, Any]], str], str]] = {
    "robustness": ("robustness.json", robustness_numbers, robustness_block,
                   "docs/statistics.md"),
    "power": ("power.json", power_numbers, power_block, "docs/statistics.md"),
    "answer": ("answer.json", answer_numbers, answer_block, "README.md"),
    "answer_full": ("answer.json", answer_numbers, answer_full_block, "docs/guide.md"),
}


def marker(name: str) -> re.Pattern[str]:
    """The block ``name`` between its markers (the text between them is group 1)."""
    return re.compile(r"(<!-- generated: " + re.escape(name) + r" \(.*?\) -->\n)(.*?)"
                      r"(\n<!-- /generated -->)", re.DOTALL)


def rendered(name: str) -> str:
    """Block ``name`` rendered from its committed data file."""
    data_file, _, render, _ = BLOCKS[name]
    return render(json.loads((NUMBERS / data_file).read_text(encoding="utf-8")))


def in_document(name: str) -> str:
    """Block ``name`` as its document holds it."""
    document = BLOCKS[name][3]
    found = marker(name).search((ROOT / document).read_text(encoding="utf-8"))
    if found is None:
        raise SystemExit(f"{document} has no block {name!r} (its markers are missing)")
    return found.group(2)


def write(name: str, reports: Sequence[Mapping[str, Any]]) -> None:
    """Compute block ``name``'s numbers from ``reports``, write its data file and its block."""
    data_file, compute, render, document = BLOCKS[name]
    numbers = compute(reports)
    NUMBERS.mkdir(parents=True, exist_ok=True)
    (NUMBERS / data_file).write_text(json.dumps(numbers, indent=1, ensure_ascii=False) + "\n",
                                     encoding="utf-8")
    path = ROOT / document
    text = path.read_text(encoding="utf-8")
    new, count = marker(name).subn(lambda m: m.group(1) + render(numbers) + m.group(3), text)
    if count != 1:
        raise SystemExit(f"{document} has no block {name!r} (its markers are missing)")
    path.write_text(new, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path,
                        help="report folders (or report.json files), in the order to quote")
    args = parser.parse_args(argv)
    reports = []
    for given in args.reports:
        path = given / "report.json" if given.is_dir() else given
        reports.append(json.loads(path.read_text(encoding="utf-8")))
    for name in BLOCKS:
        write(name, reports)
        print(f"{BLOCKS[name][3]}: block {name!r} written from docs/numbers/{BLOCKS[name][0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
