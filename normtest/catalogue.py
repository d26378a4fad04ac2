"""The claim catalogue's schema and registry (THEORY.md §7).

A claim is declared once, as data, in ``checks/`` (installed as ``normtest.checks``)::

    from normtest.catalogue import Claim, Expectation, register
    from normtest.result import Criterion, Verdict

    register(Claim(
        id="word.norm_ic",
        statement="‖e(w)‖² increases with IC(w)",
        source="Amigó et al. 2025, §4 (word level)",
        suite="word",
        quantities=("squared_norm", "information_content"),
        unit="nats",
        sample="default word sample",
        statistic="spearman_rho",
        criterion=Criterion.minimum_effect(0.3),
        axes={"composition": ("sum", "mean", "sqrt_n", ...), "transform": ("raw", ...)},
        needs=((Capability.WORD_VECTORS,), (Capability.WORD_TOKENS, Capability.TOKEN_VECTORS)),
        expected=(Expectation(Verdict.PASS, variant={"composition": "sqrt_n"}),),
    ))

The declaration says what a claim measures and how it is judged; it holds no model code. Which
variants run for a given model follows from its capabilities (a claim whose needs a model cannot
meet is SKIPPED with the reason), and the paper's expectation is looked up per model family and
variant.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from normtest.adapters.protocol import Capability
from normtest.errors import NormtestError
from normtest.result import Criterion, Verdict

Suite = Literal["word", "conditions", "text", "cer"]
SUITES: tuple[str, ...] = ("word", "conditions", "text", "cer")
#: Model families an expectation may name; None (any family) matches every model.
FAMILIES: tuple[str, ...] = ("static", "encoder", "decoder")
#: Variant axes a claim may expand over (THEORY.md §7).
AXES: tuple[str, ...] = ("composition", "representation", "layer", "transform")


@dataclass(frozen=True)
class Expectation:
    """The paper's expected verdict for a model family (None: any) and a partial variant."""

    verdict: Verdict
    family: str | None = None
    variant: Mapping[str, str] = field(default_factory=dict)
    note: str = ""

    def matches(self, family: str, variant: Mapping[str, str]) -> bool:
        """Whether this expectation speaks about ``family`` and ``variant``."""
        if self.family is not None and self.family != family:
            return False
        return all(variant.get(k) == v for k, v in self.variant.items())


@dataclass(frozen=True)
class Claim:
    """One claim of the paper, declared as data (see the module doc)."""

    id: str
    statement: str
    source: str
    suite: Suite
    quantities: tuple[str, ...]
    unit: str
    sample: str
    statistic: str
    criterion: Criterion
    axes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    needs: tuple[tuple[Capability, ...], ...] = ()
    expected: tuple[Expectation, ...] = ()
    reconstructed: bool = False
    notes: str = ""

    def __post_init__(self) -> None:
        if not self.id or self.id != self.id.strip() or " " in self.id:
            raise NormtestError(f"claim id must be a non-empty token, got {self.id!r}")
        if self.suite not in SUITES:
            raise NormtestError(f"{self.id}: suite must be one of {SUITES}, got {self.suite!r}")
        unknown = set(self.axes) - set(AXES)
        if unknown:
            raise NormtestError(f"{self.id}: unknown variant axes {sorted(unknown)}; use {AXES}")
        for e in self.expected:
            if e.family is not None and e.family not in FAMILIES:
                raise NormtestError(f"{self.id}: expectation family {e.family!r} not in {FAMILIES}")
            bad = {k: v for k, v in e.variant.items()
                   if k not in self.axes or v not in self.axes[k]}
            if bad:
                raise NormtestError(
                    f"{self.id}: expectation names variant {bad} outside the claim's axes"
                )

    def expectation(self, family: str, variant: Mapping[str, str]) -> Verdict | None:
        """The paper's expected verdict for this model family and variant (most specific wins)."""
        matching = [e for e in self.expected if e.matches(family, variant)]
        if not matching:
            return None
        best = max(matching, key=lambda e: (e.family is not None, len(e.variant)))
        return best.verdict

    def needs_text(self) -> str:
        """The capabilities needed, in words ("a or (b and c)")."""
        if not self.needs:
            return "nothing beyond the information sources"
        return " or ".join(" and ".join(c.value for c in option) for option in self.needs)


_REGISTRY: dict[str, Claim] = {}
_LOADED = False


def register(claim: Claim) -> Claim:
    """Add a claim to the catalogue; a second claim with the same id is an error."""
    if claim.id in _REGISTRY and _REGISTRY[claim.id] != claim:
        raise NormtestError(f"claim {claim.id!r} is declared twice; ids must be unique")
    _REGISTRY[claim.id] = claim
    return claim


def _load_builtin() -> None:
    global _LOADED
    if _LOADED:
        return
    # the built-in declarations live in checks/, installed as normtest.checks (package-dir map)
    checks = importlib.import_module("normtest.checks")
    for module in pkgutil.iter_modules(checks.__path__):
        importlib.import_module(f"normtest.checks.{module.name}")
    _LOADED = True


def claims(suite: str | None = None) -> list[Claim]:
    """Every registered claim (the built-in catalogue is loaded on first use), in id order."""
    _load_builtin()
    if suite is not None and suite != "all" and suite not in SUITES:
        raise NormtestError(f"suite must be one of {(*SUITES, 'all')}, got {suite!r}")
    chosen = [c for c in _REGISTRY.values() if suite in (None, "all") or c.suite == suite]
    return sorted(chosen, key=lambda c: c.id)


def get(claim_id: str) -> Claim:
    """The claim with this id, or an error with a "did you mean"."""
    _load_builtin()
    if claim_id in _REGISTRY:
        return _REGISTRY[claim_id]
    guess = difflib.get_close_matches(claim_id, list(_REGISTRY), n=1, cutoff=0.5)
    hint = f"; did you mean {guess[0]!r}?" if guess else ""
    raise NormtestError(f"no claim {claim_id!r}{hint} (normtest list shows them all)")


def describe(claim: Claim) -> str:
    """A multi-line, human-readable description of one claim."""
    crit = claim.criterion
    lines = [
        f"{claim.id}  [{claim.suite}]" + ("  (reconstructed)" if claim.reconstructed else ""),
        f"  claim:      {claim.statement}",
        f"  source:     {claim.source}",
        f"  measures:   {claim.statistic} of {' vs '.join(claim.quantities)} ({claim.unit}) "
        f"over {claim.sample}",
        f"  criterion:  {claim.statistic} {crit.describe()}",
        f"  needs:      {claim.needs_text()}",
    ]
    for axis, values in claim.axes.items():
        lines.append(f"  {axis + ':':<11} {', '.join(values)}")
    for e in claim.expected:
        who = e.family or "any model"
        which = ", ".join(f"{k}={v}" for k, v in e.variant.items()) or "every variant"
        note = f" ({e.note})" if e.note else ""
        lines.append(f"  expected:   {e.verdict.value} for {who}, {which}{note}")
    if claim.notes:
        lines.append(f"  notes:      {claim.notes}")
    return "\n".join(lines)

