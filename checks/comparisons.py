"""Comparative claims: the difference of an effect between two models on one paired sample.

Declared with :func:`normtest.claims.compares` and judged by ``normtest compare`` on every
pair of the models it is given (the first named model is ``first``). Each criterion is a
*minimum difference*: PASS when the difference's one-sided bound lies above it, FAIL when the
other bound lies below it (the models do not differ by that much in that direction),
INCONCLUSIVE otherwise.
"""

from collections.abc import Mapping

from normtest.checks.axes import PAPER
from normtest.checks.cer import CER
from normtest.claims import (
    AuditSettings,
    Comparative,
    Criterion,
    Measurement,
    Pair,
    PairExpectation,
    Verdict,
    compares,
    measure_correlation_difference,
    measure_linearity_gain,
)

#: The smallest gain in linearity worth a verdict: D = |log r| lower by 0.2, i.e. the late/early
#: slope ratio about 22% closer to 1 (cer.linear's own band is a factor of two, log 2 = 0.69).
MIN_LINEARITY_GAIN = 0.2
#: The smallest difference of two Spearman correlations worth a verdict.
MIN_RHO_DIFFERENCE = 0.1
#: Compositions compared; ``state`` is each model's own CLS or EOS state.
GROWTH_COMPOSITIONS = ("state", "sqrt_n", "f_ind", "mean", "sum", "pooled")
TEXT_COMPOSITIONS = ("sqrt_n", "f_ind", "mean", "state", "pooled")
WORD_COMPOSITIONS = ("sqrt_n", "f_ind", "sum", "mean", "pooled")


@compares(Comparative(
    id="compare.cer.linearity",
    statement="{first}'s s(L) grows closer to linearly than {second}'s (CER)",
    source=f"{PAPER} (ModernBERT's CLS behaves more in line with CER than BERT's, which "
           f"converges to a fixed point); {CER}",
    data="prefixes",
    statistic="linearity_gain",
    criterion=Criterion.minimum_effect(MIN_LINEARITY_GAIN),
    axes={"composition": GROWTH_COMPOSITIONS},
    expected=(PairExpectation(Verdict.PASS, "modernbert", "bert", {"composition": "state"},
                              note="ModernBERT's CLS against BERT's"),
              # the closest real pair installable here: nomic-embed (rotary positions, SwiGLU,
              # a long context, as ModernBERT) against MiniLM's BERT CLS
              PairExpectation(Verdict.PASS, "nomic_bert", "bert", {"composition": "state"},
                              note="nomic-embed's first-token state standing for ModernBERT's "
                                   "CLS, against BERT's", proxy=True)),
    notes="distance from linear growth D = |log r|, r the late/early slope ratio clipped to "
          "[1/16, 16], on the same word grid of the same documents; the gain is D_second − "
          "D_first, bootstrapped over documents with the same draws for both models",
))
def linearity(pair: Pair, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    """How much closer to linear the first model's growth is (D_second − D_first)."""
    lengths, first, second, documents = pair.curves(variant)
    return measure_linearity_gain(lengths, first, second, documents, n_resamples=s.resamples,
                                  seed=s.seed, alpha=s.alpha)


@compares(Comparative(
    id="compare.text.norm_surprisal",
    statement="{first}'s ‖e(t)‖² tracks the sentences' surprisal better than {second}'s",
    source=f"{PAPER} (information content of texts)",
    data="texts",
    statistic="rho_difference",
    criterion=Criterion.minimum_effect(MIN_RHO_DIFFERENCE),
    axes={"composition": TEXT_COMPOSITIONS},
    notes="Spearman ρ(surprisal, ‖e(t)‖²) of each model on the same sentences, the difference "
          "bootstrapped over their documents with the same draws for both",
))
def text_surprisal(pair: Pair, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    """ρ_first − ρ_second on the shared sentences (each model's own surprisal, if it has one)."""
    ic_first, first, ic_second, second, documents = pair.texts(variant)
    return measure_correlation_difference(ic_first, first, second, documents,
                                          second_information=ic_second,
                                          n_resamples=s.resamples, seed=s.seed, alpha=s.alpha)


@compares(Comparative(
    id="compare.word.norm_ic",
    statement="{first}'s ‖e(w)‖² tracks IC(w) better than {second}'s",
    source=f"{PAPER} (word level)",
    data="words",
    statistic="rho_difference",
    criterion=Criterion.minimum_effect(MIN_RHO_DIFFERENCE),
    axes={"composition": WORD_COMPOSITIONS, "transform": ("raw",)},
    notes="Spearman ρ(IC, ‖e(w)‖²) of each model on the words both kept, the difference "
          "bootstrapped over words; a whole-word (static) model's one vector stands for every "
          "composition",
))
def word_ic(pair: Pair, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    """ρ_first − ρ_second on the shared words."""
    information, first, second = pair.words(variant)
    return measure_correlation_difference(information, first, second, n_resamples=s.resamples,
                                          seed=s.seed, alpha=s.alpha)
