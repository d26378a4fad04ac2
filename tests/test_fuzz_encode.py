"""Fuzzing what a user's code hands normtest: ``encode()`` outputs, ``module:attribute`` values
and the measurements a claim returns.

The properties: whatever an ``encode()`` returns — arrays of any shape and dtype, NaN and
infinities, ragged or mixed nested lists, strings, None, torch tensors — or raises, the sentence
wrapper gives a finite float32 (texts × dim) matrix or raises :class:`NormtestError`; whatever a
``module:attribute`` names, :func:`normtest.models.registry.from_python` gives an adapter or raises
NormtestError; whatever a measurement holds, :func:`normtest.verdict.measurement.invalid` says what
is wrong with it or nothing, and a measurement it passes is judged without an exception, with a PASS
or FAIL only for a finite estimate.
"""

from __future__ import annotations

import math
import os
import sys
import types
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from normtest.adapters.sentence import EncodeAdapter
from normtest.errors import NormtestError
from normtest.models.registry import from_python
from normtest.verdict.measurement import Measurement, invalid
from normtest.verdict.result import Criterion, Result, Verdict
from normtest.verdict.sampling import Sampling

FUZZ = settings(max_examples=int(os.environ.get("NORMTEST_FUZZ_EXAMPLES", "150")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

TEXTS = st.lists(st.sampled_from(["the cat", "information", "a b c", "Zipf's law"]),
                 min_size=1, max_size=4)
SPECIAL = st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e38, 3.5e38, 1e308,
                           -1e-320])
NUMBER = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**40, 10**40),
                   SPECIAL, st.booleans())
SCALAR = st.one_of(NUMBER, st.text(max_size=3), st.binary(max_size=3), st.none())
DTYPES = st.one_of(hnp.floating_dtypes(), hnp.integer_dtypes(), hnp.unsigned_integer_dtypes(),
                   hnp.boolean_dtypes(), hnp.complex_number_dtypes(),
                   hnp.unicode_string_dtypes(max_len=3), hnp.datetime64_dtypes())
ARRAYS = hnp.arrays(DTYPES, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))
NESTED = st.recursive(SCALAR, lambda inner: st.lists(inner, max_size=5) | st.tuples(inner, inner),
                      max_leaves=30)


def _rows(data: st.DataObject, n: int) -> Any:
    """Near misses of a valid output: n rows of floats, some ragged, some with NaN."""
    dim = data.draw(st.integers(0, 4))
    rows = [data.draw(st.lists(st.floats(allow_nan=True, allow_infinity=True) | SPECIAL,
                               min_size=dim, max_size=dim + data.draw(st.integers(0, 1))))
            for _ in range(n + data.draw(st.integers(-1, 1)))]
    return rows if data.draw(st.booleans()) else np.array(rows, dtype=object)


def _output(data: st.DataObject, n: int) -> Any:
    kind = data.draw(st.sampled_from(["array", "nested", "rows", "valid", "scalar", "dict",
                                      "torch"]))
    if kind == "array":
        return data.draw(ARRAYS)
    if kind == "nested":
        return data.draw(NESTED)
    if kind == "rows":
        return _rows(data, n)
    if kind == "valid":  # the right shape, any dtype, perhaps with specials
        dim = data.draw(st.integers(1, 4))
        return data.draw(hnp.arrays(DTYPES, (n, dim)))
    if kind == "dict":
        return {"vectors": data.draw(ARRAYS)}
    if kind == "torch":
        torch = pytest.importorskip("torch")
        values = data.draw(hnp.arrays(st.sampled_from([np.float32, np.float64]), (n, 3)))
        return torch.from_numpy(values)
    return data.draw(SCALAR)


class Scripted:
    """An ``encode()`` that returns (or raises) what the test drew, call by call."""

    def __init__(self, outputs: Iterator[Any]) -> None:
        self.outputs = outputs

    def encode(self, texts: list[str]) -> Any:
        out = next(self.outputs)
        if isinstance(out, BaseException):
            raise out
        return out


ERRORS = st.sampled_from([ValueError("bad"), TypeError("bad"), RuntimeError("bad"),
                          KeyError("bad"), IndexError("bad"), MemoryError(),
                          ZeroDivisionError("bad"), OSError("bad"), AttributeError("bad"),
                          RecursionError("bad"), AssertionError(), NotImplementedError(),
                          NormtestError("the model's own refusal")])


def _check(adapter: EncodeAdapter, texts: list[str]) -> None:
    try:
        matrix = adapter.text_vectors(texts)
    except NormtestError:
        return
    _check_matrix(matrix, len(texts))


@pytest.mark.slow
@FUZZ
@given(data=st.data(), texts=TEXTS, calls=st.integers(1, 3))
def test_any_encode_output_is_a_valid_matrix_or_a_normtest_error(
    data: st.DataObject, texts: list[str], calls: int
) -> None:
    outputs = [data.draw(ERRORS) if data.draw(st.integers(0, 9)) == 0
               else _output(data, len(texts)) for _ in range(calls)]
    adapter = EncodeAdapter(Scripted(iter(outputs)), name="fuzzed")
    dims = set()
    for _ in range(calls):
        try:
            matrix = adapter.text_vectors(texts)
        except NormtestError:
            continue
        _check_matrix(matrix, len(texts))
        dims.add(matrix.shape[1])
    assert len(dims) <= 1  # one dimension across calls, or an error


def _check_matrix(matrix: Any, n: int) -> None:
    assert isinstance(matrix, np.ndarray) and matrix.dtype == np.float32
    assert matrix.ndim == 2 and matrix.shape[0] == n and matrix.shape[1] >= 1
    assert np.isfinite(matrix).all()


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_any_dimension_a_model_reports_is_a_dimension_or_a_normtest_error(
    data: st.DataObject
) -> None:
    reported = data.draw(st.one_of(NUMBER, st.text(max_size=2), st.none(), ERRORS))
    output = _output(data, 1)

    class Reporting:
        def get_embedding_dimension(self) -> Any:
            if isinstance(reported, BaseException):
                raise reported
            return reported

        def encode(self, texts: list[str]) -> Any:
            return output

    adapter = EncodeAdapter(Reporting())
    try:
        dim = adapter.dim
    except NormtestError:
        return
    assert isinstance(dim, int) and dim >= 1
    try:
        matrix = adapter.text_vectors(["one text"])
    except NormtestError:
        return
    _check_matrix(matrix, 1)
    assert matrix.shape[1] == dim


VALUES = st.one_of(SCALAR, NESTED, ARRAYS, st.dictionaries(st.text(max_size=2), SCALAR,
                                                           max_size=2))


@pytest.mark.slow
@FUZZ
@given(data=st.data(), texts=TEXTS)
def test_any_module_attribute_is_an_adapter_or_a_normtest_error(
    data: st.DataObject, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    kind = data.draw(st.sampled_from(["value", "factory", "raising_factory", "encoder_class",
                                      "encoder_object"]))
    output = _output(data, len(texts))
    error = data.draw(ERRORS)
    value = data.draw(VALUES)

    class Encoder:
        def encode(self, texts: list[str]) -> Any:
            return output

    def factory() -> Any:
        return value

    def raising_factory() -> Any:
        raise error

    target = {"value": value, "factory": factory, "raising_factory": raising_factory,
              "encoder_class": Encoder, "encoder_object": Encoder()}[kind]
    module = types.ModuleType("fuzzed_models")
    module.model = target  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fuzzed_models", module)
    try:
        adapter = from_python("fuzzed_models:model")
    except NormtestError:
        return
    assert adapter is not None
    assert isinstance(adapter, EncodeAdapter), "only an encoder can come of these values"
    _check(adapter, texts)


# -- the measurements a user's claim returns ------------------------------------------------------
def _sampling(data: st.DataObject, estimate: float) -> Any:
    kind = data.draw(st.sampled_from(["normal", "t", "fisher_z", "binomial", "bootstrap",
                                      "bent", "other"]))
    if kind == "other":
        return data.draw(VALUES)
    finite = st.floats(-1e6, 1e6)
    try:
        if kind == "normal":
            return Sampling("normal", center=data.draw(finite | st.just(estimate)),
                            scale=data.draw(st.floats(0, 1e6) | SPECIAL))
        if kind == "t":
            return Sampling("t", center=data.draw(finite | st.just(estimate)),
                            scale=data.draw(st.floats(0, 10)), df=data.draw(st.floats(0.5, 50)))
        if kind == "fisher_z":
            return Sampling("fisher_z", center=data.draw(st.floats(-5, 5)),
                            scale=data.draw(st.floats(0, 2)))
        if kind == "binomial":
            n = data.draw(st.integers(1, 50))
            return Sampling.binomial(data.draw(st.integers(0, n)), n)
        reps = data.draw(hnp.arrays(np.float64, st.integers(1, 40),
                                    elements=st.floats(allow_nan=True, allow_infinity=True)
                                    | st.floats(-3, 3)))
        made = Sampling.bootstrap(reps, estimate)
        if kind == "bent":  # a frozen field overwritten, as a careless user might
            field = data.draw(st.sampled_from(["center", "scale", "bias", "replicates", "kind",
                                               "df"]))
            object.__setattr__(made, field, data.draw(SCALAR | ARRAYS))
        return made
    except NormtestError:  # refused when built: the user's measure raises, an ERROR row
        return None


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_any_returned_measurement_is_refused_in_words_or_judged(data: st.DataObject) -> None:
    estimate = data.draw(NUMBER | SCALAR)
    try:
        centre = float(estimate)
    except (TypeError, ValueError, OverflowError):
        centre = 0.0
    sampling = data.draw(st.just(None)) if data.draw(st.booleans()) else _sampling(data, centre)
    if data.draw(st.integers(0, 5)) == 0:
        sampling = data.draw(VALUES)
    measurement = Measurement(
        statistic=data.draw(st.sampled_from(["mean", "", None, 3])),
        estimate=estimate,
        n=data.draw(st.sampled_from([0, 10, -1, 2.5, True, "10"])),
        method=data.draw(st.sampled_from(["m", None])),
        sampling=sampling,
        confidence=data.draw(st.sampled_from([0.9, 0.5, 0.0, 1.0, math.nan, "0.9"])),
        components=data.draw(st.sampled_from([{}, {"part": 1.0}, {1: None}])),
    )
    if data.draw(st.booleans()):  # a component: the measurement itself, bent, or its own parent
        part = replace(measurement, components={})
        measurement = replace(measurement, components={"part": part})
    criterion = data.draw(st.sampled_from([
        Criterion.minimum_effect(0.0), Criterion("less", threshold=0.5),
        Criterion("within", margin=(-1.0, 1.0)),
        Criterion("greater", threshold=0.0, components={"part": Criterion.minimum_effect(0.0)}),
    ]))
    problem = invalid(measurement, criterion.components)
    if problem is not None:
        assert isinstance(problem, str) and problem
        return
    judged = Result.judged(measurement, criterion)
    if judged.verdict in (Verdict.PASS, Verdict.FAIL):
        assert math.isfinite(float(measurement.estimate)) and measurement.sampling is not None


def test_a_measurement_containing_itself_is_refused() -> None:
    parts: dict[str, Measurement] = {}
    looped = Measurement("mean", 0.5, 10, "m", components=parts)
    parts["self"] = looped
    assert "nest more than" in (invalid(looped) or "")


def test_a_plain_value_is_refused_as_no_measurement() -> None:
    assert invalid(0.5) == "it is a float, not a normtest.claims.Measurement"
