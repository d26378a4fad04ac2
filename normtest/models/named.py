"""The record of a model normtest knows by name: one type for every such model.

The embedded models (they install with normtest, :data:`normtest.models.registry.EMBEDDED`) and
the installable ones (fetched by ``normtest models install``,
:data:`normtest.models.installable.INSTALLABLE`) are both :class:`NamedModel` rows, each adding how
it is built; :func:`normtest.models.registry.named_models` is the one lookup of them all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from normtest.adapters.protocol import Family

#: Why the conditions' rows of every shipped model are expected to fail: the sufficient
#: conditions (C1, C2) do not hold in these models' raw geometry, a documented disagreement with
#: the paper's reconstructed expectation (docs/guide.md, "What the embedded models show").
CONDITIONS_DISAGREE = {
    "cond.inner_pmi": "C1 does not hold in this model's geometry: its inner products do not "
                      "track PMI (the conditions line is contradicted on every shipped model; "
                      "docs/guide.md)",
    "cond.self_pmi": "C2 does not hold in this model's geometry: the C1 fit does not carry "
                     "over to the squared norm (the conditions line is contradicted on every "
                     "shipped model; docs/guide.md)",
}


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
    #: the model's known, documented disagreements with the paper (claim or row id → why): the
    #: pytest plugin and ``check_model`` mark them as expected failures by default
    expected_failures: Mapping[str, str] = field(default_factory=lambda: dict(CONDITIONS_DISAGREE))
