"""Everything an audit's measurements share: each kind of data, built for the first claim that
asks and handed to the rest, and the registry of those kinds (:data:`DATA_KINDS`).

A kind of data (:class:`DataKind`) owns what the audit and the report need of it: how it is
built, what the report's provenance says of it, its section of the report's ``data`` (the
plots, and what a later comparison pairs on) and the fingerprint of its sample (which sample it
resamples, and what identifies it, for the gate's paired test). The audit loops over the kinds
built, calling each data object's ``provenance(settings)`` and ``plot_data(variants)``; a new
kind is one data class with those methods, ``build`` and ``fingerprint``, and one entry here."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from normtest.adapters.protocol import optional_method
from normtest.base.settings import AuditSettings
from normtest.data.prefixes import PrefixData
from normtest.data.texts import TextData
from normtest.data.words import WordData
from normtest.errors import NormtestError

if TYPE_CHECKING:
    from normtest.adapters.protocol import ModelAdapter

__all__ = ["DATA", "DATA_KINDS", "AuditData", "DataKind"]

#: Any kind's data object.
Data = WordData | PrefixData | TextData


@dataclass(frozen=True)
class DataKind:
    """One kind of data a claim reads (``Claim.data``)."""

    #: its name, as claims give it: ``words``, ``prefixes``, ``texts``
    name: str
    #: the sample its measurements resample (what the gate pairs two reports on)
    sample: str
    #: builds it for an audit (once, on the first claim that asks)
    build: Callable[[AuditData], Data]
    #: what identifies the sample in the report's section of this kind (its digest)
    fingerprint: Callable[[Mapping[str, Any]], Any]


def _build_prefixes(audit: AuditData) -> PrefixData:

    expect = optional_method(audit.adapter, "expect_poolings")
    if expect is not None:  # every pooling the audit will ask for, computed with the first
        expect(audit.prefix_poolings)
    return PrefixData.build(audit.adapter, audit.settings, audit.family)


#: The kinds of data, in the order the report lists them.
DATA_KINDS: dict[str, DataKind] = {k.name: k for k in (
    DataKind("words", "words", lambda a: WordData.build(a.adapter, a.settings, a.family,
                                                        a.words, a.source),
             WordData.fingerprint),
    DataKind("prefixes", "documents", _build_prefixes, PrefixData.fingerprint),
    DataKind("texts", "texts", lambda a: TextData.build(a.adapter, a.settings),
             TextData.fingerprint),
)}
#: What a measurement can read (``Claim.data``): the word sample and its vectors, documents'
#: prefix curves, sentences and their surprisal.
DATA: tuple[str, ...] = tuple(DATA_KINDS)


@dataclass
class AuditData:
    """Everything measurements share: each kind of data, built on demand."""

    adapter: ModelAdapter
    settings: AuditSettings
    family: str
    words: Sequence[str] | None = None
    source: Any | None = None
    #: the poolings of the prefix claims the audit runs (computed together, where the adapter
    #: can: ``expect_poolings``)
    prefix_poolings: tuple[str, ...] = ()
    _built: dict[str, Data] = field(default_factory=dict)

    def get(self, kind: str) -> Data:
        """The data a measurement asked for by name (``words``, ``prefixes``, ``texts``)."""
        if kind not in DATA_KINDS:
            raise NormtestError(f"unknown data {kind!r}; a claim reads one of {DATA}")
        if kind not in self._built:
            self._built[kind] = DATA_KINDS[kind].build(self)
        return self._built[kind]

    def word(self) -> WordData:
        """The word sample and its vectors (built once)."""
        data = self.get("words")
        assert isinstance(data, WordData)
        return data

    def prefix(self) -> PrefixData:
        """The CER documents and their prefix vectors (built once)."""
        data = self.get("prefixes")
        assert isinstance(data, PrefixData)
        return data

    def text(self) -> TextData:
        """The sentences, their surprisal and text vectors (built once)."""
        data = self.get("texts")
        assert isinstance(data, TextData)
        return data

    def built(self) -> dict[str, Data]:
        """The data built so far, by name, in :data:`DATA_KINDS` order (what the report's
        provenance and plots describe)."""
        return {kind: self._built[kind] for kind in DATA_KINDS if kind in self._built}
