"""Selecting claims and variants (``word.norm_ic[transform=raw]``), expected failures and
threshold overrides: what a run is asked to check."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from normtest.audit.report import Report
from normtest.claims.catalogue import SUITES, claims, claims_of_line, declared_lines, get
from normtest.errors import NormtestError

if TYPE_CHECKING:
    from normtest.adapters.protocol import ModelAdapter
    from normtest.verdict.result import Result


def split_ids(values: Iterable[str]) -> list[str]:
    """Split comma-separated ids, leaving commas inside ``[...]`` alone."""
    out: list[str] = []
    for value in values:
        depth, start = 0, 0
        for i, ch in enumerate(value):
            depth += (ch == "[") - (ch == "]")
            if ch == "," and depth == 0:
                out.append(value[start:i])
                start = i + 1
        out.append(value[start:])
    return [v.strip() for v in out if v.strip()]


_SELECTOR = re.compile(r"([^\[\]\s,]+)(?:\[([^\[\]]*)\])?")


def line_keys() -> list[str]:
    """The scorecard lines' ids (``word_level``, ``composition``, …)."""
    return [h.key for h in declared_lines()]


def closest(name: str, known: Iterable[str]) -> str:
    """``; did you mean 'word_level'?`` for the known id nearest ``name`` (empty when none is
    near): the hint every command gives."""
    guess = difflib.get_close_matches(name, list(known), n=1, cutoff=0.5)
    return f"; did you mean {guess[0]!r}?" if guess else ""


def unknown_id(name: str) -> NormtestError:
    """The one error every command gives for an id it does not know (``explain``, ``show``,
    ``--claims``, the gate), with the closest known id: a scorecard line, a claim or a
    suite."""
    keys, ids = line_keys(), [c.id for c in claims()]
    hint = closest(name.split("[", 1)[0], keys + ids + list(SUITES))
    return NormtestError(
        f"{name!r} is not a scorecard line, a claim, a claim's variant (claim[axis=value]) or a "
        f"suite{hint} (lines: {', '.join(keys)}; suites: {', '.join(SUITES)}; normtest list "
        "shows the lines and their claims)")


@dataclass(frozen=True)
class Selector:
    """A suite (``word``), a scorecard line (``composition``: the claims that decide it), a
    claim (``word.norm_ic``) or some of its variants (``word.norm_ic[transform=raw]``; axes
    not named match any value). A name that is both a suite and a line (``conditions``) is the
    suite, which holds the line's claims."""

    text: str
    claim: str | None = None
    suite: str | None = None
    variant: Mapping[str, str] = field(default_factory=dict)
    line: str | None = None

    @classmethod
    def parse(cls, text: str) -> Selector:
        """Parse and validate against the catalogue (unknown ids get a "did you mean")."""

        text = text.strip()
        if text in (*SUITES, "all"):
            return cls(text, suite=None if text == "all" else text)
        if text in line_keys():
            return cls(text, line=text)
        match = _SELECTOR.fullmatch(text)
        if match is None:
            raise NormtestError(
                f"cannot read claim selector {text!r}; write a claim id, a suite, or "
                "claim[axis=value,...] such as word.norm_ic[transform=raw]"
            )
        try:
            claim = get(match[1])
        except NormtestError:
            raise unknown_id(text) from None
        variant: dict[str, str] = {}
        for part in filter(None, (p.strip() for p in (match[2] or "").split(","))):
            axis, eq, value = part.partition("=")
            axis, value = axis.strip(), value.strip()
            if not eq or axis not in claim.axes:
                raise NormtestError(
                    f"{text!r}: {part!r} is not axis=value for one of {claim.id}'s axes "
                    f"({', '.join(claim.axes) or 'it has none'})"
                )
            if value not in claim.axes[axis]:
                raise NormtestError(
                    f"{text!r}: {axis} must be one of {', '.join(claim.axes[axis])}, got {value!r}"
                )
            variant[axis] = value
        return cls(text, claim=claim.id, variant=variant)

    def judges(self, result: Result, exploratory: bool = False) -> bool:
        """Whether a requirement of this selector judges ``result``: a row it matches that is
        confirmatory, or any row it matches when ``exploratory`` is asked for or the selector
        names a variant (a row of a report without roles counts as confirmatory)."""
        if not self.matches_result(result):
            return False
        return exploratory or bool(self.variant) or result.role != "exploratory"

    def claim_ids(self) -> list[str]:
        """The ids of the claims this selector may match."""

        if self.claim is not None:
            return [self.claim]
        if self.line is not None:
            return claims_of_line(self.line)
        return [c.id for c in claims(self.suite or "all")]

    def matches(self, claim: str | None, variant: Mapping[str, str]) -> bool:
        """Whether a claim id and variant fall under this selector (an empty variant — a
        skipped claim — matches any variant selector of its claim)."""
        if self.claim is None:
            if claim is None:
                return False
            if self.line is not None:
                return claim in claims_of_line(self.line)
            return self.suite is None or get(claim).suite == self.suite
        if claim != self.claim:
            return False
        return not variant or all(variant.get(k) == v for k, v in self.variant.items())

    def matches_result(self, result: Result) -> bool:
        """Whether a result falls under this selector under any of the variants it stands for
        (one row measured once for several variants answers to each)."""
        return any(self.matches(result.claim, v) for v in result.variants)

    @property
    def specificity(self) -> int:
        """How much this selector names: a variant beats a claim, a claim beats a suite."""
        return (len(self.variant) + 2) if self.claim else (1 if self.suite else 0)


def rows_selector(text: str, where: str) -> Selector:
    """A selector of rows (a suite, a claim or its variants), for ``where`` (a gate's
    ``require``, an expected failure): a scorecard line is refused with what to write
    instead, since a line is decided by its rule, not by each of its claims' rows passing."""
    selector = Selector.parse(text)
    if selector.line is not None:
        claims_named = ", ".join(selector.claim_ids())
        raise NormtestError(
            f"{where}: {text!r} is a scorecard line; a line is required with replicated = "
            f"[{text!r}] (its rows by its rule), or name its claims ({claims_named})")
    return selector


def selected_claims(values: Iterable[str]) -> list[str]:
    """The claim ids a list of ids names (suites, lines, claims, variants: each its claims),
    in catalogue order, each once."""
    wanted = {c for s in parse_selectors(values) for c in s.claim_ids()}
    return [c.id for c in claims() if c.id in wanted]


def parse_selectors(values: Iterable[str] | None) -> list[Selector]:
    """Selectors from ids (comma-separated lists allowed); none means every claim."""
    return [Selector.parse(v) for v in split_ids(values or [])]


def result_id(claim: str, variant: Mapping[str, str]) -> str:
    """The id a result of this claim and variant has (``claim[axis=value,...]``)."""
    if not variant:
        return claim
    return f"{claim}[{','.join(f'{k}={v}' for k, v in variant.items())}]"


def expected_failure(mapping: Mapping[str, str] | None, claim: str | None,
                     variant: Mapping[str, str]) -> str | None:
    """The reason a check is expected to fail, from ``{selector: reason}`` (most specific key
    wins), or None."""
    if not mapping or claim is None:
        return None
    best: tuple[int, str] | None = None
    for key, reason in mapping.items():
        selector = Selector.parse(key)
        if selector.claim is not None and selector.matches(claim, variant) and (
                variant or not selector.variant):
            if best is None or selector.specificity > best[0]:
                best = (selector.specificity, str(reason))
    return None if best is None else best[1]


def model_expected_failures(adapter: ModelAdapter) -> dict[str, str]:
    """The ``expected_failures`` mapping an adapter carries next to it, else that of the model
    normtest ships under its name (its documented disagreements with the paper,
    :attr:`normtest.models.named.NamedModel.expected_failures`); empty if none."""
    found = getattr(adapter, "expected_failures", None)
    if found is None:
        from normtest.models.registry import named_models

        named = named_models().get(str(getattr(adapter, "name", "")))
        return dict(named.expected_failures) if named is not None else {}
    if not isinstance(found, Mapping):
        raise NormtestError(
            f"{getattr(adapter, 'name', adapter)}.expected_failures must map claim ids to "
            f"reasons, got {type(found).__name__}"
        )
    return {str(k): str(v) for k, v in found.items()}


# -- thresholds --------------------------------------------------------------------------------
def apply_thresholds(results: Sequence[Result], thresholds: Mapping[str, Any] | None,
                     ) -> list[Result]:
    """Re-judge the named claims under their new thresholds, then adjust the rows again (Holm
    over the confirmatory ones, Benjamini–Hochberg over the exploratory ones)."""
    if not thresholds:
        return list(results)

    for claim in thresholds:
        get(claim)  # an unknown claim id is an error, with a "did you mean"
    present = {r.claim for r in results}
    chosen = {c: v for c, v in thresholds.items() if c in present}
    return list(Report(results=results).with_thresholds(chosen).results)

