"""The examples of docs/adapters.md run as they stand, so the guide cannot rot.

The page marks its examples with an HTML comment on the line before a fence:

- ``<!-- doctest -->`` before a ```` ```python ```` fence: the block is run;
- ``<!-- doctest: file=NAME -->`` before a ```` ```python ```` fence: the block is written to
  ``NAME`` in the example's folder (a module that later blocks import, e.g.
  ``sentence_models:minilm``).

A ```` ```python ```` fence without a marker is reference material and is not run.

Blocks are grouped by the section heading above them; each group runs in order in one fresh
namespace, with a temporary folder as its working directory (also on ``sys.path``), so relative
paths such as ``cache_dir="normtest-cache"`` stay in it. Every ``normtest …`` command line of
a ```` ```console ```` block is parsed by the CLI's own parser, so a renamed flag fails here.
"""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "adapters.md"
MARKER = re.compile(r"<!--\s*doctest(?::\s*file=(?P<file>[\w./-]+))?\s*-->")
FENCE = re.compile(r"^```(\w*)\s*$")
HEADING = re.compile(r"^#{2,4}\s+(.*)$")


@dataclass
class Block:
    """One fenced block of the guide."""

    language: str
    code: str
    #: the guide's line number of the block's first line
    line: int
    heading: str
    run: bool = False
    file: str | None = None


@dataclass
class Group:
    """The blocks of one section, run in order in one namespace."""

    heading: str
    blocks: list[Block] = field(default_factory=list)


def read_blocks(text: str) -> list[Block]:
    """Every fenced block with its marker and the heading above it."""
    blocks: list[Block] = []
    lines = text.splitlines()
    heading, marker, i = "", None, 0
    while i < len(lines):
        line = lines[i]
        if (found := HEADING.match(line)) is not None:
            heading = found[1].strip()
        elif (found := MARKER.fullmatch(line.strip())) is not None:
            marker = found
        elif (fence := FENCE.match(line)) is not None:
            start, body = i + 2, []  # 1-based number of the first line inside the fence
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            block = Block(fence[1], "\n".join(body) + "\n", start, heading)
            if marker is not None:
                assert fence[1] == "python", (
                    f"docs/adapters.md:{start - 1}: a doctest marker goes before ```python")
                block.file = marker["file"]
                block.run = block.file is None
            blocks.append(block)
            marker = None
        elif line.strip():
            marker = None  # a marker applies only to the fence right after it
        i += 1
    return blocks


def runnable_groups(blocks: list[Block]) -> list[Group]:
    """The runnable and file blocks, grouped by section (in page order)."""
    groups: dict[str, Group] = {}
    for block in blocks:
        if block.run or block.file:
            groups.setdefault(block.heading, Group(block.heading)).blocks.append(block)
    return list(groups.values())


BLOCKS = read_blocks(GUIDE.read_text(encoding="utf-8"))
GROUPS = runnable_groups(BLOCKS)


def test_guide_has_examples_of_every_kind() -> None:
    """Each kind of adapter keeps a runnable example, and the contract its own."""
    headings = [g.heading for g in GROUPS]
    for section in ("2.1", "2.2", "2.4", "2.5", "3."):
        assert any(h.startswith(section) for h in headings), f"no runnable example in §{section}"
    sentence = ("A sentence-transformers folder", "The same folder, token by token",
                "A `module:attribute` returning a `SentenceTransformer`",
                "A class of your own with `encode`")
    assert not set(sentence) - set(headings), "a sentence-encoder example lost its marker"
    assert all(g.blocks[-1].run for g in GROUPS), "a group must end with a block that runs"


@pytest.mark.parametrize("group", [pytest.param(g, id=g.heading) for g in GROUPS])
def test_example_runs(group: Group, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The section's examples run in order in one fresh namespace."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace: dict[str, object] = {"__name__": "__main__"}
    try:
        for block in group.blocks:
            if block.file is not None:
                (tmp_path / block.file).write_text(block.code, encoding="utf-8")
                continue
            # padded so that a traceback names the guide's own line numbers
            code = compile("\n" * (block.line - 1) + block.code, str(GUIDE), "exec")
            exec(code, namespace)  # the guide's own examples
    finally:
        for name, module in list(sys.modules.items()):  # modules the examples wrote
            if str(getattr(module, "__file__", "") or "").startswith(str(tmp_path)):
                del sys.modules[name]


def _command_lines() -> list[tuple[int, list[str]]]:
    """Every ``normtest …`` command of the guide's console blocks (after ``$`` and any
    ``NAME=value`` environment settings), split as a shell would."""
    found = []
    for block in BLOCKS:
        if block.language != "console":
            continue
        for offset, line in enumerate(block.code.splitlines()):
            words = shlex.split(line.removeprefix("$ "), comments=True)
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                words = words[1:]
            if words and words[0] == "normtest":
                found.append((block.line + offset, words[1:]))
    return found


def test_command_lines_parse(capsys: pytest.CaptureFixture[str]) -> None:
    """The guide's command lines use flags the CLI has."""
    from normtest.cli.main import _parser

    commands = _command_lines()
    assert len(commands) >= 8
    for line, argv in commands:
        try:
            args = _parser().parse_args(argv)
        except SystemExit:
            pytest.fail(f"docs/adapters.md:{line}: normtest {' '.join(argv)}\n"
                        f"{capsys.readouterr().err}")
        assert args.command == "audit" and args.model
