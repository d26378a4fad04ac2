"""``--model module:attribute``: the user's own object, refused clearly when it is not a model.

Every input is a module written from scratch into a temporary folder put on ``sys.path``: an
``encode()`` that returns ragged lists, strings, NaN, the wrong number of rows or a changing
dimension, that raises; a factory that raises or returns a string; an attribute that is a string
(it has ``.encode``), bytes or a number; a module that fails to import. Each is exit 2 with one
line that names the ``module:attribute`` and says what to fix — never a traceback (exit 3) —
and the honest encoder next to them is audited.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from normtest.cli.main import main

FLAGS = ["--suite", "cer", "--documents", "12", "--resamples", "100", "--no-robustness",
         "--no-controls", "-q"]
MODELS = '''
import hashlib

import numpy as np


def _vector(word, dim=16):
    seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dim)


class Honest:
    """Each text the sum of its words' random vectors."""

    def encode(self, texts):
        return np.array([sum(_vector(w) for w in t.split()) for t in texts], dtype=np.float32)


class Shy(Honest):
    """Cannot say its dimension (the wrapper asks an encoded text instead)."""

    def get_embedding_dimension(self):
        raise RuntimeError("unknown")


class Ragged:
    def encode(self, texts):
        return [[1.0, 2.0] if i % 2 else [1.0] for i, _ in enumerate(texts)]


class Strings:
    def encode(self, texts):
        return [t.upper() for t in texts]


class Raises:
    def encode(self, texts):
        raise RuntimeError("GPU fell over")


class Nan(Honest):
    def encode(self, texts):
        out = super().encode(texts)
        out[-1, 0] = np.nan
        return out


class ExtraRow(Honest):
    def encode(self, texts):
        return super().encode([*texts, "one more"])


class Flat(Honest):
    def encode(self, texts):
        return super().encode(texts).ravel()


class Growing:
    calls = 0

    def encode(self, texts):
        Growing.calls += 1
        return np.ones((len(texts), 8 * Growing.calls), dtype=np.float32)


def factory():
    raise RuntimeError("no weights")


def factory_of_text():
    return "a model name, not a model"


text = "just a string"
raw = b"bytes"
number = 3


def __getattr__(name):
    if name == "lazy":
        raise ValueError("the lazy model failed to build")
    raise AttributeError(name)
'''


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module of models of its own name (a fresh import per test), importable."""
    name = f"user_models_{next(_COUNT)}"
    (tmp_path / f"{name}.py").write_text(MODELS, encoding="utf-8")
    (tmp_path / f"{name}_broken.py").write_text("1 / 0\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    for module in [m for m in sys.modules if m.startswith(name)]:
        del sys.modules[module]


_COUNT = itertools.count()


def _audit(model: str, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["audit", "--model", model, *FLAGS, "--out", str(out)])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return code, err


REFUSED = [
    ("Ragged", "returned rows of different lengths (1, 2)"),
    ("Strings", "encode() of 1 text returned strings"),
    ("Raises", "encode() of 1 text raised RuntimeError: GPU fell over; fix its encode"),
    ("Nan", "returned 1 NaN or infinite value(s)"),
    ("ExtraRow", "encode() of 1 text returned shape (2, 16); it must return one vector"),
    ("Flat", "encode() of 1 text returned shape (16,)"),
    ("Growing", "but 8 before; every call must return vectors of one dimension"),
    ("factory", "calling factory() to build the model raised RuntimeError: no weights"),
    ("factory_of_text", "returned a str ('a model name, not a model'), not a model"),
    ("text", "is a str ('just a string'), not a model"),
    ("raw", "is a bytes (b'bytes'), not a model"),
    ("number", "is an int (3), not a model"),
    ("lazy", "reading 'lazy' raised ValueError: the lazy model failed to build"),
    ("missing", "has no attribute 'missing'"),
]


@pytest.mark.parametrize(("attribute", "needle"), REFUSED, ids=[r[0] for r in REFUSED])
def test_a_model_that_is_not_one_is_refused_in_one_line_naming_it(
    attribute: str, needle: str, models: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str]
) -> None:
    spec = f"{models}:{attribute}"
    code, err = _audit(spec, tmp_path / "out", capsys)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("normtest: error: "), err
    assert spec in lines[0] and needle in lines[0], lines[0]
    assert not (tmp_path / "out" / "report.json").exists()


def test_a_module_that_fails_to_import_is_refused_naming_it(
    models: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _audit(f"{models}_broken:model", tmp_path / "out", capsys)
    assert code == 2
    assert err.strip() == (f"normtest: error: importing '{models}_broken' for model "
                           f"'{models}_broken:model' failed: ZeroDivisionError: division by "
                           "zero; fix the module")


@pytest.mark.parametrize("attribute", ["Honest", "Shy"])
def test_an_honest_encoder_next_to_them_is_audited(
    attribute: str, models: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _audit(f"{models}:{attribute}", tmp_path / "out", capsys)
    assert code == 0, err
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["model"]["name"] == attribute and report["model"]["dim"] == 16
    assert {r["verdict"] for r in report["results"]} <= {"PASS", "FAIL", "INCONCLUSIVE"}
    assert {r["claim"] for r in report["results"]} == {"cer.linear", "cer.monotone",
                                                        "cer.fixed_point"}


@pytest.mark.parametrize(("attribute", "needle"), [
    ("text", "is a str ('just a string'), not a model"),
    ("Raises", "raised RuntimeError: GPU fell over"),
])
@pytest.mark.slow
def test_the_console_script_exits_2_without_a_traceback(
    attribute: str, needle: str, models: str, tmp_path: Path
) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "normtest", "audit", "--model",
                           f"{models}:{attribute}", *FLAGS, "--out", str(tmp_path / "out")],
                          cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"normtest: error: {models}:{attribute}") and needle in line


def test_python_loading_refuses_a_string_attribute_before_wrapping_it(
    models: str
) -> None:
    """``str`` has ``.encode``: it must never be taken for a sentence encoder."""
    import normtest
    from normtest.errors import NormtestError

    with pytest.raises(NormtestError, match=r"is a str \('just a string'\), not a model"):
        normtest.load(f"{models}:text")
