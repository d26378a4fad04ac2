"""Fuzzing every reader of user files: arbitrary or damaged bytes give data or NormtestError.

The property, for vector files (word2vec text and binary, GloVe, ``.npy`` + vocabulary, ``.npz``,
``.jsonl``), reports, gate configurations, corpus files and the stores' files (corpus counts,
sentence surprisal): a reader either returns data or raises :class:`NormtestError`; no other
exception escapes. Loaded vectors are then asked for a few of their words, and whatever comes
back is finite (NaN in a file is refused at load or at use, never passed on to statistics). A
damaged store file gives the correct value or is recomputed with one warning, never a wrong one.

Inputs are valid small files mutated byte by byte (flips, insertions of NaN, huge numbers,
non-UTF-8 bytes and empty lines, deletions, truncation, a rewritten header), structured
mutations (a JSON value or a TOML key replaced by one of the wrong type) and random bytes.
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, currently_in_test_context, event, example, given, settings
from hypothesis import strategies as st

from normtest.adapters.precomputed import load_precomputed
from normtest.adapters.static import StaticVectors, load_npy
from normtest.errors import NormtestError
from normtest.models.registry import load

# numpy warns about .npy headers that parse only the Python 2 way; mutated headers often do
pytestmark = pytest.mark.filterwarnings("ignore:Reading `.npy` or `.npz` file:UserWarning")

FUZZ = settings(max_examples=int(os.environ.get("NORMTEST_FUZZ_EXAMPLES", "150")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

WORDS = ["alpha", "beta", "gamma", "delta", "épsilon"]
VECTORS = (np.arange(15, dtype=np.float32).reshape(5, 3) - 7) / 7

#: Byte strings that damage vector and text files in interesting ways.
TOKENS = [b"nan", b"NaN", b"inf", b"-inf", b"1e999", b"-1e999", b"3.5e38", b"\xff\xfe",
          b"\xc3", b"\n", b"\n\n", b" ", b"  ", b"\t", b"\r\n", b"\x00", b"0", b"-1",
          b"999999999999", b"1" * 30, b"\xef\xbb\xbf", b"{", b"]", b'"', b"null", b"PK\x03\x04"]


# -- mutations --------------------------------------------------------------------------------

MUTATION = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 1 << 16), st.binary(min_size=1, max_size=1)),
    st.tuples(st.just("insert"), st.integers(0, 1 << 16),
              st.sampled_from(TOKENS) | st.binary(min_size=1, max_size=6)),
    st.tuples(st.just("replace"), st.integers(0, 1 << 16), st.sampled_from(TOKENS)),
    st.tuples(st.just("replace"), st.integers(0, 1 << 16),
              st.floats(allow_nan=True, allow_infinity=True).map(lambda x: repr(x).encode())),
    st.tuples(st.just("delete"), st.integers(0, 1 << 16), st.integers(1, 40)),
    st.tuples(st.just("truncate"), st.integers(0, 1 << 16), st.just(0)),
)
HEADER_NUMBER = st.sampled_from([0, 1, 2, 3, 4, 5, 6, 50, 10**6, 10**12, 10**30])


def mutate(data: bytes, ops: list[tuple[str, int, Any]]) -> bytes:
    """Apply byte-level mutations (positions are taken modulo the current length)."""
    out = bytearray(data)
    for kind, where, what in ops:
        at = where % (len(out) + 1)
        if kind == "flip" and out:
            out[at % len(out)] = what[0]
        elif kind == "insert":
            out[at:at] = what
        elif kind == "replace":  # overwrite a whitespace-separated field with a token
            end = at
            while end < len(out) and out[end] not in b" \n":
                end += 1
            out[at:end] = what
        elif kind == "delete":
            del out[at:at + what]
        elif kind == "truncate":
            del out[at:]
    return bytes(out)


def with_header(data: bytes, rows: int, dim: int) -> bytes:
    """``data`` with its first line replaced by ``"rows dim"``."""
    rest = data.split(b"\n", 1)[1] if b"\n" in data else b""
    return b"%d %d\n" % (rows, dim) + rest


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Valid small files of every format, as bytes."""
    from gensim.models import KeyedVectors

    tmp = tmp_path_factory.mktemp("seeds")
    kv = KeyedVectors(vector_size=3)
    kv.add_vectors(WORDS, VECTORS)
    kv.save_word2vec_format(str(tmp / "v.vec"))
    kv.save_word2vec_format(str(tmp / "v.bin"), binary=True)
    glove = "".join(f"{w} {' '.join(repr(float(x)) for x in row)}\n"
                    for w, row in zip(WORDS, VECTORS, strict=True))
    np.save(tmp / "m.npy", VECTORS)
    np.savez(tmp / "p.npz", keys=np.array(WORDS), vectors=VECTORS)
    jsonl = "".join(json.dumps({"key": w, "vector": row.tolist()}) + "\n"
                    for w, row in zip(WORDS, VECTORS, strict=True))
    return {
        "word2vec": (tmp / "v.vec").read_bytes(),
        "binary": (tmp / "v.bin").read_bytes(),
        "glove": glove.encode(),
        "npy": (tmp / "m.npy").read_bytes(),
        "vocab": ("\n".join(WORDS) + "\n").encode(),
        "npz": (tmp / "p.npz").read_bytes(),
        "jsonl": jsonl.encode(),
    }


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder the examples overwrite (hypothesis runs them one after another)."""
    return tmp_path_factory.mktemp("fuzz")


def use_vectors(model: Any) -> None:
    """Ask a loaded model for a few of its words: finite vectors or NormtestError."""
    assert isinstance(model, StaticVectors)
    assert model.dim >= 1 and len(model.vocabulary) >= 1
    words = list(model.vocabulary[:3])
    assert model.represents(words).all()
    try:
        out = model.word_vectors(words)
    except NormtestError:
        return
    assert out.shape == (len(words), model.dim)
    assert np.isfinite(out).all()


def clean(call: Callable[[], Any]) -> Any:
    """The call's result, or None when it raised NormtestError (anything else fails the test)."""
    try:
        result = call()
    except NormtestError as exc:
        message = str(exc)
        assert message and "\n" not in message.strip(), message
        _event("NormtestError")
        return None
    _event("read")
    return result


def _event(name: str) -> None:
    """Tally outcomes (pytest --hypothesis-show-statistics shows how often files were read)."""
    if currently_in_test_context():
        event(name)


def load_vectors(path: Path, **options: Any) -> None:
    model = clean(lambda: load(path, cache=False, **options))
    if model is not None:
        use_vectors(model)


# -- vector files -----------------------------------------------------------------------------

TEXT_FORMATS = st.sampled_from([("word2vec", "v.vec"), ("word2vec", "v.txt"),
                                ("glove", "g.txt"), ("glove", "g.vec")])


@pytest.mark.slow
@FUZZ
@given(fmt=TEXT_FORMATS, ops=st.lists(MUTATION, max_size=3))
def test_mutated_text_vectors(seeds: dict[str, bytes], scratch: Path, fmt: tuple[str, str],
                              ops: list[tuple[str, int, Any]]) -> None:
    path = scratch / fmt[1]
    path.write_bytes(mutate(seeds[fmt[0]], ops))
    load_vectors(path)


@pytest.mark.slow
@FUZZ
@given(rows=HEADER_NUMBER, dim=HEADER_NUMBER, ops=st.lists(MUTATION, max_size=2),
       suffix=st.sampled_from([".vec", ".txt", ".bin"]))
def test_rewritten_headers(seeds: dict[str, bytes], scratch: Path, rows: int, dim: int,
                           ops: list[tuple[str, int, Any]], suffix: str) -> None:
    seed = seeds["binary" if suffix == ".bin" else "word2vec"]
    path = scratch / f"h{suffix}"
    path.write_bytes(mutate(with_header(seed, rows, dim), ops))
    load_vectors(path)


@pytest.mark.slow
@FUZZ
@given(ops=st.lists(MUTATION, min_size=1, max_size=3))
def test_mutated_binary_vectors(seeds: dict[str, bytes], scratch: Path,
                                ops: list[tuple[str, int, Any]]) -> None:
    path = scratch / "v.bin"
    path.write_bytes(mutate(seeds["binary"], ops))
    load_vectors(path)


@pytest.mark.slow
@FUZZ
@given(data=st.binary(max_size=600),
       suffix=st.sampled_from([".vec", ".txt", ".bin", ".npz", ".jsonl"]),
       prefix=st.sampled_from([b"", b"5 3\n", b"2 1\n", b"PK\x03\x04", b"\x93NUMPY"]))
def test_random_bytes_as_vectors(scratch: Path, data: bytes, suffix: str, prefix: bytes) -> None:
    path = scratch / f"r{suffix}"
    path.write_bytes(prefix + data)
    load_vectors(path)


@pytest.mark.slow
@FUZZ
@given(ops=st.lists(MUTATION, max_size=4), vocab_ops=st.lists(MUTATION, max_size=2),
       random=st.none() | st.binary(max_size=300))
def test_npy_and_vocabulary(seeds: dict[str, bytes], scratch: Path,
                            ops: list[tuple[str, int, Any]],
                            vocab_ops: list[tuple[str, int, Any]], random: bytes | None) -> None:
    matrix, vocabulary = scratch / "m.npy", scratch / "vocab.txt"
    matrix.write_bytes(mutate(seeds["npy"], ops) if random is None else random)
    vocabulary.write_bytes(mutate(seeds["vocab"], vocab_ops))
    model = clean(lambda: load_npy(matrix, vocabulary))
    if model is not None:
        use_vectors(model)
    load_vectors(matrix, vocabulary=vocabulary)


ARRAYS = st.one_of(
    st.sampled_from([
        np.array(WORDS), np.array([w.encode() for w in WORDS]), np.array(WORDS, dtype=object),
        VECTORS, VECTORS.astype(np.float64) * 1e300, np.full((5, 3), np.nan), np.zeros((5, 0)),
        np.arange(5), np.array(3.0), np.zeros((5, 3, 2)), np.ones((5, 3), dtype=np.complex64),
        np.array([[True, False, True]] * 5), np.array(["x"] * 15).reshape(5, 3),
        np.zeros(5, dtype=[("a", "<f4")]), np.ones((5, 3), dtype=np.int64),
        np.array([b"\xff\xfe"] * 5), np.array(WORDS[:2]), np.array([], dtype=np.float32),
    ]),
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=3, max_size=15)
    .map(lambda xs: np.array(xs[: len(xs) // 3 * 3]).reshape(-1, 3)),
)


def npy_bytes(array: np.ndarray) -> bytes:
    with tempfile.TemporaryFile() as handle:
        np.save(handle, array, allow_pickle=True)
        handle.seek(0)
        return handle.read()


@pytest.mark.slow
@FUZZ
@given(keys=st.just(np.array(WORDS)) | ARRAYS, vectors=st.just(VECTORS) | ARRAYS,
       key_ops=st.lists(MUTATION, max_size=2),
       vector_ops=st.lists(MUTATION, max_size=2),
       compression=st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]),
       names=st.sampled_from([("keys", "vectors"), ("keys.npy", "vectors.npy"),
                              ("words", "vectors")]))
def test_npz_members(scratch: Path, keys: np.ndarray, vectors: np.ndarray,
                     key_ops: list[tuple[str, int, Any]], vector_ops: list[tuple[str, int, Any]],
                     compression: int, names: tuple[str, str]) -> None:
    """Arrays of every shape and dtype, and damaged .npy members (headers included)."""
    path = scratch / "p.npz"
    with zipfile.ZipFile(path, "w", compression) as archive:
        archive.writestr(names[0] + ("" if names[0].endswith(".npy") else ".npy"),
                         mutate(npy_bytes(keys), key_ops))
        archive.writestr(names[1] + ("" if names[1].endswith(".npy") else ".npy"),
                         mutate(npy_bytes(vectors), vector_ops))
    load_vectors(path)


@pytest.mark.slow
@FUZZ
@given(ops=st.lists(MUTATION, min_size=1, max_size=5))
def test_mutated_npz_archive(seeds: dict[str, bytes], scratch: Path,
                             ops: list[tuple[str, int, Any]]) -> None:
    path = scratch / "m.npz"
    path.write_bytes(mutate(seeds["npz"], ops))
    load_vectors(path)


JSON_SCALAR = (st.none() | st.booleans() | st.integers(-(10**400), 10**400)
               | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8))
JSON = st.recursive(JSON_SCALAR, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.sampled_from(["key", "text", "word", "vector", "x"]),
                                      inner, max_size=4), max_leaves=12)
JSONL_LINE = st.one_of(
    JSON.map(json.dumps),
    st.builds(lambda k, v: json.dumps({"key": k, "vector": v}), JSON,
              st.lists(JSON_SCALAR, max_size=4)),
    st.builds(lambda k, v: json.dumps({"word": k, "vector": v}), st.text(max_size=6),
              st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1,
                       max_size=4)),
    st.builds(lambda k, v: json.dumps({"text": k, "vector": v}), st.text(max_size=6),
              st.lists(st.floats(-1e6, 1e6) | st.integers(-(10**6), 10**6), min_size=3,
                       max_size=3)),
    st.sampled_from(["[" * 5000, '{"key": "x", "vector": [1e400]}', '{"key": "x", "vector": "12"}',
                     '{"key": 3, "vector": [1]}', '{"key": "x", "vector": [true]}', "\ufeff{}",
                     '{"key": "x", "vector": [NaN]}', '{"key": "x", "vector": []}']),
)


@pytest.mark.slow
@FUZZ
@given(lines=st.lists(JSONL_LINE, max_size=3), ops=st.lists(MUTATION, max_size=2),
       seeded=st.booleans())
def test_jsonl_vectors(seeds: dict[str, bytes], scratch: Path, lines: list[str],
                       ops: list[tuple[str, int, Any]], seeded: bool) -> None:
    path = scratch / "p.jsonl"
    base = seeds["jsonl"] if seeded else b""
    path.write_bytes(mutate(base + "\n".join(lines).encode("utf-8", "surrogatepass"), ops))
    load_vectors(path)
    clean(lambda: load_precomputed(path))


def _write_vectors(folder: Path, fmt: str, keys: list[str], matrix: np.ndarray
                   ) -> tuple[Path, dict[str, Any]]:
    """``keys`` and ``matrix`` written as a ``fmt`` file, as-is (nothing checked or fixed)."""
    rows = [f"{k} {' '.join(repr(float(x)) for x in row)}\n" for k, row in zip(
        keys, matrix, strict=False)] if fmt in ("word2vec", "glove") else []
    if fmt == "word2vec":
        path = folder / "v.vec"
        path.write_text(f"{len(rows)} {matrix.shape[1]}\n" + "".join(rows))
    elif fmt == "glove":
        path = folder / "g.txt"
        path.write_text("".join(rows))
    elif fmt == "binary":
        path = folder / "v.bin"
        path.write_bytes(b"%d %d\n" % (len(keys), matrix.shape[1]) + b"".join(
            k.encode() + b" " + np.asarray(row, dtype=np.float32).tobytes() + b"\n"
            for k, row in zip(keys, matrix, strict=False)))
    elif fmt == "npy":
        path = folder / "m.npy"
        np.save(path, matrix)
        (folder / "vocab.txt").write_text("".join(k + "\n" for k in keys))
        return path, {"vocabulary": folder / "vocab.txt"}
    elif fmt == "npz":
        path = folder / "p.npz"
        np.savez(path, keys=np.array(keys), vectors=matrix)
    else:
        path = folder / "p.jsonl"
        path.write_text("".join(json.dumps({"key": k, "vector": [float(x) for x in row]}) + "\n"
                                for k, row in zip(keys, matrix, strict=False)))
    return path, {}


ALL_FORMATS = ["word2vec", "glove", "binary", "npy", "npz", "jsonl"]
#: defect → (the formats that can hold it, the keys and matrix, what the refusal says)
DEFECTS: dict[str, tuple[list[str], Callable[[], tuple[list[str], np.ndarray]], str]] = {
    "duplicated key": (ALL_FORMATS, lambda: ([*WORDS, "beta"], np.vstack([VECTORS, VECTORS[:1]])),
                       "'beta' appears more than once"),
    "NaN": (ALL_FORMATS, lambda: (WORDS, np.where(np.eye(5, 3, 1) > 0, np.nan, VECTORS)),
            "NaN or infinite"),
    "infinity": (ALL_FORMATS, lambda: (WORDS, np.where(np.eye(5, 3, 1) > 0, np.inf, VECTORS)),
                 "NaN or infinite"),
    "beyond float32": (["npy", "npz", "jsonl"], lambda: (WORDS, VECTORS.astype(np.float64) * 1e300),
                       "out-of-float32-range"),
    "more rows than keys": (["npy", "npz"], lambda: (WORDS[:4], VECTORS),
                            "4 words but 5 rows|4 keys but 5 rows"),
    "more keys than rows": (["npy", "npz"], lambda: ([*WORDS, "zeta"], VECTORS),
                            "6 words but 5 rows|6 keys but 5 rows"),
    "not numbers": (["npy", "npz"], lambda: (WORDS, VECTORS.astype(np.complex64)),
                    "must be numbers"),
    "not a matrix": (["npy", "npz"], lambda: (WORDS, VECTORS.reshape(5, 3, 1)),
                     r"must be a \(.*, dim\) matrix"),
}


@pytest.mark.parametrize(("fmt", "defect"), [(f, d) for d, (formats, _, _) in DEFECTS.items()
                                              for f in formats])
def test_every_reader_refuses_the_same_defects(tmp_path: Path, fmt: str, defect: str) -> None:
    """Keys against rows, duplicated keys, shapes, dtypes and non-finite values: every vector
    reader checks its input whole, the same way (normtest.adapters.keyed.check_keyed_rows);
    a format whose rows carry their own keys cannot hold a count mismatch, text cannot hold
    a dtype or a shape."""
    _, make, message = DEFECTS[defect]
    path, options = _write_vectors(tmp_path, fmt, *make())
    with pytest.raises(NormtestError, match=message) as refused:
        load(path, cache=False, **options)
    assert "\n" not in str(refused.value)
    good, options = _write_vectors(tmp_path, fmt, WORDS, VECTORS)
    assert load(good, cache=False, **options).vocabulary == tuple(WORDS)


def test_vectors_built_in_python_are_checked_too() -> None:
    from normtest.adapters.sentence import PrecomputedTexts

    with pytest.raises(NormtestError, match="'alpha' appears more than once"):
        StaticVectors("x", ["alpha", "alpha"], np.eye(2), "r")
    with pytest.raises(NormtestError, match="'a text' appears more than once"):
        PrecomputedTexts("x", ["a text", "a text"], np.eye(2), "r")
    with pytest.raises(NormtestError, match="2 texts but 3 rows"):
        PrecomputedTexts("x", ["a text", "another"], np.eye(3), "r")


# -- reports ----------------------------------------------------------------------------------


def _small(value: Any) -> Any:
    """The report with every long list cut to 3 items (still valid, faster to fuzz)."""
    if isinstance(value, dict):
        return {k: _small(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_small(v) for v in value[:3]]
    return value


@pytest.fixture(scope="module")
def report_dict() -> dict[str, Any]:
    from normtest.audit.demo import run_demo
    from normtest.audit.report import Report

    data = _small(json.loads(run_demo(seed=0, n_words=200).to_json()))
    Report.from_dict(data)  # still a valid report
    return data


def _paths(value: Any, here: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield here
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*here, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*here, i))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, *rest = path
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _replace(value[head], tuple(rest), new)
    return copy


def _delete(value: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return value
    if len(path) == 1:
        copy: Any = dict(value) if isinstance(value, dict) else list(value)
        del copy[path[0]]
        return copy
    return _replace(value, path[:1], _delete(value[path[0]], path[1:]))


def read_report(path: Path) -> None:
    from normtest.audit.report import Report

    with warnings.catch_warnings():  # a mutated report may lack its digest: one warning line
        warnings.simplefilter("ignore", UserWarning)
        report = clean(lambda: Report.read(path))
    if report is not None:
        report.to_json()


#: Values of the wrong kind (or out of range) to put where a report or configuration expects
#: something else: numbers too large for a float, NaN, nested containers, strings.
WRONG = st.sampled_from([0, -1, 1.5, 10**400, float("nan"), float("inf"), "", "x", None, True,
                         [], [1, 2], [[1, 2]], {}, {"a": 1}, "~no-such-user-normtest/r.json"])


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_structurally_mutated_reports(report_dict: dict[str, Any], scratch: Path,
                                      data: st.DataObject) -> None:
    paths = list(_paths(report_dict))
    path = data.draw(st.sampled_from(paths))
    changed = (_delete(report_dict, path) if path and data.draw(st.booleans())
               else _replace(report_dict, path, data.draw(WRONG)))
    target = scratch / "report.json"
    target.write_text(json.dumps(changed), encoding="utf-8")
    read_report(target)


@example(b'{"schema": "normtest.report/1", "results": 0}')
@example(b'{"schema": "normtest.report/1", "results": [], "model": "x"}')
@example(b'{"schema": "normtest.report/1", "results": [], "provenance": 0}')
@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes_as_report(scratch: Path, data: bytes) -> None:
    target = scratch / "random.json"
    target.write_bytes(data)
    read_report(target)


@pytest.mark.slow
@FUZZ
@given(ops=st.lists(MUTATION, min_size=1, max_size=4))
def test_byte_mutated_reports(report_dict: dict[str, Any], scratch: Path,
                              ops: list[tuple[str, int, Any]]) -> None:
    target = scratch / "mutated.json"
    target.write_bytes(mutate(json.dumps(report_dict).encode("utf-8"), ops))
    read_report(target)


# -- gate configurations ------------------------------------------------------------------------


def read_config(path: Path) -> None:
    from normtest.gate.config import load_config

    clean(lambda: load_config(path))


CONFIG_KEYS = st.sampled_from(["model", "claims", "require", "thresholds", "baseline", "report",
                               "margin", "margins", "alpha", "seed", "words", "resamples",
                               "documents", "scope", "corpus", "expected_failures", "strict",
                               "inconclusive", "trust_remote_code", "nonsense"])
TOML_VALUES = st.sampled_from(["0", "-1", "1" + "0" * 400, "1.5", "nan", "inf", '""', '"x"',
                               "true", "[]", '["a", 1]', "[[1, 2]]", "{}", "{a = 1}",
                               "{a = 1" + "0" * 400 + "}", '"~no-such-user-normtest/r.json"',
                               '{"word.norm_ic" = [0.1, 0.2]}', '{"cer.linear" = 0.5}'])


@pytest.mark.slow
@example(key="alpha", value="1" + "0" * 400)
@example(key="margins", value="{a = 1" + "0" * 400 + "}")
@example(key="baseline", value='"~no-such-user-normtest/r.json"')
@FUZZ
@given(key=CONFIG_KEYS, value=TOML_VALUES)
def test_gate_config_wrong_types(scratch: Path, key: str, value: str) -> None:
    target = scratch / "normtest.toml"
    target.write_text(f"{key} = {value}\n", encoding="utf-8")
    read_config(target)


@example(data=b"\x80")
@FUZZ
@given(data=st.binary(max_size=200) | st.text(max_size=200).map(lambda t: t.encode("utf-8")))
def test_gate_config_random_text(scratch: Path, data: bytes) -> None:
    target = scratch / "random.toml"
    target.write_bytes(data)
    read_config(target)


# -- corpus files -------------------------------------------------------------------------------

CORPUS_TEXT = st.one_of(
    st.binary(max_size=600),
    st.text(max_size=600).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.lists(st.sampled_from(["The cat sat on the mat.", "\n", "\n\n", "caf\u00e9",
                              "\ufeff", " ", "A dog ran."]), max_size=40)
    .map(lambda parts: "".join(parts).encode("utf-8")),
    st.lists(st.sampled_from(TOKENS), max_size=30).map(b"".join),
)


@pytest.mark.slow
@FUZZ
@given(data=CORPUS_TEXT, split=st.sampled_from(["file", "line", "paragraph"]))
def test_corpus_files(scratch: Path, data: bytes, split: str) -> None:
    from normtest.data.information.corpus import CorpusStatistics
    from normtest.data.information.documents import corpus_documents
    from normtest.data.information.texts import read_text_file, split_documents

    path = scratch / "corpus.txt"
    path.write_bytes(data)
    text = read_text_file(path)  # any bytes are text
    assert isinstance(text.text, str) and text.n_replaced_bytes >= 0
    text.text.encode("utf-8")  # no lone surrogates leak out
    split_documents(text.text, split)  # type: ignore[arg-type]
    clean(lambda: CorpusStatistics.from_files([path], split=split))  # type: ignore[arg-type]
    clean(lambda: corpus_documents([path], 5, min_words=3))


def test_corpus_paths_that_are_not_text_files(tmp_path: Path) -> None:
    from normtest.data.information.corpus import CorpusStatistics
    from normtest.data.information.documents import corpus_documents
    from normtest.data.information.texts import read_text_file

    (tmp_path / "empty").mkdir()
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "a.txt").write_bytes(b"\xff\xfe binary \x00 garbage")
    unreadable = tmp_path / "locked.txt"
    unreadable.write_text("secret words")
    unreadable.chmod(0)
    paths = [tmp_path / "missing.txt", tmp_path / "empty", tmp_path / "folder",
             "bad\x00name.txt", unreadable]
    try:
        for path in paths:
            clean(lambda p=path: read_text_file(p))  # type: ignore[misc]
            clean(lambda p=path: CorpusStatistics.from_files([p]))  # type: ignore[misc]
            clean(lambda p=path: corpus_documents([p], 3))  # type: ignore[misc]
        with pytest.raises(NormtestError, match="folder"):
            read_text_file(tmp_path / "folder")
        with pytest.raises(NormtestError, match="file name"):
            read_text_file("bad\x00name.txt")
    finally:
        unreadable.chmod(0o644)


# -- the stores: corpus counts and sentence surprisal ---------------------------------------------
#
# A stored file with arbitrary byte mutations, cut short, or replaced by random bytes gives either
# the correct value (the damage missed what the checksum covers) or a recomputation with exactly
# one warning (normtest/data/information/checked_files.py); never another exception, never a wrong
# value. A forged file (one array replaced, the checksum recomputed) is read or refused by
# NormtestError.

STORE_MUTATION = st.lists(MUTATION, min_size=1, max_size=4)
STORE_RANDOM = st.tuples(st.sampled_from([b"", b"PK\x03\x04", b"\x93NUMPY"]),
                         st.binary(max_size=600)).map(b"".join)


def _recomputed(compute: Callable[[], Any], spy_on: Any, name: str) -> tuple[Any, int, int]:
    """``compute()``, how many times ``spy_on.name`` ran inside it, and its CacheWarnings."""
    from unittest import mock

    from normtest.models.cache.embeddings import CacheWarning

    with mock.patch.object(spy_on, name, wraps=getattr(spy_on, name)) as spy, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = compute()
    said = [w for w in caught if issubclass(w.category, CacheWarning)]
    for w in said:
        assert "cannot be used as" in str(w.message) and "recomputing it" in str(w.message)
    _event("recomputed" if spy.call_count else "read back")
    return value, spy.call_count, len(said)


@dataclass
class Stored:
    """A sound store file, its bytes, and what computed it (short repr: hypothesis prints it)."""

    path: Path
    fresh: Any = field(repr=False)
    seed: bytes = field(repr=False)
    inputs: dict[str, Any] = field(repr=False)


@pytest.fixture(scope="module")
def counts_store(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    """A sound stored file of a small corpus's counts, its bytes and the fresh counts."""
    from normtest.data.information import scaled
    from normtest.data.information.texts import lee_texts

    folder = tmp_path_factory.mktemp("counts-store")
    (folder / "corpus.txt").write_text("\n\n".join(t.text for t in lee_texts()[:6]),
                                       encoding="utf-8")
    words = ["the", "fire", "police", "said", "zzzznotaword"]
    scaled.corpus_counts(folder / "corpus.txt", words, directory=folder / "store")
    (path,) = (folder / "store").iterdir()
    return Stored(path, scaled.corpus_counts(folder / "corpus.txt", words, store=False),
                  path.read_bytes(), {"spec": folder / "corpus.txt", "vocabulary": words})


def _same_counts(a: Any, b: Any) -> None:
    assert (a.vocabulary, a.rows, a.source, a.window, a.n_documents) == (
        b.vocabulary, b.rows, b.source, b.window, b.n_documents)
    assert np.array_equal(a.unigram_counts, b.unigram_counts)
    assert np.array_equal(a.marginals, b.marginals)
    assert (a.cooccurrence != b.cooccurrence).nnz == 0


def read_counts_store(store: Stored, data: bytes, *, forged: bool = False) -> None:
    from normtest.data.information import scaled
    from normtest.data.information.vocabulary_counts import CorpusCounts

    path = store.path
    path.write_bytes(data)
    loaded = clean(lambda: CorpusCounts.load(path))  # the public reader
    if loaded is not None and not forged:
        _same_counts(loaded[0], store.fresh)
    counts, calls, said = _recomputed(
        lambda: scaled.corpus_counts(directory=path.parent, **store.inputs), scaled, "_count")
    if forged:  # a forged file may be read (even hold other rows, then counted again): no
        assert calls <= 1 and said <= 1  # exception; refused by the reader, one warning
        assert loaded is not None or (calls, said) == (1, 1)
        return
    assert (calls, said) == ((1, 1) if loaded is None else (0, 0))
    _same_counts(counts, store.fresh)


@pytest.mark.slow
@FUZZ
@given(ops=STORE_MUTATION)
def test_mutated_counts_store(counts_store: Stored, ops: list[tuple[str, int, Any]]) -> None:
    read_counts_store(counts_store, mutate(counts_store.seed, ops))


@pytest.mark.slow
@example(data=b"")
@FUZZ
@given(data=STORE_RANDOM)
def test_random_bytes_as_counts_store(counts_store: Stored, data: bytes) -> None:
    read_counts_store(counts_store, data)


def _forge(seed: bytes, scratch: Path, data: st.DataObject) -> bytes:
    """The stored file with one array replaced (or dropped) and its checksum recomputed."""
    from normtest.base.fingerprint import arrays_sha256
    from normtest.data.information.checked_files import CHECKSUM

    source = scratch / "seed.npz"
    source.write_bytes(seed)
    with np.load(source, allow_pickle=False) as z:
        arrays = {name: z[name] for name in z.files if name != CHECKSUM}
    name = data.draw(st.sampled_from(sorted(arrays)))
    replacement = data.draw(st.none() | ARRAYS | st.builds(
        lambda a, ops: np.frombuffer(mutate(a.tobytes(), ops), dtype=np.uint8),
        st.just(arrays[name]), st.lists(MUTATION, min_size=1, max_size=2)))
    if replacement is None or replacement.dtype.hasobject:
        del arrays[name]
    else:
        arrays[name] = replacement
    with (scratch / "forged.npz").open("wb") as out:
        np.savez(out, **arrays, **{CHECKSUM: np.array(arrays_sha256(arrays))})
    return (scratch / "forged.npz").read_bytes()


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_forged_counts_store(counts_store: Stored, scratch: Path, data: st.DataObject) -> None:
    read_counts_store(counts_store, _forge(counts_store.seed, scratch, data), forged=True)


SENTENCES = ["The fire spread quickly towards the town.", "It rained."]


class Replayed:
    """SmolLM2's name, revision and tokenizer, and its log-probabilities of :data:`SENTENCES`
    as it computed them once (so that a recomputation costs nothing)."""

    def __init__(self, model: Any, logprobs: dict[str, np.ndarray]) -> None:
        self.model, self.logprobs = model, logprobs
        self.name, self.revision = model.name, model.revision
        self.capabilities, self.dim = model.capabilities, model.dim

    def tokenize(self, text: str) -> Any:
        return self.model.tokenize(text)

    def token_logprobs(self, texts: list[str]) -> list[np.ndarray]:
        return [self.logprobs[t].copy() for t in texts]


@pytest.fixture(scope="module")
def surprisal_store(smollm2: Any, tmp_path_factory: pytest.TempPathFactory) -> Stored:
    """A sound stored file of SmolLM2's surprisal of :data:`SENTENCES`, its bytes and the fresh
    values."""
    pytest.importorskip("torch")
    from normtest.data.information.surprisal import stored_surprisal

    model = Replayed(smollm2, dict(zip(SENTENCES, smollm2.token_logprobs(SENTENCES),
                                       strict=True)))
    folder = tmp_path_factory.mktemp("surprisal-store")
    fresh = stored_surprisal(model, SENTENCES, directory=folder)
    (path,) = folder.iterdir()
    return Stored(path, fresh, path.read_bytes(), {"adapter": model, "texts": SENTENCES})


def read_surprisal_store(store: Stored, data: bytes, *, forged: bool = False) -> None:
    import importlib

    module = importlib.import_module("normtest.data.information.surprisal")
    path = store.path
    path.write_bytes(data)
    result, calls, said = _recomputed(
        lambda: module.stored_surprisal(directory=path.parent, **store.inputs), module,
        "surprisal")
    assert (calls, said) in ((0, 0), (1, 1))
    if not forged or calls:  # a forged file that passes every check may hold other values
        for a, b in zip(result.tokens, store.fresh.tokens, strict=True):
            np.testing.assert_array_equal(a, b)
    assert np.isfinite(result.information).all() and (result.information >= 0).all()


@pytest.mark.slow
@FUZZ
@given(ops=STORE_MUTATION)
def test_mutated_surprisal_store(surprisal_store: Stored,
                                 ops: list[tuple[str, int, Any]]) -> None:
    read_surprisal_store(surprisal_store, mutate(surprisal_store.seed, ops))


@pytest.mark.slow
@example(data=b"")
@FUZZ
@given(data=STORE_RANDOM)
def test_random_bytes_as_surprisal_store(surprisal_store: Stored, data: bytes) -> None:
    read_surprisal_store(surprisal_store, data)


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_forged_surprisal_store(surprisal_store: Stored, scratch: Path,
                                data: st.DataObject) -> None:
    read_surprisal_store(surprisal_store, _forge(surprisal_store.seed, scratch, data),
                         forged=True)
