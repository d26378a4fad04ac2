"""What an audit's design alone decides is kept for the next audit of the same design
(normtest.audit.design_store): the sizes it chose and its lines' controls are read back — not
run again — and every number of the report is the same; another design, other code, a damaged
file or an audit without the cache read nothing."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import normtest.audit.design_store as design_store
import normtest.audit.sizing as sizing_module
import normtest.scorecard.controls as controls_module
from normtest.adapters.static import StaticVectors
from normtest.audit.run import AuditSettings, run_audit
from normtest.models.cache.adapter import CachedAdapter
from normtest.models.cache.embeddings import EmbeddingCache

CLAIMS = ["word.norm_ic"]
SETTINGS = AuditSettings(words=600, resamples=200, robustness=False, autosize=("words",),
                         workers=1)


@pytest.fixture
def kept_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The design store in a folder of the test's own."""
    monkeypatch.setattr(design_store, "default_cache_dir", lambda: tmp_path)
    return tmp_path / design_store.FOLDER


def _cached(glove: StaticVectors, tmp_path: Path) -> CachedAdapter:
    return CachedAdapter(glove, EmbeddingCache(tmp_path / "embeddings"))


def _audit(adapter: Any, settings: AuditSettings = SETTINGS) -> Any:
    return run_audit(adapter, claim_ids=CLAIMS, settings=settings)


def _numbers(report: Any) -> Any:
    """The report without the seconds things took."""
    data = json.loads(report.to_json())
    data["provenance"].pop("seconds", None)
    data["provenance"]["sizing"].pop("seconds", None)
    data["provenance"]["sizing"].pop("kept", None)
    for c in data["controls"]:
        c.pop("seconds")
    return {k: data[k] for k in ("results", "scorecard", "controls")} | {
        "sizing": data["provenance"]["sizing"], "sample": data["provenance"]["sample"]}


def _refuse_to_compute(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("computed again")

    monkeypatch.setattr(sizing_module, "_line_need", refuse)
    monkeypatch.setattr(controls_module, "measure_control", refuse)


def test_a_second_audit_of_the_same_design_reads_its_sizing_and_controls(
        glove: StaticVectors, tmp_path: Path, kept_in: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = _cached(glove, tmp_path)
    first = _audit(adapter)
    assert "kept" not in first.provenance["sizing"]
    assert len(list(kept_in.glob("*.json"))) == 2  # the sizing, the word line's controls
    _refuse_to_compute(monkeypatch)
    second = _audit(adapter)
    assert second.provenance["sizing"]["kept"] is True
    assert _numbers(second) == _numbers(first)
    assert all(c.seconds == 0.0 for c in second.controls)
    # another design: another seed draws other words; it is sized and controlled afresh
    with pytest.raises(AssertionError, match="computed again"):
        _audit(adapter, replace(SETTINGS, seed=1))


def test_other_code_a_damaged_file_or_no_cache_read_nothing(
        glove: StaticVectors, tmp_path: Path, kept_in: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = _cached(glove, tmp_path)
    first = _audit(adapter)
    files = sorted(kept_in.glob("*.json"))
    # the same design under other code (normtest's source changed): computed again
    real = design_store.source_sha256
    monkeypatch.setattr(design_store, "source_sha256", lambda extra=(): "other code")
    assert "kept" not in _audit(adapter).provenance["sizing"]
    monkeypatch.setattr(design_store, "source_sha256", real)
    # a damaged file, or one that describes another design, is computed again and replaced
    files[0].write_text("{not json", encoding="utf-8")
    stored = json.loads(files[1].read_text(encoding="utf-8"))
    stored["design"]["revision"] = "another model"
    files[1].write_text(json.dumps(stored), encoding="utf-8")
    again = _audit(adapter)
    assert _numbers(again) == _numbers(first)
    for f in files[:2]:  # replaced by what was computed again
        assert json.loads(f.read_text(encoding="utf-8"))["design"]["revision"] \
            == adapter.revision
    _refuse_to_compute(monkeypatch)
    assert _audit(adapter).provenance["sizing"]["kept"] is True  # replaced: read now
    monkeypatch.undo()
    # without the cache (--no-cache) nothing is read or kept
    monkeypatch.setattr(design_store, "default_cache_dir", lambda: tmp_path / "elsewhere")
    assert "kept" not in _audit(glove).provenance["sizing"]
    assert not (tmp_path / "elsewhere").exists()
