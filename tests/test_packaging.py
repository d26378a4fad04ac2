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


def test_the_license_is_an_spdx_expression_the_build_backend_reads() -> None:
    """A ``license = {text = ...}`` table makes setuptools print a deprecation four times on
    every install; an SPDX string (PEP 639) needs setuptools 77 or later, which the build
    requires."""
    import re

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["license"] == "MIT"
    backend = [r for r in project["build-system"]["requires"] if r.startswith("setuptools")]
    floor = re.search(r">=\s*(\d+)", backend[0])
    assert floor is not None and int(floor.group(1)) >= 77, backend
