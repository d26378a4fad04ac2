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
``loading`` (a user's claim files, folders and modules), ``line_checks`` (a line's space of
analyses and its controls, declared beside its claims), ``control_models`` (the builders of the
control data), ``comparative`` (claims about the difference between two models), ``measuring``
(one row measured and judged) and ``duplicates`` (when two declarations are the same claim).

Names are imported on first use, so ``import normtest.claims`` loads no numerical code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from normtest.base.lazy import lazy_exports

_EXPORTS = {
    "normtest.claims.catalogue": (
        "AXES", "BASELINES", "FAMILIES", "SUITES", "Claim", "Expectation", "Variant", "claims",
        "get", "hypothesis", "measures", "register",
    ),
    "normtest.claims.line_checks": (
        "CHOICES", "ControlContext", "Space", "controls", "specifications",
    ),
    "normtest.claims.control_models": (
        "composition_controls", "condition_controls", "fixed_point_controls", "growth_controls",
        "text_controls", "word_controls",
    ),
    "normtest.claims.comparative": ("Comparative", "Pair", "PairExpectation", "compares"),
    "normtest.claims.loading": ("ClaimSource", "load_checks"),
    "normtest.verdict.result": ("Criterion", "Verdict"),
    "normtest.verdict.measurement": ("Measurement",),
    "normtest.verdict.sampling": ("Sampling",),
    "normtest.base.settings": ("AuditSettings",),
    "normtest.data": ("DATA", "PrefixData", "TextData", "WordData"),
    "normtest.data.respecified": ("SAMPLES",),
    "normtest.adapters.protocol": ("Capability",),
    "normtest.geometry.compose": ("MODEL_STATES",),
    "normtest.stats": (
        "bootstrap", "measure_contrast", "measure_correlation", "measure_correlation_contrast",
        "measure_fixed_point", "measure_linear_growth", "measure_mean", "measure_monotone_share",
        "measure_partial_correlation",
    ),
    "normtest.stats.baseline": ("measure_baseline", "measure_baseline_contrast",
                                "measure_within_strata", "within_strata_estimate"),
    "normtest.stats.paired": ("measure_correlation_difference", "measure_linearity_gain"),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # what the names above are, for type checkers
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
        get,
        hypothesis,
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
    from normtest.claims.line_checks import CHOICES, ControlContext, Space, controls, specifications
    from normtest.claims.loading import ClaimSource, load_checks
    from normtest.data import DATA, PrefixData, TextData, WordData
    from normtest.data.respecified import SAMPLES
    from normtest.geometry.compose import MODEL_STATES
    from normtest.stats import (
        bootstrap,
        measure_contrast,
        measure_correlation,
        measure_correlation_contrast,
        measure_fixed_point,
        measure_linear_growth,
        measure_mean,
        measure_monotone_share,
        measure_partial_correlation,
    )
    from normtest.stats.baseline import (
        measure_baseline,
        measure_baseline_contrast,
        measure_within_strata,
        within_strata_estimate,
    )
    from normtest.stats.paired import measure_correlation_difference, measure_linearity_gain
    from normtest.verdict.measurement import Measurement
    from normtest.verdict.result import Criterion, Verdict
    from normtest.verdict.sampling import Sampling

__all__ = ["AXES", "BASELINES", "CHOICES", "DATA", "FAMILIES", "MODEL_STATES", "SAMPLES",
           "SUITES", "AuditSettings", "Capability", "Claim", "ClaimSource", "Comparative",
           "ControlContext", "Criterion", "Expectation", "Measurement", "Pair", "PairExpectation",
           "PrefixData", "Sampling", "Space", "TextData", "Variant", "Verdict", "WordData",
           "bootstrap", "claims", "compares", "composition_controls", "condition_controls",
           "controls", "fixed_point_controls", "get", "growth_controls", "hypothesis",
           "load_checks", "measure_baseline", "measure_baseline_contrast", "measure_contrast",
           "measure_correlation", "measure_correlation_contrast",
           "measure_correlation_difference", "measure_fixed_point", "measure_linear_growth",
           "measure_linearity_gain", "measure_mean", "measure_monotone_share",
           "measure_partial_correlation", "measure_within_strata", "measures", "register",
           "specifications", "text_controls", "within_strata_estimate", "word_controls"]
