"""docs/leaderboard.md and docs/images/leaderboard.svg from a comparison of the reference reports.

``scripts/references.py`` writes the reference reports that ship with normtest and then, from
them, this page: the date and commit, the command, then the comparison's own Markdown (the
scorecards line by line, the leaderboard rows, the cross-model claims) and its figure. Nothing
is measured here. It also writes ``docs/numbers/leaderboard.json``, what the page is rendered
from, so that ``tests/test_docs_numbers.py`` can tell a hand-edited page from the generated one.
"""

from __future__ import annotations

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


def leaderboard_numbers(comparison: object, created: str, command: str,
                        commit: str) -> dict[str, object]:
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
    return {"created": created, "commit": commit, "command": command, "names": list(names),
            "grid": [list(row) for row in grid], "body": body.strip()}


def leaderboard_page(numbers: dict) -> str:  # type: ignore[type-arg]
    """docs/leaderboard.md from its numbers."""
    return "\n".join([
        "# The scorecard across every real model",
        "",
        f"Every real model normtest installs, audited at the standard profile's sizes on one "
        f"paired sample ({numbers['created']}, normtest at commit {numbers['commit']}, two CPU "
        "cores; a comparison keeps one sample for every model, so it does not size itself as "
        "`normtest audit` does: a line a model's sample lacks the power for says so), with:",
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
        "against MiniLM's BERT); it never decides a line. The five reports ship with normtest "
        "as its references (slim): `normtest compare --model M --reference minilm-l6` places "
        "a model beside one without auditing it again. This page is the comparison of those "
        "references, written with them by `scripts/references.py` "
        "(`tests/test_references.py` holds the page to them).",
        "",
        "![The scorecards side by side: each hypothesis (rows) on each model (columns)]"
        "(images/leaderboard.svg)",
        "",
        numbers["body"],
        "",
    ])
