"""Checking a model against the catalogue without the command line: ``check_model`` and
``parametrize_with_claims`` (after scikit-learn's ``check_estimator`` and
``parametrize_with_checks``), and the audit session the pytest plugin shares between test items.

::

    from normtest.check import check_model, parametrize_with_claims

    outcome = check_model(adapter, claims=["word.norm_ic"],
                          expected_failures={"word.norm_ic[transform=raw]": "raw norms fall"})
    outcome.ok, outcome.counts           # structured, usable without pytest
    outcome.raise_for_failures()         # AssertionError listing every failed claim

    @parametrize_with_claims(["glove-6b-50d"], claims=["word.norm_ic"])
    def test_claims(check):
        check()

A *check* is one claim variant on one model, with a stable id such as
``word.norm_ic[transform=raw]`` (``glove-6b-50d/word.norm_ic[transform=raw]`` when several
models are checked). Ids are built from the catalogue alone, sorted and free of object reprs, so
every pytest-xdist worker collects the same list.

How a verdict becomes a test outcome (the *policy*): PASS passes; FAIL fails; ERROR fails;
SKIPPED (the model lacks a capability) skips with the reason; INCONCLUSIVE fails, skips or passes
as ``inconclusive="fail"|"skip"|"pass"`` says (``fail`` by default: a gate must not pass on
evidence that cannot decide). An *expected failure* — a mapping ``{claim or variant id:
reason}`` kept next to the model, or an ``expected_failures`` attribute of the adapter — turns a
failing check into an expected failure; a check expected to fail that passes is reported, and
fails under ``strict=True``.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from normtest.errors import NormtestError, nothing_ran

if TYPE_CHECKING:
    import pytest

    from normtest.audit import AuditSettings
    from normtest.report import Report
    from normtest.result import Result

__all__ = [
    "AuditSession",
    "CheckReport",
    "ClaimCheck",
    "ClaimError",
    "ClaimFailure",
    "ClaimOutcome",
    "ModelSpec",
    "PlannedCheck",
    "Selector",
    "UnexpectedPass",
    "check_model",
    "decide",
    "load_model",
    "parametrize_with_claims",
]

Policy = Literal["fail", "skip", "pass"]
POLICIES: tuple[str, ...] = ("fail", "skip", "pass")
Status = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed"]
#: Verdicts that mean a claim was measured (a run where none was is refused).
MEASURED = ("PASS", "FAIL", "INCONCLUSIVE")
#: Which sample a claim of each suite resamples (for pairing two reports, see normtest.gate).
SAMPLE_OF_SUITE = {"word": "words", "conditions": "words", "cer": "documents", "text": "texts"}


class ClaimFailure(AssertionError):
    """A claim's verdict failed the check (FAIL, or INCONCLUSIVE under the ``fail`` policy)."""


class ClaimError(AssertionError):
    """A claim could not be measured (verdict ERROR)."""


class UnexpectedPass(AssertionError):
    """A claim expected to fail passed, and the check is strict."""


# -- selecting claims ---------------------------------------------------------------------------
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


@dataclass(frozen=True)
class Selector:
    """A suite (``word``), a claim (``word.norm_ic``) or some of its variants
    (``word.norm_ic[transform=raw]``; axes not named match any value)."""

    text: str
    claim: str | None = None
    suite: str | None = None
    variant: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> Selector:
        """Parse and validate against the catalogue (unknown ids get a "did you mean")."""
        from normtest.catalogue import SUITES, get

        text = text.strip()
        if text in (*SUITES, "all"):
            return cls(text, suite=None if text == "all" else text)
        match = _SELECTOR.fullmatch(text)
        if match is None:
            raise NormtestError(
                f"cannot read claim selector {text!r}; write a claim id, a suite, or "
                "claim[axis=value,...] such as word.norm_ic[transform=raw]"
            )
        claim = get(match[1])
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

    def claim_ids(self) -> list[str]:
        """The ids of the claims this selector may match."""
        from normtest.catalogue import claims

        if self.claim is not None:
            return [self.claim]
        return [c.id for c in claims(self.suite or "all")]

    def matches(self, claim: str | None, variant: Mapping[str, str]) -> bool:
        """Whether a claim id and variant fall under this selector (an empty variant — a
        skipped claim — matches any variant selector of its claim)."""
        if self.claim is None:
            if claim is None:
                return False
            from normtest.catalogue import get

            return self.suite is None or get(claim).suite == self.suite
        if claim != self.claim:
            return False
        return not variant or all(variant.get(k) == v for k, v in self.variant.items())

    @property
    def specificity(self) -> int:
        """How much this selector names: a variant beats a claim, a claim beats a suite."""
        return (len(self.variant) + 2) if self.claim else (1 if self.suite else 0)


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


def model_expected_failures(adapter: Any) -> dict[str, str]:
    """The ``expected_failures`` mapping an adapter carries next to it (empty if none)."""
    found = getattr(adapter, "expected_failures", None)
    if found is None:
        return {}
    if not isinstance(found, Mapping):
        raise NormtestError(
            f"{getattr(adapter, 'name', adapter)}.expected_failures must map claim ids to "
            f"reasons, got {type(found).__name__}"
        )
    return {str(k): str(v) for k, v in found.items()}


# -- thresholds --------------------------------------------------------------------------------
def apply_thresholds(results: Sequence[Result], thresholds: Mapping[str, Any] | None,
                     ) -> list[Result]:
    """Re-judge the named claims under their new thresholds, Holm again within each family."""
    if not thresholds:
        return list(results)
    from normtest.catalogue import get
    from normtest.report import Report

    for claim in thresholds:
        get(claim)  # an unknown claim id is an error, with a "did you mean"
    present = {r.claim for r in results}
    chosen = {c: v for c, v in thresholds.items() if c in present}
    return list(Report(results=results).with_thresholds(chosen).results)


# -- models ---------------------------------------------------------------------------------------
_MODELS: dict[tuple[str, str], Any] = {}
#: family and special states of the embedded models, so their ids are known before loading
_EMBEDDED_SHAPE: dict[str, tuple[str, tuple[str, ...]]] = {
    "glove-6b-50d": ("static", ()),
    "minilm-l6": ("encoder", ("cls",)),
    "smollm2-135m": ("decoder", ("eos", "last")),
}


def load_model(spec: str, **options: Any) -> Any:
    """An adapter by embedded name, path, hub id, or ``module:attribute`` (an adapter or a
    function returning one); loaded once per process and options."""
    key = (spec, json.dumps(options, sort_keys=True, default=str))
    if key not in _MODELS:
        factory = _factory(spec)
        if factory is not None:
            adapter = factory()
        else:
            import normtest

            adapter = normtest.load(spec, **options)
        _MODELS[key] = adapter
    return _MODELS[key]


def _factory(spec: str) -> Callable[[], Any] | None:
    match = re.fullmatch(r"([A-Za-z_][\w.]*):([A-Za-z_][\w.]*)", spec)
    if match is None or Path(spec).exists():
        return None
    try:
        obj: Any = importlib.import_module(match[1])
    except ImportError as exc:
        raise NormtestError(f"cannot import {match[1]!r} for model {spec!r}: {exc}") from exc
    for part in match[2].split("."):
        if not hasattr(obj, part):
            raise NormtestError(f"{match[1]} has no attribute {match[2]!r} (model {spec!r})")
        obj = getattr(obj, part)
    if hasattr(obj, "capabilities"):
        return lambda: obj
    if not callable(obj):
        raise NormtestError(f"{spec} is neither an adapter nor a function returning one")
    return obj


def model_label(spec: str) -> str:
    """A short label for a model spec: the name, a path's file name, or a factory's name."""
    if re.fullmatch(r"[\w.\-]+", spec):
        return spec
    if re.fullmatch(r"[\w.]+:[\w.]+", spec) and not Path(spec).exists():
        return spec.rsplit(":", 1)[1].rsplit(".", 1)[-1]
    return Path(spec).name or spec


def unique_labels(specs: Sequence[str]) -> list[str]:
    """Labels for several model specs, the full spec where two short labels collide."""
    short = [model_label(s) for s in specs]
    counts = Counter(short)
    return [s if counts[label] > 1 else label for s, label in zip(specs, short, strict=True)]


# -- planning and measuring ------------------------------------------------------------------
@dataclass(frozen=True)
class PlannedCheck:
    """One check to collect: a claim, a variant of it (empty when the claim is skipped whole)."""

    claim: str
    suite: str
    variant: Mapping[str, str] = field(default_factory=dict)
    skip_reason: str | None = None

    @property
    def id(self) -> str:
        """The result id this check reports (``claim[axis=value,...]``)."""
        return result_id(self.claim, self.variant)


def plan(family: str, states: Sequence[str], selectors: Sequence[Selector] = (),
         adapter: Any = None, scope: str = "full") -> list[PlannedCheck]:
    """The checks of the selected claims for a model family and variant scope, in catalogue
    order.

    With ``adapter``, a claim the model cannot run becomes one skipped check (as the audit
    reports it); without, its variants are planned and skip when measured.
    """
    from normtest.audit import skip_reason, variants
    from normtest.catalogue import get

    wanted = selectors or [Selector("all")]
    ids = sorted({i for s in wanted for i in s.claim_ids()})
    out = []
    for claim in (get(i) for i in ids):
        reason = skip_reason(claim, adapter) if adapter is not None else None
        if reason is not None:
            if any(s.matches(claim.id, {}) for s in wanted):
                out.append(PlannedCheck(claim.id, claim.suite, {}, reason))
            continue
        for variant in variants(claim, family, tuple(states), scope=scope):
            if any(s.matches(claim.id, variant) for s in wanted):
                out.append(PlannedCheck(claim.id, claim.suite, variant))
    return out


class AuditSession:
    """One model's measurements, shared by every check of a test session.

    Each claim's family of variants is audited once, when a check first asks for it (Holm is
    applied within that family, as in ``normtest audit``), and kept.
    """

    def __init__(self, adapter: Any, settings: AuditSettings | None = None, *,
                 label: str | None = None, words: Sequence[str] | None = None,
                 source: Any | None = None, thresholds: Mapping[str, Any] | None = None) -> None:
        from normtest.audit import AuditSettings, model_family

        self.adapter = adapter
        self.settings = settings or AuditSettings()
        self.label = label or str(adapter.name)
        self.words, self.source = words, source
        self.thresholds = dict(thresholds or {})
        self.family = model_family(adapter)
        self.states = tuple(getattr(adapter, "states", ()))
        self._families: dict[str, list[Result]] = {}
        self._provenance: dict[str, Any] = {}
        self._data: dict[str, Any] = {}
        self._model: dict[str, Any] = {}

    def plan(self, selectors: Sequence[Selector] = ()) -> list[PlannedCheck]:
        """The checks of the selected claims for this model."""
        return plan(self.family, self.states, selectors, adapter=self.adapter,
                    scope=_scope(self.settings))

    def measure(self, claim_ids: Iterable[str]) -> None:
        """Audit the claims not measured yet, in one pass (their data are shared)."""
        from normtest.audit import run_audit, skip_reason
        from normtest.catalogue import get
        from normtest.result import Result, Verdict

        todo = [i for i in dict.fromkeys(claim_ids) if i not in self._families]
        runnable = []
        for claim in (get(i) for i in todo):
            reason = skip_reason(claim, self.adapter)
            if reason is None:
                runnable.append(claim.id)
            else:
                self._families[claim.id] = [Result(Verdict.SKIPPED, reason, claim=claim.id,
                                                   criterion=claim.criterion)]
        if not runnable:
            return
        try:
            report = run_audit(self.adapter, runnable, settings=self.settings, words=self.words,
                               source=self.source)
        except NormtestError as exc:
            if len(runnable) > 1:  # find out which claim it was
                for claim_id in runnable:
                    self.measure([claim_id])
                return
            self._families[runnable[0]] = [Result(Verdict.ERROR, str(exc), claim=runnable[0])]
            return
        results = apply_thresholds(report.results, self.thresholds)
        for claim_id in runnable:
            self._families[claim_id] = [r for r in results if r.claim == claim_id]
        self._model = dict(report.model)
        self._provenance.update(report.provenance)
        for key, value in report.data.items():
            if isinstance(value, dict) and isinstance(self._data.get(key), dict):
                merged = dict(self._data[key])
                for k, v in value.items():
                    if isinstance(v, dict) and isinstance(merged.get(k), dict):
                        merged[k] = {**merged[k], **v}
                    else:
                        merged[k] = v
                self._data[key] = merged
            else:
                self._data[key] = value

    def family_results(self, claim_id: str) -> list[Result]:
        """Every result of one claim (measured on first use)."""
        self.measure([claim_id])
        return self._families[claim_id]

    def result_for(self, check: PlannedCheck) -> Result:
        """The result of a planned check (ERROR with the reason if the audit produced none)."""
        from normtest.result import Result, Verdict

        family = self.family_results(check.claim)
        for r in family:
            if r.id == check.id:
                return r
        if len(family) == 1 and family[0].verdict in (Verdict.SKIPPED, Verdict.ERROR) \
                and not family[0].variant:
            return replace(family[0], variant=dict(check.variant)) if check.variant \
                else family[0]
        return Result(Verdict.ERROR, f"the audit produced no result for {check.id} on "
                      f"{self.label} (its variants: {', '.join(r.id for r in family)})",
                      claim=check.claim, variant=dict(check.variant))

    def result(self, selector: str) -> Result:
        """The one result an id or selector names (an error if it names none or several)."""
        chosen = Selector.parse(selector)
        if chosen.claim is None:
            raise NormtestError(f"{selector!r} is a suite; name a claim or one of its variants")
        found = [r for r in self.family_results(chosen.claim)
                 if chosen.matches(r.claim, r.variant)]
        if len(found) != 1:
            listed = ", ".join(r.id for r in self.family_results(chosen.claim))
            raise NormtestError(
                f"{selector!r} names {len(found)} results on {self.label}; name exactly one "
                f"of: {listed}"
            )
        return found[0]

    def results(self) -> list[Result]:
        """Every result measured so far, in claim order."""
        return [r for claim in sorted(self._families) for r in self._families[claim]]

    def report(self) -> Report:
        """What this session measured, as one report (schema ``normtest.report/1``)."""
        from normtest.audit import model_family
        from normtest.report import Report, provenance

        model = self._model or {"name": self.adapter.name, "revision": self.adapter.revision,
                                "family": model_family(self.adapter), "dim": self.adapter.dim}
        prov = dict(self._provenance) or provenance(seed=self.settings.seed,
                                                    n_resamples=self.settings.resamples,
                                                    alpha=self.settings.alpha)
        report = Report(results=self.results(), model=model, provenance=prov, data=self._data)
        return record_samples(report, self.adapter, self.settings, self.words, self.source)


def _scope(settings: AuditSettings | None) -> str:
    """The variant scope the audit will use (``full`` for settings without one)."""
    from normtest.audit import AuditSettings

    return str(getattr(settings or AuditSettings(), "scope", "full"))


# -- which sample a report measured (for pairing, normtest.gate) -------------------------------
def _digest(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _rounded(values: Iterable[float]) -> list[float]:
    return [float(f"{float(v):.6g}") for v in values]


def sample_fingerprints(report: Report) -> dict[str, str]:
    """Digests of the samples a report resampled: ``words`` (and their IC), ``documents``,
    ``texts``; from its provenance, else from its stored data."""
    found = dict(report.provenance.get("samples") or {})
    data = report.data or {}
    words = data.get("words")
    if "words" not in found and isinstance(words, Mapping) and "words" in words:
        found["words"] = _digest([list(words["words"]),
                                  _rounded(words.get("information", []))])
    prefixes = data.get("prefixes")
    if "documents" not in found and isinstance(prefixes, Mapping) and "documents" in prefixes:
        found["documents"] = _digest(list(prefixes["documents"]))
    texts = data.get("texts")
    if "texts" not in found and isinstance(texts, Mapping) and "information" in texts:
        found["texts"] = _digest([_rounded(texts["information"]), list(texts.get("document", []))])
    return {str(k): str(v) for k, v in found.items()}


def record_samples(report: Report, adapter: Any, settings: AuditSettings,
                   words: Sequence[str] | None = None, source: Any | None = None) -> Report:
    """The report with ``provenance["samples"]`` (sample digests) and ``["audit_settings"]``.

    The word sample is rebuilt when the report's data do not list it (claims other than
    ``word.norm_ic``): the same draw as the audit's, so a second report can be paired with it.
    """
    from normtest.catalogue import get

    found = sample_fingerprints(report)
    suites = set()
    for r in report.results:
        if r.claim is not None and r.measurement is not None:
            try:
                suites.add(get(r.claim).suite)
            except NormtestError:
                continue
    if suites & {"word", "conditions"} and "words" not in found:
        try:
            from normtest.audit import model_family
            from normtest.vectors import WordData

            data = WordData.build(adapter, settings, model_family(adapter), words, source)
            found["words"] = _digest([list(data.words), _rounded(data.information)])
        except (NormtestError, TypeError, AttributeError):
            pass  # unknown sample: the gate compares such results unpaired
    prov = dict(report.provenance)
    prov["samples"] = found
    prov["audit_settings"] = {k: (list(v) if isinstance(v, tuple) else v)
                              for k, v in asdict(settings).items()}
    return replace(report, provenance=prov)


# -- outcomes -------------------------------------------------------------------------------------
def _number(value: float) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:.4g}"


def failure_message(result: Result, model: str = "", note: str = "") -> str:
    """What a failing check shows: the estimate, the interval, the threshold and the criterion."""
    from normtest.render._format import threshold

    head = f"{result.id}" + (f" on {model}" if model else "") + f": {result.verdict.value}"
    lines = [head + (f" ({note})" if note else "")]
    if result.measurement is not None and result.measurement.sampling is None:
        m = result.measurement
        lines.append(f"  estimate:  not estimable ({m.statistic}, n={m.n})")
    elif result.measurement is not None:
        m = result.measurement
        low, high = result.ci
        alpha = result.criterion.alpha if result.criterion else 0.05
        lines += [
            f"  estimate:  {_number(result.estimate)} ({m.statistic}, n={m.n})",
            f"  interval:  [{_number(low)}, {_number(high)}] ({100 * (1 - 2 * alpha):g}% "
            f"two-sided; its ends are the one-sided {100 * (1 - alpha):g}% bounds)",
        ]
    if result.criterion is not None:
        adjusted = "" if result.p_adjusted is None else ", Holm within the claim's variants"
        lines += [f"  threshold: {threshold(result, lambda v: f'{v:g}')}",
                  f"  criterion: {result.criterion.describe()}{adjusted}"]
    lines.append(f"  reason:    {result.reason}")
    if result.expected is not None:
        lines.append(f"  the paper expects {result.expected.value} here")
    return "\n".join(lines)


@dataclass(frozen=True)
class ClaimOutcome:
    """One check's result and what it means as a test outcome."""

    model: str
    result: Result
    status: Status
    message: str
    expected_failure: str | None = None
    unexpected_pass: bool = False

    @property
    def id(self) -> str:
        """The result id (``claim[axis=value,...]``)."""
        return self.result.id

    @property
    def failed(self) -> bool:
        """Whether this check fails a test run (failed or error; a strict unexpected pass)."""
        return self.status in ("failed", "error")


def decide(result: Result, *, model: str = "", inconclusive: str = "fail",
           expected: str | None = None, strict: bool = False) -> ClaimOutcome:
    """Turn a verdict into a test outcome under the policy (see the module doc)."""
    if inconclusive not in POLICIES:
        raise NormtestError(f"inconclusive must be one of {POLICIES}, got {inconclusive!r}")
    v = result.verdict.value
    if v == "SKIPPED":
        return ClaimOutcome(model, result, "skipped", f"{result.id}: {result.reason}", expected)
    if v == "ERROR":
        return ClaimOutcome(model, result, "error", failure_message(result, model), expected)
    failing = v == "FAIL" or (v == "INCONCLUSIVE" and inconclusive != "skip")
    if v == "INCONCLUSIVE" and inconclusive == "skip":
        return ClaimOutcome(model, result, "skipped",
                            f"{result.id}: INCONCLUSIVE (policy skip): {result.reason}", expected)
    if v == "INCONCLUSIVE" and inconclusive == "pass" and expected is None:
        return ClaimOutcome(model, result, "passed",
                            f"{result.id}: INCONCLUSIVE (policy pass): {result.reason}")
    if expected is not None:
        if failing:
            return ClaimOutcome(model, result, "xfailed",
                                failure_message(result, model, f"expected: {expected}"), expected)
        note = f"expected to fail ({expected}) but passed"
        if strict:
            return ClaimOutcome(model, result, "failed", failure_message(result, model, note),
                                expected, unexpected_pass=True)
        return ClaimOutcome(model, result, "xpassed", failure_message(result, model, note),
                            expected)
    if failing:
        note = "INCONCLUSIVE fails under the policy 'fail'" if v == "INCONCLUSIVE" else ""
        return ClaimOutcome(model, result, "failed", failure_message(result, model, note))
    return ClaimOutcome(model, result, "passed", f"{result.id}: PASS")


def act(outcome: ClaimOutcome) -> None:
    """Raise what pytest needs for an outcome (a failure, an error, a skip)."""
    if outcome.status in ("passed", "xpassed"):
        return
    if outcome.status == "skipped":
        import pytest

        pytest.skip(outcome.message)
    if outcome.unexpected_pass:
        raise UnexpectedPass(outcome.message)
    if outcome.status == "error":
        raise ClaimError(outcome.message)
    raise ClaimFailure(outcome.message)


# -- check_model -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CheckReport:
    """What ``check_model`` found: the audit report and one outcome per check."""

    model: str
    report: Report
    outcomes: tuple[ClaimOutcome, ...]

    @property
    def counts(self) -> dict[str, int]:
        """Checks per verdict (PASS, FAIL, INCONCLUSIVE, ERROR, SKIPPED)."""
        found = Counter(o.result.verdict.value for o in self.outcomes)
        return {v: found.get(v, 0) for v in ("PASS", "FAIL", "INCONCLUSIVE", "ERROR", "SKIPPED")}

    @property
    def statuses(self) -> dict[str, int]:
        """Checks per test outcome (passed, failed, error, skipped, xfailed, xpassed)."""
        found = Counter(o.status for o in self.outcomes)
        return {s: found.get(s, 0) for s in ("passed", "failed", "error", "skipped", "xfailed",
                                             "xpassed")}

    @property
    def ran(self) -> int:
        """How many checks were measured (PASS, FAIL or INCONCLUSIVE)."""
        return sum(o.result.verdict.value in MEASURED for o in self.outcomes)

    @property
    def failures(self) -> list[ClaimOutcome]:
        """The checks that fail (failed, error, strict unexpected pass)."""
        return [o for o in self.outcomes if o.failed]

    @property
    def ok(self) -> bool:
        """True when at least one claim ran and no check failed."""
        return self.ran > 0 and not self.failures

    def raise_for_failures(self) -> None:
        """Raise ``ClaimFailure`` listing every failed check (or that none ran)."""
        if self.ran == 0:
            raise ClaimFailure(f"no claim ran on {self.model}: {self.summary()}")
        if self.failures:
            body = "\n".join(o.message for o in self.failures)
            raise ClaimFailure(f"{len(self.failures)} of {len(self.outcomes)} checks failed on "
                               f"{self.model}:\n{body}")

    def summary(self) -> str:
        """One line: checks per verdict and expected failures."""
        counts = ", ".join(f"{k} {v}" for k, v in self.counts.items())
        s = self.statuses
        return (f"{self.model}: {self.ran} ran; {counts}; expected failures {s['xfailed']}, "
                f"unexpected passes {s['xpassed'] + sum(o.unexpected_pass for o in self.outcomes)}")


def check_model(
    adapter: Any,
    claims: Iterable[str] | None = None,
    *,
    expected_failures: Mapping[str, str] | None = None,
    strict: bool = False,
    inconclusive: str = "fail",
    settings: AuditSettings | None = None,
    thresholds: Mapping[str, Any] | None = None,
    words: Sequence[str] | None = None,
    source: Any | None = None,
) -> CheckReport:
    """Check a model against the catalogue (or the selected claims, suites or variants).

    One audit measures every selected claim (data shared, Holm within each claim). Expected
    failures come from ``expected_failures`` and the adapter's own ``expected_failures``
    attribute. A run in which no claim could be measured raises NormtestError.
    """
    if inconclusive not in POLICIES:
        raise NormtestError(f"inconclusive must be one of {POLICIES}, got {inconclusive!r}")
    selectors = parse_selectors(claims)
    session = AuditSession(adapter, settings, words=words, source=source, thresholds=thresholds)
    planned = session.plan(selectors)
    if not planned:
        raise NormtestError("no claim matches the selection; `normtest list` shows the claims")
    session.measure(p.claim for p in planned)
    mapping = {**model_expected_failures(adapter), **dict(expected_failures or {})}
    outcomes = []
    for check in planned:
        result = session.result_for(check)
        outcomes.append(decide(result, model=session.label, inconclusive=inconclusive,
                               expected=expected_failure(mapping, check.claim, check.variant),
                               strict=strict))
    report = CheckReport(session.label, session.report(), tuple(outcomes))
    if report.ran == 0:
        raise nothing_ran(session.label, [(o.id, o.result.reason) for o in outcomes])
    return report


# -- parametrize_with_claims ----------------------------------------------------------------------
@dataclass(frozen=True)
class ModelSpec:
    """A model to parametrize over: a label, how to load it, and (to defer loading until the
    first check runs) its family and special states."""

    label: str
    load: Callable[[], Any]
    family: str | None = None
    states: tuple[str, ...] | None = None
    #: what identifies the model across specs (the name or path; else the loader)
    key: str = ""

    @classmethod
    def of(cls, model: Any, label: str | None = None) -> ModelSpec:
        """A spec from a name or path, a ``(label, factory)`` pair, a spec or an adapter."""
        if isinstance(model, ModelSpec):
            return model
        if isinstance(model, str):
            shape = _EMBEDDED_SHAPE.get(model)
            return cls(label or model_label(model), lambda: load_model(model),
                       shape[0] if shape else None, shape[1] if shape else None, key=model)
        if isinstance(model, tuple) and len(model) == 2 and isinstance(model[0], str):
            return cls(model[0], model[1]) if callable(model[1]) else cls.of(model[1], model[0])
        if hasattr(model, "capabilities") and hasattr(model, "name"):
            return cls(label or str(model.name), lambda: model)
        raise NormtestError(
            f"cannot use {type(model).__name__} as a model: give a name or path, a "
            "(label, factory) pair, a ModelSpec or an adapter"
        )


_SESSIONS: dict[tuple[str, str, str, str], AuditSession] = {}


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


def _session(spec: ModelSpec, settings: AuditSettings | None,
             thresholds: Mapping[str, Any] | None) -> AuditSession:
    key = (spec.label, spec.key or str(id(spec.load)), repr(settings),
           json.dumps(thresholds or {}, sort_keys=True, default=str))
    if key not in _SESSIONS:
        _SESSIONS[key] = AuditSession(spec.load(), settings, label=spec.label,
                                      thresholds=thresholds)
    return _SESSIONS[key]


@dataclass(eq=False)
class ClaimCheck:
    """One claim variant on one model; calling it measures (once per process) and asserts."""

    model: ModelSpec
    planned: PlannedCheck
    inconclusive: str = "fail"
    expected_failure: str | None = None
    strict: bool = False
    settings: AuditSettings | None = None
    thresholds: Mapping[str, Any] | None = None
    result: Result | None = None

    @property
    def id(self) -> str:
        """The check's result id."""
        return self.planned.id

    def __call__(self) -> Result:
        """Measure the claim's family if needed, then pass, fail, skip per the policy."""
        session = _session(self.model, self.settings, self.thresholds)
        if self.model.family not in (None, session.family):
            raise ClaimError(f"{self.model.label} is a {session.family} model, not the "
                             f"{self.model.family} its ModelSpec declares; fix the spec")
        self.result = session.result_for(self.planned)
        act(decide(self.result, model=self.model.label, inconclusive=self.inconclusive,
                   expected=self.expected_failure, strict=self.strict))
        return self.result

    def __repr__(self) -> str:
        return f"ClaimCheck({self.model.label}/{self.id})"


def parametrize_with_claims(
    models: Any,
    claims: Iterable[str] | None = None,
    *,
    expected_failures: Mapping[str, str] | None = None,
    strict: bool = False,
    inconclusive: str = "fail",
    settings: AuditSettings | None = None,
    thresholds: Mapping[str, Any] | None = None,
    argname: str = "check",
) -> pytest.MarkDecorator:
    """A ``pytest.mark.parametrize`` over every (model, claim variant) check, with stable ids.

    ``models``: one or a list of names or paths, ``(label, factory)`` pairs, ``ModelSpec`` or
    adapters. Embedded models and a ``ModelSpec`` with ``family`` and ``states`` are loaded when
    their first check runs; others are loaded now (their variants depend on the model).
    """
    import pytest

    if inconclusive not in POLICIES:
        raise NormtestError(f"inconclusive must be one of {POLICIES}, got {inconclusive!r}")
    listed = list(models) if isinstance(models, (list, tuple)) and not (
        len(models) == 2 and isinstance(models, tuple) and callable(models[1])) else [models]
    specs = [ModelSpec.of(m) for m in listed]
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise NormtestError(f"model labels must be unique, got {labels}; pass (label, factory)")
    selectors = parse_selectors(claims)
    params = []
    for spec in specs:
        adapter = None
        if spec.family is None or spec.states is None:
            from normtest.audit import model_family

            adapter = spec.load()
            spec = replace(spec, load=_constant(adapter), family=model_family(adapter),
                           states=tuple(getattr(adapter, "states", ())),
                           key=spec.key or str(id(spec.load)))
        assert spec.family is not None and spec.states is not None
        mapping = {**(model_expected_failures(adapter) if adapter is not None else {}),
                   **dict(expected_failures or {})}
        for planned in plan(spec.family, spec.states, selectors, adapter=adapter,
                            scope=_scope(settings)):
            reason = expected_failure(mapping, planned.claim, planned.variant)
            check = ClaimCheck(spec, planned, inconclusive, reason, strict, settings, thresholds)
            marks = [pytest.mark.normtest_claim(planned.claim)]
            if reason is not None:
                marks.append(pytest.mark.xfail(reason=reason, strict=False, raises=ClaimFailure))
            check_id = planned.id if len(specs) == 1 else f"{spec.label}/{planned.id}"
            params.append(pytest.param(check, id=check_id, marks=marks))
    if not params:
        raise NormtestError("no claim matches the selection; `normtest list` shows the claims")
    return pytest.mark.parametrize(argname, params)
