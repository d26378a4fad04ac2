"""Reference reports that ship with normtest: a new model placed beside a published one without
auditing that one again.

``reference_reports/NAME.json.gz`` holds a slim report (:meth:`Report.slim`) of each real model
normtest installs, all audited on one sample by ``normtest compare`` at its default sizes and
written by ``scripts/references.py`` (which also writes docs/leaderboard.md from them, with the
date and commit). ``normtest compare --model M --reference minilm-l6`` audits M on the
reference's sample (its seed and sizes) and compares the two::

    from normtest.audit.references import read_reference, reference_names

    reference_names()                # ['gemma-3-270m', 'glove-6b-50d', 'minilm-l6', ...]
    read_reference("minilm-l6")      # a Report
"""

from __future__ import annotations

from pathlib import Path

from normtest.audit.report import Report
from normtest.errors import NormtestError

__all__ = ["REFERENCES", "read_reference", "reference_names", "reference_path"]

#: Where the shipped reference reports lie (package data).
REFERENCES = Path(__file__).resolve().parent / "reference_reports"
SUFFIX = ".json.gz"


def reference_names() -> list[str]:
    """The models normtest ships a reference report of, by name."""
    if not REFERENCES.is_dir():
        return []
    return sorted(p.name[: -len(SUFFIX)] for p in REFERENCES.glob(f"*{SUFFIX}"))


def reference_path(name: str) -> Path:
    """The reference report of model ``name``; an error naming the references otherwise."""
    names = reference_names()
    if name not in names:
        import difflib

        near = difflib.get_close_matches(name, names, n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        listed = ", ".join(names) if names else "none (this installation lacks them)"
        raise NormtestError(f"no reference report of {name!r}{hint}; normtest ships references "
                            f"of: {listed}; compare a stored report of your own with --report")
    return REFERENCES / f"{name}{SUFFIX}"


def read_reference(name: str) -> Report:
    """The shipped reference report of model ``name`` (read and checked as any report)."""
    return Report.read(reference_path(name), what="reference report")
