"""Which sample a report measured — digests of its words, documents and texts — so that the
gate can pair two reports draw for draw."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from normtest.errors import NormtestError

if TYPE_CHECKING:
    from normtest.adapters.protocol import ModelAdapter
    from normtest.report import Report
    from normtest.settings import AuditSettings

#: Which sample a measurement resamples, by the data it reads (``Claim.data``): the words, the
#: documents of the prefix curves, or the sentences (for pairing two reports, see normtest.gate).
SAMPLE_OF_DATA = {"words": "words", "prefixes": "documents", "texts": "texts"}


def sample_of(claim_id: str | None) -> str | None:
    """The sample a claim's measurement resamples (None for an unknown claim)."""
    from normtest.catalogue import get

    try:
        return SAMPLE_OF_DATA.get(get(claim_id).data or "") if claim_id else None
    except NormtestError:
        return None


def _digest(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _rounded(values: Iterable[float]) -> list[float]:
    return [float(f"{float(v):.6g}") for v in values]


def sample_fingerprints(report: Report) -> dict[str, str]:
    """Digests of the samples a report resampled: ``words`` (and their IC), ``documents``,
    ``texts``; from its provenance, else from its stored data."""
    found = dict(report.provenance.get("samples") or {})
    data = report.data or {}
    words = data.get("words")
    if "words" not in found and isinstance(words, Mapping) and "words" in words:
        found["words"] = _digest([list(words["words"]),
                                  _rounded(words.get("information", []))])
    prefixes = data.get("prefixes")
    if "documents" not in found and isinstance(prefixes, Mapping) and "documents" in prefixes:
        found["documents"] = _digest(list(prefixes["documents"]))
    texts = data.get("texts")
    if "texts" not in found and isinstance(texts, Mapping) and "information" in texts:
        found["texts"] = _digest([_rounded(texts["information"]), list(texts.get("document", []))])
    return {str(k): str(v) for k, v in found.items()}


def record_samples(report: Report, adapter: ModelAdapter, settings: AuditSettings,
                   words: Sequence[str] | None = None, source: Any | None = None) -> Report:
    """The report with ``provenance["samples"]`` (sample digests) and ``["audit_settings"]``.

    The word sample is rebuilt when the report's data do not list it (claims other than
    ``word.norm_ic``): the same draw as the audit's, so a second report can be paired with it.
    """
    found = sample_fingerprints(report)
    samples = {sample_of(r.claim) for r in report.results if r.measurement is not None}
    if "words" in samples and "words" not in found:
        try:
            from normtest.audit import model_family
            from normtest.vectors import WordData

            data = WordData.build(adapter, settings, model_family(adapter), words, source)
            found["words"] = _digest([list(data.words), _rounded(data.information)])
        except (NormtestError, TypeError, AttributeError):
            pass  # unknown sample: the gate compares such results unpaired
    prov = dict(report.provenance)
    prov["samples"] = found
    prov["audit_settings"] = {k: (list(v) if isinstance(v, tuple) else v)
                              for k, v in asdict(settings).items()}
    return replace(report, provenance=prov)

