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
from normtest.audit.design_store import DesignStore
from normtest.audit.run import AuditSettings, run_audit, variants
from normtest.audit.sizing import Sizing, size_audit
from normtest.claims.catalogue import get
from normtest.models.cache.adapter import CachedAdapter
from normtest.models.cache.embeddings import EmbeddingCache
from normtest.verdict.result import Result, Verdict

CLAIMS = ["word.norm_ic"]
SETTINGS = AuditSettings(words=600, resamples=200, robustness=False, autosize=("words",),
                         workers=1)


@pytest.fixture
def kept_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache root (the design store, kept computations, file digests) in a folder of the
    test's own; the models were loaded before."""
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(tmp_path / "root"))
    return tmp_path / "root" / design_store.FOLDER


def _cached(glove: StaticVectors, tmp_path: Path) -> CachedAdapter:
    return CachedAdapter(glove, EmbeddingCache(tmp_path / "embeddings"))


def _audit(adapter: Any, settings: AuditSettings = SETTINGS) -> Any:
    return run_audit(adapter, claim_ids=CLAIMS, settings=settings)


def _numbers(report: Any) -> Any:
    """The whole report but the seconds things took, the digest over them and the mark of a
    kept sizing."""
    def drop(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: drop(v) for k, v in value.items() if k not in ("seconds", "kept", "digest")}
        if isinstance(value, list):
            return [drop(v) for v in value]
        return value

    return drop(json.loads(report.to_json()))


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
    monkeypatch.setattr(design_store, "source_sha256", lambda: "other code")
    assert "kept" not in _audit(adapter).provenance["sizing"]
    monkeypatch.setattr(design_store, "source_sha256", real)
    # a damaged file, or one that describes another design, is computed again and replaced
    files[0].write_text("{not json", encoding="utf-8")
    stored = json.loads(files[1].read_text(encoding="utf-8"))
    stored["description"]["revision"] = "another model"
    files[1].write_text(json.dumps(stored), encoding="utf-8")
    again = _audit(adapter)
    assert _numbers(again) == _numbers(first)
    for f in files[:2]:  # replaced by what was computed again
        assert json.loads(f.read_text(encoding="utf-8"))["description"]["revision"] \
            == adapter.revision
    # its own description with a value of another shape (edited by hand): computed again
    for f in files:
        edited = json.loads(f.read_text(encoding="utf-8"))
        edited["value"] = {"line": "word_level", "positive": {"kind": "unknown"},
                           "chosen": {"words": "many"}}
        f.write_text(json.dumps(edited), encoding="utf-8")
    edited_again = _audit(adapter)
    assert "kept" not in edited_again.provenance["sizing"]
    assert _numbers(edited_again) == _numbers(first)
    _refuse_to_compute(monkeypatch)
    assert _audit(adapter).provenance["sizing"]["kept"] is True  # replaced: read now
    monkeypatch.undo()
    # without the cache (--no-cache) nothing is read or kept
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert "kept" not in _audit(glove).provenance["sizing"]
    assert not (tmp_path / "elsewhere" / design_store.FOLDER).exists()


def test_nothing_is_kept_where_the_design_is_not_known_from_its_description(
        glove: StaticVectors, tmp_path: Path, kept_in: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = _cached(glove, tmp_path)
    rows = {"word_level": (Result(Verdict.INCONCLUSIVE, "planned", claim="word.norm_ic",
                                  variant={"composition": "sum"}, hypothesis="word_level"),)}
    store = DesignStore.of(adapter, SETTINGS, "static")
    assert store._key("sizing", rows, {}) is not None
    for refused in (DesignStore.of(adapter, SETTINGS, "static", words=["a", "b"]),
                    DesignStore.of(adapter, SETTINGS, "static", source=object()),
                    DesignStore.of(adapter, replace(SETTINGS, corpus=("my.txt",)), "static"),
                    DesignStore.of(adapter, replace(SETTINGS, surprisal_model="./my-lm"),
                                   "static"),
                    DesignStore.of(glove, SETTINGS, "static")):
        assert refused.design is None and refused._key("sizing", rows, {}) is None
    # a claim whose code is not normtest's own (its source digest does not cover it)
    claim = get("word.norm_ic")
    theirs = replace(claim, measure=lambda *a: None)
    monkeypatch.setattr(design_store, "get", lambda c: theirs if c == claim.id else get(c))
    assert store._key("sizing", rows, {}) is None
    # another criterion, another description
    stricter = replace(claim, criterion=replace(claim.criterion, threshold=0.4))
    monkeypatch.setattr(design_store, "get", lambda c: stricter if c == claim.id else get(c))
    other = store._key("sizing", rows, {})
    monkeypatch.undo()
    assert other is not None and other != store._key("sizing", rows, {})
    assert DesignStore.of(adapter, replace(SETTINGS, alpha=0.01), "static").design \
        != store.design


def test_a_sizing_spread_over_workers_is_the_sizing_of_one_process(
        glove: StaticVectors) -> None:
    """The sizing's lines forked over two workers, each line measured once per size: the same
    choice, powers and record as one process measuring every line in every round."""
    settings = replace(SETTINGS, words=800, autosize=("words",))
    chosen = [get(i) for i in ("word.norm_ic", "cond.inner_pmi", "cond.self_pmi")]
    planned = {c.id: variants(c, "static", ("last",), "standard") for c in chosen}
    one = size_audit(glove, replace(settings, workers=1), "static", chosen, planned)[1]
    two = size_audit(glove, replace(settings, workers=2), "static", chosen, planned)[1]
    assert one is not None and two is not None
    assert replace(one, seconds=0.0) == replace(two, seconds=0.0)
    assert Sizing.from_state(json.loads(json.dumps(one.state()))) == one
