"""The audit runner: plan the claims a model can be checked on, measure once, judge, adjust.

One audit is one pass through the stages (docs/architecture.md): the adapter gives vectors; the
data stage (:mod:`normtest.data`) builds the data each claim's measurement asks for, once, and
shares it; each registered claim's measurement returns a
:class:`~normtest.verdict.measurement.Measurement`; its criterion judges it, once. Each row is
confirmatory (the paper states an expectation for it) or exploratory; Holm adjusts over the audit's
confirmatory rows and Benjamini–Hochberg over its exploratory rows. The outcome is one
:class:`~normtest.audit.report.Report`, headed by its scorecard (:mod:`normtest.scorecard.lines`).

The runner knows no claim by id: it runs whatever the catalogue holds (the built-in claims of
``checks/`` and any loaded with ``--checks``). A claim the model cannot be checked on (no subword
tokens, no prefixes) is listed as SKIPPED with the reason, never run and never counted as passing.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from normtest.adapters.protocol import (
    ModelAdapter,
    adapter_info,
    optional_method,
    supports,
)
from normtest.audit.report import (
    MAX_MISSING_VECTORS,
    AuditProvenance,
    Report,
    sample_settings,
)
from normtest.audit.selection import selected_claims
from normtest.base import progress
from normtest.base.parallel import forked_map, worker_count
from normtest.base.settings import AuditSettings
from normtest.claims.catalogue import Claim, claims, get
from normtest.claims.measuring import merge_identical, remeasure
from normtest.data.common import profiled
from normtest.data.kinds import AuditData
from normtest.errors import NormtestError, nothing_ran
from normtest.models.cache import rates
from normtest.models.cache.adapter import computed_items
from normtest.scorecard.power import annotate
from normtest.stats.multiplicity import METHOD_OF_ROLE, adjust_audit, tested
from normtest.verdict.result import Result, Verdict, variant_key

__all__ = ["SCOPES", "AuditSettings", "applicable_axes", "plot_data",
           "run_audit", "skip_reason", "variant_key", "variants"]

#: Data that only a contextual model can give (a whole-word model has no composition axis).
CONTEXTUAL_DATA = ("prefixes", "texts")


#: Variant scopes: the values each axis keeps (an axis not named keeps all its values).
#: ``standard`` is the model's output (last layer) under the raw geometry, Zipfian centring and
#: Zipfian whitening — the transforms the paper and its companions discuss — with every
#: composition; ``full`` adds the input embedding rows and the uniform-weight transforms.
SCOPES: dict[str, dict[str, tuple[str, ...]]] = {
    "standard": {"representation": ("last",),
                 "transform": ("raw", "center_zipf", "whiten_zipf")},
    "full": {},
}


def applicable_axes(claim: Claim, family: str, states: Sequence[str] = (),
                    scope: str = "full", representations: Sequence[str] | None = None,
                    ) -> dict[str, tuple[str, ...]]:
    """The claim's variant axes that apply to a model family, its special states and a scope.

    Whole-word (static) models have no subword composition and one representation; the model
    states ``cls``/``eos`` apply only where the model produces them. A sentence encoder has one
    representation and one composition, its own pooling (its ``states``, e.g. ``("mean",)``).
    ``representations`` (a layer profile, :meth:`AuditSettings.representations`) replaces the
    representation axis of the claims that have one.
    """
    if scope not in SCOPES:
        raise NormtestError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
    axes = {name: tuple(v for v in values if v in SCOPES[scope].get(name, values))
            for name, values in claim.axes.items()}
    if family == "static":
        axes.pop("composition", None)
        axes.pop("representation", None)
    elif family == "sentence":
        axes.pop("representation", None)
        if "composition" in axes:
            axes["composition"] = tuple(states[:1]) or ("pooled",)
    else:
        if "composition" in axes:
            axes["composition"] = tuple(c for c in axes["composition"]
                                        if c not in ("cls", "eos") or c in states)
        if representations is not None and "representation" in axes:
            axes["representation"] = tuple(representations)
    return axes


def variants(claim: Claim, family: str, states: Sequence[str] = (),
             scope: str = "full", representations: Sequence[str] | None = None,
             ) -> list[dict[str, str]]:
    """Every variant of a claim for a model family (the product of its applicable axes)."""
    axes = applicable_axes(claim, family, states, scope, representations)
    names = list(axes)
    return [dict(zip(names, combo, strict=True))
            for combo in itertools.product(*(axes[n] for n in names))]


def skip_reason(claim: Claim, adapter: ModelAdapter) -> str | None:
    """Why the audit cannot run ``claim`` on ``adapter`` (None: it can)."""
    if claim.measure is None or claim.data is None:
        return ("the claim is declared without a measurement; declare it with "
                "normtest.claims.catalogue.measures (docs/claims.md)")
    if claim.needs and not any(all(supports(adapter, c) for c in option)
                               for option in claim.needs):
        return f"the model lacks the capabilities it needs ({claim.needs_text()})"
    info = adapter_info(adapter)
    if claim.data in CONTEXTUAL_DATA and info.family == "static":
        return ("whole-word (static) vectors have no composition axis in this version; the text "
                "and prefix claims need a contextual model")
    if claim.data in ("words", "prefixes") and info.own_texts is not None:
        return ("the model's vectors cover only its own texts (precomputed text vectors); the "
                "word and prefix claims need vectors of any word or prefix")
    return None


def run_audit(
    adapter: ModelAdapter,
    claim_ids: Iterable[str] | None = None,
    suite: str = "all",
    settings: AuditSettings | None = None,
    words: Sequence[str] | None = None,
    source: Any | None = None,
) -> Report:
    """Audit ``adapter`` on the chosen claims and return one report (each scorecard line's
    confirmatory rows by the line's rule, Benjamini–Hochberg over the exploratory rows).

    ``words`` replaces the default word sample; ``source`` the default frequency source.
    A run in which no claim could run raises NormtestError (never an empty green report).
    """
    from threadpoolctl import threadpool_limits

    # numpy's BLAS threads and torch's OpenMP threads spin against each other in one process:
    # a 1000×384 SVD took 4.6 s after a forward pass instead of 0.12 s on one BLAS thread.
    with threadpool_limits(limits=1, user_api="blas"):
        try:
            return _run_audit(adapter, claim_ids, suite, settings or AuditSettings(), words,
                              source)
        finally:
            keep = optional_method(adapter, "keep_layers")
            if settings is not None and settings.layers is not None and keep is not None:
                keep(())  # a layer profile's kept states are freed with the audit


def _run_audit(adapter: ModelAdapter, claim_ids: Iterable[str] | None, suite: str,
               settings: AuditSettings, words: Sequence[str] | None,
               source: Any | None) -> Report:
    started = time.perf_counter()
    info = adapter_info(adapter)
    family = info.family
    chosen = [get(i) for i in selected_claims(claim_ids)] if claim_ids else claims(suite)
    encoding = None
    if settings.corpus:  # a corpus in another encoding is refused before any work
        from normtest.data.information.corpus import corpus_encoding

        encoding = corpus_encoding(list(settings.corpus))
    if settings.executor == "ray":  # the cache's misses are computed by Ray actors
        from normtest.models.ray import enable

        enable(adapter, settings.workers, settings.ray_address)
    states = info.states
    layers = profile_layers(adapter, family, settings)
    skipped = {c.id: skip_reason(c, adapter) for c in chosen}
    planned = {c.id: variants(c, family, states, settings.scope, layers) for c in chosen
               if skipped[c.id] is None}
    sizing = None
    if settings.autosize:  # before the model's geometry is read: it costs no α
        from normtest.audit.sizing import size_audit

        settings, sizing = size_audit(adapter, settings, family, chosen, planned, words,
                                      source)
    data = AuditData(adapter, settings, family, words, source)
    results: list[Result] = []
    # every pooling of the prefix claims, computed together (one pass; one job on Ray)
    data.prefix_poolings = tuple(dict.fromkeys(
        v["composition"] for c in chosen if c.id in planned and c.data == "prefixes"
        for v in planned[c.id]))
    total = sum(len(v) for v in planned.values())
    # the wall seconds each kind of data took to build and measure: what a larger sample of
    # that kind would cost again (normtest.audit.next_steps estimates a rerun from it)
    by_kind: dict[str, float] = {}
    fresh: dict[str, int] = {}  # items each kind computed (not read from the cache)
    with progress.task("measuring claims", total=total, unit="rows") as bar:
        spread = worker_count(settings.workers, total) > 1
        measured = measure_spread(chosen, planned, data, family, bar, by_kind, fresh) \
            if spread else {}
        for claim in chosen:
            reason = skipped[claim.id]
            if reason is not None:
                results.append(Result(Verdict.SKIPPED, reason, claim=claim.id,
                                      criterion=claim.criterion, hypothesis=claim.hypothesis))
            elif spread:
                results.extend(merge_identical(measured[claim.id]))
            else:
                bar.describe(f"measuring {claim.id}")
                begun, before = time.perf_counter(), computed_items()
                results.extend(measure_claim(claim, data, family, states, bar, layers))
                _spent(by_kind, str(claim.data), time.perf_counter() - begun)
                fresh[str(claim.data)] = fresh.get(str(claim.data), 0) + computed_items() - before
    results = annotate(adjust_audit(results), settings)
    ran = [r for r in results if r.verdict not in (Verdict.SKIPPED, Verdict.ERROR)]
    if not ran:
        raise nothing_ran(adapter.name, [(str(r.claim), r.reason) for r in results])
    model = {"name": info.name, "revision": info.revision, "family": str(family),
             "dim": info.dim}
    if info.architecture is not None:  # transformers' model_type: bert, modernbert, llama …
        model["architecture"] = info.architecture
    if info.device is not None:  # where it ran: --device auto picks CUDA where available
        model["device"] = info.device
    built = data.built()
    said: dict[str, Any] = {}
    for made in built.values():
        said.update(made.provenance(settings))
    if "words" in built:
        results = describe_population(results, data.word(),
                                      {c.id for c in chosen if c.data == "words"})
    record = AuditProvenance(
        seed=settings.seed, resamples=settings.resamples, alpha=settings.alpha, data=said,
        sample=sample_settings(settings), scope=settings.scope, profile=settings.profile,
        multiplicity={role: {"method": method, "rows": tested(results, role)}
                      for role, method in METHOD_OF_ROLE.items()},
        corpus=tuple(settings.corpus),
        corpus_bytes=None if encoding is None else (encoding.n_bytes, encoding.n_replaced_bytes),
        layers=layers, n_layers=None if layers is None else int(cast(Any, adapter).n_layers),
        prefix_unit=None if settings.prefix_unit == "tokens" else settings.prefix_unit,
        sizing=None if sizing is None else sizing.to_dict())
    robustness: list[Any] = []
    if settings.robustness:
        from normtest.scorecard.robustness import assess

        robustness = assess(results, data, family, source)
    checked: list[Any] = []
    if settings.controls:
        from normtest.audit.design_store import DesignStore
        from normtest.scorecard.controls import assess as assess_controls

        checked = assess_controls(results, data, family, kept=DesignStore.of(
            adapter, settings, family, words=words, source=source))
    per_unit = _rates(info.name, by_kind, fresh, said)
    record = replace(record, seconds={"total": round(time.perf_counter() - started, 2),
                                      **{k: round(v, 2) for k, v in by_kind.items()},
                                      **({"per_unit": per_unit} if per_unit else {})})
    return Report(results=results, model=model,
                  provenance=record.to_dict(),
                  data=plot_data(data, results), robustness=tuple(robustness),
                  controls=tuple(checked))


def describe_population(results: Sequence[Result], word: Any,
                        claim_ids: set[str]) -> list[Result]:
    """The rows of the word claims, each saying which population its estimate describes when
    the model lacks vectors for more than a tenth of the sample (``details["population"]``)."""
    missing = word.dropped.get("no vector", 0)
    if missing <= MAX_MISSING_VECTORS * word.requested:
        return list(results)
    kept = len(word.words)
    population = (f"the {kept:,} of {word.requested:,} sample words the model has a vector for "
                  f"({kept / word.requested:.0%}); {missing:,} had none")
    return [replace(r, details={**r.details, "population": population})
            if r.claim in claim_ids and r.measurement is not None else r for r in results]


def profile_layers(adapter: ModelAdapter, family: str,
                   settings: AuditSettings) -> tuple[str, ...] | None:
    """The representations of a layer profile (``--layers``) for this model, or None.

    Every layer's vectors come from the same forward passes: the adapter is told which layers
    the audit will ask for (``profile_layers``), keeps the others of each pass, and serves them
    from memory when they are asked for.
    """
    if settings.layers is None:
        return None
    if family not in ("encoder", "decoder"):
        raise NormtestError(
            f"--layers profiles a transformers encoder or decoder; {adapter.name} is a "
            f"{family} model with one representation"
        )
    names = settings.representations(adapter_info(adapter).n_layers)
    assert names is not None
    hidden = tuple(int(n) for n in names if n.isdigit())
    keep = optional_method(adapter, "keep_layers")
    if keep is not None:
        keep((*hidden, "last") if hidden else ())
    return names


def measure_claim(claim: Claim, data: AuditData, family: str, states: Sequence[str],
                  bar: progress.Bar | None = None,
                  representations: Sequence[str] | None = None) -> list[Result]:
    """Every variant of one claim measured and judged (not yet adjusted); a variant whose data
    cannot be had is an ERROR row with the reason. ``bar`` advances by one per variant."""
    settings = data.settings
    assert claim.measure is not None and claim.data is not None
    out: list[Result] = []
    for variant in variants(claim, family, states, settings.scope, representations):
        if bar is not None and out:
            bar.update(1)
        out.append(measure_variant(claim, data, family, variant))
    if bar is not None and out:
        bar.update(1)
    return merge_identical(out)


def measure_variant(claim: Claim, data: AuditData, family: str,
                    variant: Mapping[str, str]) -> Result:
    """One row: a variant of a claim measured and judged (not yet adjusted), with what the
    claim says of it (its reading, expectation, role and line)."""
    assert claim.data is not None
    return remeasure(claim, data.get(claim.data), variant, data.settings, family=family)


def _spent(by_kind: dict[str, float], kind: str, seconds: float) -> None:
    by_kind[kind] = by_kind.get(kind, 0.0) + seconds


def _rates(model: str, by_kind: dict[str, float], fresh: dict[str, int],
           sizes: Mapping[str, Any]) -> dict[str, float]:
    """Seconds per unit of each kind this audit made fresh (at least one computed item per unit
    of its sample: its time is the making's), recorded for later estimates; the others' rates
    as last recorded on this machine."""
    out: dict[str, float] = {}
    for kind, unit in rates.UNIT_OF_KIND.items():
        units = sizes.get(unit)
        if kind not in by_kind or not isinstance(units, int) or units <= 0:
            continue
        if fresh.get(kind, 0) >= rates.FRESH * units:
            rates.record(model, kind, by_kind[kind], units)
            out[kind] = round(by_kind[kind] / units, 5)
        elif (known := rates.rate(model, kind)) is not None:
            out[kind] = round(known, 5)
    return out


def measure_spread(chosen: Sequence[Claim], planned: Mapping[str, Sequence[Mapping[str, str]]],
                   data: AuditData, family: str, bar: progress.Bar,
                   seconds: dict[str, float] | None = None,
                   fresh: dict[str, int] | None = None) -> dict[str, list[Result]]:
    """Every planned row, measured over the audit's ``--workers`` (forked processes,
    :mod:`normtest.base.parallel`), by claim in variant order (not merged).

    A row's measurement reads data it shares with others (the vectors of a variant, the
    co-occurring pairs, a transform's fit). So that no process makes those again, and no
    forward pass runs twice, this process first makes the vectors of every planned variant
    (each kind's ``prepare``) and measures the first row of each claim (what that claim's rows
    share); the other rows, independent of each other, are then spread. The numbers are the
    same as in one process: every draw is seeded by the settings. ``seconds`` receives the
    wall seconds of each kind of data (its preparation, its first rows, and its share of the
    spread rows' time), ``fresh`` how many items each kind computed in this process.
    """
    spent: dict[str, float] = {} if seconds is None else seconds
    made: dict[str, int] = {} if fresh is None else fresh

    def counted(kind: str, before: int) -> None:
        made[kind] = made.get(kind, 0) + computed_items() - before

    todo = [c for c in chosen if c.id in planned]
    by_kind: dict[str, list[Mapping[str, str]]] = {}
    for claim in todo:
        by_kind.setdefault(str(claim.data), []).extend(planned[claim.id])
    for kind, kind_variants in by_kind.items():
        bar.describe(f"preparing the {kind}")
        begun, before = time.perf_counter(), computed_items()
        try:
            built = data.get(kind)
        except NormtestError:  # the rows that read it say why
            continue
        built.prepare(kind_variants, worker_count(data.settings.workers, len(kind_variants)))
        _spent(spent, kind, time.perf_counter() - begun)
        counted(kind, before)
    if spread_by_claims(data.settings, len(todo)):
        return _measure_by_claims(todo, planned, data, family, bar, spent)
    out: dict[str, list[Result]] = {}
    for claim in todo:
        if planned[claim.id]:
            bar.describe(f"measuring {claim.id}")
            begun, before = time.perf_counter(), computed_items()
            out[claim.id] = [measure_variant(claim, data, family, planned[claim.id][0])]
            _spent(spent, str(claim.data), time.perf_counter() - begun)
            counted(str(claim.data), before)
            bar.update(1)
    rest = [(claim, variant) for claim in todo for variant in planned[claim.id][1:]]
    bar.describe("measuring the claims' other rows")

    def timed(job: tuple[Claim, Mapping[str, str]]) -> tuple[Result, float]:
        begun = time.perf_counter()
        return measure_variant(job[0], data, family, job[1]), time.perf_counter() - begun

    # a claim's rows together: they share draws and what is derived from them
    begun = time.perf_counter()
    rows = forked_map(timed, rest, data.settings.workers, done=lambda _: bar.update(1),
                      chunksize=max(1, len(rest) // (4 * max(1, len(todo)))))
    _share_wall(spent, time.perf_counter() - begun,
                [(str(claim.data), took) for (claim, _), (_, took) in zip(rest, rows, strict=True)])
    for (claim, _), (row, _) in zip(rest, rows, strict=True):
        out[claim.id].append(row)
    return out


def _share_wall(spent: dict[str, float], wall: float, jobs: Sequence[tuple[str, float]]) -> None:
    """The wall seconds of forked ``jobs`` (kind of data, seconds the job took), shared among
    their kinds by the time each job took."""
    busy = sum(took for _, took in jobs)
    if busy > 0:
        for kind, took in jobs:
            _spent(spent, kind, wall * took / busy)


#: From how many workers ``schedule = "auto"`` spreads whole claims: on two workers the rows'
#: schedule measured as fast (docs/performance.md); with more, the first rows it makes in one
#: process bound it.
CLAIMS_FROM_WORKERS = 4


def spread_by_claims(settings: AuditSettings, claims: int) -> bool:
    """Whether the audit's rows go out one claim per process (``schedule``)."""
    if settings.schedule == "auto":
        return worker_count(settings.workers, claims) >= CLAIMS_FROM_WORKERS
    return settings.schedule == "claims"


def _measure_by_claims(todo: Sequence[Claim], planned: Mapping[str, Sequence[Mapping[str, str]]],
                       data: AuditData, family: str, bar: progress.Bar,
                       spent: dict[str, float]) -> dict[str, list[Result]]:
    """Every planned row, one forked process per claim (its rows together, so that nothing its
    rows share is made twice), the claims with the most rows first."""
    jobs = [claim for claim in todo if planned[claim.id]]
    bar.describe("measuring the claims")

    def whole(claim: Claim) -> tuple[list[Result], float]:
        begun = time.perf_counter()
        rows = [measure_variant(claim, data, family, v) for v in planned[claim.id]]
        return rows, time.perf_counter() - begun

    begun = time.perf_counter()
    measured = forked_map(whole, jobs, data.settings.workers,
                          done=lambda i: bar.update(len(planned[jobs[i].id])),
                          cost=lambda claim: len(planned[claim.id]))
    _share_wall(spent, time.perf_counter() - begun,
                [(str(claim.data), took) for claim, (_, took) in zip(jobs, measured, strict=True)])
    return {claim.id: rows for claim, (rows, _) in zip(jobs, measured, strict=True)}


def plot_data(data: AuditData, results: Sequence[Result]) -> dict[str, Any]:
    """What the report's plots need (see :mod:`normtest.audit.report`), from what was measured: each
    kind of data built, its own section (a layer profile's hidden layers are reported by their
    rows only)."""
    plotted = {c.id for c in claims() if c.plotted and c.data == "words"}
    measured = [r.variant for r in results if r.claim in plotted and r.measurement is not None
                and not profiled(r.variant.get("representation", "last"))]
    # the claims of inner products against PMI (C1): their pairs are plotted too
    paired = {c.id for c in claims() if c.data == "words"
              and tuple(c.quantities[:2]) == ("inner_product", "pmi")}
    pair_variants = [r.variant for r in results if r.claim in paired
                     and r.measurement is not None and r.measurement.sampling is not None
                     and not profiled(r.variant.get("representation", "last"))]
    out: dict[str, Any] = {}
    for kind, built in data.built().items():
        section = (cast(Any, built).plot_data(measured, pair_variants) if kind == "words"
                   else built.plot_data(measured))
        if section is not None:
            out[kind] = section
    return out
