"""One row of the audit: a claim's variant measured on its data and judged against its
criterion, and the rows that measured identical inputs merged into one.

The audit, the robustness analyses, the controls and the audit's sizing all measure a row
through :func:`remeasure`; what differs between them is explicit in its parameters: the data
and settings it is measured on, and where the row's reading of the paper comes from (the
catalogue, for the audit's own rows; the row it stands in for, for a re-analysis or a control).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from normtest.base.settings import AuditSettings
from normtest.claims.catalogue import Claim, is_builtin
from normtest.errors import NormtestError
from normtest.stats.baseline import beyond_threshold
from normtest.verdict.measurement import finite_or_none, invalid
from normtest.verdict.result import Criterion, Measurement, Result, Verdict, judge

__all__ = ["beyond_criterion", "judge_beyond", "measure_row", "merge_identical", "remeasure",
           "stamp"]

#: What a row re-measured for an analysis keeps of the details of the row it stands in for.
READING_DETAILS = ("reconstructed", "reading")


def measure_row(claim: Claim, data: Any, variant: Mapping[str, str], settings: AuditSettings,
                criterion: Criterion) -> Result:
    """One variant of a claim measured on ``data`` and judged against ``criterion`` (at the
    settings' α), not adjusted; an input error is an ERROR row with its message, and so is any
    failure of a user's claim (a failure of a built-in one is a defect and surfaces)."""
    assert claim.measure is not None
    criterion = criterion.with_alpha(settings.alpha)
    row: dict[str, Any] = dict(claim=claim.id, variant=dict(variant))
    try:
        measurement = claim.measure(data, variant, settings)
    except NormtestError as exc:
        return Result(Verdict.ERROR, str(exc), **row)
    except Exception as exc:
        if is_builtin(claim):
            raise  # a defect of normtest itself: let it surface
        return Result(Verdict.ERROR, f"the measurement of {claim.id} ({claim.origin}) "
                      f"raised {type(exc).__name__}: {exc}", **row)
    if not isinstance(measurement, Measurement):
        return Result(Verdict.ERROR, f"the measurement of {claim.id} ({claim.origin}) "
                      f"returned {type(measurement).__name__}, not a "
                      "normtest.claims.Measurement", **row)
    # a user's measurement is checked before it is judged: a NaN estimate with an interval, an
    # interval that cannot be read, a field of the wrong type is an ERROR row, never PASS or FAIL
    problem = None if is_builtin(claim) else invalid(measurement, criterion.components)
    if problem is not None:
        return Result(Verdict.ERROR, f"the measurement of {claim.id} ({claim.origin}) "
                      f"returned an invalid Measurement: {problem}", **row)
    try:
        judged = replace(Result.judged(measurement, criterion), **row)
        return judged if claim.baseline is None else judge_beyond(judged,
                                                                   claim.baseline_name)
    except Exception as exc:  # what the checks above cannot foresee (a Sampling subclass …)
        if is_builtin(claim):
            raise
        return Result(Verdict.ERROR, f"the measurement of {claim.id} ({claim.origin}) cannot "
                      f"be judged: {type(exc).__name__}: {exc}", **row)


def remeasure(claim: Claim, data: Any, variant: Mapping[str, str], settings: AuditSettings, *,
              family: str | None = None, like: Result | None = None,
              keep: Sequence[str] = READING_DETAILS) -> Result:
    """``claim`` at ``variant`` measured on ``data`` under ``settings`` and judged against its
    criterion (not adjusted), then stamped (:func:`stamp`): from the catalogue for ``family``
    (an audit's own row), or from ``like``, the row this one stands in for (a robustness
    analysis, a control, a sizing round), keeping the details of ``like`` named in ``keep``."""
    if family is not None and like is None and settings.exploratory_intervals == "analytic" \
            and claim.role(family, variant) == "exploratory":
        settings = replace(settings, intervals="analytic")  # where the claim has one
    row = measure_row(claim, data, variant, settings, claim.criterion)
    return stamp(row, claim, family=family, like=like, keep=keep)


def stamp(row: Result, claim: Claim, *, family: str | None = None, like: Result | None = None,
          keep: Sequence[str] = READING_DETAILS) -> Result:
    """``row`` with what the paper says of it: its expectation, role and line, and the details
    that say how to read it (whether normtest reconstructed the claim, whether the row is a
    reading beside the line rather than one that decides it). Read from the catalogue for
    ``family``, or copied from ``like`` (only its details named in ``keep``)."""
    if like is None:
        if family is None:
            raise ValueError("stamp needs the model's family or the row it stands in for")
        extra: dict[str, Any] = {"reconstructed": claim.reconstructed}
        reading = claim.reading_of(family, row.variant)
        if reading is not None:
            extra["reading"] = reading
        return replace(row, details={**row.details, **extra},
                       expected=claim.expectation(family, row.variant),
                       role=claim.role(family, row.variant),
                       hypothesis=claim.hypothesis_of(family, row.variant))
    kept = {k: v for k, v in like.details.items() if k in keep}
    return replace(row, details={**row.details, **kept}, expected=like.expected, role=like.role,
                   hypothesis=like.hypothesis)


def judge_beyond(row: Result, baseline: str) -> Result:
    """The row with its beyond reading judged (``details["beyond"]``: the baseline in words,
    the verdict, its reason, p-values and the threshold it was held to), from its measurement's
    ``beyond`` component against :func:`beyond_criterion`; a measurement without one says it was
    not measured."""
    measured = None if row.measurement is None else row.measurement.components.get("beyond")
    if measured is None or row.criterion is None:
        found: dict[str, Any] = {"baseline": baseline, "verdict": None,
                                 "reason": "the measurement reports no beyond component"}
    else:
        criterion = beyond_criterion(row.criterion, measured)
        j = judge(measured, criterion)
        found = {"baseline": baseline, "verdict": j.verdict.value, "reason": j.reason,
                 "p_pass": finite_or_none(j.p_pass), "p_fail": finite_or_none(j.p_fail),
                 "threshold": criterion.threshold}
    return replace(row, details={**row.details, "beyond": found})


def beyond_criterion(criterion: Criterion, beyond: Measurement) -> Criterion:
    """What a beyond reading is held to: the row's headline criterion, its one-sided threshold
    carried to the strata of the baseline where the measurement says how
    (:func:`normtest.stats.baseline.beyond_threshold` of its ``attenuation``: the value a norm
    that carries the information alone, at the threshold, shows within the strata)."""

    headline = criterion.headline()
    curve = beyond.settings.get("attenuation") if isinstance(beyond.settings, Mapping) else None
    if not curve or headline.direction != "greater" or headline.threshold is None:
        return headline
    return headline.with_threshold(round(beyond_threshold(curve, headline.threshold), 4))


def merge_identical(results: Sequence[Result]) -> list[Result]:
    """One row per distinct measurement: rows of one claim measured on identical inputs (the same
    :attr:`~normtest.verdict.measurement.Measurement.inputs` digest — the same data, statistic
    and draws) become one row that stands for all their variants (``Result.stands_for``), in the
    place of the first. The kept row is the first confirmatory one (else the first); rows whose
    confirmatory members expect different verdicts, or count towards different lines or
    readings, stay apart (the paper cannot expect two verdicts of one measurement)."""
    groups: dict[tuple[str | None, str], list[int]] = {}
    for i, r in enumerate(results):
        inputs = None if r.measurement is None else r.measurement.inputs
        if inputs is not None:
            groups.setdefault((r.claim, inputs), []).append(i)
    out: dict[int, Result] = dict(enumerate(results))
    for members in groups.values():
        if len(members) < 2:
            continue
        rows = [results[i] for i in members]
        stated = {(r.expected, r.hypothesis, r.details.get("reading")) for r in rows
                  if r.confirmatory}
        if len(stated) > 1:
            continue
        keep = next((r for r in rows if r.confirmatory), rows[0])
        merged = replace(keep, stands_for=(dict(keep.variant), *(
            dict(r.variant) for r in rows if r is not keep)))
        out[members[0]] = merged
        for i in members[1:]:
            del out[i]
    return [out[i] for i in sorted(out)]
