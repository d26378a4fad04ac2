"""Text IC from a causal LM: summed surprisal, checked on a real (tiny) bigram language model."""

from __future__ import annotations

import contextlib
import importlib
import itertools
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from normtest.adapters.protocol import Capability, Tokenization
from normtest.data.information.surprisal import (
    stored_surprisal,
    surprisal,
    text_information,
    token_surprisal,
)
from normtest.data.information.texts import lee_texts
from normtest.errors import NormtestError
from normtest.models.cache.embeddings import CacheWarning


class BigramLM:
    """A causal LM of its own kind: add-k smoothed word bigrams, start-of-context id 0.

    P(t_i | t_<i) = (c(t_{i-1}, t_i) + k) / (c(t_{i-1}) + k·V), with t_0 = ``<|endoftext|>``
    (id 0) as the start of context, as SmolLM2 uses it. Unknown words map to ``<unk>`` (id 1).
    """

    name = "bigram-lee"
    capabilities = frozenset({Capability.TOKEN_LOGPROBS})
    dim = 0  # a language model only: it returns no vectors

    def __init__(self, texts: Sequence[str], k: float = 0.1) -> None:
        words = sorted({w for t in texts for w in t.lower().split()})
        self.vocab = {"<|endoftext|>": 0, "<unk>": 1} | {w: i + 2 for i, w in enumerate(words)}
        self.k = k
        self.pairs: Counter[tuple[int, int]] = Counter()
        self.prev: Counter[int] = Counter()
        for t in texts:
            ids = [0, *self.tokenize(t).ids]
            self.pairs.update(itertools.pairwise(ids))
            self.prev.update(ids[:-1])

    @property
    def revision(self) -> str:
        return f"k={self.k},V={len(self.vocab)}"

    def tokenize(self, text: str) -> Tokenization:
        tokens = tuple(text.lower().split())
        return Tokenization(tuple(self.vocab.get(w, 1) for w in tokens), tokens)

    def probability(self, prev: int, token: int) -> float:
        v = len(self.vocab)
        return (self.pairs[(prev, token)] + self.k) / (self.prev[prev] + self.k * v)

    def token_logprobs(self, texts: Sequence[str]) -> list[np.ndarray]:
        out = []
        for t in texts:
            ids = [0, *self.tokenize(t).ids]
            out.append(np.log([self.probability(a, b) for a, b in itertools.pairwise(ids)]))
        return out


@pytest.fixture(scope="module")
def lm() -> BigramLM:
    return BigramLM([d.text for d in lee_texts()[:200]])


TEXTS = [
    "The fire spread quickly towards the town .",
    "Police said the man was arrested on Sunday .",
    "zzz qqq the",
]


def test_text_ic_is_the_sum_of_per_token_surprisal(lm: BigramLM) -> None:
    per_token = token_surprisal(lm, TEXTS)
    ic = text_information(lm, TEXTS)
    for text, s, total in zip(TEXTS, per_token, ic, strict=True):
        assert s.shape == (len(text.split()),) and np.all(s > 0)
        assert total == pytest.approx(float(np.sum(s)), rel=1e-15)
        # the chain rule: IC is −log of the product of the model's conditional probabilities
        ids = [0, *lm.tokenize(text).ids]
        joint = math.prod(lm.probability(a, b) for a, b in itertools.pairwise(ids))
        assert total == pytest.approx(-math.log(joint), rel=1e-12)


def test_surprisal_result(lm: BigramLM) -> None:
    res = surprisal(lm, TEXTS, batch_size=2)
    assert res.model == "bigram-lee" and res.revision == lm.revision
    assert res.n_tokens.tolist() == [8, 9, 3]
    np.testing.assert_allclose(res.bits() * math.log(2), res.information, rtol=1e-15)
    # a sentence from the training news reads as less surprising per token than unseen words
    per_token = res.information / res.n_tokens
    assert per_token[0] < per_token[2]


def test_the_adapter_gets_every_text_in_one_call_unless_a_batch_size_is_given(
        lm: BigramLM, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole list in one token_logprobs call, as for every other protocol method (the
    transformers adapters batch it by length themselves); batch_size=k: at most k at a time.
    The values are the same either way."""
    calls: list[int] = []
    score = lm.token_logprobs

    def counted(texts: Sequence[str]) -> list[np.ndarray]:
        calls.append(len(texts))
        return score(texts)

    monkeypatch.setattr(lm, "token_logprobs", counted)
    texts = TEXTS * 7
    whole = surprisal(lm, texts)
    assert calls == [21]
    calls.clear()
    chunked = surprisal(lm, texts, batch_size=8)
    assert calls == [8, 8, 5]
    for a, b in zip(whole.tokens, chunked.tokens, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(NormtestError, match="batch_size must be positive"):
        surprisal(lm, texts, batch_size=0)


def test_first_token_is_conditioned_on_the_start_of_context(lm: BigramLM) -> None:
    s = token_surprisal(lm, ["the"])[0]
    assert s[0] == pytest.approx(-math.log(lm.probability(0, lm.vocab["the"])), rel=1e-15)


class NoLogprobs:
    name = "encoder"
    revision = "r0"
    dim = 8
    capabilities = frozenset({Capability.TOKEN_VECTORS})


class BrokenLM(BigramLM):
    def __init__(self, texts: Sequence[str], mode: str) -> None:
        super().__init__(texts)
        self.mode = mode

    def token_logprobs(self, texts: Sequence[str]) -> list[np.ndarray]:
        good = super().token_logprobs(texts)
        if self.mode == "positive":
            return [-lp for lp in good]
        if self.mode == "nan":
            return [lp * np.nan for lp in good]
        if self.mode == "with_start_token":
            return [np.concatenate([[0.0], lp]) for lp in good]
        return good[:-1]  # "short": one array too few


def test_bad_models_and_texts_raise(lm: BigramLM) -> None:
    with pytest.raises(NormtestError, match="does not provide token_logprobs"):
        text_information(NoLogprobs(), TEXTS)
    for mode, message in [
        ("positive", "finite and ≤ 0"),
        ("nan", "finite and ≤ 0"),
        ("with_start_token", "tokenizes it into"),
        ("short", "2 texts"),
    ]:
        with pytest.raises(NormtestError, match=message):
            text_information(BrokenLM(["a b c"], mode), ["a b", "b c"])
    with pytest.raises(NormtestError, match="text 1 is empty"):
        text_information(lm, ["a b", ""])
    with pytest.raises(NormtestError, match="not a single string"):
        text_information(lm, "a b")
    with pytest.raises(NormtestError, match="empty"):
        text_information(lm, [])


# ---------------------------------------------------------------------------- the store


class Counting:
    """A language model's calls to token_logprobs, counted (the model itself unchanged)."""

    def __init__(self, model: BigramLM) -> None:
        self.model, self.calls = model, 0
        self.name, self.capabilities, self.dim = model.name, model.capabilities, model.dim
        self.revision = model.revision

    def tokenize(self, text: str) -> Tokenization:
        return self.model.tokenize(text)

    def token_logprobs(self, texts: Sequence[str]) -> list[np.ndarray]:
        self.calls += 1
        return self.model.token_logprobs(texts)


def test_stored_surprisal_is_computed_once_then_read_back(lm: BigramLM, tmp_path: Path) -> None:
    counting = Counting(lm)
    first = stored_surprisal(counting, TEXTS, directory=tmp_path)
    assert counting.calls == 1 and len(list(tmp_path.glob("*.npz"))) == 1
    again = stored_surprisal(counting, TEXTS, directory=tmp_path)
    assert counting.calls == 1  # read back: the model was not asked
    assert again.model == first.model and again.revision == first.revision
    for a, b in zip(first.tokens, again.tokens, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(again.information, text_information(lm, TEXTS))
    # other texts, another revision, or store=False: computed
    stored_surprisal(counting, TEXTS[:2], directory=tmp_path)
    assert counting.calls == 2 and len(list(tmp_path.glob("*.npz"))) == 2
    counting.revision = "k=0.2"
    stored_surprisal(counting, TEXTS, directory=tmp_path)
    assert counting.calls == 3
    stored_surprisal(counting, TEXTS, directory=tmp_path, store=False)
    assert counting.calls == 4 and len(list(tmp_path.glob("*.npz"))) == 3


@pytest.mark.parametrize("locked", [True, False], ids=["scored-once", "without-the-lock"])
def test_two_audits_at_once_score_the_same_texts_once(
        locked: bool, lm: BigramLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes that need the same texts' surprisal at once (two test workers, two jobs):
    one scores them and stores the file, the other waits for it and reads it back. The model is
    slowed to half a second, so that both ask before either has stored; without the lock (the
    second case) both score, which is what the lock is for."""
    import threading
    import time

    counting = Counting(lm)
    score = counting.token_logprobs

    def slow(texts: Sequence[str]) -> list[np.ndarray]:
        time.sleep(0.5)
        return score(texts)

    counting.token_logprobs = slow  # type: ignore[method-assign]
    if not locked:
        monkeypatch.setattr(importlib.import_module("normtest.data.information.surprisal"),
                            "file_lock", lambda path: contextlib.nullcontext())
    start = threading.Barrier(2)
    found: list[np.ndarray] = []

    def audit() -> None:
        start.wait()
        found.append(stored_surprisal(counting, TEXTS, directory=tmp_path / "store").information)

    threads = [threading.Thread(target=audit) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(found) == 2
    np.testing.assert_array_equal(found[0], found[1])
    assert counting.calls == (1 if locked else 2)
    assert [p.name for p in (tmp_path / "store").iterdir()] == [
        p.name for p in (tmp_path / "store").glob("*.npz")]  # the lock file is kept elsewhere


@pytest.mark.parametrize("damage", ["garbage", "truncated", "negative", "pickle"])
def test_a_damaged_stored_file_is_computed_again(lm: BigramLM, tmp_path: Path,
                                                 damage: str) -> None:
    counting = Counting(lm)
    reference = stored_surprisal(counting, TEXTS, directory=tmp_path).information
    (path,) = tmp_path.glob("*.npz")
    if damage == "garbage":
        path.write_bytes(b"not a numpy file")
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:100])
    else:
        with np.load(path) as stored:
            parts = dict(stored)
        if damage == "negative":
            parts["values"] = -parts["values"]
        else:  # an object array would need unpickling, which the store never does
            parts["values"] = np.array([object()] * parts["values"].size, dtype=object)
        with path.open("wb") as out:
            np.savez(out, **parts)
    with pytest.warns(CacheWarning, match="recomputing it"):  # said once, on one line
        again = stored_surprisal(counting, TEXTS, directory=tmp_path)
    assert counting.calls == 2
    np.testing.assert_array_equal(again.information, reference)
    stored_surprisal(counting, TEXTS, directory=tmp_path)
    assert counting.calls == 2  # the damaged file was replaced


def test_a_model_without_revision_is_never_stored(lm: BigramLM, tmp_path: Path) -> None:
    counting = Counting(lm)
    counting.revision = ""
    stored_surprisal(counting, TEXTS, directory=tmp_path)
    stored_surprisal(counting, TEXTS, directory=tmp_path)
    assert counting.calls == 2 and not list(tmp_path.iterdir())


def test_an_unwritable_store_leaves_the_result_used(lm: BigramLM, tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the store folder would be")
    result = stored_surprisal(Counting(lm), TEXTS, directory=blocked / "surprisal")
    np.testing.assert_array_equal(result.information, text_information(lm, TEXTS))


@pytest.mark.slow
def test_every_audit_reads_the_sentences_surprisal_from_the_store(
        minilm: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two audited models (here two names of MiniLM, with the embedding cache off): the first
    audit computes SmolLM2's surprisal of the sentences, the second reads it back."""
    pytest.importorskip("torch")
    from normtest.base.settings import AuditSettings
    from normtest.data.texts import TextData

    # the module, not the function normtest.data.information exports under the same name
    module = importlib.import_module("normtest.data.information.surprisal")
    monkeypatch.setattr(module, "store_dir", lambda: tmp_path)
    settings = AuditSettings(sentences=12)
    first = TextData.build(minilm, settings)
    assert first.surprisal_model == "smollm2-135m" and len(list(tmp_path.glob("*.npz"))) == 1

    def no_model(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the surprisal model ran again")

    monkeypatch.setattr(module, "surprisal", no_model)
    second = TextData.build(minilm.variant(name="another-model"), settings)
    assert second.sentences == first.sentences
    np.testing.assert_array_equal(second.information, first.information)
