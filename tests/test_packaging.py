"""The wheel ships every subpackage (the package list in pyproject.toml is explicit)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_is_listed_for_the_wheel() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    on_disk = {
        "normtest." + ".".join(p.parent.relative_to(ROOT / "normtest").parts)
        for p in (ROOT / "normtest").rglob("__init__.py")
        if p.parent != ROOT / "normtest"
    } | {"normtest"}
    assert on_disk - {"normtest.theorems", "normtest.checks"} <= listed, on_disk - listed
    assert config["package-dir"]["normtest.theorems"] == "theorems"
    assert config["package-dir"]["normtest.checks"] == "checks"
