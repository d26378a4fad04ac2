"""Everything an audit's measurements share: each kind of data, built for the first claim that
asks and handed to the rest."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from normtest.catalogue import DATA
from normtest.errors import NormtestError
from normtest.settings import AuditSettings
from normtest.vectors.prefixes import PrefixData
from normtest.vectors.texts import TextData
from normtest.vectors.words import WordData

if TYPE_CHECKING:
    from normtest.adapters.protocol import ModelAdapter

__all__ = ["AuditData"]


@dataclass
class AuditData:
    """Everything measurements share: the word data and the prefix data, each built on demand."""

    adapter: ModelAdapter
    settings: AuditSettings
    family: str
    words: Sequence[str] | None = None
    source: Any | None = None
    #: the poolings of the prefix claims the audit runs (see PrefixData.poolings)
    prefix_poolings: tuple[str, ...] = ()
    _word: WordData | None = None
    _prefix: PrefixData | None = None
    _text: TextData | None = None

    def word(self) -> WordData:
        """The word sample and its vectors (built once)."""
        if self._word is None:
            self._word = WordData.build(self.adapter, self.settings, self.family, self.words,
                                        self.source)
        return self._word

    def prefix(self) -> PrefixData:
        """The CER documents and their prefix vectors (built once)."""
        if self._prefix is None:
            self._prefix = PrefixData.build(self.adapter, self.settings, self.family)
            self._prefix.poolings = self.prefix_poolings
        return self._prefix

    def text(self) -> TextData:
        """The sentences, their surprisal and text vectors (built once)."""
        if self._text is None:
            self._text = TextData.build(self.adapter, self.settings)
        return self._text

    def get(self, kind: str) -> WordData | PrefixData | TextData:
        """The data a measurement asked for by name (``words``, ``prefixes``, ``texts``)."""
        if kind == "words":
            return self.word()
        if kind == "prefixes":
            return self.prefix()
        if kind == "texts":
            return self.text()
        raise NormtestError(f"unknown data {kind!r}; a claim reads one of {DATA}")

    def built(self) -> dict[str, WordData | PrefixData | TextData]:
        """The data built so far, by name (what the report's provenance and plots describe)."""
        return {kind: value for kind, value in (("words", self._word),
                                                ("prefixes", self._prefix),
                                                ("texts", self._text)) if value is not None}
