"""The report object and its JSON form, schema ``normtest.report/1``.

Shape::

    {"schema": "normtest.report/1", "model": {...}, "provenance": {...},
     "scorecard": [...], "results": [...], "summary": {"PASS": n, "FAIL": n, ...},
     "data": {...}}

``scorecard`` (see :mod:`normtest.scorecard`) lists the paper's hypotheses in order, each with its
``status`` (``replicated``, ``contradicted``, ``undecided``, ``not tested``), a one-sentence
``reason`` and the confirmatory ``rows`` behind it (id, verdict, expected, estimate, interval,
threshold). It is derived from the results (each carries its ``role`` and ``hypothesis``), so a
reader that ignores it loses nothing.

``data`` (optional) holds what the plots need, so that a stored report can be re-rendered
without the model: ``words`` (the sample, its IC, token counts and ‖e(w)‖² per variant of
``word.norm_ic``), ``prefixes`` (s(L) per prefix, document and pooling) and ``texts`` (sentence
IC and ‖e(t)‖² per pooling). Variant keys are the bracket part of a result id, such as
``composition=sqrt_n,representation=last,transform=raw``.

Every renderer (terminal table, Markdown, HTML, JUnit) reads this one object.
"""

from __future__ import annotations

import json
import math
import platform
import re
import secrets
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from normtest.errors import NormtestError
from normtest.result import Criterion, Result, Verdict

if TYPE_CHECKING:
    from normtest.scorecard import Line

SCHEMA = "normtest.report/1"


def provenance(**extra: Any) -> dict[str, Any]:
    """Versions of normtest and its numerical stack, plus whatever the caller adds."""
    import numpy
    import scipy
    import statsmodels

    from normtest import __version__

    out: dict[str, Any] = {
        "normtest": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "statsmodels": statsmodels.__version__,
    }
    out.update(extra)
    return out


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
    hypotheses: Sequence[tuple[str, ...]] | None = None
    #: each tested line re-decided under its specifications (normtest.robustness)
    robustness: Sequence[Any] = ()
    #: each tested line's positive and negative controls (normtest.controls)
    controls: Sequence[Any] = ()

    def controls_of(self, key: str) -> Any | None:
        """The controls of scorecard line ``key`` (a ``LineControls``), or None."""
        return next((c for c in self.controls if c.line == key), None)

    def robustness_of(self, key: str) -> Any | None:
        """The robustness of scorecard line ``key`` (a ``LineRobustness``), or None."""
        return next((r for r in self.robustness if r.line == key), None)

    @property
    def scorecard(self) -> list[Line]:
        """The paper's hypotheses, each replicated, contradicted, undecided or not tested."""
        from normtest.scorecard import build

        return build(self.results, self.hypotheses, self.controls)

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
        from normtest.stats.multiplicity import adjust_audit

        def rejudged(r: Result) -> Result:
            new = criteria.get(r.claim or "")
            if new is None:
                return r
            return r.rejudge(new) if r.measurement is not None else replace(r, criterion=new)

        return replace(self, results=adjust_audit([rejudged(r) for r in self.results]))

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
        the file four times larger and took Python's indenting encoder 0.2 s)."""
        return _dumps(self.to_dict(), indent)

    def write(self, path: str | Path) -> Path:
        """Write the JSON report; parent folders are created."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.to_json() + "\n", encoding="utf-8")
        return target

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Report:
        """Rebuild from a mapping; refuses an unknown schema."""
        schema = data.get("schema") if isinstance(data, Mapping) else None
        if schema != SCHEMA:
            raise NormtestError(_schema_problem(schema))
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
            from normtest.controls import LineControls
            from normtest.robustness import LineRobustness
            from normtest.scorecard import titles_of

            stored = {key: data.get(key) or [] for key in ("robustness", "controls")}
            for key, value in stored.items():
                if not isinstance(value, list):
                    raise TypeError(f"{key!r} is not a list")
            return cls(results=parsed, model=dict(parts["model"]),
                       provenance=dict(parts["provenance"]), data=dict(parts["data"]),
                       hypotheses=titles_of(data.get("scorecard")),
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
        return cls.from_dict(data)

    @classmethod
    def read(cls, path: str | Path, what: str = "report") -> Report:
        """Read a JSON report from a file; ``what`` names it in errors ("baseline report" …)."""
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise NormtestError(f"cannot read the {what} {path}: {exc.strerror}") from exc
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NormtestError(
                f"the {what} {path} is not UTF-8 text (byte {exc.start} is 0x{raw[exc.start]:02x})"
                "; give the report.json that normtest wrote"
            ) from exc
        try:
            return cls.from_json(text)
        except NormtestError as exc:
            raise NormtestError(f"the {what} {path}: {exc}") from exc


#: What a damaged but schema-valid report raises while its rows are rebuilt (wrong types,
#: missing keys, numbers too large for a float, NaN where an integer belongs).
_DAMAGE = (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError)


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
            if len(item) > 1 and set(map(type, item)) <= _NUMBERS:  # plain numbers: compact
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
