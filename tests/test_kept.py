"""Pure computations kept between processes (normtest.base.kept): the beyond reading's
attenuation curve of a design is computed once and read back exactly; other inputs, other code,
a damaged file or an unwritable cache compute it again."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import normtest.base.kept as kept_module
import normtest.stats.baseline as baseline


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(baseline, "_ATTENUATION", {})
    return tmp_path / "cache" / kept_module.FOLDER


def _design(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=300), rng.integers(0, 4, size=300)


def _computed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the simulations run (a new process: nothing in memory)."""
    runs: list[int] = []
    real = baseline._simulated

    def counted(x: np.ndarray, codes: np.ndarray) -> list[tuple[float, float]]:
        runs.append(1)
        return real(x, codes)

    monkeypatch.setattr(baseline, "_simulated", counted)
    monkeypatch.setattr(baseline, "_ATTENUATION", {})
    return runs


def test_an_attenuation_curve_is_read_back_exactly(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    x, codes = _design()
    fresh = baseline._simulated(x, codes)
    runs = _computed(monkeypatch)
    first = baseline.attenuation(x, codes)
    assert first == fresh and runs == [1] and len(list(cache.rglob("*.json"))) == 1
    runs = _computed(monkeypatch)
    again = baseline.attenuation(x, codes)
    assert again == fresh and runs == []  # read back, every float whole
    assert all(isinstance(r, float) and isinstance(w, float) for r, w in again)
    # another design is another computation
    other = baseline.attenuation(*_design(1))
    assert runs == [1] and other != fresh


def test_other_code_a_damaged_file_or_no_cache_compute_again(
        cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    x, codes = _design()
    baseline.attenuation(x, codes)
    (path,) = cache.rglob("*.json")
    runs = _computed(monkeypatch)
    monkeypatch.setattr(kept_module, "source_sha256", lambda: "other code")
    baseline.attenuation(x, codes)
    assert runs == [1]
    monkeypatch.undo()
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(tmp_path / "cache"))
    stored = json.loads(path.read_text(encoding="utf-8"))
    stored["value"][0][1] = 0.5  # a value that does not match its description is not
    stored["description"]["key"]["seed"] = 1  # … read: it describes another computation
    path.write_text(json.dumps(stored), encoding="utf-8")
    runs = _computed(monkeypatch)
    assert baseline.attenuation(x, codes) == baseline._simulated(x, codes)
    assert runs == [1, 1]
    path.write_text("{damaged", encoding="utf-8")
    runs = _computed(monkeypatch)
    baseline.attenuation(x, codes)
    assert runs == [1] and json.loads(path.read_text(encoding="utf-8"))["value"]
    # its own description with a value of another shape (edited by hand): computed again
    stored = json.loads(path.read_text(encoding="utf-8"))
    stored["value"] = [["not a number"]]
    path.write_text(json.dumps(stored), encoding="utf-8")
    runs = _computed(monkeypatch)
    assert baseline.attenuation(x, codes) == baseline._simulated(x, codes)
    assert runs == [1, 1]
    # a cache root that cannot be written: computed, nothing kept, no error
    (tmp_path / "file").write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(tmp_path / "file"))
    runs = _computed(monkeypatch)
    assert baseline.attenuation(x, codes) and runs == [1]
