"""mypy over the whole installed package: ``normtest`` with ``checks/`` and ``theorems/`` under the
names they are installed as (``normtest.checks``, ``normtest.theorems``; the ``package-dir`` map
of pyproject.toml), which mypy cannot follow from the repository's layout. The package is laid
out as installed, with symbolic links, in a temporary folder, and mypy checks it there with the
repository's configuration; the paths it reports are the repository's (``make lint`` runs it)::

    python scripts/typecheck.py [mypy options]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Installed name (below ``normtest/``) → folder of the repository.
MAPPED = {"checks": "checks", "theorems": "theorems"}


def main(argv: list[str]) -> int:
    """Lay the package out as installed and run mypy on it; mypy's exit code."""
    with tempfile.TemporaryDirectory(prefix="normtest-typecheck-") as tmp:
        package = Path(tmp) / "normtest"
        package.mkdir()
        for entry in (ROOT / "normtest").iterdir():
            if entry.name != "__pycache__":
                (package / entry.name).symlink_to(entry)
        for name, folder in MAPPED.items():
            (package / name).symlink_to(ROOT / folder)
        done = subprocess.run(
            [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
             "--cache-dir", str(ROOT / ".mypy_cache"), *argv, "-p", "normtest"],
            cwd=tmp, capture_output=True, text=True, env={**os.environ, "MYPYPATH": ""})
        out = done.stdout.replace("normtest/checks/", "checks/").replace(
            "normtest/theorems/", "theorems/")
        sys.stdout.write(out)
        sys.stderr.write(done.stderr)
        return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
