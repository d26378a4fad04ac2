"""Documents for the Constant Entropy Rate claims and their prefix-length grids (docs/theory.md §6).

A CER check embeds the prefixes of real documents and follows s(L) = ‖e(prefix_L)‖² as L grows.
L is counted in the tokens of the model under audit (``adapter.tokenize(text).ids``, no special
tokens), on a grid of every ``step`` tokens up to ``max_length`` (:func:`prefix_grid`).

The default documents are real text bundled with gensim: news stories from the Lee corpus and
articles from the Wikipedia sample (markup removed), taken in corpus order among those with at
least ``min_words`` whitespace-separated words. Users may give their own texts instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from normtest.adapters.protocol import leading_ids
from normtest.data.information.readers import iter_documents
from normtest.data.information.texts import (
    DocumentSplit,
    lee_texts,
    package_version,
    python_reference,
    wiki_articles,
)
from normtest.errors import NormtestError

if TYPE_CHECKING:
    from normtest.adapters.protocol import ModelAdapter

__all__ = [
    "Document",
    "PrefixPlan",
    "corpus_documents",
    "default_documents",
    "document_sentences",
    "model_token_count",
    "plan_prefixes",
    "prefix_grid",
    "user_documents",
]


@dataclass(frozen=True)
class Document:
    """A document for the CER claims: a stable id, its text, where it came from, and a title."""

    doc_id: str
    text: str
    source: str
    title: str = ""


@dataclass(frozen=True, eq=False)
class PrefixPlan:
    """A document, its length in model tokens (counted up to the longest prefix planned), and
    the prefix lengths to embed."""

    document: Document
    n_tokens: int
    lengths: NDArray[np.int64]
    #: on a word grid read by a token model: the model tokens of each prefix (the first
    #: ``tokens[i]`` tokens of the text are its first ``lengths[i]`` words); else None
    tokens: NDArray[np.int64] | None = None


def default_documents(
    n: int = 24, *, min_words: int = 200, sources: Sequence[str] = ("lee", "wiki"),
    seed: int | None = None,
) -> list[Document]:
    """Up to ``n`` real documents from the bundled sources, shared evenly between ``sources``:
    ``lee`` (news), ``wiki`` (encyclopedia articles), ``pydoc`` (the Python language reference,
    technical prose).

    Each source gives ⌈n / len(sources)⌉ (the first source) or ⌊n / len(sources)⌋ documents of
    at least ``min_words`` words: the first ones in corpus order, or with ``seed`` a draw of
    them without replacement (kept in corpus order), so that another seed audits other
    documents as it audits other words. Fewer are returned when a source runs out (the caller
    sees the count).
    """
    import platform


    if n < 1 or min_words < 1:
        raise NormtestError(f"n and min_words must be positive, got n={n}, min_words={min_words}")
    known = {"lee": lee_texts, "wiki": wiki_articles, "pydoc": python_reference}
    gensim = f"gensim {package_version('gensim')}"
    origin = {"lee": f"{gensim} lee", "wiki": f"{gensim} wiki",
              "pydoc": f"Python {platform.python_version()} pydoc_data"}
    names = list(dict.fromkeys(sources))
    if not names or any(s not in known for s in names):
        raise NormtestError(
            f"sources must be a non-empty selection of {sorted(known)}, got {sources!r}"
        )
    out: list[Document] = []
    for j, name in enumerate(names):
        quota = n // len(names) + (1 if j < n % len(names) else 0)
        eligible = [t for t in known[name]() if len(t.text.split()) >= min_words]
        if seed is not None and quota < len(eligible):
            import numpy as np

            rng = np.random.default_rng([int(seed), j])
            kept = np.sort(rng.choice(len(eligible), size=quota, replace=False))
            eligible = [eligible[int(i)] for i in kept]
        for t in eligible[:quota]:
            out.append(Document(t.doc_id, t.text, origin[name], t.title))
    return out


def user_documents(texts: Sequence[str], ids: Sequence[str] | None = None) -> list[Document]:
    """The user's texts as documents (ids ``user:0``, ``user:1``, … unless given)."""
    if isinstance(texts, str):
        raise NormtestError("pass a list of texts, not a single string (e.g. [text])")
    items = list(texts)
    if not items:
        raise NormtestError("no documents were given; pass at least one text")
    names = [f"user:{i}" for i in range(len(items))] if ids is None else [str(i) for i in ids]
    if len(names) != len(items):
        raise NormtestError(f"{len(names)} ids for {len(items)} texts; give one id per text")
    if len(set(names)) != len(names):
        raise NormtestError("document ids must be unique")
    for i, t in enumerate(items):
        if not isinstance(t, str) or not t.strip():
            raise NormtestError(f"document {i} is empty or not a string; remove it")
    return [Document(d, t, "user") for d, t in zip(names, items, strict=True)]


def prefix_grid(n_tokens: int, step: int = 16, max_length: int = 512) -> NDArray[np.int64]:
    """Prefix lengths step, 2·step, … up to min(n_tokens, max_length) (empty if too short)."""
    if step < 1 or max_length < step:
        raise NormtestError(
            f"need step >= 1 and max_length >= step, got step={step}, max_length={max_length}"
        )
    if n_tokens < 0:
        raise NormtestError(f"a document cannot have {n_tokens} tokens")
    return np.arange(step, min(n_tokens, max_length) + 1, step, dtype=np.int64)


def model_token_count(adapter: ModelAdapter, text: str, at_most: int | None = None) -> int:
    """The number of model tokens of ``text``: ``len(adapter.tokenize(text).ids)``.

    With ``at_most``, ``min(that, at_most)``, tokenising only as much of a long text as that
    needs (:func:`~normtest.adapters.protocol.leading_ids`).
    """
    tokenizer = getattr(adapter, "tokenize", None)
    if not callable(tokenizer):
        raise NormtestError(
            f"model {getattr(adapter, 'name', type(adapter).__name__)!r} cannot tokenize text; "
            "prefix lengths are counted in model tokens, so it needs a tokenize(text) method"
        )
    if at_most is None:
        return len(tokenizer(text).ids)
    if at_most < 0:
        raise NormtestError(f"at_most must be >= 0, got {at_most}")
    ids, _ = leading_ids(lambda part: tokenizer(part).ids, text, at_most)
    return min(len(ids), at_most)


def plan_prefixes(
    adapter: ModelAdapter, documents: Sequence[Document], step: int = 16, max_length: int = 512
) -> list[PrefixPlan]:
    """Each document's prefix grid (:func:`prefix_grid`), and its length in model tokens counted
    up to ``max_length`` (a longer document is tokenised only as far as the grid needs)."""
    plans = []
    for d in documents:
        n = model_token_count(adapter, d.text, at_most=max_length)
        plans.append(PrefixPlan(d, n, prefix_grid(n, step, max_length)))
    return plans


_WORD = re.compile(r"\S+")


def word_prefix(text: str, n_words: int) -> str:
    """The text up to the end of its ``n_words``-th word (whitespace-separated), as written."""
    if n_words < 1:
        raise NormtestError(f"a prefix needs at least one word, got {n_words}")
    end = 0
    for i, match in enumerate(_WORD.finditer(text), start=1):
        end = match.end()
        if i == n_words:
            break
    return text[:end]


def plan_word_prefixes(
    documents: Sequence[Document], step: int = 16, max_length: int = 512,
    token_limit: tuple[Callable[[Sequence[str]], Sequence[int]], int] | None = None,
) -> list[PrefixPlan]:
    """Each document's prefix grid in *words* (step, 2·step, … words), for a model that encodes
    whole texts. With ``token_limit = (count, most)``, lengths whose prefix ``count`` says holds
    more than ``most`` model tokens are dropped (such a model would truncate them silently, and a
    truncated prefix would look like a fixed point). ``n_tokens`` holds the document's words."""
    plans = []
    for d in documents:
        n = min(len(_WORD.findall(d.text)), max_length)
        grid = prefix_grid(n, step, max_length)
        if token_limit is not None and grid.size:
            count, most = token_limit
            sizes = np.asarray(count([word_prefix(d.text, int(k)) for k in grid]))
            grid = grid[sizes <= most]
        plans.append(PrefixPlan(d, n, grid))
    return plans


def on_token_grid(adapter: ModelAdapter, plans: Sequence[PrefixPlan]) -> list[PrefixPlan]:
    """Word-grid plans with each prefix's model tokens, for a model that reads token prefixes.

    The first k words of a text hold the first n_k tokens of the whole text (tokenizers split
    into words before they split words into tokens), so the prefix of k words is the text's
    first n_k tokens. Lengths that add no token to the one before are dropped.
    """
    out = []
    for plan in plans:
        counts = np.array([model_token_count(adapter, word_prefix(plan.document.text, int(k)))
                           for k in plan.lengths], dtype=np.int64)
        keep = np.ones(counts.size, dtype=bool)
        if counts.size:  # strictly more tokens than every shorter prefix, within the text
            keep[1:] = counts[1:] > np.maximum.accumulate(counts)[:-1]
            total = model_token_count(adapter, plan.document.text, at_most=int(counts.max()))
            keep &= counts <= total
        out.append(PrefixPlan(plan.document, plan.n_tokens, plan.lengths[keep], counts[keep]))
    return out


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“(A-Z0-9])")


def document_sentences(
    documents: Sequence[Document], n: int, *, min_words: int = 5, max_words: int = 40,
    seed: int | None = None,
) -> list[tuple[int, str]]:
    """Up to ``n`` (document index, sentence) pairs of ``documents``, taken in turn from each.

    A sentence ends at ``.``, ``!`` or ``?`` followed by space and a capital, digit or quote;
    sentences outside ``min_words``..``max_words`` words (headings, run-ons) are left out, and so
    are repeats. Round-robin over documents so that no one document dominates the sample: each
    document's sentences in text order, or with ``seed`` in a seeded order of their own.
    """
    if n < 1 or min_words < 1 or max_words < min_words:
        raise NormtestError(
            f"need n >= 1 and 1 <= min_words <= max_words, got n={n}, min_words={min_words}, "
            f"max_words={max_words}"
        )
    pools: list[list[str]] = []
    for d in documents:
        parts = (" ".join(s.split()) for s in _SENTENCE_END.split(d.text))
        pool = [s for s in parts if min_words <= len(s.split()) <= max_words]
        if seed is not None and len(pool) > 1:
            import numpy as np

            order = np.random.default_rng([int(seed), len(pools)]).permutation(len(pool))
            pool = [pool[int(i)] for i in order]
        pools.append(pool)
    out: list[tuple[int, str]] = []
    seen: set[str] = set()
    for round_ in range(max((len(p) for p in pools), default=0)):
        for doc, pool in enumerate(pools):
            if round_ < len(pool) and pool[round_] not in seen:
                seen.add(pool[round_])
                out.append((doc, pool[round_]))
                if len(out) == n:
                    return out
    return out


def corpus_documents(
    paths: str | PathLike[str] | Sequence[str | PathLike[str]], n: int, *, min_words: int = 200,
    split: DocumentSplit = "paragraph",
) -> list[Document]:
    """Up to ``n`` documents of at least ``min_words`` words from the user's text files.

    ``paths`` is a corpus spec (:func:`~normtest.data.information.readers.corpus_files`: files,
    folders, glob patterns; plain, gzip, bz2 or Parquet text), read as a stream until ``n`` are
    found and cut into documents by ``split`` (default: blank-line paragraphs). Ids are
    ``file:index``.
    """

    if n < 1 or min_words < 1:
        raise NormtestError(f"n and min_words must be positive, got n={n}, min_words={min_words}")
    out: list[Document] = []
    for f, i, text in iter_documents(paths, split):
        if len(text.split()) >= min_words:
            out.append(Document(f"{f.path.name}:{i}", text, str(f.path)))
            if len(out) == n:
                return out
    return out
