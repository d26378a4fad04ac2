"""Comparative claims: claims about the *difference* of an effect between two models.

A :class:`Comparative` is declared like a claim, with :func:`compares` on its measurement: a
function of a :class:`Pair` of two models' reports and a variant (``checks/comparisons.py``).
They are judged by ``normtest compare`` (:mod:`normtest.audit.compare`), which audits both models
on one sample; here is only what a claim file declares and what its measurement reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from normtest.base.settings import AuditSettings
from normtest.claims.catalogue import claims
from normtest.claims.same_measure import same_measure
from normtest.errors import NormtestError
from normtest.verdict.result import Criterion, Measurement, Verdict, variant_key


class ReportData(Protocol):
    """What a comparison reads of a report (:class:`normtest.audit.report.Report`): the model's
    metadata and the data the audit stored."""

    @property
    def model(self) -> Mapping[str, Any]: ...

    @property
    def data(self) -> Mapping[str, Any]: ...


#: The model states a ``state`` composition resolves to, in the order they are looked for.
STATES = ("cls", "eos")


@dataclass(frozen=True)
class PairExpectation:
    """The paper's expected verdict for a pair of architectures (transformers' ``model_type``:
    ``bert``, ``modernbert``, ``llama`` …) and a partial variant."""

    verdict: Verdict
    first: str
    second: str
    variant: Mapping[str, str] = field(default_factory=dict)
    note: str = ""
    #: a stand-in pair for the paper's (the closest real models available): its rows are
    #: exploratory and say which pair they stand for (``note``), never confirmatory
    proxy: bool = False

    def matches(self, first: Mapping[str, Any], second: Mapping[str, Any],
                variant: Mapping[str, str]) -> bool:
        return (first.get("architecture") == self.first
                and second.get("architecture") == self.second
                and all(variant.get(k) == v for k, v in self.variant.items()))


Measure = Callable[["Pair", Mapping[str, str], AuditSettings], Measurement]


@dataclass(frozen=True)
class Comparative:
    """A claim about the difference of an effect between two models (see the module doc).

    ``statement`` may name ``{first}`` and ``{second}``; the criterion judges the difference
    (first − second, in the direction the statement says is better), with the smallest
    difference worth caring about as its threshold.
    """

    id: str
    statement: str
    source: str
    data: str
    statistic: str
    criterion: Criterion
    axes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    expected: tuple[PairExpectation, ...] = ()
    notes: str = ""
    measure: Measure | None = None

    def expectation(self, first: Mapping[str, Any], second: Mapping[str, Any],
                    variant: Mapping[str, str]) -> PairExpectation | None:
        return next((e for e in self.expected if e.matches(first, second, variant)), None)


_REGISTRY: dict[str, Comparative] = {}


def compares(comparative: Comparative) -> Callable[[Measure], Measure]:
    """Decorator: register ``comparative`` with the decorated function as its measurement."""
    if comparative.data not in ("words", "prefixes", "texts"):
        raise NormtestError(f"a comparative claim reads words, prefixes or texts, not "
                            f"{comparative.data!r}")

    def decorate(function: Measure) -> Measure:

        known = _REGISTRY.get(comparative.id)
        if known is not None and (replace(known, measure=None) != comparative
                                  or not same_measure(known.measure, function)):
            raise NormtestError(f"comparative claim {comparative.id!r} is declared twice, "
                                "differently; ids must be unique (rename one of them)")
        if known is None:
            _REGISTRY[comparative.id] = replace(comparative, measure=function)
        return function

    return decorate


def comparatives() -> list[Comparative]:
    """Every comparative claim: the built-in ones (``normtest.checks.comparisons``) and any a
    loaded claim file declared."""

    claims()  # loads the built-in catalogue, comparisons included
    return list(_REGISTRY.values())


def get_comparative(claim_id: str) -> Comparative:
    known = {c.id: c for c in comparatives()}
    if claim_id not in known:
        raise NormtestError(f"no comparative claim {claim_id!r}; the comparative claims are "
                            f"{', '.join(sorted(known))}")
    return known[claim_id]


# -- pairing two reports ---------------------------------------------------------------------
@dataclass(frozen=True)
class Pair:
    """Two models' reports, and their data paired item by item."""

    first: ReportData
    second: ReportData

    def missing(self, data: str) -> str | None:
        """Why this pair cannot be compared on ``data`` (None: it can)."""
        for report in (self.first, self.second):
            name = report.model.get("name")
            if data not in report.data:
                return (f"{name}'s report has no {data} data (audit it on the claims that read "
                        f"{data}: normtest compare runs them)")
            if data == "texts" and not report.data["texts"].get("sentences"):
                return (f"{name}'s report does not identify its sentences (written by an older "
                        "normtest); audit it again to pair its sentences")
            if data == "prefixes" and report.data["prefixes"].get("unit") != "words":
                return (f"{name}'s prefixes are on a grid of model tokens; comparing growth "
                        "needs the same word grid for both (audit with --prefix-unit words, "
                        "as normtest compare does)")
        return None

    def paired(self, data: str) -> int:
        """How many items of ``data`` the two reports share: the words both models kept, the
        documents both read, the sentences both encoded (what the rows are paired on)."""
        blocks = [r.data.get(data) for r in (self.first, self.second)]
        field_of = {"words": "words", "prefixes": "documents", "texts": "sentences"}
        items = [set(b.get(field_of[data]) or ()) if isinstance(b, Mapping) else set()
                 for b in blocks]
        return len(items[0] & items[1])

    def state(self, report: ReportData, data: str) -> str | None:
        """The model state (``cls`` / ``eos``) whose vectors the report holds for ``data``."""
        keys = self._series(report, data)
        return next((s for s in STATES if any(f"composition={s}," in k + "," for k in keys)),
                    None)

    def compositions(self, data: str, declared: Sequence[str]) -> tuple[str, ...]:
        """The declared compositions both reports hold (``state``: both have one)."""
        out = []
        for c in declared:
            if c == "state":
                if self.state(self.first, data) and self.state(self.second, data):
                    out.append(c)
            elif all(self._lookup(r, data, {"composition": c, "representation": "last",
                                             "transform": "raw"}, strict=False) is not None
                     for r in (self.first, self.second)):
                out.append(c)
        return tuple(out)

    @staticmethod
    def _series(report: ReportData, data: str) -> Mapping[str, Any]:
        block = report.data.get(data, {})
        return block.get("curves" if data == "prefixes" else "squared_norms", {})

    def _lookup(self, report: ReportData, data: str, variant: Mapping[str, str],
                strict: bool = True) -> Any:
        """The stored series of one variant at the last layer: the model's own keys (a sentence
        encoder's have no representation; a whole-word model's one vector stands for every
        composition)."""
        series = self._series(report, data)
        wanted = {"representation": "last", **variant}
        if wanted.get("composition") == "state":
            wanted["composition"] = self.state(report, data) or "state"
        axes = ("composition", "representation") if data != "words" else \
            ("composition", "representation", "transform")
        full = {k: wanted[k] for k in axes if k in wanted}
        candidates = [variant_key(full),
                      variant_key({k: v for k, v in full.items() if k != "representation"})]
        if report.model.get("family") == "static":
            candidates.append(variant_key({k: v for k, v in full.items() if k == "transform"}))
        found = next((series[k] for k in candidates if k in series), None)
        if found is None and strict:
            raise NormtestError(f"{report.model.get('name')}'s report holds no {data} series "
                                f"for {variant_key(variant)}")
        return found

    def curves(self, variant: Mapping[str, str]) -> tuple[np.ndarray, ...]:
        """(word lengths, s_first, s_second, document) of the prefixes both models read."""
        rows = []
        for report in (self.first, self.second):
            block = report.data["prefixes"]
            curve = self._lookup(report, "prefixes", variant)
            docs = [block["documents"][i] for i in curve["document"]]
            rows.append({(d, int(n)): float(v) for d, n, v in
                         zip(docs, curve["lengths"], curve["squared_norms"], strict=True)})
        shared = sorted(set(rows[0]) & set(rows[1]))
        codes = {d: i for i, d in enumerate(sorted({d for d, _ in shared}))}
        return (np.array([n for _, n in shared], dtype=np.float64),
                np.array([rows[0][k] for k in shared]), np.array([rows[1][k] for k in shared]),
                np.array([codes[d] for d, _ in shared], dtype=np.intp))

    def texts(self, variant: Mapping[str, str]) -> tuple[np.ndarray, ...]:
        """(IC_first, ‖e‖²_first, IC_second, ‖e‖²_second, document) of the shared sentences."""
        sides = []
        for report in (self.first, self.second):
            block = report.data["texts"]
            values = self._lookup(report, "texts", variant)
            ids = block["sentences"]
            sides.append({s: (float(ic), float(v), int(d)) for s, ic, v, d in
                          zip(ids, block["information"], values, block["document"],
                              strict=True)})
        shared = [s for s in sides[0] if s in sides[1]]
        return (np.array([sides[0][s][0] for s in shared]),
                np.array([sides[0][s][1] for s in shared]),
                np.array([sides[1][s][0] for s in shared]),
                np.array([sides[1][s][1] for s in shared]),
                np.array([sides[0][s][2] for s in shared], dtype=np.intp))

    def words(self, variant: Mapping[str, str]) -> tuple[np.ndarray, ...]:
        """(IC, ‖e‖²_first, ‖e‖²_second) of the words both models kept (IC of the first)."""
        sides = []
        for report in (self.first, self.second):
            block = report.data["words"]
            values = self._lookup(report, "words", variant)
            sides.append({w: (float(ic), float(v)) for w, ic, v in
                          zip(block["words"], block["information"], values, strict=True)})
        shared = [w for w in sides[0] if w in sides[1]]
        if not np.allclose([sides[0][w][0] for w in shared], [sides[1][w][0] for w in shared],
                           rtol=1e-4, atol=1e-6):
            raise NormtestError("the two reports give their words different IC (another "
                                "frequency source or corpus); audit both with the same one")
        return (np.array([sides[0][w][0] for w in shared]),
                np.array([sides[0][w][1] for w in shared]),
                np.array([sides[1][w][1] for w in shared]))
