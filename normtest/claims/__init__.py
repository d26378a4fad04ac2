"""Everything a claim file imports, in one place.

A claim is declared, measured and judged in one module (the built-in ones are in ``checks/``;
docs/claims.md shows a user's)::

    from normtest.claims import Claim, Criterion, WordData, measure_correlation, measures

    @measures(Claim(id="word.norm_ic.kendall", ..., criterion=Criterion.minimum_effect(0.2)),
              data="words")
    def norm_ic_kendall(words: WordData, variant, settings):
        return measure_correlation(words.information, words.squared_norms(variant), "kendall",
                                   n_resamples=settings.resamples, seed=settings.seed)

The package itself: ``catalogue`` (what a claim is, the registry, the paper's hypotheses),
``loading`` (a user's claim files, folders and modules), ``line_declarations`` (a line's space of
analyses and its controls, declared beside its claims), ``control_models`` (the builders of the
control data), ``comparative`` (claims about the difference between two models), ``measuring``
(one row measured and judged) and ``same_measure`` (when two declarations are the same claim).

The names below are imported here, eagerly: this package is the one face a claim file needs
(as statsmodels keeps ``statsmodels.api``); inside the engine, modules import from the module
that defines a name. SciPy's statistics load when a measurement first needs them.
"""

from __future__ import annotations

from normtest.adapters.protocol import Capability
from normtest.base.settings import AuditSettings
from normtest.claims.catalogue import (
    AXES,
    BASELINES,
    FAMILIES,
    SUITES,
    Claim,
    Expectation,
    Variant,
    claims,
    declare_line,
    get,
    measures,
    register,
)
from normtest.claims.comparative import Comparative, Pair, PairExpectation, compares
from normtest.claims.control_models import (
    composition_controls,
    condition_controls,
    fixed_point_controls,
    growth_controls,
    text_controls,
    word_controls,
)
from normtest.claims.line_declarations import (
    CHOICES,
    ControlContext,
    Space,
    controls,
    specifications,
)
from normtest.claims.loading import ClaimSource, load_checks
from normtest.data.kinds import DATA
from normtest.data.prefixes import PrefixData
from normtest.data.respecified import SAMPLES
from normtest.data.texts import TextData
from normtest.data.words import WordData
from normtest.geometry.compose import MODEL_STATES
from normtest.stats import bootstrap
from normtest.stats.baseline import (
    measure_baseline,
    measure_baseline_contrast,
    measure_within_strata,
    within_strata_estimate,
)
from normtest.stats.contrast import measure_contrast, measure_correlation_contrast
from normtest.stats.correlation import measure_correlation, measure_partial_correlation
from normtest.stats.equivalence import measure_mean
from normtest.stats.growth import (
    measure_fixed_point,
    measure_linear_growth,
    measure_monotone_share,
)
from normtest.stats.paired import measure_correlation_difference, measure_linearity_gain
from normtest.verdict.measurement import Measurement
from normtest.verdict.result import Criterion, Verdict
from normtest.verdict.sampling import Sampling

__all__ = [
    "AXES",
    "BASELINES",
    "CHOICES",
    "DATA",
    "FAMILIES",
    "MODEL_STATES",
    "SAMPLES",
    "SUITES",
    "AuditSettings",
    "Capability",
    "Claim",
    "ClaimSource",
    "Comparative",
    "ControlContext",
    "Criterion",
    "Expectation",
    "Measurement",
    "Pair",
    "PairExpectation",
    "PrefixData",
    "Sampling",
    "Space",
    "TextData",
    "Variant",
    "Verdict",
    "WordData",
    "bootstrap",
    "claims",
    "compares",
    "composition_controls",
    "condition_controls",
    "controls",
    "declare_line",
    "fixed_point_controls",
    "get",
    "growth_controls",
    "load_checks",
    "measure_baseline",
    "measure_baseline_contrast",
    "measure_contrast",
    "measure_correlation",
    "measure_correlation_contrast",
    "measure_correlation_difference",
    "measure_fixed_point",
    "measure_linear_growth",
    "measure_linearity_gain",
    "measure_mean",
    "measure_monotone_share",
    "measure_partial_correlation",
    "measure_within_strata",
    "measures",
    "register",
    "specifications",
    "text_controls",
    "within_strata_estimate",
    "word_controls",
]
