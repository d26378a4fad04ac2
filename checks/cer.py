"""Constant Entropy Rate claims: how s(L) = ‖e(prefix_L)‖² grows with the prefix length L.

Each claim is declared, measured and judged here, on the audit's prefix data
(:class:`normtest.data.PrefixData`: documents, their prefix grids and the curves s(L)). The
margins are this module's: they say what "linear" and "a fixed point" mean (docs/statistics.md).
"""

from collections.abc import Mapping

from normtest.checks.axes import CER_GROWTH, FIXED_POINTS, PAPER, POOLINGS, REPRESENTATIONS
from normtest.claims import (
    SAMPLES,
    AuditSettings,
    Capability,
    Claim,
    Criterion,
    Expectation,
    Measurement,
    PrefixData,
    Verdict,
    controls,
    fixed_point_controls,
    growth_controls,
    measure_fixed_point,
    measure_monotone_share,
    measures,
    specifications,
)

CER = "Genzel & Charniak, ACL 2002 (Constant Entropy Rate)"
#: Prefix vectors from the model, or a sentence encoder's vector of each prefix text (cut on a
#: word grid).
PREFIX_NEEDS = ((Capability.PREFIX_VECTORS,), (Capability.TEXT_VECTORS,))
PREFIX_AXES = {"composition": POOLINGS, "representation": REPRESENTATIONS}

#: Linear growth: the late/early slope ratio within a factor of two of 1 …
RATIO_MARGIN = (0.5, 2.0)
#: … and the quadratic term at most a fifth of the fitted value at the largest length.
CURVATURE_MARGIN = (-0.2, 0.2)
#: A fixed point: over the second half of the lengths s moves by less than a tenth of its
#: level (s ∝ L moves by about a half; a saturating a(1 − e^(−L/τ)) with τ a fifth of the range
#: by a few hundredths) …
FIXED_POINT_MAX_CHANGE = 0.1
#: … and the direction at the end of the text is within ~18° of where the late half began.
FIXED_POINT_MIN_COSINE = 0.95
#: Monotone growth: a document rises when its Spearman ρ(L, s) is above 0.5 …
MIN_MONOTONICITY = 0.5
#: … and more than half of the documents rise (the median ρ above 0.5, as a sign test).
MIN_RISING_SHARE = 0.5


@measures(Claim(
    id="cer.monotone",
    statement="s(L) = ‖e(prefix_L)‖² rises with L within a document",
    source=f"{PAPER}; {CER}",
    suite="cer",
    quantities=("squared_norm", "prefix_length"),
    unit="model tokens",
    sample="prefixes of the default documents on a length grid",
    statistic="monotone_share",
    criterion=Criterion.minimum_effect(MIN_RISING_SHARE),
    margins=(0.4, 0.6),
    axes=PREFIX_AXES,
    needs=PREFIX_NEEDS,
    expected=(Expectation(Verdict.PASS, None, {"composition": "sqrt_n"},
                          note="the scaled average the paper proposes"),),
    hypothesis=CER_GROWTH,
    notes="f_ind and f_inf are explored, not confirmatory: their squared norm cannot fall as "
          "tokens are added (Σ‖v_i‖², and never below the larger input's), so where a prefix's "
          "token states are the text's own (a causal model) they rise by construction and "
          "test nothing; in an encoder they are not guaranteed to, but the share of rising "
          "documents then saturates at 1 as sqrt_n's does",
    rationale="a document rises when its ρ(L, s) is above 0.5 (a clear majority of its "
              "prefix pairs in order); the line holds when more than half the documents rise, "
              "read as an exact sign test on the median document",
    backed_by=("tests/test_calibration.py::test_monotone_share_calibrated_at_half_the_documents",
               "tests/test_calibration.py::test_monotone_share_power"),
), data="prefixes")
def monotone(prefixes: PrefixData, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    """The share of documents whose ρ(L, s) exceeds 0.5, with its exact interval."""
    lengths, values, groups, _ = prefixes.curves(variant)
    return measure_monotone_share(lengths, values, groups, min_rho=MIN_MONOTONICITY, seed=s.seed)


@measures(Claim(
    id="cer.linear",
    statement="s(L) grows linearly: positive slope, late/early slope ratio ≈ 1, no curvature",
    source=f"{PAPER}; {CER}",
    suite="cer",
    quantities=("squared_norm", "prefix_length"),
    unit="model tokens",
    sample="prefixes of the default documents on a length grid",
    statistic="late_early_ratio",
    margins=((0.4, 2.5), (0.6, 1 / 0.6)),
    criterion=Criterion("within", margin=RATIO_MARGIN, components={
        "slope": Criterion("greater", threshold=0.0),
        "curvature": Criterion("within", margin=CURVATURE_MARGIN),
    }),
    axes=PREFIX_AXES,
    needs=PREFIX_NEEDS,
    expected=(
        Expectation(Verdict.PASS, None, {"composition": "sqrt_n"}),
        Expectation(Verdict.PASS, None, {"composition": "f_ind"}),
        Expectation(Verdict.FAIL, None, {"composition": "mean"}),
        Expectation(Verdict.FAIL, None, {"composition": "sum"}, note="quadratic"),
        Expectation(Verdict.FAIL, "encoder", {"composition": "cls"},
                    note="BERT's CLS; the paper finds ModernBERT's CLS closer to CER",
                    hypothesis=FIXED_POINTS),
        Expectation(Verdict.FAIL, "decoder", {"composition": "eos"}, note="LLaMA's EOS",
                    hypothesis=FIXED_POINTS),
    ),
    hypothesis=CER_GROWTH,
    rationale="linear growth keeps its slope: the late/early slope ratio within a factor of two "
              "of 1 ([0.5, 2]), a positive slope, and a quadratic term at most a fifth of the "
              "fitted value at the largest length; a saturating curve falls below 0.5, a "
              "quadratic one rises above 2",
    backed_by=("tests/test_calibration.py::test_linear_growth_passes_a_linear_process",
               "tests/test_calibration.py::test_linear_growth_rejects_curved_processes",
               "tests/test_calibration.py::test_linear_growth_calibrated_at_its_curvature_margin"),
), data="prefixes")
def linear(prefixes: PrefixData, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    """The late/early slope ratio with the slope and curvature as components."""
    return prefixes.growth(variant, s)


@measures(Claim(
    id="cer.fixed_point",
    statement="s(L) and the direction of e(prefix_L) converge as the text grows",
    source=f"{PAPER} (BERT CLS and LLaMA EOS converge to a fixed point)",
    suite="cer",
    quantities=("squared_norm", "prefix_length", "prefix_direction"),
    unit="model tokens",
    sample="prefixes of the default documents on a length grid",
    statistic="late_change",
    margins=((-0.15, 0.15), (-0.05, 0.05)),
    criterion=Criterion("within", margin=(-FIXED_POINT_MAX_CHANGE, FIXED_POINT_MAX_CHANGE),
                        components={"end_cosine": Criterion("greater",
                                                            threshold=FIXED_POINT_MIN_COSINE)}),
    axes=PREFIX_AXES,
    needs=PREFIX_NEEDS,
    expected=(
        Expectation(Verdict.PASS, "encoder", {"composition": "cls"}),
        Expectation(Verdict.PASS, "decoder", {"composition": "eos"}),
    ),
    notes="the mean of tokens sharing a component tends to a limit too, but as 1/L: at the "
          "audit's prefix lengths it may still move, and the paper's statement is about CLS "
          "and EOS, so its rows are exploratory",
    hypothesis=FIXED_POINTS,
    rationale="a fixed point stops moving: over the late half of the lengths s changes by less "
              "than a tenth of its level (linear growth changes by about a half) and the "
              "direction ends within about 18° (cosine 0.95) of where the late half began",
    backed_by=("tests/test_calibration.py::test_fixed_point_passes_a_saturating_process",
               "tests/test_calibration.py::test_fixed_point_rejects_growing_processes",
               "tests/test_calibration.py::test_fixed_point_calibrated_at_its_margin",
               "tests/test_calibration.py::test_fixed_point_with_converging_vectors_passes"),
), data="prefixes")
def fixed_point(prefixes: PrefixData, variant: Mapping[str, str],
                s: AuditSettings) -> Measurement:
    """The relative late change with the end-of-text cosine as a component."""
    lengths, values, groups, vectors = prefixes.curves(variant)
    return measure_fixed_point(lengths, values, groups, vectors, n_resamples=s.resamples,
                               seed=s.seed, alpha=s.alpha)


# what a prefix length counts and which lengths
for _line in (CER_GROWTH, FIXED_POINTS):
    specifications(_line, prefix_unit=("tokens", "words"),
                   grid=("every", "every_other", "short"), sample=SAMPLES)

# the controls on the audit's own data (normtest.claims.control_models)
controls(CER_GROWTH, growth_controls)
controls(FIXED_POINTS, fixed_point_controls)
