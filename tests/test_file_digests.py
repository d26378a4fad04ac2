"""A large file's digest (a model's weights: part of every cache key) is kept between processes
and read back only while the file is untouched (normtest.base.fingerprint)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

import normtest.base.fingerprint as fingerprint


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(fingerprint, "_MEMO", {})
    return tmp_path / "cache"


def _forget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new process: nothing remembered in memory."""
    monkeypatch.setattr(fingerprint, "_MEMO", {})


def test_a_large_files_digest_is_read_back_until_the_file_changes(
        tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"\x01" * fingerprint.KEPT_FROM_BYTES)
    truth = hashlib.sha256(weights.read_bytes()).hexdigest()
    assert fingerprint.file_sha256(weights) == truth
    kept = json.loads((cache / fingerprint.DIGESTS_FILE).read_text(encoding="utf-8"))
    assert kept[str(weights.resolve())]["sha256"] == truth

    _forget(monkeypatch)
    read = []
    real = fingerprint.sha256_now
    monkeypatch.setattr(fingerprint, "sha256_now", lambda p: read.append(p) or real(p))
    assert fingerprint.file_sha256(weights) == truth and read == []  # kept: not read

    # changed in place, same size, its modification time set back: the change time moved
    stat = weights.stat()
    with weights.open("r+b") as out:
        out.write(b"\x02")
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    _forget(monkeypatch)
    changed = hashlib.sha256(weights.read_bytes()).hexdigest()
    assert fingerprint.file_sha256(weights) == changed != truth and read == [weights]


def test_small_files_and_an_unwritable_cache_keep_nothing(
        tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = tmp_path / "config.json"
    small.write_text("{}", encoding="utf-8")
    assert fingerprint.file_sha256(small) == hashlib.sha256(b"{}").hexdigest()
    assert not (cache / fingerprint.DIGESTS_FILE).exists()
    cache.parent.joinpath("cache").write_text("not a folder", encoding="utf-8")
    weights = tmp_path / "model.bin"
    weights.write_bytes(b"\x00" * fingerprint.KEPT_FROM_BYTES)
    assert fingerprint.file_sha256(weights) == hashlib.sha256(weights.read_bytes()).hexdigest()
