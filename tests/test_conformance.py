"""The conformance suite passes correct adapters and names what is wrong with broken ones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from normtest.adapters.protocol import Capability, Layer, TokenBatch
from normtest.models.synthetic import IsotropicModel, ShuffledNormModel, make_oracle
from normtest.testing.conformance import check_adapter


@pytest.fixture(scope="module")
def oracle() -> Any:
    return make_oracle(20, seed=3)


def test_synthetic_models_conform(oracle: Any) -> None:
    words = list(oracle.words[:5])
    text = " ".join(oracle.words[5:12])
    for model in (oracle, ShuffledNormModel(oracle), IsotropicModel(oracle.distribution, dim=6)):
        outcomes = check_adapter(model, words=words, text=text)
        assert [o.name for o in outcomes] == ["identity", "word_vectors", "word_tokens",
                                              "token_vectors"]
        assert all(o.passed for o in outcomes)


class Sloppy:
    """Gets several things wrong the suite must notice."""

    name = "sloppy"
    revision = ""  # cannot key a cache
    dim = 3
    capabilities = frozenset({Capability.WORD_VECTORS, Capability.TOKEN_VECTORS})

    def represents(self, words: Sequence[str]) -> np.ndarray:
        return np.ones(len(words), dtype=bool)

    def word_vectors(self, words: Sequence[str]) -> np.ndarray:
        rng = np.random.default_rng()  # not deterministic; unknown words never raise
        return rng.normal(size=(len(words), 3))

    def token_vectors(self, texts: Sequence[str], *, layer: Layer = "last",
                      special_tokens: bool = False, words: bool = False) -> TokenBatch:
        return TokenBatch.from_list([np.zeros((1, 3)) for _ in texts], 3)


def test_broken_adapter_fails_with_every_problem_named() -> None:
    outcomes = check_adapter(Sloppy(), raise_on_failure=False)
    failed = {o.name: o.message for o in outcomes if not o.passed}
    assert "revision must be a non-empty str" in failed["identity"]
    assert "not deterministic" in failed["word_vectors"]
    assert "token_vectors" in failed  # declares TOKEN_VECTORS without tokenize()
    with pytest.raises(AssertionError, match="adapter 'sloppy' fails"):
        check_adapter(Sloppy())
