"""docs/leaderboard.md and docs/images/leaderboard.svg from a ``normtest compare`` run.

The committed leaderboard is the comparison of every real model at default sizes; this writes
its page (the date, the command, then the comparison's own Markdown: the scorecards line by
line, the leaderboard rows, the cross-model claims) and its figure, both from the stored
``comparison.json`` — nothing is measured here::

    normtest compare --model nomic-embed-text-v1.5 --model minilm-l6 --model smollm2-135m \\
        --model gemma-3-270m --model glove-6b-50d --out reports/leaderboard
    python scripts/leaderboard_docs.py reports/leaderboard/comparison.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    """Write the page and the figure; 0."""
    from normtest.comparison import Comparison
    from normtest.render.comparison import leaderboard, leaderboard_plot, render_comparison_markdown

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("comparison", type=Path, help="comparison.json of normtest compare")
    parser.add_argument("--docs", type=Path, default=ROOT / "docs", help="the docs folder")
    parser.add_argument("--command", default=None,
                        help="the command that produced it (default: read from the file)")
    args = parser.parse_args(argv)
    comparison = Comparison.read(args.comparison)
    names = list(comparison.provenance["models"])
    created = str(comparison.provenance.get("created", ""))[:10] or "unknown date"
    command = args.command or "normtest compare " + " ".join(f"--model {n}" for n in names)
    figure = args.docs / "images" / "leaderboard.svg"
    figure.parent.mkdir(parents=True, exist_ok=True)
    figure.write_text(leaderboard_plot(leaderboard(comparison), names), encoding="utf-8")
    body = render_comparison_markdown(comparison)
    body = body.split("\n", 1)[1] if body.startswith("# ") else body  # our own title instead
    page = "\n".join([
        "# The scorecard across every real model",
        "",
        f"Every real model normtest installs, audited at the default sizes on one paired sample "
        f"({created}, two CPU cores), with:",
        "",
        "```sh",
        command,
        "```",
        "",
        "`make models` installs the two installable ones first (docs/models.md). Each model's "
        "scorecard comes first, line by line, then the leaderboard rows (each row's estimate "
        "and interval per model; filled: PASS) and the comparative claims. A row marked "
        "*exploratory (proxy)* stands for a pair the paper names whose models normtest cannot "
        "load offline (ModernBERT vs BERT: nomic-embed-text-v1.5, a rotary SwiGLU encoder, "
        "against MiniLM's BERT); it never decides a line.",
        "",
        f"![Each leaderboard row: every model's estimate and interval]"
        f"(images/{figure.name})",
        "",
        body.strip(),
        "",
    ])
    (args.docs / "leaderboard.md").write_text(page, encoding="utf-8")
    print(f"wrote {args.docs / 'leaderboard.md'} and {figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
