"""The reference reports normtest ships, and docs/leaderboard.md from them: one run, one commit.

Audits every real model normtest installs on one sample (``normtest compare`` at its default
sizes), writes each model's report slim and compressed to
``normtest/audit/reference_reports/NAME.json.gz`` (what ``normtest compare --reference NAME``
reads), then compares the five references again — from their stored data, nothing re-audited —
and writes docs/leaderboard.md, docs/numbers/leaderboard.json and docs/images/leaderboard.svg
from that comparison, each stamped with the date and the commit::

    make models                                   # the installable models, once
    python scripts/references.py                  # about half an hour on two cores
    python scripts/references.py --comparison reports/compare/comparison.json --commit abc1234
                                                  # from a stored `normtest compare` run instead

``tests/test_references.py`` holds the page to the references (the same commit, the same
scorecards).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: The real models, in the order the leaderboard shows them.
MODELS = ("nomic-embed-text-v1.5", "minilm-l6", "smollm2-135m", "gemma-3-270m", "glove-6b-50d")


def _leaderboard_docs() -> Any:
    spec = importlib.util.spec_from_file_location("leaderboard_docs",
                                                  ROOT / "scripts" / "leaderboard_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def current_commit() -> str:
    """The short commit of the working tree, ``+changes`` when it has uncommitted ones."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD")
    return commit + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def main(argv: list[str] | None = None) -> int:
    from dataclasses import replace

    import normtest
    from normtest.audit.compare import Comparison, compare_reports
    from normtest.audit.references import REFERENCES, SUFFIX, read_reference

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comparison", type=Path, default=None,
                        help="a stored comparison.json of the five models (default: run it)")
    parser.add_argument("--commit", default=None,
                        help="the commit that made it (default: this tree's)")
    parser.add_argument("--date", default=None, help="when it was made (default: today)")
    args = parser.parse_args(argv)
    created = args.date or datetime.date.today().isoformat()
    commit = args.commit or current_commit()
    if args.comparison is not None:
        comparison = Comparison.read(args.comparison)
    else:
        comparison = normtest.compare(list(MODELS))
    command = "normtest compare " + " ".join(f"--model {n}" for n in MODELS)
    stamp = {"created": created, "commit": commit, "command": command}
    REFERENCES.mkdir(parents=True, exist_ok=True)
    for stale in REFERENCES.glob(f"*{SUFFIX}"):
        stale.unlink()
    for report in comparison.reports:
        name = str(report.model["name"])
        slim = report.slim()
        slim = replace(slim, provenance={**slim.provenance, "reference": stamp})
        path = slim.write(REFERENCES / f"{name}{SUFFIX}")
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size / 1e6:.2f} MB")
    # the page from the references themselves, as a user's `--reference` reads them
    references = [read_reference(str(r.model["name"])) for r in comparison.reports]
    again = compare_reports(references, settings=None)
    docs = _leaderboard_docs()
    numbers = docs.leaderboard_numbers(again, created, command, commit)
    folder = ROOT / "docs"
    (folder / "numbers" / "leaderboard.json").write_text(
        json.dumps(numbers, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    docs.scorecard_grid(numbers["names"], numbers["grid"], folder / "images" / "leaderboard.svg")
    (folder / "leaderboard.md").write_text(docs.leaderboard_page(numbers), encoding="utf-8")
    print(f"wrote docs/leaderboard.md, docs/numbers/leaderboard.json, docs/images/leaderboard.svg "
          f"({created}, commit {commit})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
