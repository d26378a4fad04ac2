"""normtest's version (``normtest.__version__``), kept apart so that any layer may read it."""

VERSION = "0.2.0.dev0"
