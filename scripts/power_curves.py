"""Power curves of an audit's confirmatory rows: the chance that a sample k times the audit's
decides each row, taking its estimates as the truth (normtest.scorecard.power.power_at).

Prints a Markdown table (docs/statistics.md, "Power at the defaults") and draws the curves of
the rows the audit left undecided into ``figures/`` (ignored by git)::

    python scripts/power_curves.py reports/report.json [--out figures/power.png]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from normtest.audit.report import Report
from normtest.scorecard.power import line_levels, power_at, required
from normtest.verdict.result import Verdict

FACTORS = (1.0, 2.0, 4.0, 8.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--out", type=Path, default=Path("figures/power.png"))
    args = parser.parse_args()
    report = Report.read(args.report)
    rows = [r for r in report.results if r.confirmatory and r.measurement is not None
            and r.measurement.sampling is not None]
    levels = {id(r): line_levels(r, report.results) for r in rows}
    name = report.model.get("name", "the model")
    decided = [r for r in rows if r.verdict in (Verdict.PASS, Verdict.FAIL)]
    rows = [r for r in rows if r not in decided]
    print(f"{name}: {len(decided)} of {len(rows) + len(decided)} confirmatory rows decided; the "
          "others, at their lines' levels (PASS at α, FAIL at α over the line's rows):\n")
    print(f"| {name}: undecided confirmatory row | verdict | "
          + " | ".join(f"power at {f:g}×" for f in FACTORS) + " | sample for power 0.9 |")
    print("|---|---|" + "---|" * len(FACTORS) + "---|")
    curves = []
    for r in rows:
        alpha, fail_alpha = levels[id(r)]
        powers = [power_at(r, alpha, f, fail_alpha) for f in FACTORS]
        need = required(r, alpha, fail_alpha=fail_alpha)
        cells = " | ".join("—" if p is None else f"{p:.2f}" for p in powers)
        factor = "—" if need is None else f"{need.factor:.2g}×"
        print(f"| `{r.id}` | {r.verdict.value} | {cells} | {factor} |")
        if r.verdict is Verdict.INCONCLUSIVE and need is not None:
            curves.append(r)
    if curves:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        grid = np.geomspace(0.5, 64, 200)
        fig, ax = plt.subplots(figsize=(7, 4))
        for r in curves:
            ax.plot(grid, [power_at(r, *levels[id(r)][:1], f, levels[id(r)][1]) or 0.0
                           for f in grid], label=r.id)
        ax.axhline(0.9, color="grey", linestyle=":", linewidth=1)
        ax.axvline(1.0, color="grey", linestyle="--", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("sample, as a multiple of the audit's")
        ax.set_ylabel("power at the line's level")
        ax.set_title(f"{name}: undecided confirmatory rows")
        ax.legend(fontsize=7, loc="lower right")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        fig.tight_layout()
        fig.savefig(args.out, dpi=120)
        print(f"\ncurves written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
