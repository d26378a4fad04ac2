"""The record of a model normtest knows by name: one type for every such model.

The embedded models (they install with normtest, :data:`normtest.models.registry.EMBEDDED`) and
the installable ones (fetched by ``normtest models install``,
:data:`normtest.models.installable.INSTALLABLE`) are both :class:`NamedModel` rows, each adding how
it is built; :func:`normtest.models.registry.named_models` is the one lookup of them all.
"""

from __future__ import annotations

from dataclasses import dataclass

from normtest.adapters.protocol import Family


@dataclass(frozen=True)
class NamedModel:
    """One model normtest knows by name: what ``normtest models`` lists about it."""

    name: str
    #: which claims and expectations apply (the loaded adapter's ``family_of`` agrees)
    family: Family
    architecture: str
    size: str
    licence: str
    description: str = ""
