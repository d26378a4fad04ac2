"""The report object and its JSON form, schema ``normtest.report/1``.

Shape::

    {"schema": "normtest.report/1", "model": {...}, "provenance": {...},
     "scorecard": [...], "results": [...], "summary": {"PASS": n, "FAIL": n, ...},
     "data": {...}}

``scorecard`` (see :mod:`normtest.scorecard.lines`) lists the paper's hypotheses in order, each with
its ``status`` (``replicated``, ``contradicted``, ``undecided``, ``not tested``), a one-sentence
``reason`` and the confirmatory ``rows`` behind it (id, verdict, expected, estimate, interval,
threshold). It is derived from the results (each carries its ``role`` and ``hypothesis``), so a
reader that ignores it loses nothing.

``digest`` (written by :meth:`Report.to_json` since this version): ``"sha256:<hex>"``, the
SHA-256 of every other entry of the file as canonical JSON (keys sorted, no spaces, UTF-8;
:func:`digest_of`). :meth:`Report.read` refuses a file whose digest does not match (it was
modified after normtest wrote it) and any row whose estimate lies outside its own normal, t or
Fisher-z interval; a file without a digest (an older normtest) is read with a warning, its
bootstrap rows checked against the range of their replicates too (:func:`implausible_rows`).
docs/security.md, "Reports' digests and the gate's rules".

Every report read — :meth:`Report.read` (a file: the gate, ``normtest report``, ``normtest
compare``), :meth:`Report.from_json`, :meth:`Report.from_dict` — is first validated against the
schema (:mod:`normtest.audit.report_schema`): the required keys and the type of every key, rows
included; a file is checked as it is parsed, so junk fails at its first bad entry, and one larger
than any report is refused unread. The error names the first bad key path.

``data`` (optional) holds what the plots need, so that a stored report can be re-rendered
without the model: ``words`` (the sample, its IC, token counts and ‖e(w)‖² per variant of
``word.norm_ic``), ``prefixes`` (s(L) per prefix, document and pooling) and ``texts`` (sentence
IC and ‖e(t)‖² per pooling). Variant keys are the bracket part of a result id, such as
``composition=sqrt_n,representation=last,transform=raw``.

Every renderer (terminal table, Markdown, HTML, JUnit) reads this one object.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import re
import secrets
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from normtest.audit.report_schema import MAX_REPORT_BYTES, load, validate
from normtest.base.paths import atomic_write, published
from normtest.base.version import VERSION as __version__
from normtest.errors import NormtestError
from normtest.scorecard.lines import build
from normtest.stats.multiplicity import adjust_audit
from normtest.verdict.result import Criterion, Result, Verdict

if TYPE_CHECKING:
    from normtest.scorecard.lines import Line

SCHEMA = "normtest.report/1"


def provenance(**extra: Any) -> dict[str, Any]:
    """Versions of normtest and its numerical stack, plus whatever the caller adds."""
    import numpy
    import scipy
    import statsmodels


    out: dict[str, Any] = {
        "normtest": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "statsmodels": statsmodels.__version__,
    }
    out.update(extra)
    return out


@dataclass(frozen=True)
class AuditProvenance:
    """What a report says of how its audit was run (``report.json``'s ``provenance``), built in
    one place by the audit: the seed, resamples and α; what each kind of data says of its
    sample; the sample's settings; the corpus, layers and prefix unit where they are not the
    defaults; how the sample was sized; the scope, profile and multiplicity rule. ``to_dict``
    adds the versions of normtest and its numerical stack and leaves out what does not apply;
    a report read back keeps the plain mapping (``Report.provenance``), which later steps (a
    sequential audit, a pytest session) extend."""

    seed: int
    resamples: int
    alpha: float
    #: what the kinds of data built say of their samples (``WordData.provenance`` …), merged
    data: Mapping[str, Any]
    #: the settings that decide which sample was drawn (:func:`sample_settings`)
    sample: Mapping[str, Any]
    scope: str
    profile: str
    #: per role: the multiplicity method and how many rows it adjusted
    multiplicity: Mapping[str, Any]
    corpus: Sequence[str] = ()
    #: the corpus's bytes read and bytes replaced (not UTF-8), when a corpus was given
    corpus_bytes: tuple[int, int] | None = None
    #: the representations of a layer profile, and the model's layer count
    layers: Sequence[str] | None = None
    n_layers: int | None = None
    #: the prefix unit, when not model tokens
    prefix_unit: str | None = None
    #: how the audit sized its sample (``normtest.audit.sizing.Sizing.to_dict``)
    sizing: Mapping[str, Any] | None = None
    #: wall seconds: ``total`` (the audit, from the model loaded to the report), each kind of
    #: data's building and measuring (``words``, ``texts``, ``prefixes``), and ``per_unit``: the
    #: seconds one unit of a kind takes to make on this machine (a word, a sentence, a
    #: document), where this audit made it or an earlier one recorded it
    seconds: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The report's ``provenance`` mapping (keys in the order reports have always had)."""
        out: dict[str, Any] = {"seed": self.seed, "resamples": self.resamples,
                               "alpha": self.alpha, **self.data}
        if self.corpus:
            out["corpus"] = list(self.corpus)
        if self.corpus_bytes is not None:
            out["corpus_bytes"], out["corpus_replaced_bytes"] = self.corpus_bytes
        if self.layers is not None:
            out.update(layers=list(self.layers), n_layers=self.n_layers)
        if self.prefix_unit is not None:
            out["prefix_unit"] = self.prefix_unit
        out["sample"] = dict(self.sample)
        if self.sizing is not None:
            out["sizing"] = dict(self.sizing)
        out.update(scope=self.scope, profile=self.profile, multiplicity=dict(self.multiplicity))
        if self.seconds is not None:
            out["seconds"] = dict(self.seconds)
        return provenance(**out)


def sample_settings(settings: Any) -> dict[str, Any]:
    """The settings that decide which sample an audit draws (``provenance["sample"]``): the
    requested sizes (not the counts a model kept), the seed, the corpus and the prefix grid.
    Two reports are of one sample only when these agree (``normtest compare`` pairs no other)."""
    return {"seed": settings.seed, "words": settings.words, "documents": settings.documents,
            "sentences": settings.sentences, "sentence_documents": settings.sentence_documents,
            "prefix_step": settings.prefix_step, "max_prefix": settings.max_prefix,
            "prefix_unit": settings.prefix_unit, "corpus": list(settings.corpus)}


#: The share of the word sample a model may lack vectors for before the answer says so.
MAX_MISSING_VECTORS = 0.10


@dataclass(frozen=True, eq=False)
class Report:
    """One audit: the model, where the numbers came from, and every result."""

    results: Sequence[Result]
    model: Mapping[str, Any] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict)
    #: the scorecard's lines as ``(key, title, source[, short, reference])``; None: every
    #: declared hypothesis
    line_titles: Sequence[tuple[str, ...]] | None = None
    #: each tested line re-decided under its specifications (normtest.scorecard.robustness)
    robustness: Sequence[Any] = ()
    #: each tested line's positive and negative controls (normtest.scorecard.controls)
    controls: Sequence[Any] = ()

    def controls_of(self, key: str) -> Any | None:
        """The controls of scorecard line ``key`` (a ``LineControls``), or None."""
        return next((c for c in self.controls if c.line == key), None)

    def robustness_of(self, key: str) -> Any | None:
        """The robustness of scorecard line ``key`` (a ``LineRobustness``), or None."""
        return next((r for r in self.robustness if r.line == key), None)

    @cached_property
    def scorecard(self) -> list[Line]:
        """The paper's hypotheses, each replicated, contradicted, undecided or not tested (built
        once per report: every view reads the same lines)."""

        return build(self.results, self.line_titles, self.controls)

    @property
    def missing_vectors(self) -> tuple[int, int] | None:
        """(sample words without a vector, words requested) when the model lacked vectors for
        more than :data:`MAX_MISSING_VECTORS` of the word sample, else None."""
        dropped = self.provenance.get("dropped_words")
        requested = self.provenance.get("words_requested")
        if not isinstance(dropped, Mapping) or not isinstance(requested, int) or requested <= 0:
            return None
        missing = dropped.get("no vector", 0)
        if not isinstance(missing, int) or missing <= MAX_MISSING_VECTORS * requested:
            return None
        return missing, requested

    @property
    def summary(self) -> dict[str, int]:
        """How many results ended in each verdict (every verdict listed, zeros included)."""
        counts = Counter(r.verdict for r in self.results)
        return {v.value: counts.get(v, 0) for v in Verdict}

    def rejudge(self, criteria: Mapping[str, Criterion]) -> Report:
        """Re-judge the named claims under new criteria, then adjust the whole report again
        (Holm over its confirmatory rows, Benjamini–Hochberg over its exploratory rows).

        A result without a measurement (SKIPPED, ERROR) only takes the new criterion.
        """

        def rejudged(r: Result) -> Result:
            new = criteria.get(r.claim or "")
            if new is None:
                return r
            if r.measurement is not None and r.measurement.sketched:
                raise NormtestError(
                    f"a slim report (its bootstrap replicates left out) cannot be re-judged "
                    f"({r.claim}): re-judge the full report it was made from")
            return r.rejudge(new) if r.measurement is not None else replace(r, criterion=new)

        return replace(self, results=adjust_audit([rejudged(r) for r in self.results]))

    def to_pandas(self, table: str = "rows") -> Any:
        """A table of this report as a ``pandas.DataFrame`` (pandas is optional): ``rows`` (one
        per row: id, claim, line, variant axes, estimate, interval, threshold, verdict, adjusted
        p, baseline, beyond — the columns of ``normtest report --format csv``), ``words``,
        ``sentences`` or ``curves`` (the data, as ``--data`` writes them)."""
        from normtest.audit.tables import to_pandas

        return to_pandas(self, table)

    @property
    def slim_note(self) -> str:
        """For a slim report (:meth:`slim`), what it is, in a few words; else ''."""
        slim = self.provenance.get("slim")
        if not isinstance(slim, Mapping):
            return ""
        return (f"a slim report (each bootstrap distribution kept as its {slim.get('points')} "
                "percentiles)")

    def slim(self) -> Report:
        """This report without its bootstrap replicates, for a small committed baseline or a
        reference: each bootstrap sampling distribution is kept as its sketch (101 quantiles,
        :meth:`~normtest.verdict.sampling.Sampling.sketch`) and every interval, verdict and
        p-value as the replicates gave them. What it cannot do: be re-judged under other
        thresholds, or pair with another report replicate by replicate (the gate compares it
        unpaired, from the intervals)."""
        from normtest.verdict.sampling import SKETCH_POINTS

        if self.slim_note:
            return self
        prov = {**self.provenance, "slim": {"points": SKETCH_POINTS}}
        return replace(self, results=[r.slim() for r in self.results], provenance=prov)

    @property
    def rejudged_note(self) -> str:
        """For a report re-judged under other thresholds, what its views must be read with:
        the rows and scorecard follow the new thresholds, robustness and controls do not (they
        are the audit's, computed at its own); empty for a report as its audit wrote it."""
        rejudged = self.provenance.get("rejudged")
        if not isinstance(rejudged, Mapping) or not rejudged:
            return ""
        def shown(value: Any) -> str:
            return f"{value[0]:g}:{value[1]:g}" if isinstance(value, list | tuple) \
                else f"{value:g}"

        changed = ", ".join(f"{claim}={shown(value)}" for claim, value in rejudged.items())
        kept = [name for name, found in (("robustness", self.robustness),
                                         ("controls", self.controls)) if found]
        return (f"re-judged at {changed}: the rows and the scorecard follow these thresholds"
                + (f"; {' and '.join(kept)} are the audit's, computed at its own thresholds"
                   if kept else ""))

    def with_thresholds(self, thresholds: Mapping[str, float | Sequence[float]]) -> Report:
        """Re-judged under new thresholds (``CLAIM: value`` or ``CLAIM: (low, high)``).

        Only the headline threshold or margin changes (components and α stay); the provenance
        records what was changed under ``rejudged``. A claim the report lacks is an error.
        """
        if not thresholds:
            return self
        import difflib

        present = list(dict.fromkeys(r.claim for r in self.results if r.claim is not None))
        criteria: dict[str, Criterion] = {}
        for claim, value in thresholds.items():
            if claim not in present:
                guess = difflib.get_close_matches(claim, present, n=1, cutoff=0.5)
                hint = f"; did you mean {guess[0]!r}?" if guess else ""
                raise NormtestError(
                    f"the report has no claim {claim!r}{hint} (it has "
                    f"{', '.join(present) or 'none'})"
                )
            old = next(r.criterion for r in self.results
                       if r.claim == claim and r.criterion is not None)
            criteria[claim] = old.with_threshold(value, claim)
        changed = {c: (list(v) if isinstance(v, Sequence) else v) for c, v in thresholds.items()}
        prov = dict(self.provenance)
        prov["rejudged"] = {**dict(prov.get("rejudged") or {}), **changed}
        return replace(self.rejudge(criteria), provenance=prov)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready mapping of schema ``normtest.report/1``."""
        out = {
            "schema": SCHEMA,
            "model": dict(self.model),
            "provenance": dict(self.provenance),
            "scorecard": [line.to_dict() for line in self.scorecard],
            "results": [r.to_dict() for r in self.results],
            "summary": self.summary,
        }
        if self.robustness:
            out["robustness"] = [r.to_dict() for r in self.robustness]
        if self.controls:
            out["controls"] = [c.to_dict() for c in self.controls]
        if self.data:
            out["data"] = dict(self.data)
        return out

    def to_json(self, indent: int | None = 1) -> str:
        """Strict JSON (no NaN or Infinity tokens), indented, with every list of numbers on one
        line (a default audit's report holds about a million numbers: one per line, they made
        the file four times larger and took Python's indenting encoder 0.2 s), ending with its
        ``digest`` (:func:`digest_of` of everything else)."""
        body = _plain(self.to_dict())
        body["digest"] = digest_of(body)
        return _dumps(body, indent)

    def write(self, path: str | Path) -> Path:
        """Write the JSON report whole or not at all (a temporary file renamed into place);
        parent folders are created. A path ending in ``.gz`` is written gzip-compressed (what
        :meth:`read` reads as well)."""

        target = Path(path)
        text = self.to_json() + "\n"
        payload: str | bytes = text
        if target.suffix == ".gz":
            import gzip

            payload = gzip.compress(text.encode("utf-8"), mtime=0)  # the same bytes each time
        try:
            atomic_write(target, published(payload))
        except OSError as exc:
            raise NormtestError(f"cannot write {target}: {exc.strerror}") from exc
        return target

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Report:
        """Rebuild from a mapping; refuses an unknown schema."""

        schema = data.get("schema") if isinstance(data, Mapping) else None
        if schema != SCHEMA:
            raise NormtestError(_schema_problem(schema))
        try:
            validate(data)
        except NormtestError as exc:
            raise NormtestError(_invalid(exc)) from None
        try:
            results = data.get("results", [])
            if not isinstance(results, list):
                raise TypeError("'results' is not a list")
            parsed = []
            for i, row in enumerate(results):
                try:
                    parsed.append(Result.from_dict(row))
                except _DAMAGE as exc:
                    raise type(exc)(f"result {i}: {exc}") from exc
            parts = {key: data.get(key) or {} for key in ("model", "provenance", "data")}
            for key, value in parts.items():
                if not isinstance(value, Mapping):
                    raise TypeError(f"'{key}' is not an object")
            from normtest.scorecard.controls import LineControls
            from normtest.scorecard.lines import titles_of
            from normtest.scorecard.robustness import LineRobustness

            stored = {key: data.get(key) or [] for key in ("robustness", "controls")}
            for key, value in stored.items():
                if not isinstance(value, list):
                    raise TypeError(f"{key!r} is not a list")
            return cls(results=parsed, model=dict(parts["model"]),
                       provenance=dict(parts["provenance"]), data=dict(parts["data"]),
                       line_titles=titles_of(data.get("scorecard")),
                       robustness=tuple(LineRobustness.from_dict(r)
                                        for r in stored["robustness"]),
                       controls=tuple(LineControls.from_dict(c) for c in stored["controls"]))
        except _DAMAGE as exc:
            raise NormtestError(
                f"the report is damaged ({type(exc).__name__}: {exc}); write it again with "
                "normtest audit, or give the report.json that normtest wrote"
            ) from exc

    @classmethod
    def from_json(cls, text: str) -> Report:
        """Parse a JSON report."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise NormtestError(f"report is not valid JSON: {exc}") from exc
        except RecursionError:
            raise NormtestError("report is JSON nested too deeply to be a report") from None
        return cls.from_dict(data)

    @classmethod
    def read(cls, path: str | Path, what: str = "report", verify: bool = True) -> Report:
        """Read a JSON report from a file; ``what`` names it in errors ("baseline report" …).

        With ``verify`` (the default: what the gate, ``normtest compare`` and ``normtest report``
        read), a file whose ``digest`` does not match its contents is refused (it was modified
        after normtest wrote it), and so is any row whose estimate lies outside its own interval
        (:func:`implausible_rows`). A file without a digest (written before normtest recorded
        one) is read with a warning, its bootstrap rows held to their replicates' range too.
        """

        try:
            with Path(path).open("rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size > MAX_REPORT_BYTES:
                    raise NormtestError(
                        f"the {what} {path} is {size / 2**20:,.0f} MiB, larger than any report "
                        f"normtest writes (at most {MAX_REPORT_BYTES / 2**20:,.0f} MiB are "
                        "read); give the report.json that normtest wrote")
                raw = handle.read(MAX_REPORT_BYTES + 1)
        except OSError as exc:
            raise NormtestError(f"cannot read the {what} {path}: {exc.strerror}") from exc
        if len(raw) > MAX_REPORT_BYTES:  # it grew while being read
            raise NormtestError(f"the {what} {path} is larger than any report normtest writes; "
                                "give the report.json that normtest wrote")
        if raw[:2] == b"\x1f\x8b":  # gzip (a report.json.gz)
            raw = _gunzipped(raw, f"the {what} {path}")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NormtestError(
                f"the {what} {path} is not UTF-8 text (byte {exc.start} is 0x{raw[exc.start]:02x})"
                "; give the report.json that normtest wrote"
            ) from exc

        try:
            data = load(text, SCHEMA)  # checked as it is parsed: junk fails at its first entry
        except json.JSONDecodeError as exc:
            raise NormtestError(f"the {what} {path}: report is not valid JSON: {exc}") from exc
        except NormtestError as exc:
            raise NormtestError(f"the {what} {path}: {_invalid(exc)}") from None
        except RecursionError:
            raise NormtestError(f"the {what} {path} is JSON nested too deeply to be a report; "
                                "give the report.json that normtest wrote") from None
        try:
            report = cls.from_dict(data)
        except NormtestError as exc:
            raise NormtestError(f"the {what} {path}: {exc}") from exc
        if verify:
            _check_digest(data, f"the {what} {path}")
            signed = isinstance(data, Mapping) and "digest" in data
            found = (duplicate_rows(report) + implausible_rows(report, data, replicates=not signed)
                     + misjudged_rows(report))
            if found:
                more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
                raise NormtestError(
                    f"the {what} {path} was modified after normtest wrote it, or is damaged: "
                    f"{found[0]}{more}; write it again with normtest audit")
        return report


def _gunzipped(raw: bytes, where: str) -> bytes:
    """A gzip-compressed report's text, at most :data:`MAX_REPORT_BYTES` of it."""
    import zlib

    inflate = zlib.decompressobj(wbits=31)  # gzip's header and trailer
    try:
        text = inflate.decompress(raw, MAX_REPORT_BYTES + 1)
    except zlib.error as exc:
        raise NormtestError(f"{where} is not a readable gzip file ({exc}); give the "
                            "report.json (or report.json.gz) that normtest wrote") from None
    if len(text) > MAX_REPORT_BYTES or inflate.unconsumed_tail:
        raise NormtestError(f"{where} holds more than any report normtest writes; give the "
                            "report.json that normtest wrote")
    if not inflate.eof:
        raise NormtestError(f"{where} is not a readable gzip file (it ends short); give the "
                            "report.json (or report.json.gz) that normtest wrote")
    return text


DIGEST = "sha256"


def digest_of(body: Mapping[str, Any]) -> str:
    """``"sha256:<hex>"`` of a report's JSON entries other than ``digest``, as canonical JSON:
    keys sorted, no spaces, non-ASCII kept, UTF-8 (what :func:`json.loads` gives back of the
    file normtest wrote; reformatting the file or changing its line endings keeps it)."""
    entries = {k: v for k, v in body.items() if k != "digest"}
    text = json.dumps(entries, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)
    return f"{DIGEST}:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_digest(data: Any, where: str) -> None:
    """Refuse a report whose digest does not match its entries; warn about one without any."""
    if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
        return  # from_dict says what is wrong with it
    stored = data.get("digest")
    if stored is None:
        warnings.warn(f"{where} carries no digest (written by an older normtest), so normtest "
                      "cannot tell whether it was modified since; audit again to record one",
                      UserWarning, stacklevel=3)
        return
    try:
        expected = digest_of(data)
    except (TypeError, ValueError) as exc:  # not JSON of a report (NaN tokens, …)
        raise NormtestError(f"{where} is damaged ({exc}); write it again with normtest "
                            "audit") from exc
    if stored != expected:
        raise NormtestError(
            f"{where} was modified after normtest wrote it: its digest does not match its "
            "contents; give the report.json normtest wrote (or audit again)")


def _close(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def implausible_rows(report: Report, data: Mapping[str, Any] | None = None, *,
                     replicates: bool = True) -> list[str]:
    """Rows no run of normtest writes, each as ``row ID: what is wrong``: an estimate outside
    its own normal, t or Fisher-z interval (centred on it by construction), a component likewise,
    a stored row whose
    shown ``estimate`` is not its measurement's, and — with ``replicates``, for a report without
    a digest, where nothing else speaks for its rows — a bootstrap estimate outside the range of
    its replicates. The last is no rule of a signed report: a ratio of slopes (a component such as
    ``late_early_ratio``) can fall outside the range of its own replicates when its denominator is
    small on the whole sample, so a digest that matches is what vouches for those rows."""
    found: list[str] = []
    rows = data.get("results") if isinstance(data, Mapping) else None
    raw_rows = rows if isinstance(rows, list) and len(rows) == len(report.results) else None
    for i, result in enumerate(report.results):
        measurement = result.measurement
        if measurement is None:
            continue
        problem = _outside(measurement, replicates)
        if problem is None:
            for name, component in measurement.components.items():
                inner = _outside(component, replicates)
                if inner is not None:
                    problem = f"its component {name}: {inner}"
                    break
        if problem is None and raw_rows is not None and isinstance(raw_rows[i], Mapping):
            shown = raw_rows[i].get("estimate")
            if isinstance(shown, (int, float)) and not isinstance(shown, bool) \
                    and math.isfinite(measurement.estimate) \
                    and not _close(float(shown), measurement.estimate):
                problem = (f"its estimate {shown!r} is not its measurement's "
                           f"({measurement.estimate!r})")
            shown_ci = raw_rows[i].get("ci")
            if problem is None and isinstance(shown_ci, list) and len(shown_ci) == 2 \
                    and all(isinstance(x, int | float) and not isinstance(x, bool)
                            for x in shown_ci) \
                    and not all(_close_or_nan(float(x), y)
                                for x, y in zip(shown_ci, result.ci, strict=True)):
                problem = (f"its interval {shown_ci!r} is not its measurement's "
                           f"[{result.ci[0]:.6g}, {result.ci[1]:.6g}]")
        if problem is not None:
            found.append(f"row {result.id}: {problem}")
    return found


def duplicate_rows(report: Report) -> list[str]:
    """Row ids a report holds more than once (each row is one claim under one variant, so an
    audit writes each once)."""
    seen: dict[str, int] = {}
    for result in report.results:
        seen[result.id] = seen.get(result.id, 0) + 1
    return [f"row {row} appears {count} times" for row, count in seen.items() if count > 1]


def misjudged_rows(report: Report) -> list[str]:
    """Rows whose verdict is not the one their own measurement and criterion give: every row
    judged again, the report's multiplicity adjusted again (Holm over its confirmatory rows,
    Benjamini–Hochberg over its exploratory ones), and each verdict compared with the stored
    one. A stored PASS whose interval lies below its threshold is found here."""

    if report.slim_note:  # its rows are read as written (the sketches cannot give the
        return []         # replicates' p-values back): the digest vouches for them
    try:
        again = adjust_audit([r.rejudge(r.criterion)
                              if r.measurement is not None and r.criterion is not None else r
                              for r in report.results])
    except (ValueError, KeyError, TypeError, ArithmeticError) as exc:  # a row normtest never wrote
        return [f"its rows cannot be judged again ({type(exc).__name__}: {exc})"]
    found = []
    for old, new in zip(report.results, again, strict=True):
        if not all(_close_or_nan(a, b) for a, b in zip(old.ci, new.ci, strict=True)):
            found.append(f"row {old.id}: its interval [{old.ci[0]:.6g}, {old.ci[1]:.6g}] is not "
                         f"its measurement's [{new.ci[0]:.6g}, {new.ci[1]:.6g}]")
        elif old.verdict != new.verdict:
            found.append(f"row {old.id}: its verdict {old.verdict.value} is not what its "
                         f"estimate {old.estimate:.6g} [{old.ci[0]:.6g}, {old.ci[1]:.6g}] gives "
                         f"against its threshold ({new.verdict.value})")
    return found


def _close_or_nan(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or _close(a, b)


def _outside(measurement: Any, replicates: bool) -> str | None:
    """Why a measurement's estimate cannot be its own (None: it can)."""
    estimate, sampling = measurement.estimate, measurement.sampling
    if sampling is None or not math.isfinite(estimate):
        return None
    if sampling.kind == "bootstrap":
        if not replicates:
            return None
        reps = sampling.replicates[~np.isnan(sampling.replicates)]
        if reps.size == 0:
            return None
        low, high = float(reps.min()), float(reps.max())
        if low - 1e-9 * max(1.0, abs(low)) <= estimate <= high + 1e-9 * max(1.0, abs(high)):
            return None
        return (f"its estimate {estimate:.6g} lies outside the range of its {reps.size} "
                f"bootstrap replicates [{low:.6g}, {high:.6g}]")
    low, high = measurement.interval(0.9)
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    slack = 1e-9 * max(1.0, abs(low), abs(high))
    if low - slack <= estimate <= high + slack:
        return None
    return f"its estimate {estimate:.6g} lies outside its own interval [{low:.6g}, {high:.6g}]"


#: What a damaged but schema-valid report raises while its rows are rebuilt (wrong types,
#: missing keys, numbers too large for a float, NaN where an integer belongs).
_DAMAGE = (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError)


def _invalid(exc: Exception) -> str:
    """A report that does not follow its schema (normtest.audit.report_schema), in one sentence."""
    return (f"not a valid {SCHEMA} report: {exc}; give the report.json that normtest wrote "
            "(or audit again)")


def _schema_problem(schema: object) -> str:
    """Why a report's ``schema`` cannot be read, and what to do about it."""
    prefix = SCHEMA.rsplit("/", 1)[0] + "/"
    if isinstance(schema, str) and schema.startswith(prefix):
        version = schema[len(prefix):]
        if version.isdigit() and int(version) > int(SCHEMA.rsplit("/", 1)[1]):
            return (f"it was written by a newer normtest (schema {schema!r}; this version reads "
                    f"{SCHEMA!r}); upgrade normtest: pip install --upgrade normtest")
    return (f"not a normtest report of schema {SCHEMA!r} (found schema {schema!r}); give a "
            "report.json written by normtest audit, gate or demo")


_NUMBERS = {int, float}
#: a list of these (at least one a number) stands on one line
_COMPACT = {int, float, type(None)}


def _plain(item: Any) -> Any:
    """``item`` as what :func:`json.loads` gives back of its JSON: mappings with string keys,
    lists, non-finite floats as None, numpy scalars as Python numbers."""
    if isinstance(item, float):
        return item if math.isfinite(item) else None
    if isinstance(item, Mapping):
        return {str(k): _plain(v) for k, v in item.items()}
    if isinstance(item, (list, tuple)):
        if len(item) > 1 and set(map(type, item)) <= _NUMBERS:  # plain numbers: one check
            if np.isfinite(np.asarray(item, dtype=np.float64)).all():
                return list(item)
        return [_plain(v) for v in item]
    if hasattr(item, "item") and callable(item.item):  # numpy scalars
        return _plain(item.item())
    return item


def _dumps(value: Any, indent: int | None) -> str:
    """JSON of ``value`` with non-finite floats as null and each list of numbers compact.

    Each list of numbers is serialised on its own (by the C encoder) and stands in the indented
    text as a placeholder string carrying a random nonce, replaced in one pass at the end.
    """
    nonce = secrets.token_hex(8)
    compact: list[str] = []

    def lift(item: Any) -> Any:
        if isinstance(item, float):
            return item if math.isfinite(item) else None
        if isinstance(item, Mapping):
            return {str(k): lift(v) for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            kinds = set(map(type, item))
            if len(item) > 1 and kinds <= _COMPACT and kinds & _NUMBERS:  # numbers: compact
                finite = np.isfinite(np.asarray(item, dtype=np.float64)).all()
                items = list(item) if finite else [lift(v) for v in item]
                compact.append(json.dumps(items, separators=(",", ":"), allow_nan=False))
                return f"{nonce}:{len(compact) - 1}"
            return [lift(v) for v in item]
        if hasattr(item, "item") and callable(item.item):  # numpy scalars
            return lift(item.item())
        return item

    text = json.dumps(lift(value), indent=indent, allow_nan=False)
    if not compact:
        return text
    return re.sub(f'"{nonce}:(\\d+)"', lambda m: compact[int(m.group(1))], text)
