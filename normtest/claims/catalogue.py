"""The claim catalogue: what a claim is, the registry, and where claims come from.

A claim is one unit — its declaration, its measurement and its criterion stand together in one
module. The built-in ones live in ``checks/`` (installed as ``normtest.checks``); a user's load
the same way (:func:`load_checks`, ``--checks PATH_OR_MODULE``, ``checks = [...]`` in
``[tool.normtest]``, ``--normtest-checks`` in pytest, or the ``normtest.checks`` entry-point
group of an installed package)::

    from normtest.claims.catalogue import Claim, measures
    from normtest.verdict.result import Criterion
    from normtest.stats.correlation import measure_correlation

    @measures(Claim(
        id="word.norm_ic.kendall",
        statement="‖e(w)‖² increases with IC(w) (Kendall's τ)",
        source="my lab", suite="word", quantities=("squared_norm", "information_content"),
        unit="nats", sample="the default word sample", statistic="kendall_tau",
        criterion=Criterion.minimum_effect(0.2),
        axes={"transform": ("raw", "whiten_zipf")},
    ), data="words")
    def norm_ic_kendall(words, variant, settings):
        return measure_correlation(words.information, words.squared_norms(variant), "kendall",
                                   n_resamples=settings.resamples, seed=settings.seed,
                                   alpha=settings.alpha)

``data`` names what the measurement reads — ``"words"`` (the word sample and its vectors),
``"prefixes"`` (documents' prefix curves) or ``"texts"`` (sentences and their surprisal), built once
per audit by :mod:`normtest.data` and shared by every claim that asks for it. The measurement
returns a :class:`~normtest.verdict.measurement.Measurement`; the audit judges it once against
``criterion``. Which variants run for a model follows from its capabilities (a claim whose ``needs``
a model cannot meet is SKIPPED with the reason). ``expected`` holds the paper's hypotheses: the
variants, per model family, where the paper or a source it builds on states a verdict. Those rows
are *confirmatory* (each line decided from its own) and count towards the claim's ``hypothesis``, a
line of the scorecard; every other row is *exploratory* (Benjamini–Hochberg) (docs/claims.md,
docs/statistics.md).
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import importlib.util
import sys
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from normtest.adapters.protocol import Capability
from normtest.claims.same_measure import same_measure, source_file
from normtest.data.kinds import DATA
from normtest.errors import NormtestError
from normtest.verdict.result import Criterion, Verdict, variant_key

#: The suites, each a module of ``checks/`` of the same name (the one list of them).
SUITES: tuple[str, ...] = ("word", "conditions", "text", "cer")
Suite = str  # one of SUITES, checked when a claim is declared
#: Model families an expectation may name; None (any family) matches every model.
#: ``sentence``: a model that only maps whole texts to vectors (sentence-transformers, ``encode``).
FAMILIES: tuple[str, ...] = ("static", "encoder", "decoder", "sentence")
#: Variant axes a claim may expand over (docs/theory.md §7): besides the model's composition,
#: representation, layer and the geometry transform, a contrast's second composition
#: (``versus``) and the word population a measurement is restricted to (``population``).
AXES: tuple[str, ...] = ("composition", "versus", "population", "representation", "layer",
                         "transform")
#: The reference value of an axis an expectation does not name: the paper's hypotheses are
#: about the model's output (its last layer) in its own geometry (no transform). An expectation
#: that names no representation or transform speaks only about those rows; every other row of
#: the claim is exploratory (docs/statistics.md, "Confirmatory and exploratory rows").
REFERENCE: dict[str, str] = {"representation": "last", "transform": "raw"}
#: The trivial predictors a correlational claim may declare as its ``baseline``, each read from
#: the data the claim measures (docs/statistics.md, "Baselines and the beyond reading"): the
#: number of model tokens of a word (``WordData.token_counts()``), the length of a text in the
#: tokens its surprisal sums over (``TextData.lengths``), the length of a prefix.
BASELINES: dict[str, str] = {"token_count": "token count", "length": "length",
                             "prefix_length": "prefix length"}
#: The two roles a result can have in an audit.
ROLES: tuple[str, ...] = ("confirmatory", "exploratory")
#: The entry-point group through which an installed package adds claims.
ENTRY_POINT_GROUP = "normtest.checks"

if TYPE_CHECKING:
    from normtest.base.settings import AuditSettings
    from normtest.data.prefixes import PrefixData
    from normtest.data.texts import TextData
    from normtest.data.words import WordData
    from normtest.verdict.result import Measurement

#: A claim's variant: axis → value (``{"composition": "sqrt_n", "transform": "raw"}``).
Variant: TypeAlias = Mapping[str, str]
#: A measurement of one kind of data: (the data it asked for, the variant, the audit settings)
#: → Measurement; one type per kind of data a claim reads (``data="words"`` …).
WordMeasure: TypeAlias = "Callable[[WordData, Variant, AuditSettings], Measurement]"
PrefixMeasure: TypeAlias = "Callable[[PrefixData, Variant, AuditSettings], Measurement]"
TextMeasure: TypeAlias = "Callable[[TextData, Variant, AuditSettings], Measurement]"
Measure: TypeAlias = "WordMeasure | PrefixMeasure | TextMeasure"
_M = TypeVar("_M", bound="WordMeasure | PrefixMeasure | TextMeasure")


@dataclass(frozen=True)
class Expectation:
    """The paper's expected verdict for a model family (None: any) and a partial variant."""

    verdict: Verdict
    family: str | None = None
    variant: Mapping[str, str] = field(default_factory=dict)
    note: str = ""
    #: the scorecard line this row counts towards, when not the claim's own ``hypothesis``
    hypothesis: str | None = None
    #: the line's other reading this expectation belongs to (``"after centring"``);
    #: None: the line's reference reading (docs/statistics.md, "The scorecard")
    reading: str | None = None

    def matches(self, family: str, variant: Mapping[str, str]) -> bool:
        """Whether this expectation speaks about ``family`` and ``variant``: the axes it names
        take its values, and every axis of :data:`REFERENCE` it does not name takes the
        reference value (the raw last layer)."""
        if self.family is not None and self.family != family:
            return False
        if not all(variant.get(k) == v for k, v in self.variant.items()):
            return False
        return all(variant.get(axis, value) == value for axis, value in REFERENCE.items()
                   if axis not in self.variant)


@dataclass(frozen=True)
class LineDeclaration:
    """One line of the scorecard: a hypothesis of the paper that claims' confirmatory rows
    decide together (see :mod:`normtest.scorecard.lines`)."""

    key: str
    title: str
    source: str = ""
    #: the paper's words the line rests on (a quotation of its abstract, or of a source)
    words: str = ""
    #: a few words naming the line, for one-line views (default: the key)
    short: str = ""
    #: the reading the line's status is decided under, where a line has another reading
    #: (``"in raw geometry"``); its expectations with a ``reading`` decide that one
    reference: str = ""


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
    #: whether the report plots this claim's variants (the word data's IC against ‖e‖²)
    plotted: bool = False
    #: what the measurement reads (one of :data:`DATA`) and the measurement itself
    data: str | None = None
    measure: Measure | None = field(default=None, compare=False, repr=False)
    #: the file that declared the claim (pytest collects its items there)
    origin: str | None = field(default=None, compare=False)
    #: the scorecard line (a :func:`declare_line` key) its confirmatory rows count towards
    hypothesis: str | None = None
    #: why the criterion's threshold or margin is where it is (``normtest explain``)
    rationale: str = ""
    #: the known-truth tests that back the criterion, as pytest node ids
    #: (``tests/test_synthetic.py::test_name``), shown by ``normtest explain``
    backed_by: tuple[str, ...] = ()
    #: the threshold (or margin) one step looser and one step stricter than the criterion's:
    #: the ``margin`` choice of the robustness analysis (docs/statistics.md, "Robustness")
    margins: tuple[Any, Any] | None = None
    #: the trivial predictor of the claim's information (a key of :data:`BASELINES`): the
    #: measurement reports ρ(information, baseline) and the correspondence *beyond* it as the
    #: components ``baseline`` and ``beyond`` (:mod:`normtest.stats.baseline`), and the row is
    #: judged beyond it too; None: the claim correlates nothing a trivial predictor explains
    baseline: str | None = None

    def __post_init__(self) -> None:
        if not self.id or self.id != self.id.strip() or " " in self.id:
            raise NormtestError(f"claim id must be a non-empty token, got {self.id!r}")
        if self.suite not in SUITES:
            raise NormtestError(f"{self.id}: suite must be one of {SUITES}, got {self.suite!r}")
        if self.data is not None and self.data not in DATA:
            raise NormtestError(f"{self.id}: data must be one of {DATA}, got {self.data!r}")
        if self.measure is not None and not callable(self.measure):
            raise NormtestError(f"{self.id}: measure must be a function, got {self.measure!r}")
        unknown = set(self.axes) - set(AXES)
        if unknown:
            raise NormtestError(f"{self.id}: unknown variant axes {sorted(unknown)}; use {AXES}")
        if self.baseline is not None and self.baseline not in BASELINES:
            raise NormtestError(f"{self.id}: baseline must be one of {tuple(BASELINES)}, got "
                                f"{self.baseline!r}")
        if self.margins is not None:
            if len(self.margins) != 2:
                raise NormtestError(f"{self.id}: margins is (looser, stricter), got "
                                    f"{self.margins!r}")
            for value in self.margins:
                self.criterion.with_threshold(value, self.id)
        for e in self.expected:
            if e.family is not None and e.family not in FAMILIES:
                raise NormtestError(f"{self.id}: expectation family {e.family!r} not in {FAMILIES}")
            bad = {k: v for k, v in e.variant.items()
                   if k not in self.axes or v not in self.axes[k]}
            if bad:
                raise NormtestError(
                    f"{self.id}: expectation names variant {bad} outside the claim's axes"
                )

    def stated(self, family: str, variant: Mapping[str, str]) -> Expectation | None:
        """The expectation that speaks about this model family and variant (most specific
        wins), or None."""
        matching = [e for e in self.expected if e.matches(family, variant)]
        if not matching:
            return None
        return max(matching, key=lambda e: (e.family is not None, len(e.variant)))

    def expectation(self, family: str, variant: Mapping[str, str]) -> Verdict | None:
        """The paper's expected verdict for this model family and variant, or None."""
        stated = self.stated(family, variant)
        return None if stated is None else stated.verdict

    def hypothesis_of(self, family: str, variant: Mapping[str, str]) -> str | None:
        """The scorecard line a row belongs to: its expectation's, else the claim's (only a
        confirmatory row decides it)."""
        stated = self.stated(family, variant)
        return (stated.hypothesis if stated is not None else None) or self.hypothesis

    def reading_of(self, family: str, variant: Mapping[str, str]) -> str | None:
        """The other reading of its line a confirmatory row belongs to (None: the reference)."""
        stated = self.stated(family, variant)
        return None if stated is None else stated.reading

    def role(self, family: str, variant: Mapping[str, str]) -> str:
        """``confirmatory`` where the paper (or a source it builds on) states an expectation
        for this model family and variant, else ``exploratory``."""
        return "exploratory" if self.expectation(family, variant) is None else "confirmatory"

    def criterion_at(self, margin: str) -> Criterion:
        """The criterion with its threshold as ``stated``, one step ``looser`` or ``stricter``
        (:attr:`margins`; as stated when none are declared)."""
        if margin == "stated" or self.margins is None:
            return self.criterion
        looser, stricter = self.margins
        return self.criterion.with_threshold(looser if margin == "looser" else stricter, self.id)

    @property
    def baseline_name(self) -> str:
        """The baseline in words (``token count``), empty when the claim declares none."""
        return "" if self.baseline is None else BASELINES[self.baseline]

    @property
    def detect(self) -> Any | None:
        """The smallest effect the claim's criterion must detect: one step beyond its threshold
        (the stricter of :attr:`margins`), where a positive control is planted; None when the
        claim declares no margins."""
        return None if self.margins is None else self.margins[1]

    def needs_text(self) -> str:
        """The capabilities needed, in words ("a or (b and c)")."""
        if not self.needs:
            return "nothing beyond the information sources"
        return " or ".join(" and ".join(c.value for c in option) for option in self.needs)


_REGISTRY: dict[str, Claim] = {}
_LINES: dict[str, LineDeclaration] = {}


def declare_line(key: str, title: str, source: str = "", *, words: str = "", short: str = "",
               reference: str = "") -> str:
    """Declare a scorecard line (in the order the scorecard lists them) and return its key, to
    name in ``Claim(hypothesis=...)``. Declaring the same line again is free.

    ``words``: the paper's words it rests on; ``short``: a few words naming it; ``reference``:
    the reading its status is decided under, where expectations name another (``reading=``).
    """
    if not key or key != key.strip() or " " in key:
        raise NormtestError(f"hypothesis key must be a non-empty token, got {key!r}")
    declared = LineDeclaration(key, title, source, words, short or key, reference)
    known = _LINES.get(key)
    if known is not None and known != declared:
        raise NormtestError(f"hypothesis {key!r} is declared twice with different titles")
    _LINES[key] = declared
    return key


def declared_line(key: str) -> LineDeclaration:
    """The declared scorecard line ``key``, or an error naming the lines there are."""
    load_builtin()
    if key not in _LINES:
        guess = difflib.get_close_matches(key, list(_LINES), n=1, cutoff=0.5)
        hint = f"; did you mean {guess[0]!r}?" if guess else ""
        raise NormtestError(f"no scorecard line {key!r}{hint} (lines: {', '.join(_LINES)})")
    return _LINES[key]


def claims_of_line(key: str) -> list[str]:
    """The claims whose confirmatory rows can decide a scorecard line (``all``: every line)."""
    return [c.id for c in claims()
            if key == "all" or key in {c.hypothesis, *(e.hypothesis for e in c.expected)}]


def declared_lines() -> list[LineDeclaration]:
    """Every scorecard line, in the order declared (the built-in ones first, in paper order)."""
    load_builtin()
    return list(_LINES.values())
_LOADED = False


def register(claim: Claim, measure: Measure | None = None, data: str | None = None) -> Claim:
    """Add a claim to the catalogue (with its measurement and the data it reads, when given
    here rather than in the declaration).

    A claim id names one declaration and one measurement: a second claim with the same id is an
    error when its declaration differs or its measurement is another function (naming both
    places). Registering the same claim again — its file imported a second time, under another
    module name, or collected by pytest — is free (:func:`same_measure`), and the first
    registration stays."""
    if measure is not None or data is not None:
        claim = replace(claim, measure=measure or claim.measure, data=data or claim.data)
    if claim.origin is None and claim.measure is not None:
        claim = replace(claim, origin=source_file(claim.measure))
    for key in {claim.hypothesis, *(e.hypothesis for e in claim.expected)} - {None}:
        if key not in _LINES:
            raise NormtestError(
                f"{claim.id}: hypothesis {key!r} is not declared; declare it first with "
                f"normtest.claims.declare_line(key, title) (known: {', '.join(_LINES)})"
            )
    known = _REGISTRY.get(claim.id)
    if known is not None:
        if known != claim:
            raise NormtestError(
                f"claim {claim.id!r} is declared twice, with different declarations: first "
                f"in {_declared_in(known)}, again in {_declared_in(claim)}; ids must be "
                "unique (rename one of them)")
        if not same_measure(known.measure, claim.measure):
            raise NormtestError(
                f"claim {claim.id!r} is declared twice, with different measurements: "
                f"{_measured_by(known)}, and {_measured_by(claim)}; ids must be unique, a "
                "claim id naming one declaration and one measurement (rename one of them, "
                "or load only one of the files)")
        return known
    _REGISTRY[claim.id] = claim
    return claim


def _declared_in(claim: Claim) -> str:
    return claim.origin or "code without a file"


def _measured_by(claim: Claim) -> str:
    """Where a claim's measurement is defined, for messages."""
    function = claim.measure
    if function is None:
        return f"none in {_declared_in(claim)}"
    name = getattr(function, "__qualname__", None) or type(function).__name__
    code = getattr(function, "__code__", None)
    line = f", line {code.co_firstlineno}" if isinstance(code, types.CodeType) else ""
    return f"{name} in {source_file(function) or _declared_in(claim)}{line}"


def measures(claim: Claim, data: str) -> Callable[[_M], _M]:
    """Decorator: register ``claim`` with the decorated function as its measurement, reading
    ``data`` (``"words"``, ``"prefixes"`` or ``"texts"``); the function is returned unchanged."""
    def decorate(function: _M) -> _M:
        register(claim, measure=function, data=data)
        return function

    return decorate


def is_builtin(claim: Claim) -> bool:
    """Whether a claim belongs to the built-in catalogue (declared in ``normtest.checks``)."""
    module = getattr(claim.measure, "__module__", None) or ""
    return module == "normtest.checks" or module.startswith("normtest.checks.")


def load_builtin() -> None:
    """Register the built-in claims and every installed plug-in's, once per process.

    Both come through the ``normtest.checks`` entry-point group: normtest declares its own
    (``checks/``, installed as ``normtest.checks``) there, and they load first, so that a
    plug-in's claims come after them.
    """
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    entries = sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP),
                     key=lambda e: (getattr(e.dist, "name", None) != "normtest", e.name))
    if not any(getattr(e.dist, "name", None) == "normtest" for e in entries):
        _LOADED = False
        raise NormtestError(
            "normtest's built-in claims are not registered: the installed package's metadata "
            f"lacks its {ENTRY_POINT_GROUP!r} entry point (an install older than this code); "
            "install it again (pip install -e . in a clone, or pip install -U normtest)")
    for entry in entries:
        try:
            loaded = entry.load()
        except Exception as exc:  # a broken plug-in must not hide the catalogue's own claims
            raise NormtestError(
                f"the installed claims {entry.value!r} (entry point {entry.name!r} of group "
                f"{ENTRY_POINT_GROUP!r}) failed to load: {type(exc).__name__}: {exc}"
            ) from exc
        if callable(loaded) and not isinstance(loaded, type(sys)):
            loaded()  # a function that registers its claims


def claim_ids() -> set[str]:
    """The ids of every claim registered so far (loading none)."""
    return set(_REGISTRY)


def claims(suite: str | None = None) -> list[Claim]:
    """Every registered claim (the built-in catalogue is loaded on first use), in id order."""
    load_builtin()
    if suite is not None and suite != "all" and suite not in SUITES:
        raise NormtestError(f"suite must be one of {(*SUITES, 'all')}, got {suite!r}")
    chosen = [c for c in _REGISTRY.values() if suite in (None, "all") or c.suite == suite]
    return sorted(chosen, key=lambda c: c.id)


def get(claim_id: str) -> Claim:
    """The claim with this id, or an error with a "did you mean"."""
    load_builtin()
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
    if claim.hypothesis is not None:
        lines.append(f"  scorecard:  {_LINES[claim.hypothesis].title}")
    for e in claim.expected:
        who = e.family or "any model"
        named = {**{k: v for k, v in REFERENCE.items() if k in claim.axes}, **e.variant}
        which = variant_key(named, ", ") or "every variant"
        note = f" ({e.note})" if e.note else ""
        lines.append(f"  expected:   {e.verdict.value} for {who}, {which}{note} (confirmatory)")
    if claim.baseline is not None:
        lines.append(f"  baseline:   {claim.baseline_name} (each row also reports ρ(information, "
                     f"{claim.baseline_name}) and is judged beyond it)")
    if claim.notes:
        lines.append(f"  notes:      {claim.notes}")
    return "\n".join(lines)

