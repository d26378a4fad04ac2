"""A conformance suite any adapter can run in its own tests: ``check_adapter(adapter)``.

After scikit-learn's ``check_estimator``: every capability the adapter declares is exercised
through the protocol, with shapes, determinism, batching, ordering and error behaviour checked.
It returns the structured outcome of every check and, by default, raises ``AssertionError``
listing every failure::

    from normtest.testing.conformance import check_adapter

    def test_my_adapter_conforms():
        check_adapter(MyAdapter())
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from normtest.adapters.protocol import (
    SPECIAL_STATE_NAMES,
    Capability,
    ModelAdapter,
    TokenBatch,
    Tokenization,
    supports,
)
from normtest.errors import NormtestError

DEFAULT_WORDS = ("the", "information", "cat", "unbelievably", "of", "language")
DEFAULT_TEXT = "The cat sat quietly on the warm mat while information kept arriving."
#: Agreement required between batched and one-by-one calls, relative to the values' magnitude
#: (padding may reorder float32 sums).
BATCH_TOLERANCE = 1e-4


@dataclass(frozen=True)
class CheckOutcome:
    """One conformance check: its name, whether it passed, and what went wrong."""

    name: str
    passed: bool
    message: str = ""


class _Failed(Exception):
    pass


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise _Failed(message)


def _expect_raises(call: Callable[[], Any], what: str) -> None:
    try:
        call()
    except NormtestError:
        return
    except Exception as exc:
        kind = type(exc).__name__
        raise _Failed(f"{what} raised {kind} instead of NormtestError: {exc}") from exc
    raise _Failed(f"{what} did not raise NormtestError")


def _matrix(value: Any, rows: int, dim: int, what: str) -> np.ndarray:
    arr = np.asarray(value)
    _expect(arr.shape == (rows, dim), f"{what} has shape {arr.shape}, expected {(rows, dim)}")
    _expect(np.issubdtype(arr.dtype, np.floating), f"{what} has dtype {arr.dtype}, not float")
    _expect(bool(np.isfinite(arr).all()), f"{what} contains NaN or infinity")
    return arr


def check_adapter(
    adapter: Any,
    *,
    words: Sequence[str] = DEFAULT_WORDS,
    text: str = DEFAULT_TEXT,
    raise_on_failure: bool = True,
) -> list[CheckOutcome]:
    """Run every check that applies to ``adapter``'s declared capabilities."""
    checks: list[tuple[str, Callable[[], None]]] = [("identity", lambda: _identity(adapter))]
    caps = set(getattr(adapter, "capabilities", ()))
    if Capability.WORD_VECTORS in caps:
        checks.append(("word_vectors", lambda: _word_vectors(adapter, words)))
    if Capability.WORD_TOKENS in caps:
        checks.append(("word_tokens", lambda: _word_tokens(adapter, words, text)))
    if Capability.TOKEN_VECTORS in caps:
        checks.append(("token_vectors", lambda: _token_vectors(adapter, words, text)))
    if Capability.SPECIAL_STATES in caps:
        checks.append(("special_states", lambda: _special_states(adapter, text)))
    if Capability.PREFIX_VECTORS in caps:
        checks.append(("prefix_vectors", lambda: _prefix_vectors(adapter, text)))
    if Capability.TOKEN_LOGPROBS in caps:
        checks.append(("token_logprobs", lambda: _token_logprobs(adapter, text)))
    if Capability.TEXT_VECTORS in caps:
        checks.append(("text_vectors", lambda: _text_vectors(adapter, words, text)))

    outcomes = []
    for name, run in checks:
        try:
            run()
            outcomes.append(CheckOutcome(name, True))
        except _Failed as exc:
            outcomes.append(CheckOutcome(name, False, str(exc)))
        except Exception as exc:  # a crash inside a check is a failure of that check
            outcomes.append(CheckOutcome(name, False, f"raised {type(exc).__name__}: {exc}"))
    failed = [o for o in outcomes if not o.passed]
    if failed and raise_on_failure:
        lines = "\n".join(f"- {o.name}: {o.message}" for o in failed)
        raise AssertionError(f"adapter {getattr(adapter, 'name', adapter)!r} fails:\n{lines}")
    return outcomes


def _identity(adapter: Any) -> None:
    _expect(isinstance(adapter, ModelAdapter), "lacks name, revision, dim or capabilities")
    _expect(isinstance(adapter.name, str) and bool(adapter.name), "name must be a non-empty str")
    _expect(isinstance(adapter.revision, str) and bool(adapter.revision),
            "revision must be a non-empty str (it keys the cache)")
    _expect(isinstance(adapter.dim, int) and adapter.dim > 0, "dim must be a positive int")
    caps = adapter.capabilities
    _expect(isinstance(caps, frozenset) and all(isinstance(c, Capability) for c in caps),
            "capabilities must be a frozenset of Capability")
    for cap in caps:
        _expect(supports(adapter, cap), f"declares {cap.value} but lacks its methods")


def _text_vectors(adapter: Any, words: Sequence[str], text: str) -> None:
    """A sentence encoder: one vector per text, deterministic, in order, the same batched and
    alone, an empty text refused, its pooling named. An open-vocabulary encoder need not refuse
    any word (a made-up word is a text like any other)."""
    states = tuple(getattr(adapter, "states", ()))
    _expect(len(states) == 1 and isinstance(states[0], str) and bool(states[0]),
            f"states must name the model's one pooling, e.g. ('mean',), got {states}")
    own = getattr(adapter, "texts", None)
    texts = list(own[:3]) if own is not None else [text, *words[:2]]
    _expect(len(texts) >= 2, "a model of precomputed texts needs at least two of them")
    together = _matrix(adapter.text_vectors(texts), len(texts), adapter.dim, "text_vectors")
    _expect(np.array_equal(together, np.asarray(adapter.text_vectors(texts))),
            "text_vectors is not deterministic")
    for i, t in enumerate(texts):
        alone = np.asarray(adapter.text_vectors([t]))[0]
        gap = float(np.max(np.abs(alone - together[i])))
        scale = max(1.0, float(np.max(np.abs(alone))))
        _expect(gap <= BATCH_TOLERANCE * scale,
                f"batched and single text_vectors differ by {gap:.2g} (values up to {scale:.3g})")
    backwards = np.asarray(adapter.text_vectors(texts[::-1]))
    gap = float(np.max(np.abs(backwards - together[::-1])))
    _expect(gap <= BATCH_TOLERANCE * max(1.0, float(np.max(np.abs(together)))),
            "text_vectors does not keep the input order")
    _expect_raises(lambda: adapter.text_vectors([""]), "text_vectors of an empty text")


def _word_vectors(adapter: Any, words: Sequence[str]) -> None:
    known = np.asarray(adapter.represents(list(words)))
    _expect(known.shape == (len(words),) and known.dtype == bool,
            "represents() must return one bool per word")
    sample = [w for w, k in zip(words, known, strict=True) if k]
    _expect(len(sample) >= 2, f"represents none or one of {list(words)}; pass words= it knows")
    first = _matrix(adapter.word_vectors(sample), len(sample), adapter.dim, "word_vectors")
    again = np.asarray(adapter.word_vectors(sample))
    _expect(np.array_equal(first, again), "word_vectors is not deterministic")
    backwards = np.asarray(adapter.word_vectors(sample[::-1]))
    _expect(np.array_equal(backwards, first[::-1]), "word_vectors does not keep the input order")
    _expect_raises(lambda: adapter.word_vectors(["qzxv-not-a-word-7731"]),
                   "word_vectors of an unknown word")


def _tokenization(value: Any, what: str) -> Tokenization:
    _expect(isinstance(value, Tokenization), f"{what} must return a Tokenization")
    _expect(len(value.ids) == len(value.tokens) > 0, f"{what} returned no or misaligned tokens")
    _expect(all(isinstance(i, int) for i in value.ids), f"{what} ids must be ints")
    _expect(all(isinstance(t, str) for t in value.tokens), f"{what} tokens must be str")
    return value


def _word_tokens(adapter: Any, words: Sequence[str], text: str) -> None:
    _tokenization(adapter.tokenize(text), "tokenize(text)")
    for word in words:
        _tokenization(adapter.word_tokens(word), f"word_tokens({word!r})")
    _expect_raises(lambda: adapter.tokenize(""), "tokenize of an empty text")


def _batch(value: Any, lengths: Sequence[int], dim: int, what: str) -> TokenBatch:
    _expect(isinstance(value, TokenBatch), f"{what} must return a TokenBatch")
    _expect(list(value.lengths) == list(lengths),
            f"{what} rows per item {list(value.lengths)} differ from the tokenisation {lengths}")
    _matrix(value.vectors, int(sum(lengths)), dim, what)
    return value


def _token_vectors(adapter: Any, words: Sequence[str], text: str) -> None:
    dim = adapter.dim
    texts = [text, " ".join(words[:2]), text.split()[0]]
    lengths = [len(adapter.tokenize(t)) for t in texts]
    together = _batch(adapter.token_vectors(texts), lengths, dim, "token_vectors(texts)")
    for i, t in enumerate(texts):
        alone = np.asarray(adapter.token_vectors([t])[0])
        gap = float(np.max(np.abs(alone - together[i])))
        scale = max(1.0, float(np.max(np.abs(alone))))
        _expect(gap <= BATCH_TOLERANCE * scale,
                f"batched and single token_vectors differ by {gap:.2g} (values up to {scale:.3g})")
    word_lengths = [len(adapter.word_tokens(w)) for w in words]
    _batch(adapter.token_vectors(list(words), words=True), word_lengths, dim,
           "token_vectors(words, words=True)")
    _batch(adapter.token_vectors(texts[:1], layer="input"), lengths[:1], dim,
           "token_vectors(layer='input')")
    _expect_raises(lambda: adapter.token_vectors(texts[:1], layer="no-such-layer"),
                   "token_vectors with an unknown layer")


def _special_states(adapter: Any, text: str) -> None:
    states = tuple(adapter.states)
    _expect(bool(states) and set(states) <= set(SPECIAL_STATE_NAMES),
            f"states {states} must be a non-empty subset of {SPECIAL_STATE_NAMES}")
    texts = [text, text.split()[0]]
    for state in states:
        _matrix(adapter.special_states(texts, state), 2, adapter.dim, f"special_states({state})")
    missing = next(s for s in (*SPECIAL_STATE_NAMES, "nonsense") if s not in states)
    _expect_raises(lambda: adapter.special_states(texts, missing),
                   f"special_states of a state the model lacks ({missing!r})")


def _prefix_vectors(adapter: Any, text: str) -> None:
    n = len(adapter.tokenize(text))
    lengths = sorted({1, max(1, n // 2), n})
    means = _matrix(adapter.prefix_vectors(text, lengths, "mean"), len(lengths), adapter.dim,
                    "prefix_vectors(mean)")
    if Capability.TOKEN_VECTORS in adapter.capabilities:
        whole = np.asarray(adapter.token_vectors([text])[0], dtype=np.float64).mean(axis=0)
        gap = float(np.max(np.abs(means[-1] - whole)))
        scale = max(1.0, float(np.max(np.abs(whole))))
        _expect(gap <= BATCH_TOLERANCE * scale,
                f"the full-length mean prefix differs from the mean token vector by {gap:.2g}")
    for state in getattr(adapter, "states", ()):
        _matrix(adapter.prefix_vectors(text, lengths, state), len(lengths), adapter.dim,
                f"prefix_vectors({state})")
    _expect_raises(lambda: adapter.prefix_vectors(text, [n + 1], "mean"),
                   "a prefix longer than the text")
    _expect_raises(lambda: adapter.prefix_vectors(text, [0], "mean"), "a prefix of length 0")


def _token_logprobs(adapter: Any, text: str) -> None:
    texts = [text, text.split()[0]]
    values = adapter.token_logprobs(texts)
    _expect(len(values) == 2, "token_logprobs must return one array per text")
    for t, lp in zip(texts, values, strict=True):
        arr = np.asarray(lp, dtype=np.float64)
        _expect(arr.shape == (len(adapter.tokenize(t)),),
                "token_logprobs must give one value per token of the text")
        _expect(bool(np.isfinite(arr).all()) and bool((arr <= 1e-6).all()),
                "log-probabilities must be finite and ≤ 0")
    alone = np.asarray(adapter.token_logprobs(texts[:1])[0])
    gap = float(np.max(np.abs(alone - np.asarray(values[0]))))
    _expect(gap <= 1e-3 or math.isclose(gap, 0.0), f"batched and single log-probs differ by {gap}")
