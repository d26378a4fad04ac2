"""What an audit's design alone decides, kept for the next audit of the same design: the sizes
it chose for itself and its lines' controls.

The sizing (:mod:`normtest.audit.sizing`) and the controls (:mod:`normtest.scorecard.controls`)
are functions of the audit's design — the words and their token counts (the model: its name and
revision, which digests its files), the sentences and their surprisal, the documents, the corpus,
the settings that draw the sample, each line's deciding rows and their criteria — and of
normtest's own code; never of the vectors the model gives the sample. So they are kept in the
cache folder (``<cache root>/design/<digest>.json``, the digest of all of that, with a digest of
the source of normtest and of every module a deciding claim comes from), and a later audit of the
same design reads them instead of running the controls again: the same sizes, the same record of
why, the same controls, in no time. The report says so (``provenance.sizing.kept``, a control's
``seconds`` near 0).

Nothing is kept where the design is not known from its description: an audit on the user's own
corpus (``--corpus``: files can change under the same name), on its own words or word source, or
without the embedding cache (``--no-cache``: every number computed afresh). A file that cannot be
read or does not describe this design is ignored (computed again and replaced); one that cannot
be written is not kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from normtest.adapters.protocol import adapter_info
from normtest.base.kept import libraries, plain, source_sha256, store, stored
from normtest.base.paths import default_cache_dir
from normtest.claims.catalogue import get
from normtest.claims.line_declarations import builder_of
from normtest.models.cache.adapter import CachedAdapter
from normtest.models.registry import named_models

if TYPE_CHECKING:
    from normtest.adapters.protocol import ModelAdapter
    from normtest.base.settings import AuditSettings

__all__ = ["FOLDER", "DesignStore"]

#: The folder under the cache root.
FOLDER = "design"
#: The format of a kept file (a file of another format is computed again).
FORMAT = 1
#: Settings that change how the work runs, never a number (left out of the design).
RUNNING = frozenset({"workers", "executor", "ray_address", "schedule"})


@dataclass(frozen=True)
class DesignStore:
    """The kept results of one audit's design (module doc); ``design`` None: nothing is read
    or kept."""

    design: Mapping[str, Any] | None

    @classmethod
    def of(cls, adapter: ModelAdapter, settings: AuditSettings, family: str, *,
           words: Sequence[str] | None = None, source: Any | None = None) -> DesignStore:
        """The store of this audit's design (one that keeps nothing where the design is not
        known from its description: module doc)."""
        info = adapter_info(adapter)
        if words is not None or source is not None or settings.corpus \
                or not isinstance(adapter, CachedAdapter) or not _content(info.revision) \
                or settings.surprisal_model not in named_models():
            return cls(None)
        return cls({"format": FORMAT, "model": info.name, "revision": info.revision,
                    "family": str(family), "libraries": libraries(),
                    "settings": {f.name: plain(getattr(settings, f.name))
                                 for f in fields(settings) if f.name not in RUNNING}})

    def read(self, what: str, rows: Mapping[str, Sequence[Any]],
             **more: Any) -> dict[str, Any] | None:
        """What was kept as ``what`` (``sizing``, ``controls``) for these deciding ``rows``
        (by line) and ``more`` of its description, or None."""
        key = self._key(what, rows, more)
        found = None if key is None else stored(default_cache_dir() / FOLDER, key)
        return found if isinstance(found, dict) else None

    def write(self, what: str, rows: Mapping[str, Sequence[Any]], value: Mapping[str, Any],
              **more: Any) -> None:
        """Keep ``value`` (JSON) as ``what`` for these rows (an unwritable cache: nothing
        kept)."""
        key = self._key(what, rows, more)
        if key is not None:
            store(default_cache_dir() / FOLDER, key, value)

    def _key(self, what: str, rows: Mapping[str, Sequence[Any]],
             more: Mapping[str, Any]) -> dict[str, Any] | None:
        """The description a kept file must carry (None: nothing is kept — no design, or a
        claim or control builder that is not normtest's own, whose code the source digest does
        not cover)."""
        if self.design is None:
            return None
        claims = sorted({str(r.claim) for found in rows.values() for r in found})
        code = [get(c).measure for c in claims] + [builder_of(line) for line in rows]
        if not all(_ours(f) for f in code):
            return None
        return {**self.design, "what": what, "more": plain(dict(more)),
                "code": source_sha256(),
                "rows": {line: [{"claim": str(r.claim), "variant": dict(r.variant),
                                 "expected": None if r.expected is None else r.expected.value}
                                for r in found] for line, found in rows.items()},
                # every field of each claim (its criterion, quantities, baseline, …), and the
                # smallest effect it must detect
                "claims": {c: repr(replace(get(c), origin=None)) for c in claims},
                "detect": {c: plain(get(c).detect) for c in claims}}


def _ours(code: Any) -> bool:
    """Whether a measure or control builder is normtest's own (its source digest covers it)."""
    module = getattr(code, "__module__", None)
    return code is not None and isinstance(module, str) and module.startswith("normtest.")


def _content(revision: str | None) -> bool:
    """Whether a model's revision names its content (a digest, a hub commit), not merely its
    Python class (a model object handed in)."""
    return bool(revision) and not str(revision).startswith("python:")
