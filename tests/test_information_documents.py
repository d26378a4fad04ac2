"""CER documents from the bundled corpora, user documents, and prefix grids in model tokens."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from normtest.adapters.protocol import Tokenization
from normtest.data.information.documents import (
    corpus_documents,
    default_documents,
    document_sentences,
    model_token_count,
    plan_prefixes,
    prefix_grid,
    user_documents,
)
from normtest.data.information.texts import lee_texts, wiki_articles
from normtest.errors import NormtestError


class CharacterTokenizer:
    """A model whose tokens are characters (so token counts differ from word counts)."""

    name = "chars"

    def tokenize(self, text: str) -> Tokenization:
        return Tokenization(tuple(map(ord, text)), tuple(text))


def test_default_documents_are_real_and_deterministic() -> None:
    docs = default_documents(n=9, min_words=200)
    assert len(docs) == 9 and docs == default_documents(n=9, min_words=200)
    lee = [d for d in docs if d.doc_id.startswith("lee:")]
    wiki = [d for d in docs if d.doc_id.startswith("wiki:")]
    assert len(lee) == 5 and len(wiki) == 4
    assert all(len(d.text.split()) >= 200 for d in docs)
    assert len({d.doc_id for d in docs}) == 9
    lee_by_id = {t.doc_id: t.text for t in lee_texts()}
    assert all(lee_by_id[d.doc_id] == d.text for d in lee)  # the corpus text itself
    assert wiki[0].title == "Anarchism" and "political philosophy" in wiki[0].text
    assert "'''" not in wiki[0].text and "==" not in wiki[0].text  # markup removed
    assert all("gensim" in d.source for d in docs)


def test_default_documents_options() -> None:
    only_lee = default_documents(n=3, min_words=50, sources=["lee"])
    assert [d.doc_id for d in only_lee] == ["lee:0", "lee:1", "lee:2"]
    few = default_documents(n=1000, min_words=5000, sources=["wiki"])
    n_long = sum(len(a.text.split()) >= 5000 for a in wiki_articles())
    assert len(few) == n_long < 1000  # a source that runs out gives what it has
    with pytest.raises(NormtestError, match="sources"):
        default_documents(sources=["books"])
    with pytest.raises(NormtestError, match="positive"):
        default_documents(n=0)


def test_user_documents() -> None:
    docs = user_documents(["First text.", "Second text."])
    assert [d.doc_id for d in docs] == ["user:0", "user:1"] and docs[1].text == "Second text."
    assert user_documents(["x"], ids=["mine"])[0].doc_id == "mine"
    with pytest.raises(NormtestError, match="document 1 is empty"):
        user_documents(["fine", "  "])
    with pytest.raises(NormtestError, match="one id per text"):
        user_documents(["a", "b"], ids=["x"])
    with pytest.raises(NormtestError, match="unique"):
        user_documents(["a", "b"], ids=["x", "x"])
    with pytest.raises(NormtestError, match="not a single string"):
        user_documents("a text")


def test_prefix_grid() -> None:
    np.testing.assert_array_equal(prefix_grid(100, step=16), [16, 32, 48, 64, 80, 96])
    np.testing.assert_array_equal(
        prefix_grid(10_000, step=128, max_length=512), [128, 256, 384, 512]
    )
    assert prefix_grid(10, step=16).size == 0  # too short: no prefix, not an error
    with pytest.raises(NormtestError, match="step"):
        prefix_grid(100, step=0)
    with pytest.raises(NormtestError, match="max_length >= step"):
        prefix_grid(100, step=64, max_length=32)


def test_prefix_lengths_are_counted_in_model_tokens() -> None:
    model = CharacterTokenizer()
    docs = user_documents(["a" * 50, "b" * 7])
    plans = plan_prefixes(model, docs, step=10, max_length=40)
    assert [p.n_tokens for p in plans] == [40, 7]  # counted up to max_length
    np.testing.assert_array_equal(plans[0].lengths, [10, 20, 30, 40])
    assert plans[1].lengths.size == 0
    assert model_token_count(model, "hello world") == 11
    assert model_token_count(model, "hello world", at_most=5) == 5
    assert model_token_count(model, "hello world", at_most=50) == 11
    with pytest.raises(NormtestError, match="tokenize"):
        model_token_count(object(), "text")


def test_document_sentences_take_turns_and_filter() -> None:
    docs = user_documents([
        "First one here is long enough. Short. Second sentence of doc zero is here too!",
        "Doc one opens with a sentence. Doc one opens with a sentence. Then another one follows.",
    ])
    pairs = document_sentences(docs, 10, min_words=3, max_words=8)
    assert pairs == [
        (0, "First one here is long enough."),
        (1, "Doc one opens with a sentence."),
        (0, "Second sentence of doc zero is here too!"),
        (1, "Then another one follows."),
    ]  # "Short." is too short, the repeat is dropped, documents alternate
    assert document_sentences(docs, 1, min_words=3) == [(0, "First one here is long enough.")]
    with pytest.raises(NormtestError, match="min_words"):
        document_sentences(docs, 5, min_words=10, max_words=5)


def test_default_documents_give_real_sentences() -> None:
    pairs = document_sentences(default_documents(12), 240)
    assert len(pairs) == 240 and len({d for d, _ in pairs}) == 12
    assert all(5 <= len(s.split()) <= 40 and s[-1] in ".!?\"'”)" for _, s in pairs)


def test_corpus_documents_from_files(tmp_path: Path) -> None:
    long = " ".join(["word"] * 250)
    (tmp_path / "a.txt").write_text(f"{long}\n\nshort paragraph\n\n{long} end", encoding="utf-8")
    (tmp_path / "b.txt").write_text(long, encoding="utf-8")
    docs = corpus_documents(tmp_path, 10)
    assert [d.doc_id for d in docs] == ["a.txt:0", "a.txt:2", "b.txt:0"]
    assert corpus_documents(tmp_path, 2)[-1].doc_id == "a.txt:2"
    assert corpus_documents(tmp_path / "b.txt", 10, min_words=300) == []
    with pytest.raises(NormtestError, match="positive"):
        corpus_documents(tmp_path / "a.txt", 0)


@pytest.mark.slow
def test_the_parsed_wikipedia_sample_is_stored_and_read_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Parsed once (gensim, about two seconds), then read back from the cache folder by every
    later process; a damaged stored file is parsed again and replaced."""
    from normtest.base.paths import CACHE_ENV
    from normtest.data.information import texts

    parsed = wiki_articles()
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    parses: list[Path] = []
    original = texts._parse_wiki

    def counting(source: Path) -> tuple[texts.SourceText, ...]:
        parses.append(source)
        return original(source)

    monkeypatch.setattr(texts, "_parse_wiki", counting)
    try:
        for damage in (None, None, "garbage", None):
            if damage is not None:
                (stored,) = tmp_path.glob("texts/wiki-*.json")
                stored.write_text("{not json", encoding="utf-8")
            wiki_articles.cache_clear()  # a new process
            assert wiki_articles() == parsed
        assert len(parses) == 2  # the first read, and the damaged file
    finally:
        wiki_articles.cache_clear()


def test_the_text_claim_draws_documents_from_three_kinds_of_text() -> None:
    """News, encyclopedia articles and the Python reference's prose (code and grammar left
    out): the text claim's 40 clusters come from three sources, a near-even share of each, and
    another seed draws other documents of each."""
    from normtest.base.settings import TEXT_SOURCES, AuditSettings
    from normtest.data.common import documents_for
    from normtest.data.information.texts import python_reference

    topics = python_reference()
    assert len(topics) > 50 and all(t.doc_id.startswith("pydoc:") for t in topics)
    prose = "\n".join(t.text for t in topics)
    assert "::=" not in prose and ">>>" not in prose and "****" not in prose
    settings = AuditSettings()
    documents = documents_for(settings, settings.text_documents, TEXT_SOURCES)
    kinds = [d.doc_id.split(":")[0] for d in documents]
    assert len(documents) == 40 and {k: kinds.count(k) for k in set(kinds)} == {
        "lee": 14, "wiki": 13, "pydoc": 13}
    assert any(d.source.startswith("Python ") for d in documents)
    other = documents_for(AuditSettings(seed=1), 40, TEXT_SOURCES)
    assert {d.doc_id for d in other} != {d.doc_id for d in documents}
    pairs = document_sentences(documents, 240, seed=0)
    assert {kinds[d] for d, _ in pairs} == {"lee", "wiki", "pydoc"}
