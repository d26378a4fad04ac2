"""``python -m normtest``."""

from normtest.cli import run

run()
