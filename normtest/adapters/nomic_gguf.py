"""nomic-embed-text-v1.5 read from its GGUF file into transformers' own ``NomicBertModel``.

transformers' GGUF loader does not know the ``nomic-bert`` architecture, so this module maps the
file itself (:func:`read_nomic_gguf`): the configuration from the file's metadata (12 layers,
hidden size 768, 12 heads, SwiGLU feed-forward of 3,072, rotary positions with base 1,000, a
2,048-token context, LayerNorm ε 1e-12), and the tensors by name:

- ``token_embd``, ``token_types``, ``token_embd_norm`` → ``embeddings.word_embeddings``,
  ``embeddings.token_type_embeddings``, ``embeddings.LayerNorm``;
- ``blk.i.attn_qkv`` (3 × 768 rows: q, k, v) → ``layers.i.self_attn.q_proj``, ``k_proj``,
  ``v_proj``; ``blk.i.attn_output`` → ``layers.i.self_attn.o_proj``;
- ``blk.i.ffn_up``, ``ffn_gate``, ``ffn_down`` → ``layers.i.mlp.up_proj``, ``gate_proj``,
  ``down_proj``;
- ``blk.i.attn_output_norm``, ``layer_output_norm`` → ``layers.i.post_attention_layernorm``,
  ``post_mlp_layernorm``.

(``ffn_up`` is nomic's ``fc11``, multiplied by ``silu(ffn_gate)``: the two swapped give a model
whose every text has nearly the same vector, cosine ≈ 1, which the tests use as a check.) The
float16 weights become float32. The WordPiece vocabulary (BERT uncased, 30,522 tokens) is rebuilt
from the file's token list, where llama.cpp spelled a word-initial piece ``▁piece`` and a
continuation piece without its ``##``. The model was trained with mean pooling and document texts
prefixed by :data:`NOMIC_DOCUMENT_PREFIX`.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from normtest.adapters.transformers_base import DEFAULT_MAX_TOKENS_PER_BATCH  # noqa: F401
from normtest.errors import NormtestError

# isort: split
# torch and transformers after transformers_base, whose import turns their absence into the
# install hint
import torch
import transformers

__all__ = ["NOMIC_DOCUMENT_PREFIX", "NOMIC_QUERY_PREFIX", "nomic_state_dict",
           "read_nomic_gguf", "wordpiece_vocabulary"]

#: What nomic-embed-text puts before a document (and before a query) it embeds.
NOMIC_DOCUMENT_PREFIX = "search_document: "
NOMIC_QUERY_PREFIX = "search_query: "
_ARCH = "nomic-bert"
_MEAN_POOLING = 1  # llama.cpp's LLAMA_POOLING_TYPE_MEAN
#: Per block: GGUF tensor → NomicBertModel parameter (qkv is split separately).
_BLOCK = {
    "attn_output.weight": "self_attn.o_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
    "attn_output_norm.weight": "post_attention_layernorm.weight",
    "attn_output_norm.bias": "post_attention_layernorm.bias",
    "layer_output_norm.weight": "post_mlp_layernorm.weight",
    "layer_output_norm.bias": "post_mlp_layernorm.bias",
}
_TOP = {
    "token_embd.weight": "embeddings.word_embeddings.weight",
    "token_types.weight": "embeddings.token_type_embeddings.weight",
    "token_embd_norm.weight": "embeddings.LayerNorm.weight",
    "token_embd_norm.bias": "embeddings.LayerNorm.bias",
}


def _field(reader: Any, key: str) -> Any:
    field = reader.fields.get(key)
    if field is None:
        raise NormtestError(f"the GGUF file has no {key!r}; it is not nomic-embed-text-v1.5")
    return field.contents()


def nomic_config(reader: Any) -> Any:
    """The ``NomicBertConfig`` the GGUF file's metadata describe."""
    arch = _field(reader, "general.architecture")
    if arch != _ARCH:
        raise NormtestError(f"the GGUF file holds a {arch!r} model, not {_ARCH!r}")
    if _field(reader, f"{_ARCH}.pooling_type") != _MEAN_POOLING or \
            _field(reader, f"{_ARCH}.attention.causal"):
        raise NormtestError("the GGUF file's nomic-bert model is not a mean-pooled encoder")
    tokens = _field(reader, "tokenizer.ggml.tokens")
    return transformers.NomicBertConfig(
        vocab_size=len(tokens),
        hidden_size=int(_field(reader, f"{_ARCH}.embedding_length")),
        num_hidden_layers=int(_field(reader, f"{_ARCH}.block_count")),
        num_attention_heads=int(_field(reader, f"{_ARCH}.attention.head_count")),
        intermediate_size=int(_field(reader, f"{_ARCH}.feed_forward_length")),
        max_position_embeddings=int(_field(reader, f"{_ARCH}.context_length")),
        layer_norm_eps=float(np.float32(_field(reader, f"{_ARCH}.attention.layer_norm_epsilon"))),
        type_vocab_size=int(_field(reader, "tokenizer.ggml.token_type_count")),
        pad_token_id=int(_field(reader, "tokenizer.ggml.padding_token_id")),
        hidden_act="silu",
        rope_parameters={"rope_type": "default",
                         "rope_theta": float(_field(reader, f"{_ARCH}.rope.freq_base"))},
        architectures=["NomicBertModel"],
    )


def nomic_state_dict(reader: Any, n_layers: int, *, swap_up_gate: bool = False
                     ) -> dict[str, torch.Tensor]:
    """The GGUF tensors as ``NomicBertModel`` parameters (float32). ``swap_up_gate`` maps
    ``ffn_up`` to the gate and ``ffn_gate`` to up: wrong on purpose, for the tests."""
    names = dict(_TOP)
    block = dict(_BLOCK)
    if swap_up_gate:
        block["ffn_up.weight"], block["ffn_gate.weight"] = \
            block["ffn_gate.weight"], block["ffn_up.weight"]
    for i in range(n_layers):
        names.update({f"blk.{i}.{k}": f"layers.{i}.{v}" for k, v in block.items()})
    state: dict[str, torch.Tensor] = {}
    for tensor in reader.tensors:
        array = np.array(tensor.data, dtype=np.float32)  # numpy order: (rows, columns)
        parts = tensor.name.split(".")
        if len(parts) == 4 and parts[0] == "blk" and parts[2] == "attn_qkv":
            q, k, v = np.split(array, 3, axis=0)
            for name, part in zip(("q_proj", "k_proj", "v_proj"), (q, k, v), strict=True):
                state[f"layers.{parts[1]}.self_attn.{name}.weight"] = torch.from_numpy(
                    np.ascontiguousarray(part))
        elif tensor.name in names:
            state[names[tensor.name]] = torch.from_numpy(array)
        else:
            raise NormtestError(f"the GGUF file has a tensor normtest cannot place: "
                                f"{tensor.name}")
    return state


def wordpiece_vocabulary(tokens: list[str], types: list[int]) -> list[str]:
    """The WordPiece vocabulary (vocab.txt order) behind llama.cpp's spelling of it."""
    words = []
    for token, kind in zip(tokens, types, strict=True):
        if kind != 1 or (token.startswith("[") and token.endswith("]")):
            words.append(token)  # control tokens and [unusedN] stand as they are
        elif token.startswith("\u2581"):
            words.append(token[1:])
        else:
            words.append("##" + token)
    return words


def _tokenizer(reader: Any, max_length: int) -> Any:
    """A BERT WordPiece tokenizer (uncased) rebuilt from the file's token list."""
    vocab = wordpiece_vocabulary(list(_field(reader, "tokenizer.ggml.tokens")),
                                 [int(t) for t in _field(reader, "tokenizer.ggml.token_type")])
    if len(set(vocab)) != len(vocab):
        raise NormtestError("the GGUF file's vocabulary has repeated tokens; it is not "
                            "nomic-embed-text-v1.5")
    tok = transformers.BertTokenizer(vocab={w: i for i, w in enumerate(vocab)},
                                     do_lower_case=True, model_max_length=max_length)
    expected = {"cls_token_id": "bos_token_id", "sep_token_id": "seperator_token_id",
                "unk_token_id": "unknown_token_id", "pad_token_id": "padding_token_id"}
    for ours, theirs in expected.items():
        if getattr(tok, ours) != int(_field(reader, f"tokenizer.ggml.{theirs}")):
            raise NormtestError(f"the rebuilt nomic vocabulary puts {ours} elsewhere than the "
                                "GGUF file does; the file is not nomic-embed-text-v1.5")
    return tok


def read_nomic_gguf(path: str | os.PathLike[str], *, swap_up_gate: bool = False
                    ) -> tuple[Any, Any]:
    """nomic-embed-text-v1.5 from its GGUF file: (``NomicBertModel`` in float32, its tokenizer)."""
    import gguf

    reader = gguf.GGUFReader(str(path))
    config = nomic_config(reader)
    model = transformers.NomicBertModel(config)
    state = nomic_state_dict(reader, config.num_hidden_layers, swap_up_gate=swap_up_gate)
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise NormtestError(f"the GGUF tensors do not fit NomicBertModel: {exc}") from exc
    tok = _tokenizer(reader, config.max_position_embeddings)
    return model.eval(), tok
