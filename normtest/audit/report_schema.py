"""The schema of ``report.json`` (``normtest.report/1``), checked before a report is used.

:func:`validate` is called by :meth:`normtest.audit.report.Report.from_dict` — which every reader
goes through (``Report.read`` for a file: the gate, ``normtest report``, ``normtest compare``, the
renderers) — so a file that is not a report is refused before anything renders, gates or
compares it, with one :class:`~normtest.errors.NormtestError` naming the first bad key path::

    not a valid normtest.report/1 report: results[3].verdict: expected one of PASS, FAIL,
    INCONCLUSIVE, ERROR, SKIPPED, found 'MAYBE'

What is checked: the required keys (``schema``, ``model``, ``provenance``, ``results``,
``summary``) and the type of every key normtest writes — at the top level (an unknown key there
is refused: a report is not a place for anything else), in each result row (its verdict, interval,
threshold, measurement with its sampling distribution and components, criterion), in the stored
scorecard, robustness and controls, and in the plot data. Keys normtest may add inside a row in a
later version are allowed. Older reports (without ``scorecard``, ``robustness``, ``controls``,
``digest``, or a row's ``role``, ``hypothesis``, ``stands_for``, ``p_fail_adjusted``) validate.
Whether the numbers are the ones normtest computed is the digest's business (normtest.audit.report).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from normtest.errors import NormtestError

__all__ = ["MAX_REPORT_BYTES", "SchemaError", "validate"]

#: The largest report file normtest reads (a thorough audit with a layer profile stays far
#: below): a larger file is refused before it is read.
MAX_REPORT_BYTES = 1 << 30

Check = Callable[[Any, str], None]


class SchemaError(NormtestError):
    """A report that does not follow its schema: ``path`` is the first bad key path."""

    def __init__(self, path: str, problem: str) -> None:
        self.path, self.problem = path, problem
        super().__init__(f"{path}: {problem}" if path else problem)


_VERDICTS = ("PASS", "FAIL", "INCONCLUSIVE", "ERROR", "SKIPPED")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _KEY.match(key):
        return f"{path}.{key}" if path else key
    text = key if len(key) <= 60 else key[:57] + "..."
    return f"{path}[{text!r}]"


def _found(value: Any) -> str:
    """What a value is, in words, with a short excerpt."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{'true' if value else 'false'}"
    if isinstance(value, int | float):
        text = repr(value)
        return f"the number {text if len(text) <= 20 else text[:17] + '...'}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}" + (" (cut)" if len(value) > 40 else "")
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _bad(path: str, expected: str, value: Any) -> SchemaError:
    return SchemaError(path, f"expected {expected}, found {_found(value)}")


# -- checks ------------------------------------------------------------------------------------
def _is_number(value: Any) -> bool:
    return type(value) is float or type(value) is int


def STR(value: Any, path: str) -> None:
    if not isinstance(value, str):
        raise _bad(path, "a string", value)


def INT(value: Any, path: str) -> None:
    if type(value) is not int:
        raise _bad(path, "a whole number", value)


def NUMBER(value: Any, path: str) -> None:
    if not _is_number(value):
        raise _bad(path, "a number", value)


def BOOL(value: Any, path: str) -> None:
    if not isinstance(value, bool):
        raise _bad(path, "true or false", value)


#: How deep a free-form entry (a row's ``details``, a measurement's ``settings``) may nest:
#: normtest writes a few levels; a deeper one would exhaust Python's recursion where the report
#: is rendered, compared or written again, so it is refused where it is read.
MAX_DEPTH = 32


def _shallow(value: Any, path: str) -> None:
    """Refuse a value nested more than :data:`MAX_DEPTH` levels (checked without recursion)."""
    level = [value]
    for _ in range(MAX_DEPTH):
        level = [child for item in level if isinstance(item, Mapping | list)
                 for child in (item.values() if isinstance(item, Mapping) else item)
                 if isinstance(child, Mapping | list)]
        if not level:
            return
    raise SchemaError(path, f"nested more than {MAX_DEPTH} levels deep; normtest writes a few")


def OBJECT(value: Any, path: str) -> None:
    if not isinstance(value, Mapping):
        raise _bad(path, "an object", value)
    _shallow(value, path)


def ANY(value: Any, path: str) -> None:
    _shallow(value, path)


def nullable(check: Check) -> Check:
    def run(value: Any, path: str) -> None:
        if value is not None:
            try:
                check(value, path)
            except SchemaError as exc:
                if exc.path == path and exc.problem.startswith("expected "):
                    raise SchemaError(path, exc.problem.replace("expected ", "expected null or ",
                                                                1)) from None
                raise
    return run


def one_of(*values: str) -> Check:
    def run(value: Any, path: str) -> None:
        if value not in values or not isinstance(value, str):
            raise _bad(path, "one of " + ", ".join(values), value)
    return run


def list_of(check: Check, length: int | None = None) -> Check:
    def run(value: Any, path: str) -> None:
        if not isinstance(value, list):
            raise _bad(path, "a list", value)
        if length is not None and len(value) != length:
            raise SchemaError(path, f"expected a list of {length}, found a list of "
                                    f"{len(value)}")
        for i, item in enumerate(value):
            check(item, f"{path}[{i}]")
    return run


def _fast_list(test: Callable[[Any], bool], items: str, item: str) -> Check:
    """A list whose every item passes ``test`` (checked in one pass; the first bad one named)."""
    def run(value: Any, path: str) -> None:
        if not isinstance(value, list):
            raise _bad(path, f"a list of {items}", value)
        if all(map(test, value)):
            return
        i = next(i for i, v in enumerate(value) if not test(v))
        raise _bad(f"{path}[{i}]", item, value[i])
    return run


NUMBERS = _fast_list(lambda v: v is None or type(v) is float or type(v) is int,
                     "numbers", "a number or null")
INTS = _fast_list(lambda v: type(v) is int, "whole numbers", "a whole number")
STRINGS = _fast_list(lambda v: isinstance(v, str), "strings", "a string")


def mapping_of(check: Check) -> Check:
    """An object with any keys, each value passing ``check``."""
    def run(value: Any, path: str) -> None:
        if not isinstance(value, Mapping):
            raise _bad(path, "an object", value)
        for key, item in value.items():
            check(item, _join(path, key))
    return run


def obj(required: Mapping[str, Check] | None = None, optional: Mapping[str, Check] | None = None,
        closed: bool = False, what: str = "an object", rest: Check | None = None) -> Check:
    """An object with these required and optional keys (``closed``: no other key; ``rest``:
    the check of any other key's value)."""
    required, optional = dict(required or {}), dict(optional or {})
    known = {**required, **optional}

    def run(value: Any, path: str) -> None:
        if not isinstance(value, Mapping):
            raise _bad(path, what, value)
        if closed:
            for key in value:
                if key not in known:
                    raise unknown_key(path, key, known)
        for key, check in required.items():
            if key not in value:
                raise SchemaError(_join(path, key), "missing (a required key)")
            check(value[key], _join(path, key))
        for key, item in value.items():
            typed = optional.get(key)
            if typed is not None:
                typed(item, _join(path, key))
            elif rest is not None and key not in required:
                rest(item, _join(path, key))
    return run


def unknown_key(path: str, key: Any, known: Mapping[str, Any]) -> SchemaError:
    return SchemaError(_join(path, str(key)), f"unknown key (a report holds "
                                              f"{', '.join(known)})")


def _lazy(get: Callable[[], Check]) -> Check:
    def run(value: Any, path: str) -> None:
        get()(value, path)
    return run


# -- the report ---------------------------------------------------------------------------------
PAIR = list_of(nullable(NUMBER), length=2)
VARIANT = mapping_of(STR)


def _sampling(value: Any, path: str) -> None:
    OBJECT(value, path)
    kind = value.get("kind")
    one_of("normal", "t", "fisher_z", "binomial", "bootstrap")(kind, _join(path, "kind"))
    if kind == "bootstrap":
        obj({"replicates": NUMBERS}, {"bias": NUMBER, "sketch_of": INT})(value, path)
    else:
        obj({"center": NUMBER, "scale": NUMBER}, {"df": nullable(NUMBER)})(value, path)


CRITERION: Check = obj(
    {"direction": one_of("greater", "less", "within")},
    {"threshold": nullable(NUMBER), "margin": nullable(list_of(NUMBER, length=2)),
     "alpha": NUMBER, "components": mapping_of(_lazy(lambda: CRITERION))})

MEASUREMENT: Check = obj(
    {"statistic": STR, "n": INT, "method": STR},
    {"estimate": nullable(NUMBER), "ci": PAIR, "confidence": NUMBER, "seed": ANY,
     "settings": OBJECT, "reason": nullable(STR), "sampling": nullable(_sampling),
     "components": mapping_of(_lazy(lambda: MEASUREMENT)), "inputs": nullable(STR),
     "draws": nullable(STR)})


def _threshold(value: Any, path: str) -> None:
    if value is None or _is_number(value):
        return
    if isinstance(value, list):
        list_of(NUMBER, length=2)(value, path)
        return
    raise _bad(path, "a number, [low, high] or null", value)


#: The largest sample size a row may state (2**53: every whole number a float holds exactly).
MAX_N = 2 ** 53


def _true_row(value: Any, path: str) -> None:
    """What a row states must be possible: p-values in [0, 1], an interval whose lower bound
    is not above its upper one, a sample size from 0 to :data:`MAX_N`."""
    for key in ("p_value", "p_adjusted", "p_fail_adjusted"):
        p = value.get(key)
        if p is not None and not 0.0 <= p <= 1.0:
            raise SchemaError(_join(path, key), f"a probability must lie in [0, 1], found {p!r}")
    for where, ci in (("ci", value.get("ci")),
                      ("measurement.ci", (value.get("measurement") or {}).get("ci"))):
        if isinstance(ci, list) and len(ci) == 2 and None not in ci and ci[0] > ci[1]:
            raise SchemaError(_join(path, where), f"the interval's lower bound {ci[0]!r} lies "
                                                  f"above its upper bound {ci[1]!r}")
    n = value.get("n")
    if n is not None and not 0 <= n <= MAX_N:
        raise SchemaError(_join(path, "n"), f"a sample size must lie in [0, 2**53], found {n!r}")


def _checked_then(first: Check, then: Check) -> Check:
    def run(value: Any, path: str) -> None:
        first(value, path)
        then(value, path)

    return run


RESULT = _checked_then(obj(
    {"claim": nullable(STR), "variant": VARIANT, "verdict": one_of(*_VERDICTS),
     "estimate": nullable(NUMBER), "ci": PAIR, "threshold": _threshold,
     "p_value": nullable(NUMBER), "p_adjusted": nullable(NUMBER), "n": nullable(INT),
     "expected": nullable(one_of(*_VERDICTS)), "reason": STR, "details": OBJECT,
     "measurement": nullable(MEASUREMENT), "criterion": nullable(CRITERION)},
    {"p_fail_adjusted": nullable(NUMBER), "role": nullable(one_of("confirmatory", "exploratory")),
     "hypothesis": nullable(STR), "stands_for": list_of(VARIANT)},
    what="an object (a result row)"), _true_row)

LINE = obj({"key": STR}, {"title": STR, "source": STR, "short": STR, "reference": STR,
                          "status": STR, "reason": STR, "rows": list_of(OBJECT)})

SPECIFICATION = obj({"choices": VARIANT, "status": STR}, {"rows": list_of(OBJECT)})
ROBUSTNESS = obj(
    {"line": STR, "status": STR},
    {"reference": VARIANT, "specifications": list_of(SPECIFICATION), "notes": STRINGS,
     "seconds": nullable(NUMBER), "left_out": mapping_of(INT), "share": nullable(NUMBER),
     "robust": BOOL, "n": INT, "label": STR, "modal": STR})

CONTROL = obj(
    {"kind": one_of("positive", "negative", "confound"), "status": STR},
    {"rows": list_of(OBJECT), "note": nullable(STR), "beyond": nullable(STR),
     "planted": nullable(NUMBER), "power": nullable(NUMBER), "needs": nullable(STR),
     "expected": nullable(STR), "ok": BOOL})
CONTROLS = obj(
    {"line": STR},
    {"valid": BOOL, "reason": STR, "problem": nullable(STR), "seconds": nullable(NUMBER),
     "positive": nullable(CONTROL), "negative": nullable(CONTROL),
     "confound": nullable(CONTROL)})

DATA = obj(optional={
    "words": obj(optional={"words": STRINGS, "information": NUMBERS, "token_counts": INTS,
                           "squared_norms": mapping_of(NUMBERS),
                           "pairs": obj(optional={"pmi": NUMBERS,
                                                  "inner_products": mapping_of(NUMBERS)})}),
    "texts": obj(optional={"sentences": STRINGS, "surprisal_model": nullable(STR),
                           "information": NUMBERS, "document": INTS, "document_ids": STRINGS,
                           "lengths": INTS, "squared_norms": mapping_of(NUMBERS)}),
    "prefixes": obj(optional={"documents": STRINGS, "unit": STR, "tokens": list_of(INTS),
                              "curves": mapping_of(obj(optional={
                                  "lengths": INTS, "squared_norms": NUMBERS,
                                  "document": INTS}))}),
})

PROVENANCE = obj(optional={
    "normtest": STR, "seed": nullable(INT), "resamples": nullable(INT),
    "alpha": nullable(NUMBER), "words_requested": nullable(INT), "dropped_words": OBJECT,
    "sample": OBJECT, "audit_settings": OBJECT, "layers": STRINGS, "n_layers": INT,
    "multiplicity": OBJECT, "scope": nullable(STR), "profile": nullable(STR),
    "rejudged": OBJECT})

#: The longest string a report's ``model`` entry holds (a name, a path, a revision).
MAX_MODEL_TEXT = 4096


def _model_value(value: Any, path: str) -> None:
    """A scalar: what normtest records of a model (name, revision, family, dim, …)."""
    if isinstance(value, str):
        if len(value) > MAX_MODEL_TEXT:
            raise SchemaError(path, f"a string of {len(value):,} characters; a model's entries "
                                    f"hold at most {MAX_MODEL_TEXT:,}")
        return
    if value is not None and not isinstance(value, bool | int | float):
        raise _bad(path, "a string, a number, true/false or null", value)


def _model(value: Any, path: str) -> None:
    _MODEL_KEYS(value, path)
    mapping_of(_model_value)(value, path)


_MODEL_KEYS = obj(optional={"name": STR, "revision": nullable(STR), "family": nullable(STR),
                            "dim": nullable(INT)})


MODEL = _model

#: The top-level entries: the required ones (every normtest has written them), then the others.
REQUIRED: dict[str, Check] = {"schema": STR, "model": MODEL, "provenance": PROVENANCE,
                              "results": list_of(RESULT), "summary": mapping_of(INT)}
OPTIONAL: dict[str, Check] = {"scorecard": list_of(LINE), "robustness": list_of(ROBUSTNESS),
                              "controls": list_of(CONTROLS), "data": DATA, "digest": STR}
REPORT = obj(REQUIRED, OPTIONAL, closed=True, what="a JSON object (a report)")
_TOP = {**REQUIRED, **OPTIONAL}


_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip(text: str, i: int) -> int:
    """The position of the first character from ``i`` on that is not JSON whitespace."""
    found = _WHITESPACE.match(text, i)
    return i if found is None else found.end()


def load(text: str, schema: str) -> Any:
    """The parsed JSON of a report, checked as it is read, so that a large file that is not a
    report fails at its first bad entry rather than after all of it is parsed: each top-level
    entry is checked once parsed (an unknown key before its value is read) and each result row
    as soon as it is. Only a text that opens with ``{"schema": SCHEMA`` is read so; any other is
    parsed whole (the reader says what it is). Raises :class:`json.JSONDecodeError` for bad JSON
    and :class:`SchemaError` for a bad entry; :func:`validate` the whole afterwards."""
    i = _skip(text, 0)
    if not text.startswith("{", i):
        return json.loads(text)
    i = _skip(text, i + 1)
    if not text.startswith('"schema"', i):
        return json.loads(text)
    data: dict[str, Any] = {}
    first = True
    while True:
        if not text.startswith('"', i):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes",
                                       text, i)
        key, i = scanstring(text, i + 1)
        i = _skip(text, i)
        if not text.startswith(":", i):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, i)
        i = _skip(text, i + 1)
        check = _TOP.get(key)
        if check is None:
            raise unknown_key("", key, _TOP)
        if key == "results" and text.startswith("[", i):
            value, i = _rows(text, i)
        else:
            value, i = _DECODER.raw_decode(text, i)
            if first and value != schema:  # another schema: the reader says so
                return json.loads(text)
            check(value, key)
        first = False
        data[key] = value
        i = _skip(text, i)
        if text.startswith(",", i):
            i = _skip(text, i + 1)
            continue
        if text.startswith("}", i):
            i += 1
            break
        raise json.JSONDecodeError("Expecting ',' delimiter", text, i)
    if _skip(text, i) != len(text):
        raise json.JSONDecodeError("Extra data", text, i)
    return data


def _rows(text: str, i: int) -> tuple[list[Any], int]:
    """The ``results`` list starting at ``text[i] == "["``, each row checked once parsed."""
    rows: list[Any] = []
    i = _skip(text, i + 1)
    if text.startswith("]", i):
        return rows, i + 1
    while True:
        row, i = _DECODER.raw_decode(text, i)
        RESULT(row, f"results[{len(rows)}]")
        rows.append(row)
        i = _skip(text, i)
        if text.startswith(",", i):
            i = _skip(text, i + 1)
            continue
        if text.startswith("]", i):
            return rows, i + 1
        raise json.JSONDecodeError("Expecting ',' delimiter", text, i)


def validate(data: Any) -> None:
    """Refuse ``data`` (the parsed JSON of a report) unless it follows ``normtest.report/1``:
    a :class:`SchemaError` (a :class:`~normtest.errors.NormtestError`) naming the first bad
    key path and what was expected there."""
    try:
        REPORT(data, "")
    except RecursionError:
        raise SchemaError("", "nested too deeply to be a report") from None
