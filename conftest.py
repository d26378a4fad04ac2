"""Repository-wide pytest configuration: offline by default, deterministic hypothesis profile."""

from __future__ import annotations

import os

from hypothesis import settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# Theorems must hold on at least 200 generated examples per run (issue 3); derandomised so that
# CI and a developer see the same examples.
settings.register_profile("normtest", max_examples=200, derandomize=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "normtest"))
