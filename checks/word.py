"""Word-level claims: the squared norm of a word's vector tracks its information content."""

from normtest.adapters.protocol import Capability
from normtest.catalogue import Claim, Expectation, register
from normtest.checks.axes import COMPOSITIONS, PAPER, REPRESENTATIONS, TRANSFORMS
from normtest.result import Criterion, Verdict

#: Whole-word vectors (static models), or subword tokens composed (contextual models).
WORD_NEEDS = ((Capability.WORD_VECTORS,), (Capability.WORD_TOKENS, Capability.TOKEN_VECTORS))
SUBWORD_NEEDS = ((Capability.WORD_TOKENS, Capability.TOKEN_VECTORS),)
WORD_AXES = {"composition": COMPOSITIONS, "representation": REPRESENTATIONS,
             "transform": TRANSFORMS}
#: The paper: the correspondence holds "when suitable subword composition functions are used";
#: scaled averages and the additive information-theoretic composition are its examples.
SUITABLE = ("sqrt_n", "f_ind")

register(Claim(
    id="word.norm_ic",
    statement="‖e(w)‖² increases with IC(w) = −log P(w)",
    source=f"{PAPER} (abstract: word-level correspondence); Oyama et al., EMNLP 2023",
    suite="word",
    quantities=("squared_norm", "information_content"),
    unit="nats",
    sample="the default word sample, stratified over frequency ranks",
    statistic="spearman_rho",
    criterion=Criterion.minimum_effect(0.3),
    axes=WORD_AXES,
    needs=WORD_NEEDS,
    expected=(
        Expectation(Verdict.PASS, "static", {"transform": "whiten_zipf"},
                    note="Zipfian whitening is the published positive control (Yokoi et al.)"),
        *(Expectation(Verdict.PASS, family, {"composition": c})
          for family in ("encoder", "decoder") for c in SUITABLE),
    ),
    notes="Static models look whole words up; composition applies to subword models only.",
))

register(Claim(
    id="word.norm_ic.multitoken",
    statement="the same correspondence over words split into two or more subword tokens",
    source=f"{PAPER} (composition decides the correspondence)",
    suite="word",
    quantities=("squared_norm", "information_content"),
    unit="nats",
    sample="words of the default sample with ≥ 2 model tokens",
    statistic="spearman_rho",
    criterion=Criterion.minimum_effect(0.3),
    axes=WORD_AXES,
    needs=SUBWORD_NEEDS,
    expected=tuple(Expectation(Verdict.PASS, family, {"composition": c})
                   for family in ("encoder", "decoder") for c in SUITABLE),
    reconstructed=True,
))

register(Claim(
    id="word.norm_ic.partial",
    statement="the correspondence survives partialling out the number of subword tokens",
    source=f"{PAPER}; guards against a length artefact (normtest)",
    suite="word",
    quantities=("squared_norm", "information_content", "token_count"),
    unit="nats",
    sample="the default word sample",
    statistic="partial_spearman_rho",
    criterion=Criterion.minimum_effect(0.3),
    axes=WORD_AXES,
    needs=SUBWORD_NEEDS,
    reconstructed=True,
))

register(Claim(
    id="word.norm_kl",
    statement="‖e(w)‖² increases with 2·KL(w), the information gain of w's contexts",
    source="Oyama, Yokoi & Shimodaira, EMNLP 2023; Yokoi et al., NeurIPS 2024",
    suite="word",
    quantities=("squared_norm", "information_gain"),
    unit="nats",
    sample="words of the default sample frequent in the reference corpus",
    statistic="spearman_rho",
    criterion=Criterion.minimum_effect(0.3),
    axes=WORD_AXES,
    needs=WORD_NEEDS,
    expected=(Expectation(Verdict.PASS, None, {"transform": "whiten_zipf"},
                          note="holds after Zipfian whitening"),),
))
