"""``python -m normtest``."""

from normtest.cli.main import run

run()
