"""Word-level claims: the squared norm of a word's vector tracks its information content.

Each claim is declared, measured and judged here; the measurements read the audit's word data
(:class:`normtest.data.WordData`: the sample, its IC and its vectors per variant).
"""

from collections.abc import Mapping
from dataclasses import replace
from typing import Literal

import numpy as np

from normtest.checks.axes import (
    COMPOSITION,
    COMPOSITIONS,
    PAPER,
    REPRESENTATIONS,
    TRANSFORMS,
    WORD_LEVEL,
)
from normtest.claims import (
    SAMPLES,
    AuditSettings,
    Capability,
    Claim,
    Criterion,
    Expectation,
    Measurement,
    Verdict,
    WordData,
    composition_controls,
    controls,
    measure_baseline,
    measure_baseline_contrast,
    measure_correlation,
    measure_correlation_contrast,
    measure_partial_correlation,
    measures,
    specifications,
    word_controls,
)

#: Whole-word vectors (static models), or subword tokens composed (contextual models).
#: … or a sentence encoder's vector of the word as a one-word text.
WORD_NEEDS = ((Capability.WORD_VECTORS,), (Capability.WORD_TOKENS, Capability.TOKEN_VECTORS),
              (Capability.TEXT_VECTORS,))
SUBWORD_NEEDS = ((Capability.WORD_TOKENS, Capability.TOKEN_VECTORS),)
WORD_AXES = {"composition": COMPOSITIONS, "representation": REPRESENTATIONS,
             "transform": TRANSFORMS}
#: The paper: a strong correspondence "when certain subword composition functions are
#: applied"; only "scaled embedding averages" and "certain information-theoretic composition
#: functions" keep it. Suitable: the scaled average (sqrt_n) and the additive
#: information-theoretic composition (f_ind, whose squared norms add as independent
#: information does); the other members of that family (f_inf, f_joint) are explored, as the
#: abstract says "certain", not which (docs/theory.md §4).
SUITABLE = ("sqrt_n", "f_ind")
#: Unsuitable: the plain average, whose squared norm tends to a fixed point as tokens are added.
UNSUITABLE = ("mean",)
#: Compositions contrasted with the mean: the suitable ones (confirmatory), the rest of the
#: information-theoretic family and ``sum`` (explored: the paper names sum neither suitable nor
#: unsuitable for words; its squared norm adds the tokens' inner products with the wrong sign,
#: IC(x) + IC(y) + 2·PMI, and grows quadratically with length, §4 and §6).
CONTRASTED = (*SUITABLE, "f_inf", "f_joint", "sum")
#: The word populations a contrast is measured on: every word, and the words of two or more
#: model tokens (where composition acts).
POPULATIONS = ("all", "multitoken")
SUBWORD_FAMILIES = ("encoder", "decoder")


def suitable(verdict: Verdict = Verdict.PASS) -> tuple[Expectation, ...]:
    """The paper's expectation for subword models with a suitable composition (on their raw
    last layer, the reference of every expectation)."""
    return tuple(Expectation(verdict, family, {"composition": c})
                 for family in SUBWORD_FAMILIES for c in SUITABLE)


#: The smallest rank correlation worth calling a correspondence (docs/theory.md §8).
MIN_RHO = 0.3
#: Why (``normtest explain``).
#: One step either side of MIN_RHO (the robustness analysis's margin choice).
RHO_MARGINS = (0.2, 0.4)
MIN_RHO_RATIONALE = (
    "0.3 is the smallest rank correlation worth calling a correspondence: Cohen's 'medium' "
    "correlation. With thousands of words any ρ above 0 is significant, so the test is of a "
    "minimum effect (the one-sided 95% bound above 0.3), never against zero")
#: The smallest difference of two compositions' ρ worth calling a difference (docs/theory.md
#: §8): Cohen's 'small' correlation, and the margin of `normtest compare`'s ρ differences.
MIN_RHO_DIFFERENCE = 0.1


def spearman(x: np.ndarray, y: np.ndarray, words: np.ndarray, s: AuditSettings,
             baseline: np.ndarray | None = None) -> Measurement:
    """Spearman ρ of x and y with a percentile bootstrap over ``words`` (one per row), at the
    audit's settings: a word is drawn as often in every variant (paired resamples, and the IC
    side ranked once for all of them). With ``baseline`` (the words' token counts), the
    components ``baseline`` and ``beyond`` on the same draws (:mod:`normtest.stats.baseline`)."""
    measured = measure_correlation(x, y, units=words, n_resamples=s.resamples, seed=s.seed,
                                   alpha=s.alpha, interval=_interval(s))
    if baseline is None or not s.beyond:
        return measured
    return replace(measured, components={**measured.components, **measure_baseline(
        x, y, baseline, units=words, n_resamples=s.resamples, seed=s.seed, alpha=s.alpha,
        interval=_interval(s), readings=s.readings)})


def _interval(s: AuditSettings) -> Literal["bootstrap", "analytic"]:
    return "analytic" if s.intervals == "analytic" else "bootstrap"


def sample(words: WordData) -> np.ndarray:
    """The sample's words as an array, one per row of its data."""
    return np.asarray(words.words)


@measures(Claim(
    id="word.norm_ic",
    baseline="token_count",
    statement="‖e(w)‖² increases with IC(w) = −log P(w)",
    source=f"{PAPER} (abstract: word-level correspondence); Oyama et al., EMNLP 2023",
    suite="word",
    quantities=("squared_norm", "information_content"),
    unit="nats",
    sample="the default word sample, stratified over frequency ranks",
    statistic="spearman_rho",
    criterion=Criterion.minimum_effect(MIN_RHO),
    margins=RHO_MARGINS,
    axes=WORD_AXES,
    needs=WORD_NEEDS,
    expected=(
        Expectation(Verdict.PASS, "static", {"transform": "whiten_zipf"},
                    note="Zipfian whitening is the published positive control (Yokoi et al.)"),
        *suitable(),
    ),
    hypothesis=WORD_LEVEL,
    notes="Static models look whole words up; composition applies to subword models only.",
    plotted=True,
    rationale=MIN_RHO_RATIONALE,
    backed_by=("tests/test_synthetic.py::test_oracle_passes_word_level_and_c1",
               "tests/test_synthetic.py::test_shuffled_norm_model_fails_word_level_and_c1",
               "tests/test_synthetic.py::test_word_level_verdict_degrades_through_inconclusive",
               "tests/test_calibration.py::test_correlation_with_units_calibrated_at_threshold"),
), data="words")
def norm_ic(words: WordData, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    """Spearman ρ of ‖e(w)‖² with IC(w) over the word sample."""
    return correspondence(words, variant, "all", s)


@measures(Claim(
    id="word.norm_ic.multitoken",
    baseline="token_count",
    statement="the same correspondence over words split into two or more subword tokens",
    source=f"{PAPER} (composition decides the correspondence)",
    suite="word",
    quantities=("squared_norm", "information_content"),
    unit="nats",
    sample="words of the default sample with ≥ 2 model tokens",
    statistic="spearman_rho",
    criterion=Criterion.minimum_effect(MIN_RHO),
    margins=RHO_MARGINS,
    axes=WORD_AXES,
    needs=SUBWORD_NEEDS,
    hypothesis=COMPOSITION,
    reconstructed=True,
    notes="exploratory: an absolute threshold within a population whose IC range is narrow "
          "(multi-token words are rare); word.norm_ic.contrast decides the composition line",
    rationale=MIN_RHO_RATIONALE,
), data="words")
def norm_ic_multitoken(words: WordData, variant: Mapping[str, str],
                       s: AuditSettings) -> Measurement:
    """Spearman ρ of ‖e(w)‖² with IC(w) over the words of two or more model tokens."""
    return correspondence(words, variant, "multitoken", s)


def correspondence(words: WordData, variant: Mapping[str, str], population: str,
                   s: AuditSettings) -> Measurement:
    """Spearman ρ of ‖e(w)‖² with IC(w) over a population of the sample's words (drawn by
    word: every composition of it resamples alike)."""
    rows = words.rows(population)
    return spearman(words.information[rows], words.squared_norms(variant)[rows],
                    sample(words)[rows], s, words.token_counts()[rows])


@measures(Claim(
    id="word.norm_ic.contrast",
    baseline="token_count",
    statement="ρ(‖e(w)‖², IC(w)) under a suitable composition exceeds ρ under the plain mean",
    source=f"{PAPER} (abstract: a strong correspondence when certain subword composition "
           "functions are applied)",
    suite="word",
    quantities=("squared_norm", "information_content"),
    unit="nats",
    sample="the default word sample (population=all) and its words of ≥ 2 model tokens "
           "(population=multitoken); both compositions on the same words and the same draws",
    statistic="spearman_rho_difference",
    criterion=Criterion.minimum_effect(MIN_RHO_DIFFERENCE),
    margins=(0.05, 0.15),
    axes={"composition": CONTRASTED, "versus": UNSUITABLE, "population": POPULATIONS,
          "representation": REPRESENTATIONS, "transform": TRANSFORMS},
    needs=SUBWORD_NEEDS,
    expected=tuple(Expectation(Verdict.PASS, family, {"composition": c, "versus": v,
                                                      "population": p})
                   for family in SUBWORD_FAMILIES for c in SUITABLE for v in UNSUITABLE
                   for p in POPULATIONS),
    hypothesis=COMPOSITION,
    reconstructed=True,
    notes="ρ_composition − ρ_versus on the same words, a paired bootstrap (each word drawn as "
          "often for both); the two ρ are its components",
    rationale=("0.1 is the smallest difference of two rank correlations worth calling a "
               "difference (Cohen's 'small' correlation; the margin of normtest compare). The "
               "paper states that some compositions keep the correspondence and others lose "
               "it: a difference between compositions on the same words, not an absolute "
               "level within one population"),
    backed_by=("tests/test_contrast.py",
               "tests/test_composition_contrast.py::test_contrast_passes_where_the_composition_"
               "is_faithful",
               "tests/test_composition_contrast.py::test_contrast_fails_where_the_mean_is_as_"
               "faithful"),
), data="words")
def norm_ic_contrast(words: WordData, variant: Mapping[str, str],
                     s: AuditSettings) -> Measurement:
    """ρ(IC, ‖e‖²) under the variant's composition minus under its ``versus`` composition, over
    its population, on the same draws."""
    own = {k: v for k, v in variant.items() if k not in ("versus", "population")}
    rows = words.rows(variant.get("population", "all"))
    versus = {**own, "composition": variant["versus"]}
    drawn = dict(units=sample(words)[rows], n_resamples=s.resamples, seed=s.seed, alpha=s.alpha,
                 interval=_interval(s))
    first, second = words.squared_norms(own)[rows], words.squared_norms(versus)[rows]
    measured = measure_correlation_contrast(words.information[rows], first, second, **drawn)
    if not s.beyond:
        return measured
    return replace(measured, components={**measured.components, **measure_baseline_contrast(
        words.information[rows], first, second, words.token_counts()[rows], **drawn)})


@measures(Claim(
    id="word.norm_ic.partial",
    statement="the correspondence survives partialling out the number of subword tokens",
    source=f"{PAPER}; guards against a length artefact (normtest)",
    suite="word",
    quantities=("squared_norm", "information_content", "token_count"),
    unit="nats",
    sample="the default word sample",
    statistic="partial_spearman_rho",
    criterion=Criterion.minimum_effect(MIN_RHO),
    margins=RHO_MARGINS,
    axes=WORD_AXES,
    needs=SUBWORD_NEEDS,
    reconstructed=True,
    rationale=MIN_RHO_RATIONALE,
), data="words")
def norm_ic_partial(words: WordData, variant: Mapping[str, str],
                    s: AuditSettings) -> Measurement:
    """Partial Spearman ρ of ‖e(w)‖² with IC(w), the token count partialled out."""
    return measure_partial_correlation(words.information, words.squared_norms(variant),
                                       words.token_counts().astype(np.float64),
                                       units=sample(words), n_resamples=s.resamples, seed=s.seed,
                                       alpha=s.alpha, interval=_interval(s))


@measures(Claim(
    id="word.norm_kl",
    baseline="token_count",
    statement="‖e(w)‖² increases with 2·KL(w), the information gain of w's contexts",
    source="Oyama, Yokoi & Shimodaira, EMNLP 2023; Yokoi et al., NeurIPS 2024",
    suite="word",
    quantities=("squared_norm", "information_gain"),
    unit="nats",
    sample="words of the default sample frequent in the reference corpus",
    statistic="spearman_rho",
    criterion=Criterion.minimum_effect(MIN_RHO),
    margins=RHO_MARGINS,
    axes=WORD_AXES,
    needs=WORD_NEEDS,
    expected=(Expectation(Verdict.PASS, "static", {"transform": "whiten_zipf"},
                          note="shown for static vectors after Zipfian whitening"),),
    hypothesis=WORD_LEVEL,
    rationale=MIN_RHO_RATIONALE,
    backed_by=("theorems/oyama_kl.py::test_oyama_norm_equals_twice_kl_after_zipfian_whitening",
               "tests/test_information_corpus.py::test_kl_is_the_expected_pmi_of_a_word_with_"
               "its_contexts",
               "tests/test_audit.py::test_glove_conditions_and_information_gain"),
), data="words")
def norm_kl(words: WordData, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    """Spearman ρ of ‖e(w)‖² with 2·KL(w) over the words frequent in the corpus."""
    rows, kl = words.information_gain()
    return spearman(2 * kl, words.squared_norms(variant)[rows], sample(words)[rows], s,
                    words.token_counts()[rows])


#: The reasonable analyses of the word lines (docs/statistics.md, "Robustness"): the geometry,
#: where IC comes from, which words (the margin is the criterion, not an analysis: its effect is
#: the line's sensitivity).
GEOMETRIES = ("raw", "center_zipf", "whiten_zipf")
IC_SOURCES = ("wordfreq", "corpus", "subtitles")
specifications(WORD_LEVEL, transform=GEOMETRIES, ic_source=IC_SOURCES,
               population=("all", "one_token", "multitoken", "frequent", "rare"), sample=SAMPLES)
# the contrast already runs over all words and multi-token words: the frequency halves restrict
# both further
specifications(COMPOSITION, transform=GEOMETRIES, ic_source=IC_SOURCES,
               population=("all", "frequent", "rare"), sample=SAMPLES)

# the controls on the audit's own data (normtest.claims.control_models)
controls(WORD_LEVEL, word_controls)
controls(COMPOSITION, composition_controls)
