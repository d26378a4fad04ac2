"""docs/leaderboard.md and docs/images/leaderboard.svg from a ``normtest compare`` run.

The committed leaderboard is the comparison of every real model at the standard profile's sizes;
this writes
its page (the date, the command, then the comparison's own Markdown: the scorecards line by
line, the leaderboard rows, the cross-model claims) and its figure, both from the stored
``comparison.json`` — nothing is measured here::

    normtest compare --model nomic-embed-text-v1.5 --model minilm-l6 --model smollm2-135m \\
        --model gemma-3-270m --model glove-6b-50d --out reports/leaderboard
    python scripts/leaderboard_docs.py reports/leaderboard/comparison.json

It also writes ``docs/numbers/leaderboard.json``, what the page is rendered from, so that
``tests/test_docs_numbers.py`` can tell a hand-edited page from the generated one.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


#: The colour of each scorecard status (as the HTML report colours them).
COLOURS = {"replicated": "#1a7f37", "contradicted": "#cf222e", "undecided": "#bf8700",
           "invalid": "#8250df", "not tested": "#d0d7de", "—": "#d0d7de"}


def scorecard_grid(names: list[str], rows: list[list[str]], path: Path) -> None:
    """The scorecards side by side: a cell per hypothesis and model, coloured by its status."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    short = [row[0].split(":")[0] for row in rows]
    fig, ax = plt.subplots(figsize=(1.6 + 1.45 * len(names), 0.6 + 0.42 * len(rows)))
    for i, row in enumerate(rows):
        for j, status in enumerate(row[1:]):
            ax.add_patch(plt.Rectangle((j, i), 0.96, 0.9, color=COLOURS.get(status, "#d0d7de")))
            ax.text(j + 0.48, i + 0.45, status, ha="center", va="center", fontsize=8,
                    color="white" if status not in ("not tested", "—") else "#57606a")
    ax.set_xlim(0, len(names))
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([j + 0.48 for j in range(len(names))], names, fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks([i + 0.45 for i in range(len(rows))], short, fontsize=8)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    fig.tight_layout()
    fig.savefig(path, format=path.suffix.lstrip("."), metadata={"Date": None}
                if path.suffix == ".svg" else None)
    plt.close(fig)


def leaderboard_numbers(comparison: object, created: str, command: str) -> dict[str, object]:
    """What the page and the figure are written from: the date, the command, the scorecard grid
    and the comparison's own Markdown, its sections reordered so that the answer comes first
    (the scorecards, the leaderboard, then the long table of comparative claims). The stored
    comparison is too large to keep (its bootstrap replicates); this is what the page quotes."""
    from normtest.render.comparison import render_comparison_markdown, scorecards

    names, grid = scorecards(comparison)
    head, *parts = render_comparison_markdown(comparison).split("\n### ")
    sections = {part.split("\n", 1)[0]: "### " + part.strip() for part in parts}
    first = [s for s in ("Scorecards", "Leaderboard") if s in sections]
    body = "\n\n".join([head.split("\n", 1)[1].strip() if head.startswith("## ") else head,
                        *(sections[s] for s in first),
                        *(v for k, v in sections.items() if k not in first)])
    return {"created": created, "command": command, "names": list(names),
            "grid": [list(row) for row in grid], "body": body.strip()}


def leaderboard_page(numbers: dict) -> str:  # type: ignore[type-arg]
    """docs/leaderboard.md from its numbers."""
    return "\n".join([
        "# The scorecard across every real model",
        "",
        f"Every real model normtest installs, audited at the standard profile's sizes on one "
        f"paired sample ({numbers['created']}, two CPU cores; a comparison keeps one sample "
        "for every model, so it does not size itself as `normtest audit` does: a line a "
        "model's sample lacks the power for says so), with:",
        "",
        "```sh",
        numbers["command"],
        "```",
        "",
        "`make models` installs the two installable ones first (docs/models.md). Each model's "
        "scorecard comes first, line by line, then the leaderboard rows (each row's estimate "
        "and interval per model) and the comparative claims. A row marked "
        "*exploratory (proxy)* stands for a pair the paper names whose models normtest cannot "
        "load offline (ModernBERT vs BERT: nomic-embed-text-v1.5, a rotary SwiGLU encoder, "
        "against MiniLM's BERT); it never decides a line. Written by "
        "`scripts/leaderboard_docs.py` from `docs/numbers/leaderboard.json` "
        "(`tests/test_docs_numbers.py` holds the two together).",
        "",
        "![The scorecards side by side: each hypothesis (rows) on each model (columns)]"
        "(images/leaderboard.svg)",
        "",
        numbers["body"],
        "",
    ])


def main(argv: list[str] | None = None) -> int:
    """Write the numbers, the page and the figure; 0."""
    import json

    from normtest.audit.compare import Comparison

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("comparison", type=Path, help="comparison.json of normtest compare")
    parser.add_argument("--docs", type=Path, default=ROOT / "docs", help="the docs folder")
    parser.add_argument("--date", default=None, help="when it was measured (default: today)")
    parser.add_argument("--command", default=None,
                        help="the command that produced it (default: read from the file)")
    args = parser.parse_args(argv)
    comparison = Comparison.read(args.comparison)
    names = list(comparison.provenance["models"])
    created = args.date or datetime.date.today().isoformat()
    command = args.command or "normtest compare " + " ".join(f"--model {n}" for n in names)
    numbers = leaderboard_numbers(comparison, created, command)
    data = args.docs / "numbers" / "leaderboard.json"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text(json.dumps(numbers, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    figure = args.docs / "images" / "leaderboard.svg"
    figure.parent.mkdir(parents=True, exist_ok=True)
    scorecard_grid(numbers["names"], numbers["grid"], figure)
    (args.docs / "leaderboard.md").write_text(leaderboard_page(numbers), encoding="utf-8")
    print(f"wrote {data}, {args.docs / 'leaderboard.md'} and {figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
