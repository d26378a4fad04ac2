"""Which sample a report measured — digests of its words, documents and texts — so that the
gate can pair two reports draw for draw — and its identity, the settings two reports must share to
be compared at all."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from normtest.audit.report import sample_settings
from normtest.claims.catalogue import get
from normtest.data.kinds import DATA_KINDS
from normtest.errors import NormtestError

if TYPE_CHECKING:
    from normtest.adapters.protocol import ModelAdapter
    from normtest.audit.report import Report
    from normtest.base.settings import AuditSettings

def sample_of(claim_id: str | None) -> str | None:
    """The sample a claim's measurement resamples, by the data it reads (``Claim.data``,
    :attr:`normtest.data.kinds.DataKind.sample`): the words, the documents of the
    prefix curves, or the sentences (None for an unknown claim)."""

    try:
        kind = DATA_KINDS.get(get(claim_id).data or "") if claim_id else None
    except NormtestError:
        return None
    return None if kind is None else kind.sample


def _digest(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sample_fingerprints(report: Report) -> dict[str, str]:
    """Digests of the samples a report resampled: ``words`` (and their IC), ``documents``,
    ``texts``; from its provenance, else from its stored data (each kind's
    :attr:`~normtest.data.kinds.DataKind.fingerprint` of its section)."""

    found = dict(report.provenance.get("samples") or {})
    data = report.data or {}
    for kind in DATA_KINDS.values():
        section = data.get(kind.name)
        if kind.sample in found or not isinstance(section, Mapping):
            continue
        try:
            found[kind.sample] = _digest(kind.fingerprint(section))
        except KeyError:  # a section without its sample (an older or partial report)
            continue
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
            from normtest.adapters.protocol import family_of
            from normtest.data.words import WordData

            data = WordData.build(adapter, settings, family_of(adapter), words, source)
            found["words"] = _digest(WordData.fingerprint({"words": data.words,
                                                           "information": data.information}))
        except (NormtestError, TypeError, AttributeError):
            pass  # unknown sample: the gate compares such results unpaired
    prov = dict(report.provenance)
    prov["samples"] = found
    prov["audit_settings"] = {k: (list(v) if isinstance(v, tuple) else v)
                              for k, v in asdict(settings).items()}
    return replace(report, provenance=prov)


# -- a sample's identity: which reports may be compared -----------------------------------
def one_model(first: Report, second: Report, kinds: Iterable[str]) -> bool:
    """Whether two reports (of one sample) are one model twice: the same name and revision,
    or the same stored vectors' series for every kind of data both hold — either way each
    difference between them is zero by construction."""
    key = model_key(first)
    if key is not None and key == model_key(second):
        return True
    shared = [k for k in kinds if k in first.data and k in second.data]
    return bool(shared) and all(first.data[k] == second.data[k] for k in shared)


def model_key(report: Report) -> tuple[str, str] | None:
    """(name, revision) of a report's model; None when it records no revision (then two
    reports are never taken for one model)."""
    name, revision = report.model.get("name"), report.model.get("revision")
    return (str(name), str(revision)) if name and revision else None


#: What defines the sample a report measured, by the data that read it: the settings two
#: reports must share to be compared. The requested sizes, not the counts kept (a model drops
#: the words it lacks); ``None`` holds what every kind of data depends on.
IDENTITY: dict[str | None, tuple[str, ...]] = {
    None: ("seed", "corpus"),
    "words": ("words",),
    "prefixes": ("documents", "prefix_step", "max_prefix", "prefix_unit"),
    "texts": ("sentences", "sentence_documents"),
}
#: How to set each one on the command line (the others are Python settings of AuditSettings).
FLAGS = {"seed": "--seed", "words": "--words", "documents": "--documents",
         "sentences": "--sentences", "corpus": "--corpus", "prefix_unit": "--prefix-unit",
         "profile": "--profile"}


def sample_identity(report: Report, kinds: Iterable[str]) -> dict[str, Any]:
    """The settings that identify the sample ``report`` measured for the data ``kinds``
    (``words``, ``prefixes``, ``texts``): from ``provenance["sample"]``, or — reports written
    before normtest recorded it — what the provenance holds (the requested word count, the
    prefix grid, and the profile the sizes came from)."""
    prov = report.provenance
    wanted = [k for kind in (None, *kinds) for k in IDENTITY.get(kind, ())]
    recorded = prov.get("sample")
    if isinstance(recorded, Mapping):
        found = {k: recorded.get(k) for k in wanted}
    else:
        found = {"seed": prov.get("seed"), "corpus": prov.get("corpus") or [],
                 "words": prov.get("words_requested"), "prefix_step": prov.get("prefix_step"),
                 "max_prefix": prov.get("max_prefix"),
                 "prefix_unit": prov.get("prefix_unit", "tokens")}
        found = {k: v for k, v in found.items() if k in wanted}
        found["profile"] = prov.get("profile")
    return {k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in found.items()
            if v is not None}


def planned_identity(settings: AuditSettings, kinds: Iterable[str]) -> dict[str, Any]:
    """:func:`sample_identity` of the report an audit with ``settings`` will write."""

    block = sample_settings(settings)
    wanted = [k for kind in (None, *kinds) for k in IDENTITY.get(kind, ())]
    return {k: block[k] for k in wanted if block.get(k) is not None}


def check_same_sample(identities: Sequence[Mapping[str, Any]], labels: Sequence[str],
                      models: Sequence[tuple[str, str] | None] | None = None) -> None:
    """Refuse samples that differ in any setting both record (:func:`sample_identity`): their
    items would pair by accident, on the few they happen to share, or not at all. The error
    names the two reports, what differs and how to fix it."""
    for (i, first), (k, other) in itertools.combinations(enumerate(identities), 2):
        differ = [key for key in first if key in other and first[key] != other[key]]
        if not differ:
            continue
        shown = "; ".join(f"{_NAMES.get(key, key)} {_shown(first[key])} vs "
                          f"{_shown(other[key])}" for key in differ)
        flags = [f"{FLAGS[key]} {_shown(first[key])}" for key in differ if key in FLAGS
                 and key != "profile"]
        how = (f"rerun with the same settings ({', '.join(flags)} for both)"
               if flags else "rerun with the same settings")
        note = ""
        if models is not None and models[i] is not None and models[i] == models[k]:
            note = ("; both are the same model, and even on one sample a model compared with "
                    "itself differs by zero by construction")
        raise NormtestError(
            f"{labels[i]} and {labels[k]} are on different samples ({shown}), and normtest "
            f"compare pairs only identical samples: {how}, or let normtest compare --model A "
            f"--model B audit both{note}")


_NAMES = {"words": "words requested", "documents": "documents requested",
          "sentences": "sentences requested"}


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(map(str, value)) if value else "(the bundled corpus)"
    return str(value)
