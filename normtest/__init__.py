"""normtest: hypothesis tests for the squared-norm / information-content correspondence.

Importing ``normtest`` is light (numpy only); statistics, models and reports load on use.

The package is laid out by stage, each importing only those below it (docs/architecture.md):
``base`` → ``verdict`` → ``stats`` → ``geometry`` → ``adapters`` → ``models`` → ``data`` →
``claims`` → ``normtest.checks`` → ``scorecard`` → ``audit`` → ``gate`` → ``render`` →
``testing`` → ``cli`` and ``pytest``.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types
import warnings
from typing import TYPE_CHECKING, Any, cast

from normtest.base.version import VERSION as __version__
from normtest.errors import NormtestError

if TYPE_CHECKING:
    from importlib.abc import Loader

__all__ = ["NormtestError", "__version__", "load"]


def load(name_or_path: str, kind: str | None = None, **options: Any) -> Any:
    """Load a model adapter by embedded name, local path or hub id
    (see :mod:`normtest.models.registry`)."""
    from normtest.models.registry import load as _load

    return _load(name_or_path, kind, **options)


# -- module paths of release 0.1 that moved when the package was laid out by stage ------------
# An old path still imports, for one release, with a DeprecationWarning that names the new one
# (CHANGELOG.md). Paths relative to ``normtest.``; the old ``audit``, ``gate``, ``models``,
# ``scorecard`` and ``testing`` modules are packages now that export the same names.
_MOVED = {
    "analysis_data": "data.respecified", "cache": "models.cache",
    "cache.adapter": "models.cache.adapter", "cache.store": "models.cache.store",
    "catalogue": "claims.catalogue", "checking": "testing", "checking.api": "testing.api",
    "checking.outcomes": "testing.outcomes", "checking.samples": "audit.samples",
    "checking.selection": "audit.selection", "checking.session": "testing.session",
    "comparison": "audit.compare", "config": "gate.config",
    "control_data": "claims.control_models", "controls": "scorecard.controls",
    "demo": "audit.demo", "explain": "audit.explain", "extraction": "models.extraction",
    "fingerprint": "base.fingerprint", "formatting": "verdict.formatting", "hub": "models.hub",
    "information": "data.information", "information.corpus": "data.information.corpus",
    "information.counting": "data.information.corpus_counting",
    "information.counts": "data.information.vocabulary_counts",
    "information.documents": "data.information.documents",
    "information.frequency": "data.information.frequency",
    "information.readers": "data.information.readers",
    "information.reliability": "data.information.reliability",
    "information.samples": "data.information.samples",
    "information.scaled": "data.information.scaled",
    "information.store": "data.information.store",
    "information.surprisal": "data.information.surprisal",
    "information.texts": "data.information.texts", "many": "audit.several_models",
    "measure_identity": "claims.duplicates", "measurement": "verdict.measurement",
    "memo": "base.byte_memo", "model_install": "models.install", "model_store": "models.store",
    "parallel": "base.parallel", "paths": "base.paths", "power": "scorecard.power",
    "progress": "base.progress", "ray_extraction": "models.ray", "regression": "gate.regression",
    "render._format": "render.labels", "render.console": "render.summary",
    "render.terminal": "render.plain_text", "report": "audit.report",
    "report_schema": "audit.report_schema", "result": "verdict.result",
    "robustness": "scorecard.robustness", "rows": "claims.measuring",
    "sampling": "verdict.sampling", "sequential": "audit.sequential", "settings": "base.settings",
    "stats._memo": "stats._draws", "strategies": "testing.strategies",
    "synthetic": "models.synthetic", "vectors": "data", "vectors.audit_data": "data.kinds",
    "vectors.common": "data.common", "vectors.prefixes": "data.prefixes",
    "vectors.texts": "data.texts", "vectors.words": "data.words",
}
#: Names that left their old module for another (old module → {name: its module now}).
_SPLIT = {
    "settings": {"load_options": "models.registry", "load_checks_of": "claims.loading"},
    "catalogue": {"ClaimSource": "claims.loading", "load_checks": "claims.loading",
                  "DATA": "data"},
    "robustness": {**dict.fromkeys(("CHOICES", "Space", "specifications", "spaces",
                                    "space_of"), "claims.line_checks"),
                   "SAMPLES": "data.respecified"},
    "controls": dict.fromkeys(("ControlContext", "Builder", "controls", "builder_of"),
                              "claims.line_checks"),
    "comparison": dict.fromkeys(("PairExpectation", "Measure", "Comparative", "compares",
                                 "comparatives", "get_comparative", "Pair", "STATES"),
                                "claims.comparative"),
    "checking.session": dict.fromkeys(("load_model", "model_label", "unique_labels"),
                                      "models.registry"),
    "model_install": dict.fromkeys(("BUILD_MARKER", "folder_digests", "load_marker",
                                    "check_files", "read_marker"), "adapters.built_folder"),
    "model_store": {"model_rows": "models.registry"},
}
#: Names that were renamed (old module → {old name: (its module now, its name now)}).
_RENAMED = {
    "regression": {"Comparison": ("gate.regression", "BaselineComparison")},
    "controls": {"KINDS": ("scorecard.controls", "CONTROL_KINDS")},
    "vectors.audit_data": {"KINDS": ("data.kinds", "DATA_KINDS")},
    "model_store": {"Listed": ("models.named", "NamedModel")},
    "checking": {"decide": ("testing.outcomes", "outcome_of")},
    "checking.outcomes": {"decide": ("testing.outcomes", "outcome_of")},
}


class _MovedModule(types.ModuleType):
    """An old module path: every name is looked up where it lives now."""

    def __getattr__(self, name: str) -> Any:
        old = self.__name__.removeprefix("normtest.")
        if name in _RENAMED.get(old, {}):
            where, now = _RENAMED[old][name]
            return getattr(importlib.import_module(f"normtest.{where}"), now)
        home = _SPLIT.get(old, {}).get(name, _MOVED[old])
        try:
            return getattr(importlib.import_module(f"normtest.{home}"), name)
        except AttributeError:
            if f"{old}.{name}" in _MOVED:
                return importlib.import_module(f"{self.__name__}.{name}")
            raise AttributeError(f"module {self.__name__!r} (now normtest.{_MOVED[old]}) has "
                                 f"no attribute {name!r}") from None


class _MovedFinder:
    """Finds the old module paths (and only those) and makes each a :class:`_MovedModule`: a
    meta path finder and its loader (the protocols of ``importlib.abc``, whose import would
    load pathlib and importlib.resources into every ``import normtest``)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        old = fullname.removeprefix("normtest.")
        if not fullname.startswith("normtest.") or old not in _MOVED:
            return None
        package = any(k.startswith(old + ".") for k in _MOVED)
        return importlib.machinery.ModuleSpec(fullname, cast("Loader", self), is_package=package)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return _MovedModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        if module.__spec__ is not None and module.__spec__.submodule_search_locations is not None:
            module.__path__ = []
        old = module.__name__.removeprefix("normtest.")
        warnings.warn(f"{module.__name__} is now normtest.{_MOVED[old]}: the old path is "
                      "deprecated and goes in the next release (claim files: import from "
                      "normtest.claims)", DeprecationWarning, stacklevel=_caller_level())


def _caller_level() -> int:
    """The stack level of the code whose import reached the finder (past importlib's frames)."""
    level = 1
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename.startswith("<frozen importlib")
                                 or frame.f_code.co_filename == __file__):
        level, frame = level + 1, frame.f_back
    return level


if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _MovedFinder())
