"""Models that only have ``encode(list[str])``, importable as ``encode_models:NAME`` by the tests
of sentence encoders (tests/test_adapters_sentence.py puts this folder on ``sys.path``).

Synthetic ones are built so that a CER claim's truth is known: the vector of a text is a sum
(or a mean) of one independent random vector per word position, so ‖e(prefix_L)‖² grows as L
(or falls as 1/L) in expectation.
"""

from __future__ import annotations

import hashlib

import numpy as np

DIM = 256


def _token_vector(position: int, word: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(f"{position}\0{word}".encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(DIM)


class IndependentSum:
    """e(text) = Σ_i r(i, w_i): independent random vectors, so ‖e‖² ≈ DIM · length."""

    name = "independent-sum"
    revision = "test-1"

    def encode(self, texts: list[str]) -> np.ndarray:
        """One vector per text."""
        return np.stack([sum(_token_vector(i, w) for i, w in enumerate(t.split()))
                         for t in texts]).astype(np.float32)


class IndependentMean(IndependentSum):
    """e(text) = the mean of the same vectors, so ‖e‖² ≈ DIM / length."""

    name = "independent-mean"

    def encode(self, texts: list[str]) -> np.ndarray:
        """One vector per text."""
        return np.stack([v / len(t.split()) for v, t in zip(super().encode(texts), texts,
                                                            strict=True)]).astype(np.float32)


class Normalised(IndependentSum):
    """Unit-length outputs, as a sentence-transformers model with a Normalize module gives."""

    name = "normalised"

    def encode(self, texts: list[str]) -> np.ndarray:
        """One unit vector per text."""
        v = super().encode(texts)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def minilm() -> object:
    """The embedded MiniLM as a ``SentenceTransformer`` object (with its Normalize module)."""
    from sentence_transformers import SentenceTransformer

    from normtest.adapters.embedded import minilm_folder

    return SentenceTransformer(str(minilm_folder()), device="cpu", local_files_only=True)


class Saturating(IndependentSum):
    """e(text) = Σ_i r(i, w_i) · 0.9^i: the terms fade, so ‖e‖² converges (a fixed point)."""

    name = "saturating"

    def encode(self, texts: list[str]) -> np.ndarray:
        """One vector per text."""
        return np.stack([sum(0.9 ** i * _token_vector(i, w) for i, w in enumerate(t.split()))
                         for t in texts]).astype(np.float32)


class OtherSum(IndependentSum):
    """The same construction as :class:`IndependentSum` with other random vectors: a second
    model that grows linearly, equally."""

    name = "other-sum"

    def encode(self, texts: list[str]) -> np.ndarray:
        """One vector per text."""
        return np.stack([sum(_token_vector(i + 7919, w) for i, w in enumerate(t.split()))
                         for t in texts]).astype(np.float32)
