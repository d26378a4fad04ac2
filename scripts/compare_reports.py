"""Compare the numbers of two report.json files (or two folders of them): exit 1 on a difference.

A refactoring must not change what an audit measures. This compares, row by row, every verdict,
estimate, interval, p-value and adjusted p-value (and each component's), ignoring provenance
(timestamps, versions) and wording::

    python scripts/compare_reports.py before/ after/      # each report.json found below
    python scripts/compare_reports.py old.json new.json
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


def rows(path: Path) -> dict[str, dict[str, Any]]:
    """Result id → numbers of one report."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = {}
    for r in data["results"]:
        variant = ",".join(f"{k}={v}" for k, v in (r.get("variant") or {}).items())
        out[f"{r.get('claim')}[{variant}]"] = numbers(r)
    return out


def same(a: Any, b: Any, tolerance: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tolerance
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y, tolerance) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def compare(old: Path, new: Path, tolerance: float) -> list[str]:
    """The differences between two reports, one line each."""
    before, after = rows(old), rows(new)
    problems = [f"{new}: row {i} missing" for i in before if i not in after]
    problems += [f"{new}: row {i} added" for i in after if i not in before]
    for i in before.keys() & after.keys():
        for key, value in before[i].items():
            if not same(value, after[i].get(key), tolerance):
                problems.append(f"{i}: {key} {value!r} -> {after[i].get(key)!r}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--tolerance", type=float, default=0.0,
                        help="largest absolute difference of a number that counts as equal")
    args = parser.parse_args()
    pairs = [(args.old, args.new)]
    if args.old.is_dir():
        found = sorted(args.old.rglob("report.json"))
        pairs = [(p, args.new / p.relative_to(args.old)) for p in found]
    problems: list[str] = []
    for old, new in pairs:
        found = compare(old, new, args.tolerance)
        print(f"{old} vs {new}: {len(rows(old))} rows, {len(found)} differences")
        problems += found
    for line in problems[:50]:
        print("  " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
