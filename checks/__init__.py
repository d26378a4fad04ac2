"""The paper's claim catalogue (THEORY.md §7), declared once; shipped as ``normtest.checks``."""
