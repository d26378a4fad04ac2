"""How large a sample the bundled data can give: the most ``--words``, ``--documents`` and
``--sentences`` an audit can ask for and get.

A power analysis that asks for more than this recommends a size the audit cannot have: the row
(or line) is then out of reach of this data, and says so, rather than naming a size that would
silently give fewer (docs/statistics.md, "Power"). With the user's own corpus (``--corpus``) the
documents and sentences have no known bound (None).
"""

from __future__ import annotations

import functools
from typing import Any

from normtest.base.settings import DOCUMENT_SOURCES, SENTENCES_PER_DOCUMENT, TEXT_SOURCES
from normtest.data.information.documents import default_documents, document_sentences
from normtest.data.information.samples import _eligible

__all__ = ["bundled", "capacity"]


@functools.lru_cache(maxsize=1)
def bundled() -> dict[str, int]:
    """The most of each sample setting the bundled data gives: ``words``, the alphabetic words
    within the frequency list's top 100,000 (the word sample's pool); ``documents``, the CER
    sources' documents of 200 words or more; ``sentences``, ten per document of the text
    sources (documents of 200 words or more), or their distinct sentences of 5 to 40 words
    where fewer. The text claim resamples its sentences by document, one document per ten
    sentences: past ten times the documents there are, more sentences pack into the same
    documents and its interval stops narrowing as a power analysis in sentences assumes (the
    default MiniLM audit's 15,560 sentences came from the 247 documents, and its interval
    narrowed by a sixth, not by the fourfold the analysis planned)."""

    def documents(sources: tuple[str, ...]) -> list[Any]:
        return default_documents(1_000_000, sources=sources)

    texts = documents(TEXT_SOURCES)
    return {"words": len(_eligible("en", 100_000)[1]),
            "documents": len(documents(DOCUMENT_SOURCES)),
            "sentences": min(len(document_sentences(texts, 10_000_000)),
                             SENTENCES_PER_DOCUMENT * len(texts))}


def capacity(setting: str | None, settings: Any = None) -> int | None:
    """The most of ``setting`` (``words``, ``documents``, ``sentences``) the audit's data can
    give; None where unknown (another setting, or the user's own corpus for documents and
    sentences)."""
    if setting is None:
        return None
    if setting != "words" and getattr(settings, "corpus", None):
        return None
    return bundled().get(setting)
