"""A report as flat tables: its rows as CSV, its metrics as JSON lines, its data as one CSV
per kind.

::

    normtest report reports/minilm/report.json --format csv       # one line per row
    normtest report reports/minilm/report.json --format metrics   # one JSON line per metric
    normtest report reports/minilm/report.json --data tables/     # words, sentences, curves

``rows_csv``: id, claim, line, role, every variant axis as its own column, estimate, the interval
the verdict read and how it was read (bootstrap, analytic or exact), the threshold (or margin),
verdict, the paper's expectation, agreement, the adjusted p-value, n, and beside a baseline its ρ,
the beyond reading and its verdict — what a spreadsheet or ``pandas.read_csv`` takes.
``metrics_jsonl``: one JSON object per line, ``{"model", "metric", "value"}``, for each line's
status and each row's estimate, bounds and verdict — what an experiment tracker's log call takes
(docs/ci.md shows MLflow's and W&B's). ``data_tables``: ``words.csv`` (one line per word: its IC,
token count and squared norm under every measured variant), ``sentences.csv`` (per sentence: its
document, length, surprisal and norms), ``curves.csv`` (per document, pooling and prefix length:
s(L)).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from normtest.verdict.result import Result


class Report(Protocol):
    """What the tables read of a :class:`normtest.audit.report.Report` (named so, not imported:
    the report's ``to_pandas`` calls in here)."""

    @property
    def results(self) -> Sequence[Result]: ...
    @property
    def model(self) -> Mapping[str, Any]: ...
    @property
    def data(self) -> Mapping[str, Any]: ...
    @property
    def scorecard(self) -> Any: ...

__all__ = ["data_tables", "metrics_jsonl", "rows_csv", "to_pandas"]


def _csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None or (isinstance(v, float) and not math.isfinite(v))
                         else v for v in row])
    return out.getvalue()


def _bounds(r: Result) -> tuple[float | None, float | None]:
    """The interval the verdict read (its criterion's 1 − 2α), or the stored one."""
    m, c = r.measurement, r.criterion
    if m is not None and c is not None and m.sampling is not None:
        return m.interval(1 - 2 * c.alpha)
    return r.ci


def _threshold(r: Result) -> tuple[Any, Any, Any]:
    """(direction, threshold or low, high) of a row's criterion."""
    c = r.criterion
    if c is None:
        return None, None, None
    if c.direction == "within" and c.margin is not None:
        return c.direction, c.margin[0], c.margin[1]
    return c.direction, c.threshold, None


def rows_csv(report: Report) -> str:
    """Every row of the report, one CSV line each."""
    axes = list(dict.fromkeys(k for r in report.results for k in r.variant))
    header = ["id", "claim", "line", "role", *axes, "estimate", "low", "high", "interval",
              "direction",
              "threshold", "threshold_high", "verdict", "expected", "agrees", "p_adjusted", "n",
              "baseline_rho", "beyond", "beyond_low", "beyond_high", "beyond_verdict"]

    def line(r: Result) -> list[Any]:
        low, high = _bounds(r)
        m = r.measurement
        base = None if m is None else m.components.get("baseline")
        beyond = None if m is None else m.components.get("beyond")
        b_low, b_high = (None, None) if beyond is None or beyond.sampling is None or \
            r.criterion is None else beyond.interval(1 - 2 * r.criterion.alpha)
        judged = r.details.get("beyond")
        return [r.id, r.claim, r.hypothesis, r.role, *(r.variant.get(a) for a in axes),
                r.estimate, low, high, None if m is None else m.interval_kind,
                *_threshold(r), r.verdict.value,
                r.expected.value if r.expected is not None else None, r.agreement,
                r.p_adjusted, r.n, None if base is None else base.estimate,
                None if beyond is None else beyond.estimate, b_low, b_high,
                judged.get("verdict") if isinstance(judged, Mapping) else None]

    return _csv(header, (line(r) for r in report.results))


def metrics_jsonl(report: Report) -> str:
    """One JSON object per line: each scorecard line's status (and 1 for replicated, −1 for
    contradicted, 0 otherwise), each row's estimate, bounds and verdict."""
    model = str(report.model.get("name", ""))
    score = {"replicated": 1, "contradicted": -1}
    out = []

    def put(metric: str, value: Any) -> None:
        if isinstance(value, float) and not math.isfinite(value):
            return
        out.append(json.dumps({"model": model, "metric": metric, "value": value},
                              ensure_ascii=False))

    for line in report.scorecard:
        put(f"line/{line.key}/status", line.status)
        put(f"line/{line.key}/score", score.get(line.status, 0))
    for r in report.results:
        low, high = _bounds(r)
        put(f"row/{r.id}/estimate", r.estimate)
        if low is not None:
            put(f"row/{r.id}/low", low)
        if high is not None:
            put(f"row/{r.id}/high", high)
        put(f"row/{r.id}/verdict", r.verdict.value)
    return "\n".join(out) + "\n"


def data_tables(report: Report) -> dict[str, str]:
    """``{file name: CSV}`` for each kind of data the report holds: ``words.csv``,
    ``sentences.csv``, ``curves.csv`` (none for a report without plot data)."""
    data = report.data if isinstance(report.data, Mapping) else {}
    out: dict[str, str] = {}
    words = data.get("words")
    if isinstance(words, Mapping) and words.get("words"):
        norms = words.get("squared_norms") or {}
        keys = list(norms)
        out["words.csv"] = _csv(
            ["word", "information", "token_count", *(f"squared_norm[{k}]" for k in keys)],
            ([w, _at(words.get("information"), i), _at(words.get("token_counts"), i),
              *(_at(norms[k], i) for k in keys)] for i, w in enumerate(words["words"])))
    texts = data.get("texts")
    if isinstance(texts, Mapping) and texts.get("information"):
        norms = texts.get("squared_norms") or {}
        keys = list(norms)
        ids = texts.get("document_ids") or []
        sentences = texts.get("sentences") or []

        def document(i: int) -> Any:
            index = _at(texts.get("document"), i)
            return ids[index] if isinstance(index, int) and 0 <= index < len(ids) else index

        out["sentences.csv"] = _csv(
            ["sentence", "document", "length", "information",
             *(f"squared_norm[{k}]" for k in keys)],
            ([_at(sentences, i), document(i), _at(texts.get("lengths"), i), value,
              *(_at(norms[k], i) for k in keys)]
             for i, value in enumerate(texts["information"])))
    prefixes = data.get("prefixes")
    curves = prefixes.get("curves") if isinstance(prefixes, Mapping) else None
    if isinstance(curves, Mapping) and curves:
        names = (prefixes.get("documents") or []) if isinstance(prefixes, Mapping) else []

        def rows() -> Iterable[list[Any]]:
            for key, curve in curves.items():
                for i, length in enumerate(curve.get("lengths") or []):
                    doc = _at(curve.get("document"), i)
                    named = names[doc] if isinstance(doc, int) and 0 <= doc < len(names) \
                        else doc
                    yield [named, key, length, _at(curve.get("squared_norms"), i)]

        out["curves.csv"] = _csv(["document", "variant", "length", "squared_norm"], rows())
    return out


def _at(values: Any, i: int) -> Any:
    return values[i] if isinstance(values, list) and i < len(values) else None


#: The tables :func:`to_pandas` gives, each by its name.
TABLES = ("rows", "words", "sentences", "curves")


def to_pandas(report: Report, table: str = "rows") -> Any:
    """One of the report's tables as a ``pandas.DataFrame``: ``rows`` (:func:`rows_csv`), or
    the data's ``words``, ``sentences``, ``curves`` (:func:`data_tables`). pandas is optional
    (``pip install 'normtest[pandas]'``)."""
    from normtest.errors import NormtestError

    if table not in TABLES:
        raise NormtestError(f"no table {table!r}; the tables are {', '.join(TABLES)}")
    try:
        import pandas
    except ImportError:
        raise NormtestError("Report.to_pandas needs pandas: pip install 'normtest[pandas]' (or "
                            "read report.to_csv() / the --data tables with any CSV reader)"
                            ) from None
    text = rows_csv(report) if table == "rows" else data_tables(report).get(f"{table}.csv")
    if text is None:
        raise NormtestError(f"the report holds no {table} data (it measured no claim on them, "
                            "or predates plot data)")
    return pandas.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""])
