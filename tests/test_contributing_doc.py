"""CONTRIBUTING.md describes the house as it is: the layer chain it gives is the layers
contract of pyproject.toml, every file and folder it names exists, and every ``make`` target it
names is in the Makefile (its dotted ``normtest.…`` names: tests/test_docs_names.py)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEXT = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
_CODE = re.compile(r"`([^`\n]+)`")


def _contract_layers() -> list[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    layers = next(c["layers"] for c in config["tool"]["importlinter"]["contracts"]
                  if c["type"] == "layers")
    names = [" | ".join(m.strip().removeprefix("normtest.") for m in layer.split("|"))
             for layer in reversed(layers)]
    return names


def test_the_layer_chain_is_the_contracts() -> None:
    chain = next(line for line in re.split(r"\n- ", TEXT) if line.startswith("**The engine**"))
    stages = [s.strip().strip("`") for s in " ".join(chain.split()).split(". ")[0]
              .split("below it: ")[1].split("→")]
    stages = [re.sub(r"`\s*\|\s*`", " | ", s) for s in stages]
    assert stages == _contract_layers()


def test_every_path_it_names_exists() -> None:
    roots = ("", "normtest/")
    missing = []
    for token in _CODE.findall(TEXT):
        if re.fullmatch(r"[\w./-]+\.(py|md|toml)|[\w-]+/(\w+/)*", token) and "<" not in token:
            if not any((REPO / root / token).exists() for root in roots):
                missing.append(token)
    assert not missing, missing


def test_every_make_target_it_names_exists() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([\w-]+):", makefile, flags=re.MULTILINE))
    named = set(re.findall(r"`make ([\w-]+)", TEXT))
    assert named and named <= targets, named - targets
