"""docs/images/report.png: the first screen of an HTML report, as a reader's browser shows it.

The screenshot in docs/reports.md and docs/guide.md is the top of the default MiniLM audit's
report.html (1280 × 1500: the answer at a glance and the first line's deciding plots, before
any robustness or controls), taken by headless Chromium::

    normtest audit --model minilm-l6 --out reports/minilm-l6
    python scripts/report_screenshot.py reports/minilm-l6/report.html

Nothing is measured here; Chromium is Debian's ``chromium`` (``tests/test_render_browser.py``
installs it where it is missing).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: A laptop's width; tall enough for the glance and the first line's plots.
WIDTH, HEIGHT = 1280, 1500


def screenshot(page: Path, out: Path, width: int = WIDTH, height: int = HEIGHT) -> None:
    """Write the first ``width`` × ``height`` pixels of ``page`` as PNG to ``out``."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="normtest-chromium-") as profile:
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--no-first-run", "--disable-extensions",
                        "--disable-background-networking", f"--user-data-dir={profile}",
                        f"--window-size={width},{height}", f"--screenshot={out.resolve()}",
                        page.resolve().as_uri()],
                       check=True, capture_output=True, timeout=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", type=Path, help="a report.html")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "report.png")
    args = parser.parse_args(argv)
    screenshot(args.page, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
