"""Compare the numbers of two report.json files (or two folders of them): exit 1 on a difference.

A refactoring must not change what an audit measures. This compares, row by row, every verdict,
estimate, interval, p-value and adjusted p-value (and each component's), ignoring provenance
(timestamps, versions) and wording::

    python scripts/compare_reports.py before/ after/      # each report.json found below
    python scripts/compare_reports.py old.json new.json
    python scripts/compare_reports.py old.json new.json --relative 1e-6   # equal to 1e-6
    python scripts/compare_reports.py old.json new.json --role confirmatory

Each pair's line says how many rows it compared, how many verdicts differ and the largest
relative difference of any number (|a − b| / max(|a|, |b|)).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any


def numbers(row: dict[str, Any]) -> dict[str, Any]:
    """What must not change in one result row."""
    m = row.get("measurement") or {}
    out = {"verdict": row.get("verdict"), "p_value": row.get("p_value"),
           "p_adjusted": row.get("p_adjusted"), "estimate": m.get("estimate"),
           "ci": m.get("ci"), "n": m.get("n")}
    for name, part in sorted((m.get("components") or {}).items()):
        out[f"{name}.estimate"] = part.get("estimate")
        out[f"{name}.ci"] = part.get("ci")
    return out


def rows(path: Path, role: str | None = None) -> dict[str, dict[str, Any]]:
    """Result id → numbers of one report (those of ``role`` only, when given)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = {}
    for r in data["results"]:
        if role is not None and r.get("role") != role:
            continue
        variant = ",".join(f"{k}={v}" for k, v in (r.get("variant") or {}).items())
        out[f"{r.get('claim')}[{variant}]"] = numbers(r)
    return out


def relative(a: float, b: float) -> float:
    """|a − b| / max(|a|, |b|) (0 for two equal numbers, NaNs included)."""
    if a == b or (math.isnan(a) and math.isnan(b)):
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def same(a: Any, b: Any, tolerance: float, rel: float = 0.0) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        a, b = float(a), float(b)
        return a == b or (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tolerance \
            or relative(a, b) <= rel
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y, tolerance, rel)
                                        for x, y in zip(a, b, strict=True))
    return bool(a == b)


def largest_relative(a: Any, b: Any) -> float:
    """The largest relative difference of the numbers in two values of one key."""
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return relative(float(a), float(b))
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return max((largest_relative(x, y) for x, y in zip(a, b, strict=True)), default=0.0)
    return 0.0


def compare(old: Path, new: Path, tolerance: float, rel: float = 0.0,
            role: str | None = None) -> tuple[list[str], int, float]:
    """The differences between two reports, one line each; how many verdicts differ; the
    largest relative difference of any number."""
    before, after = rows(old, role), rows(new, role)
    problems = [f"{new}: row {i} missing" for i in before if i not in after]
    problems += [f"{new}: row {i} added" for i in after if i not in before]
    verdicts, worst = 0, 0.0
    for i in sorted(before.keys() & after.keys()):
        for key, value in before[i].items():
            worst = max(worst, largest_relative(value, after[i].get(key)))
            if not same(value, after[i].get(key), tolerance, rel):
                verdicts += key == "verdict"
                problems.append(f"{i}: {key} {value!r} -> {after[i].get(key)!r}")
    return problems, verdicts, worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--tolerance", type=float, default=0.0,
                        help="largest absolute difference of a number that counts as equal")
    parser.add_argument("--relative", type=float, default=0.0,
                        help="largest relative difference of a number that counts as equal")
    parser.add_argument("--role", choices=("confirmatory", "exploratory"), default=None,
                        help="compare only the rows of this role")
    args = parser.parse_args()
    pairs = [(args.old, args.new)]
    if args.old.is_dir():
        found = sorted(args.old.rglob("report.json"))
        pairs = [(p, args.new / p.relative_to(args.old)) for p in found]
    problems: list[str] = []
    for old, new in pairs:
        found, verdicts, worst = compare(old, new, args.tolerance, args.relative, args.role)
        print(f"{old} vs {new}: {len(rows(old, args.role))} rows, {len(found)} differences, "
              f"{verdicts} verdicts differ; largest relative difference {worst:.2g}")
        problems += found
    for line in problems[:50]:
        print("  " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
