"""Small randomly initialised ModernBERT, BERT, GPT-2 and LLaMA models pass the adapter suite.

Each architecture is built once per module (hidden size 32, 2 layers, ``torch.manual_seed(0)``),
saved with ``save_pretrained`` (safetensors) beside a tokenizer that is installed here: MiniLM's
BERT WordPiece for the encoders (ModernBERT's own tokenizer is not installable offline), SmolLM2's
byte-level BPE for the decoders. ``normtest.load`` reads the folder as an encoder or a decoder,
``check_adapter`` runs every capability the adapter declares, and a tiny audit runs end to end.
Random weights may get any verdict; only a measured one (never ERROR) is required.

The decoders run with SmolLM2's document separator ``<|endoftext|>`` (id 0) as both start and end
token, as GPT-2 itself does (its bos = eos = ``<|endoftext|>``); SmolLM2's tokenizer names chat
tokens as bos/eos, which a model trained on documents never saw at the start of one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import normtest  # noqa: E402
from normtest.adapters.embedded import (  # noqa: E402
    SMOLLM2_DOCUMENT_SEPARATOR,
    minilm_folder,
    smollm2_folder,
)
from normtest.adapters.protocol import family_of  # noqa: E402
from normtest.audit.run import run_audit  # noqa: E402
from normtest.base.settings import AuditSettings  # noqa: E402
from normtest.testing.conformance import check_adapter  # noqa: E402
from normtest.verdict.result import Verdict  # noqa: E402

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

SMALL = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
         "intermediate_size": 64}
MEASURED = {Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE}
TEXT = "The cat sat quietly on the warm mat while information kept arriving."


def _modernbert(tok: Any) -> Any:
    config = transformers.ModernBertConfig(
        vocab_size=len(tok), **SMALL, max_position_embeddings=512,
        global_attn_every_n_layers=2, local_attention=16,
        pad_token_id=tok.pad_token_id, cls_token_id=tok.cls_token_id,
        sep_token_id=tok.sep_token_id, mask_token_id=tok.mask_token_id,
        bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id,
    )
    return transformers.ModernBertModel(config)


def _bert(tok: Any) -> Any:
    config = transformers.BertConfig(vocab_size=len(tok), **SMALL, max_position_embeddings=512,
                                     pad_token_id=tok.pad_token_id)
    return transformers.BertModel(config)


def _gpt2(tok: Any) -> Any:
    config = transformers.GPT2Config(
        vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_inner=64, n_positions=512,
        bos_token_id=SMOLLM2_DOCUMENT_SEPARATOR, eos_token_id=SMOLLM2_DOCUMENT_SEPARATOR,
    )
    return transformers.GPT2LMHeadModel(config)


def _llama(tok: Any) -> Any:
    config = transformers.LlamaConfig(
        vocab_size=len(tok), **SMALL, num_key_value_heads=2, max_position_embeddings=512,
        bos_token_id=SMOLLM2_DOCUMENT_SEPARATOR, eos_token_id=SMOLLM2_DOCUMENT_SEPARATOR,
    )
    return transformers.LlamaForCausalLM(config)


#: architecture → the folder its tiny model was saved to (filled by the fixture)
FOLDERS: dict[str, Path] = {}
#: architecture → (model builder, tokenizer folder, family, states)
ARCHITECTURES: dict[str, tuple[Callable[[Any], Any], Callable[[], Path], str, tuple[str, ...]]] = {
    "modernbert": (_modernbert, minilm_folder, "encoder", ("cls",)),
    "bert": (_bert, minilm_folder, "encoder", ("cls",)),
    "gpt2": (_gpt2, smollm2_folder, "decoder", ("eos", "last")),
    "llama": (_llama, smollm2_folder, "decoder", ("eos", "last")),
}


@pytest.fixture(scope="module", params=sorted(ARCHITECTURES))
def built(request: pytest.FixtureRequest,
          tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Any]:
    """(architecture, adapter) of a tiny random model saved to a temporary folder."""
    arch = request.param
    build, tokenizer_folder, _, _ = ARCHITECTURES[arch]
    folder = tmp_path_factory.mktemp(f"tiny-{arch}")
    tok = transformers.AutoTokenizer.from_pretrained(tokenizer_folder())
    torch.manual_seed(0)
    build(tok).save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)
    adapter = normtest.load(folder, cache=False, progress=False, name=f"tiny-{arch}",
                            **_load_options(arch))
    FOLDERS[arch] = folder
    return arch, adapter


def test_conformance(built: tuple[str, Any]) -> None:
    arch, adapter = built
    outcomes = check_adapter(adapter)
    assert all(o.passed for o in outcomes)
    expected = {"identity", "word_tokens", "token_vectors", "special_states", "prefix_vectors"}
    if ARCHITECTURES[arch][2] == "decoder":
        expected.add("token_logprobs")
    assert {o.name for o in outcomes} == expected
    assert (FOLDERS[arch] / "model.safetensors").is_file()


def test_family_and_states(built: tuple[str, Any]) -> None:
    arch, adapter = built
    _, _, family, states = ARCHITECTURES[arch]
    assert family_of(adapter) == family
    assert tuple(adapter.states) == states
    if family == "decoder":
        assert adapter.start_token_id == adapter.end_token_id == SMOLLM2_DOCUMENT_SEPARATOR


def _load_options(arch: str) -> dict[str, Any]:
    if ARCHITECTURES[arch][2] != "decoder":
        return {}
    return {"start_token_id": SMOLLM2_DOCUMENT_SEPARATOR,
            "end_token_id": SMOLLM2_DOCUMENT_SEPARATOR}


def test_padded_batches_match(built: tuple[str, Any]) -> None:
    """Texts of different lengths batched with padding (``max_padding=1``) give the same rows as
    equal-length batches, including a text longer than ModernBERT's local attention window."""
    arch, adapter = built
    padded = normtest.load(FOLDERS[arch], cache=False, progress=False, max_padding=1.0,
                           **_load_options(arch))
    texts = [" ".join([TEXT] * 4), "Hello world", TEXT]
    assert len(adapter.tokenize(texts[0])) > 16
    for layer in ("last", 1):
        alone, together = adapter.token_vectors(texts, layer=layer), \
            padded.token_vectors(texts, layer=layer)
        for i in range(len(texts)):
            np.testing.assert_allclose(together[i], alone[i], rtol=0, atol=1e-4)
    for state in adapter.states:
        np.testing.assert_allclose(padded.special_states(texts, state),
                                   adapter.special_states(texts, state), rtol=0, atol=1e-4)


@pytest.mark.parametrize("layer", [0, 1, "input", "last"])
def test_layers(built: tuple[str, Any], layer: int | str) -> None:
    _, adapter = built
    n = len(adapter.tokenize(TEXT))
    rows = np.asarray(adapter.token_vectors([TEXT], layer=layer)[0])
    assert rows.shape == (n, adapter.dim)
    assert np.isfinite(rows).all()
    for state in adapter.states:
        vec = np.asarray(adapter.special_states([TEXT], state, layer=layer))
        assert vec.shape == (1, adapter.dim)
        assert np.isfinite(vec).all()
    prefixes = np.asarray(adapter.prefix_vectors(TEXT, [1, n], "mean", layer=layer))
    assert prefixes.shape == (2, adapter.dim)
    assert np.isfinite(prefixes).all()


def test_tiny_audit(built: tuple[str, Any]) -> None:
    _, adapter = built
    report = run_audit(adapter, claim_ids=["cer.linear", "word.norm_ic"],
                       settings=AuditSettings(words=60, documents=10, resamples=100))
    verdicts = {r.id: r.verdict for r in report.results}
    assert {r.claim for r in report.results} == {"cer.linear", "word.norm_ic"}
    assert Verdict.ERROR not in verdicts.values(), verdicts
    assert set(verdicts.values()) <= MEASURED, verdicts
