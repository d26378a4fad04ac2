"""``python -m normtest``."""

import sys

from normtest.cli import main

sys.exit(main())
