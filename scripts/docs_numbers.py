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
    """README's quick look: the answer up to the scorecard's tally, then what to do next (the
    rerun command and the lines out of reach), the tables between left out."""
    lines = numbers["text"].splitlines()
    end = next(i for i, line in enumerate(lines) if line.startswith("scorecard:"))
    start = next((i for i, line in enumerate(lines) if line.startswith("next: ")), None)
    tail = [] if start is None else ["  …"] + [
        line for line in lines[start:] if line.startswith(("next: ", "      "))]
    return "```\n" + "\n".join(lines[:end + 1] + tail) + "\n```"


def answer_full_block(numbers: Mapping[str, Any]) -> str:
    """The guide's first example: the whole answer, and where the reports went."""
    return ("```\n" + numbers["text"] + "\nreports written to reports/: report.json, "
            "report.md, report.html\n```")


def _sample(m: Any, claim: str) -> str:
    """A row's sample in words: ``8,276 words``, ``819 sentences in 82 documents``."""
    settings = m.settings if isinstance(m.settings, dict) else {}
    if claim.startswith("cer."):
        return f"{settings.get('documents', m.n):,} documents"
    if claim.startswith("text."):
        clusters = settings.get("clusters")
        return f"{m.n:,} sentences" + (f" in {clusters:,} documents" if clusters else "")
    if settings.get("pairs") and claim.startswith("cond.inner"):
        return f"{settings['pairs']:,} word pairs"
    return f"{m.n:,} words"


def detectable_numbers(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The minimum detectable effect of the first report's confirmatory rows, by claim
    (``normtest.scorecard.power.detectable_effect`` at the line's PASS level, power 0.9): the
    smallest and largest over the claim's rows, in the claim's statistic."""
    from normtest.audit.report import Report
    from normtest.scorecard.power import POWER, detectable_effect, line_levels

    report = Report.from_json(json.dumps(reports[0]))
    claims: dict[str, dict[str, Any]] = {}
    for r in report.results:
        if not r.confirmatory or r.measurement is None:
            continue
        alpha, _ = line_levels(r, report.results)
        mde = detectable_effect(r, alpha)
        if mde is None:
            continue
        entry = claims.setdefault(r.claim, {"statistic": r.measurement.statistic,
                                            "sample": _sample(r.measurement, r.claim),
                                            "rows": 0, "low": mde, "high": mde})
        entry["rows"] += 1
        entry["low"], entry["high"] = min(entry["low"], mde), max(entry["high"], mde)
    for entry in claims.values():
        entry["low"], entry["high"] = (float(f"{entry['low']:.2g}"),
                                       float(f"{entry['high']:.2g}"))
    return {"model": report.model.get("name"), "power": POWER,
            "claims": dict(sorted(claims.items()))}


def detectable_block(numbers: Mapping[str, Any]) -> str:
    """docs/statistics.md's table of minimum detectable effects."""
    out = [f"| {numbers['model']}: claim | statistic | sample | confirmatory rows | "
           f"minimum detectable effect (power {numbers['power']:g}) |\n",
           "|---|---|---|---|---|\n"]
    for claim, entry in numbers["claims"].items():
        effect = f"{entry['low']:g}" if entry["low"] == entry["high"] \
            else f"{entry['low']:g} to {entry['high']:g}"
        out.append(f"| `{claim}` | {entry['statistic']} | {entry['sample']} | {entry['rows']} "
                   f"| {effect} |\n")
    return "".join(out).rstrip("\n")


def baselines_numbers(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The worked example of the beyond reading: each report's confirmatory rows that declare a
    baseline, their reading as stated and the four readings beside it, as the report's tables
    write them (``normtest.verdict.formatting.beside``)."""
    from normtest.audit.report import Report
    from normtest.verdict.formatting import BESIDE, beside, bounds, number

    models = []
    for data in reports:
        report = Report.from_json(json.dumps(data))
        rows = []
        for r in report.results:
            m = r.measurement
            if not r.confirmatory or m is None or "baseline" not in m.components:
                continue
            alpha = r.criterion.alpha if r.criterion is not None else 0.05
            stated = f"{number(m.estimate)} {bounds(m.interval(1 - 2 * alpha))} {r.verdict.value}"
            rows.append({"id": r.id, "stated": stated,
                         **{part: beside(r, part) for part, _ in BESIDE}})
        models.append({"model": report.model.get("name"), "rows": rows})
    return {"columns": [[part, heading] for part, heading in BESIDE], "models": models}


def baselines_block(numbers: Mapping[str, Any]) -> str:
    """A table per model: the row, as stated, then baseline ρ, the difference, the beyond
    reading (its verdict, what it was held to, by stratum or source) and the artefact."""
    out = []
    for model in numbers["models"]:
        if not model["rows"]:
            continue
        out.append(f"| {model['model']}: row | as stated | "
                   + " | ".join(heading for _, heading in numbers["columns"]) + " |\n")
        out.append("|---|---|" + "---|" * len(numbers["columns"]) + "\n")
        for row in model["rows"]:
            out.append(f"| `{row['id']}` | {row['stated']} | "
                       + " | ".join(row[part].replace("|", "\\|")
                                    for part, _ in numbers["columns"]) + " |\n")
        out.append("\n")
    return "".join(out).rstrip("\n")


#: The rows the guide's findings quote beside the confirmatory ones: the plain mean, which the
#: paper expects to fail (claim, composition), at the raw last layer.
FINDINGS_EXTRA = (("word.norm_ic", "sum"), ("word.norm_ic", "mean"),
                  ("text.norm_surprisal", "mean"), ("cer.linear", "sum"),
                  ("cer.linear", "mean"))


def findings_numbers(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The guide's "What the embedded models show": each model's sample and scorecard, and the
    estimate [interval] and verdict of every confirmatory row and of the plain compositions the
    paper expects to fail, per model (a row a model lacks is left empty)."""
    from normtest.audit.report import Report
    from normtest.verdict.formatting import bounds, number

    models, order, cells = [], [], {}
    for data in reports:
        report = Report.from_json(json.dumps(data))
        name = report.model.get("name")
        provenance = report.provenance
        models.append({"model": name, "words": provenance.get("words"),
                       "sentences": provenance.get("sentences"),
                       "documents": provenance.get("documents"),
                       "scorecard": [[line.key, line.short, line.verdict]
                                     for line in report.scorecard]})
        for r in report.results:
            m, variant = r.measurement, r.variant
            extra = (r.claim, variant.get("composition")) in FINDINGS_EXTRA \
                and variant.get("transform", "raw") == "raw" and r.role == "exploratory"
            if m is None or not (r.confirmatory or extra):
                continue
            alpha = r.criterion.alpha if r.criterion is not None else 0.05
            if r.id not in cells:
                order.append(r.id)
            cells.setdefault(r.id, {})[name] = (f"{number(m.estimate)} "
                                                f"{bounds(m.interval(1 - 2 * alpha))} "
                                                f"{r.verdict.value}")
    return {"models": models,
            "rows": [{"id": row, "cells": cells[row]} for row in sorted(order)]}


def findings_block(numbers: Mapping[str, Any]) -> str:
    """Two tables: the scorecards side by side, then the rows."""
    names = [m["model"] for m in numbers["models"]]
    out = ["| sample | " + " | ".join(f"`{n}`" for n in names) + " |\n",
           "|---|" + "---|" * len(names) + "\n",
           "| words, documents, sentences | " + " | ".join(
               f"{m['words']:,}, {m['documents']:,}, {m['sentences']:,}"
               for m in numbers["models"]) + " |\n"]
    lines: dict[str, dict[str, str]] = {}
    titles: dict[str, str] = {}
    for m in numbers["models"]:
        for key, short, verdict in m["scorecard"]:
            titles.setdefault(key, short)
            lines.setdefault(key, {})[m["model"]] = verdict
    for key, short in titles.items():
        out.append(f"| {short} (`{key}`) | "
                   + " | ".join(lines[key].get(n, "—") for n in names) + " |\n")
    out.append("\n| row | " + " | ".join(f"`{n}`" for n in names) + " |\n")
    out.append("|---|" + "---|" * len(names) + "\n")
    for row in numbers["rows"]:
        out.append(f"| `{row['id']}` | "
                   + " | ".join(row["cells"].get(n, "—") for n in names) + " |\n")
    return "".join(out).rstrip("\n")


def sizing_numbers(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """How each default audit sized itself (``provenance.sizing``) and what its controls then
    read at the chosen sizes (``controls``): per line, the setting that sizes it, its joint
    power at the pilot's size, the power each checking round read, the chosen size, the
    positive control's power and the three controls' statuses."""
    models = []
    for report in reports:
        sizing = report.get("provenance", {}).get("sizing") or {}
        controls = {c["line"]: c for c in report.get("controls", [])}
        lines = []
        for entry in sizing.get("lines", []):
            name, setting = entry["line"], entry.get("setting")
            control = controls.get(name, {})
            lines.append({
                "line": name, "setting": setting,
                "pilot": sizing.get("pilot", {}).get(setting),
                "pilot_power": entry.get("power"),
                "rounds": [[r["sizes"].get(setting), next(
                    (x["power"] for x in r["lines"] if x["line"] == name), None)]
                    for r in sizing.get("rounds", [])],
                "chosen": sizing.get("chosen", {}).get(setting, sizing.get("pilot", {})
                                                        .get(setting)),
                "power": (control.get("positive") or {}).get("power"),
                "controls": [(control.get(kind) or {}).get("status") or "—"
                             for kind in ("positive", "negative", "confound")],
                "beyond_power": entry.get("beyond_power"),
                "beyond_needed": entry.get("beyond_needed")})
        models.append({"model": report["model"]["name"], "lines": lines})
    return {"models": models}


def sizing_block(numbers: Mapping[str, Any]) -> str:
    """A table per model: each sized line, from the pilot to the chosen size."""
    def power(value: Any) -> str:
        return "—" if value is None else f"{value:.2f}"

    out = []
    for model in numbers["models"]:
        out.append(f"| {model['model']}: line | sized by | power at the pilot | checking rounds "
                   "| chosen | positive control's power there | controls (positive, negative, "
                   "confound) | beyond: power at the pilot (sample for 0.8) |\n")
        out.append("|---|---|---|---|---|---|---|---|\n")
        for line in model["lines"]:
            rounds = ", ".join(f"{power(p)} at {n:,}" for n, p in line["rounds"]) or "—"
            beyond = "—" if line["beyond_power"] is None else power(line["beyond_power"]) + (
                f" ({line['beyond_needed']:,})" if line["beyond_needed"] else "")
            out.append(f"| {line['line']} | `--{line['setting']}` | {power(line['pilot_power'])} "
                       f"at {line['pilot']:,} | {rounds} | {line['chosen']:,} | "
                       f"{power(line['power'])} | {', '.join(line['controls'])} | {beyond} |\n")
        out.append("\n")
    return "".join(out).rstrip("\n")


def slim_numbers(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Each default report's size as normtest writes it, slim (``--slim``), and slim
    gzip-compressed (``.json.gz``)."""
    import gzip

    from normtest.audit.report import Report

    out = []
    for data in reports:
        report = Report.from_dict(data)
        full = (report.to_json() + "\n").encode("utf-8")
        slim = (report.slim().to_json() + "\n").encode("utf-8")
        out.append({"model": data["model"]["name"], "full": len(full), "slim": len(slim),
                    "gz": len(gzip.compress(slim, mtime=0))})
    return {"models": out}


def slim_block(numbers: Mapping[str, Any]) -> str:
    """docs/ci.md's table of baseline sizes."""
    def mb(size: int) -> str:
        return f"{size / 1e6:.1f} MB"

    rows = [f"| {m['model']} | {mb(m['full'])} | {mb(m['slim'])} | {mb(m['gz'])} |"
            for m in numbers["models"]]
    return "\n".join(["| default report | `report.json` | `--slim` | `--slim`, `.json.gz` |",
                      "|---|---|---|---|", *rows])


#: Each block: the data file it is written from, how to compute it, how to render it, and the
#: document it lives in.
BLOCKS: dict[str, tuple[str, Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]],
                        Callable[[Mapping[str, Any]], str], str]] = {
    "robustness": ("robustness.json", robustness_numbers, robustness_block,
                   "docs/statistics.md"),
    "power": ("power.json", power_numbers, power_block, "docs/statistics.md"),
    "answer": ("answer.json", answer_numbers, answer_block, "README.md"),
    "answer_full": ("answer.json", answer_numbers, answer_full_block, "docs/guide.md"),
    "detectable": ("detectable.json", detectable_numbers, detectable_block,
                   "docs/statistics.md"),
    "baselines": ("baselines.json", baselines_numbers, baselines_block, "docs/statistics.md"),
    "findings": ("findings.json", findings_numbers, findings_block, "docs/guide.md"),
    "sizing": ("sizing.json", sizing_numbers, sizing_block, "docs/statistics.md"),
    "slim": ("slim.json", slim_numbers, slim_block, "docs/ci.md"),
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
