"""Word-level claims: the squared norm of a word's vector tracks its information content.

Each claim is declared, measured and judged here; the measurements read the audit's word data
(:class:`normtest.vectors.WordData`: the sample, its IC and its vectors per variant).
"""

from collections.abc import Mapping

import numpy as np

from normtest.adapters.protocol import Capability
from normtest.catalogue import Claim, Expectation, measures
from normtest.checks.axes import (
    COMPOSITION,
    COMPOSITIONS,
    PAPER,
    REPRESENTATIONS,
    TRANSFORMS,
    WORD_LEVEL,
)
from normtest.result import Criterion, Measurement, Verdict
from normtest.settings import AuditSettings
from normtest.stats import measure_correlation, measure_partial_correlation
from normtest.vectors import WordData

#: Whole-word vectors (static models), or subword tokens composed (contextual models).
#: … or a sentence encoder's vector of the word as a one-word text.
WORD_NEEDS = ((Capability.WORD_VECTORS,), (Capability.WORD_TOKENS, Capability.TOKEN_VECTORS),
              (Capability.TEXT_VECTORS,))
SUBWORD_NEEDS = ((Capability.WORD_TOKENS, Capability.TOKEN_VECTORS),)
WORD_AXES = {"composition": COMPOSITIONS, "representation": REPRESENTATIONS,
             "transform": TRANSFORMS}
#: The paper: the correspondence holds "when suitable subword composition functions are used";
#: scaled averages and the additive information-theoretic composition are its examples.
SUITABLE = ("sqrt_n", "f_ind")
SUBWORD_FAMILIES = ("encoder", "decoder")


def suitable(verdict: Verdict = Verdict.PASS) -> tuple[Expectation, ...]:
    """The paper's expectation for subword models with a suitable composition (on their raw
    last layer, the reference of every expectation)."""
    return tuple(Expectation(verdict, family, {"composition": c})
                 for family in SUBWORD_FAMILIES for c in SUITABLE)
#: The smallest rank correlation worth calling a correspondence (docs/theory.md §8).
MIN_RHO = 0.3


def spearman(x: np.ndarray, y: np.ndarray, words: np.ndarray, s: AuditSettings) -> Measurement:
    """Spearman ρ of x and y with a percentile bootstrap over ``words`` (one per row), at the
    audit's settings: a word is drawn as often in every variant (paired resamples, and the IC
    side ranked once for all of them)."""
    return measure_correlation(x, y, units=words, n_resamples=s.resamples, seed=s.seed,
                               alpha=s.alpha)


def sample(words: WordData) -> np.ndarray:
    """The sample's words as an array, one per row of its data."""
    return np.asarray(words.words)


@measures(Claim(
    id="word.norm_ic",
    statement="‖e(w)‖² increases with IC(w) = −log P(w)",
    source=f"{PAPER} (abstract: word-level correspondence); Oyama et al., EMNLP 2023",
    suite="word",
    quantities=("squared_norm", "information_content"),
    unit="nats",
    sample="the default word sample, stratified over frequency ranks",
    statistic="spearman_rho",
    criterion=Criterion.minimum_effect(MIN_RHO),
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
), data="words")
def norm_ic(words: WordData, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    """Spearman ρ of ‖e(w)‖² with IC(w) over the word sample."""
    return spearman(words.information, words.squared_norms(variant), sample(words), s)


@measures(Claim(
    id="word.norm_ic.multitoken",
    statement="the same correspondence over words split into two or more subword tokens",
    source=f"{PAPER} (composition decides the correspondence)",
    suite="word",
    quantities=("squared_norm", "information_content"),
    unit="nats",
    sample="words of the default sample with ≥ 2 model tokens",
    statistic="spearman_rho",
    criterion=Criterion.minimum_effect(MIN_RHO),
    axes=WORD_AXES,
    needs=SUBWORD_NEEDS,
    expected=suitable(),
    hypothesis=COMPOSITION,
    reconstructed=True,
), data="words")
def norm_ic_multitoken(words: WordData, variant: Mapping[str, str],
                       s: AuditSettings) -> Measurement:
    """Spearman ρ of ‖e(w)‖² with IC(w) over the words of two or more model tokens."""
    several = words.token_counts() >= 2
    return spearman(words.information[several], words.squared_norms(variant)[several],
                    sample(words)[several], s)


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
    axes=WORD_AXES,
    needs=SUBWORD_NEEDS,
    reconstructed=True,
), data="words")
def norm_ic_partial(words: WordData, variant: Mapping[str, str],
                    s: AuditSettings) -> Measurement:
    """Partial Spearman ρ of ‖e(w)‖² with IC(w), the token count partialled out."""
    return measure_partial_correlation(words.information, words.squared_norms(variant),
                                       words.token_counts().astype(np.float64),
                                       units=sample(words), n_resamples=s.resamples, seed=s.seed,
                                       alpha=s.alpha)


@measures(Claim(
    id="word.norm_kl",
    statement="‖e(w)‖² increases with 2·KL(w), the information gain of w's contexts",
    source="Oyama, Yokoi & Shimodaira, EMNLP 2023; Yokoi et al., NeurIPS 2024",
    suite="word",
    quantities=("squared_norm", "information_gain"),
    unit="nats",
    sample="words of the default sample frequent in the reference corpus",
    statistic="spearman_rho",
    criterion=Criterion.minimum_effect(MIN_RHO),
    axes=WORD_AXES,
    needs=WORD_NEEDS,
    expected=(Expectation(Verdict.PASS, "static", {"transform": "whiten_zipf"},
                          note="shown for static vectors after Zipfian whitening"),),
    hypothesis=WORD_LEVEL,
), data="words")
def norm_kl(words: WordData, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    """Spearman ρ of ‖e(w)‖² with 2·KL(w) over the words frequent in the corpus."""
    rows, kl = words.information_gain()
    return spearman(2 * kl, words.squared_norms(variant)[rows], sample(words)[rows], s)
