"""Comparisons between models: claims about the *difference* of an effect, paired on one sample.

A single-model audit cannot test "ModernBERT's CLS grows closer to linearly than BERT's" or "is
model B better than model A on this claim, beyond noise?". A comparison audits every model on
the same sample — the same words, the same sentences, the same documents with prefixes on a
*word* grid (``prefix_unit = words``: the k-word prefix of a document is the same text for every
tokenizer; each model reads it as its own tokens, reported) — and then judges comparative claims
on pairs of the models' reports:

- a :class:`Comparative` is declared like a claim (id, statement, source, statistic, criterion
  on the difference, variant axes, the paper's expectation for a pair of architectures) with
  :func:`compares` on its measurement, a function of a :class:`Pair` of reports and a variant;
- its rows are ordinary :class:`~normtest.verdict.result.Result` rows, judged against a *minimum
  difference* (never a test against zero), confirmatory where the paper states an expectation
  for the pair's architectures and exploratory otherwise, adjusted like an audit's rows (Holm
  over the confirmatory rows, Benjamini–Hochberg over the rest);
- everything is computed from the reports' stored data (``report.json``), so stored audits can
  be compared again without the models.

The composition value ``state`` stands for each model's own non-compositional state (``cls`` for
an encoder, ``eos`` for a decoder), so that BERT's CLS and LLaMA's EOS can be compared.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from normtest.audit.report import Report
from normtest.audit.run import run_audit
from normtest.audit.samples import (
    check_same_sample,
    model_key,
    one_model,
    planned_identity,
    sample_identity,
)
from normtest.base.paths import atomic_write, published
from normtest.base.settings import AuditSettings
from normtest.claims.catalogue import claims
from normtest.claims.comparative import Comparative, Pair, comparatives, get_comparative
from normtest.errors import NormtestError
from normtest.models.registry import load
from normtest.stats.multiplicity import adjust_audit
from normtest.verdict.measurement import invalid
from normtest.verdict.result import Result, Verdict

__all__ = ["SCHEMA", "Comparison", "audit_claims", "check_same_sample", "compare_models",
           "compare_reports", "planned_identity", "sample_identity"]

SCHEMA = "normtest.comparison/1"


# -- the comparison -------------------------------------------------------------------------
@dataclass
class Comparison:
    """The outcome of comparing models: each model's report and the comparative rows."""

    reports: list[Report]
    results: list[Result]
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def models(self) -> list[dict[str, Any]]:
        return [dict(r.model) for r in self.reports]

    def result(self, result_id: str) -> Result:
        """One row by its id (``compare.cer.linearity[first=A,second=B,composition=state]``)."""
        for r in self.results:
            if r.id == result_id:
                return r
        raise NormtestError(f"no comparison row {result_id!r}; rows: "
                            + ", ".join(r.id for r in self.results[:8])
                            + (" …" if len(self.results) > 8 else ""))

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "models": self.models,
                "results": [r.to_dict() for r in self.results],
                "provenance": self.provenance,
                "reports": [r.to_dict() for r in self.reports]}

    def to_json(self) -> str:
        """The comparison as strict JSON (schema ``normtest.comparison/1``)."""
        return json.dumps(self.to_dict(), indent=1, allow_nan=False) + "\n"

    def write(self, path: str | Path) -> Path:
        """Write ``comparison.json`` whole or not at all (a temporary file renamed into place)."""

        target = Path(path)
        text = self.to_json()
        try:
            atomic_write(target, published(text))
        except OSError as exc:
            raise NormtestError(f"cannot write {target}: {exc.strerror}") from exc
        return target

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Comparison:
        schema = data.get("schema") if isinstance(data, Mapping) else None
        if schema != SCHEMA:
            raise NormtestError(f"not a normtest comparison (schema {schema!r}, expected "
                                f"{SCHEMA!r})")
        return cls([Report.from_dict(r) for r in data.get("reports", [])],
                   [Result.from_dict(r) for r in data.get("results", [])],
                   dict(data.get("provenance", {})))

    @classmethod
    def read(cls, path: str | Path) -> Comparison:
        try:
            return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise NormtestError(f"cannot read the comparison {path}: {exc}") from exc


def _names(reports: Sequence[Report]) -> list[str]:
    """Each model's name, made unique with #2, #3 … where two share one."""
    names = [str(r.model.get("name") or "model") for r in reports]
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if names.count(n) == 1 else f"{n}#{seen[n]}")
    return out


def compare_reports(reports: Sequence[Report], claim_ids: Iterable[str] | None = None,
                    settings: AuditSettings | None = None,
                    origins: Sequence[str] | None = None) -> Comparison:
    """Judge the comparative claims on every pair of ``reports`` (in the order given: each
    earlier model is ``first`` against each later one). Holm over the confirmatory rows,
    Benjamini–Hochberg over the exploratory ones, as in an audit.

    Only reports of one sample are compared (:func:`check_same_sample`; ``origins`` names
    each report in its errors: a path, ``--model NAME``). A pair that is one model twice (same
    name and revision, or the same stored vectors: :func:`one_model`) gets no rows — its
    difference is zero by construction — and is listed
    under ``provenance["same_model"]``; when every pair is one, the comparison is refused.
    """

    if len(reports) < 2:
        raise NormtestError("a comparison needs two models or more (--model A --model B)")
    settings = settings or AuditSettings()
    if claim_ids:
        chosen = [get_comparative(i) for i in claim_ids]
    else:  # every comparative claim whose data two of the reports hold (a pair lacking them
        # gets a SKIPPED row that says so: GloVe has no prefixes beside four contextual models)
        chosen = [c for c in comparatives() if sum(c.data in r.data for r in reports) >= 2]
        if not chosen:
            raise NormtestError("the reports hold none of the data the comparative claims read "
                                "(word, prefix or text series); audit the models on the word, "
                                "cer or text claims")
    names = _names(reports)
    labels = _labels(names, origins)
    kinds = list(dict.fromkeys(c.data for c in chosen))
    check_same_sample([sample_identity(r, [k for k in kinds if k in r.data]) for r in reports],
                      labels, [model_key(r) for r in reports])
    rows: list[Result] = []
    same: list[list[str]] = []
    paired: list[dict[str, Any]] = []
    for (i, a), (j, b) in itertools.combinations(enumerate(reports), 2):
        if one_model(a, b, kinds):
            same.append([names[i], names[j]])
            continue
        pair = Pair(a, b)
        counts = {k: pair.paired(k) for k in kinds if k in a.data and k in b.data}
        paired.append({"first": names[i], "second": names[j], **counts})
        for claim in chosen:
            rows.extend(_measure(claim, pair, names[i], names[j], settings))
    if not rows and same:
        i, j = (names.index(n) for n in same[0])
        why = (f"{reports[i].model.get('name')}, same revision"
               if model_key(reports[i]) == model_key(reports[j]) else "the same vectors")
        raise NormtestError(
            f"{labels[i]} and {labels[j]} are the same model ({why}) on the same sample: its "
            "difference with itself is zero by construction, so there is nothing to compare; "
            "compare it with another model or another revision")
    if not rows:
        raise NormtestError("no comparative claim was selected")
    if all(r.verdict in (Verdict.SKIPPED, Verdict.ERROR) for r in rows):
        from normtest.errors import nothing_ran

        raise nothing_ran(" vs ".join(names), [(r.id, r.reason) for r in rows])
    provenance = {"seed": settings.seed, "resamples": settings.resamples,
                  "alpha": settings.alpha, "models": names,
                  "prefix_unit": "words", "multiplicity": {
                      "confirmatory": "holm", "exploratory": "benjamini-hochberg"},
                  "sample": sample_identity(reports[0], [k for k in kinds
                                                         if k in reports[0].data]),
                  "paired": paired, "same_model": same}
    return Comparison(list(reports), adjust_audit(rows), provenance)


def _labels(names: Sequence[str], origins: Sequence[str] | None) -> list[str]:
    """Each model's name, with where it came from when known: ``glove (a/report.json)``."""
    if origins is None or len(origins) != len(names):
        return list(names)
    return [f"{n} ({o})" for n, o in zip(names, origins, strict=True)]


def _measure(claim: Comparative, pair: Pair, first: str, second: str,
             settings: AuditSettings) -> list[Result]:
    criterion = claim.criterion.with_alpha(settings.alpha)
    base = {"first": first, "second": second}
    reason = pair.missing(claim.data)
    compositions = claim.axes.get("composition")
    if reason is None and compositions is not None:
        compositions = pair.compositions(claim.data, compositions)
        if not compositions:
            reason = (f"{first} and {second} share none of its compositions "
                      f"({', '.join(claim.axes['composition'])})")
    if reason is not None:
        return [Result(Verdict.SKIPPED, reason, claim=claim.id, variant=base,
                       criterion=claim.criterion)]
    axes = {**claim.axes, **({"composition": compositions} if compositions else {})}
    out = []
    for combo in itertools.product(*axes.values()):
        variant = dict(zip(axes, combo, strict=True))
        stated = claim.expectation(pair.first.model, pair.second.model, variant)
        proxy = stated is not None and stated.proxy
        confirmatory = stated is not None and not proxy
        row: dict[str, Any] = dict(claim=claim.id, variant={**base, **variant},
                                   expected=stated.verdict if confirmatory and stated else None,
                                   role="confirmatory" if confirmatory else "exploratory")
        assert claim.measure is not None
        try:
            measurement = claim.measure(pair, variant, settings)
        except NormtestError as exc:
            out.append(Result(Verdict.ERROR, str(exc), criterion=claim.criterion, **row))
            continue
        except (ValueError, KeyError, IndexError, TypeError) as exc:  # a damaged report
            out.append(Result(Verdict.ERROR, f"the reports' {claim.data} data do not fit "
                              f"together ({type(exc).__name__}: {exc}); audit the models again",
                              criterion=claim.criterion, **row))
            continue
        except Exception as exc:
            if _builtin(claim):
                raise  # a defect of normtest itself: let it surface
            out.append(Result(Verdict.ERROR, f"the measurement of {claim.id} raised "
                              f"{type(exc).__name__}: {exc}", criterion=claim.criterion, **row))
            continue
        problem = None if _builtin(claim) else invalid(measurement, criterion.components)
        if problem is not None:  # a user's measurement is checked before it is judged
            out.append(Result(Verdict.ERROR, f"the measurement of {claim.id} is invalid: "
                              f"{problem}", criterion=claim.criterion, **row))
            continue
        judged = Result.judged(measurement, criterion)
        details = {"statement": claim.statement.format(first=first, second=second)}
        if proxy and stated is not None:
            details["proxy"] = stated.note
        if "composition" in variant and variant["composition"] == "state":
            details["states"] = (f"{pair.state(pair.first, claim.data)} vs "
                                 f"{pair.state(pair.second, claim.data)}")
        out.append(replace(judged, details=details, **row))
    return out


def _builtin(claim: Comparative) -> bool:
    module = getattr(claim.measure, "__module__", None) or ""
    return module == "normtest.checks" or module.startswith("normtest.checks.")


def audit_claims(claim_ids: Iterable[str] | None = None, suite: str = "all") -> list[str]:
    """The audit claims whose data the chosen comparative claims read (within ``suite``)."""

    chosen = [get_comparative(i) for i in claim_ids] if claim_ids else comparatives()
    kinds = {c.data for c in chosen}
    return [c.id for c in claims(suite) if c.data in kinds]


#: The sample settings a model audited beside stored reports takes from them (unless given).
ADOPTED = ("seed", "words", "documents", "sentences", "corpus")


def adopted_sample(stored: Iterable[Report]) -> dict[str, Any]:
    """The sample settings recorded by the first of ``stored`` that records them
    (``provenance["sample"]``): a model audited beside stored reports draws their sample, so
    that its items pair with theirs."""
    recorded = next((r.provenance.get("sample") for r in stored
                     if isinstance(r.provenance.get("sample"), Mapping)), None) or {}
    return {k: (tuple(v) if isinstance(v, list) else v) for k, v in recorded.items()
            if k in ADOPTED and v is not None}


def compare_models(models: Sequence[Any], claim_ids: Iterable[str] | None = None,
                   suite: str = "all", settings: AuditSettings | None = None,
                   stored: Sequence[Report] = (),
                   origins: Sequence[str] | None = None) -> Comparison:
    """Audit each model (a name, path or adapter) on the same sample, prefixes on a word grid,
    and judge the comparative claims on every pair (the Python form of ``normtest compare``).
    ``stored``: reports placed first, not audited again (give ``settings`` their sample:
    :func:`adopted_sample`); ``origins`` names every report in errors.

    For example, in a test::

        comparison = compare_models(["minilm-l6", "smollm2-135m"],
                                    ["compare.cer.linearity"], suite="cer")
        row = comparison.result(
            "compare.cer.linearity[first=minilm-l6,second=smollm2-135m,composition=state]")
        assert row.verdict is not Verdict.FAIL, row.reason
    """

    chosen = list(claim_ids) if claim_ids else None
    base = replace(settings or AuditSettings(), prefix_unit="words")
    audit = audit_claims(chosen, suite)
    if not audit:
        raise NormtestError(f"no claim of suite {suite!r} reads the data the comparative claims "
                            "need; use --suite all")
    if stored and models:  # a sample the stored reports do not share is refused before auditing
        kinds = list(dict.fromkeys(c.data for c in ([get_comparative(i) for i in chosen]
                                                    if chosen else comparatives())))
        check_same_sample([*(sample_identity(r, [k for k in kinds if k in r.data])
                             for r in stored), planned_identity(base, kinds)],
                          [*(origins or [str(r.model.get("name")) for r in stored])[:len(stored)],
                           "the models to audit"])
    reports = [*stored, *(run_audit(load(m) if isinstance(m, (str, Path)) else m,
                                    claim_ids=audit, settings=base) for m in models)]
    return compare_reports(reports, chosen, base, origins)
