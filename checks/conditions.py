"""The sufficient conditions: inner products track PMI (C1) and carry over to the diagonal (C2)."""

from normtest.catalogue import Claim, Expectation, register
from normtest.checks.word import WORD_AXES, WORD_NEEDS
from normtest.result import Criterion, Verdict

PAPER_CONDITIONS = "Amigó et al., Findings of EMNLP 2025 (the two sufficient conditions)"

register(Claim(
    id="cond.inner_pmi",
    statement="C1: ⟨e(x), e(y)⟩ increases with PMI(x, y) for distinct co-occurring words",
    source=PAPER_CONDITIONS,
    suite="conditions",
    quantities=("inner_product", "pmi"),
    unit="nats",
    sample="co-occurring pairs of sample words in the reference corpus (clustered by word)",
    statistic="spearman_rho",
    criterion=Criterion.minimum_effect(0.3),
    axes=WORD_AXES,
    needs=WORD_NEEDS,
    expected=(Expectation(Verdict.PASS),),
    reconstructed=True,
))

register(Claim(
    id="cond.self_pmi",
    statement="C2: the C1 fit ⟨e(x), e(y)⟩ ≈ a·PMI + b, carried to the diagonal, predicts ‖e(x)‖²",
    source=PAPER_CONDITIONS,
    suite="conditions",
    quantities=("squared_norm", "information_content", "inner_product", "pmi"),
    unit="nats",
    sample="the default word sample and its co-occurring pairs",
    statistic="slope_ratio",
    criterion=Criterion("within", margin=(0.5, 2.0)),
    axes=WORD_AXES,
    needs=WORD_NEEDS,
    expected=(Expectation(Verdict.PASS),),
    reconstructed=True,
    notes="slope of ‖e‖² on IC over the slope of ⟨e(x), e(y)⟩ on PMI; 1 when C2 holds exactly",
))

register(Claim(
    id="cond.centered",
    statement="C2′: the frequency-weighted mean Σ p(w) e(w) is small against the typical norm",
    source="Oyama et al., EMNLP 2023; Yokoi et al., NeurIPS 2024",
    suite="conditions",
    quantities=("weighted_mean_norm", "rms_norm"),
    unit="ratio",
    sample="the default word sample with unigram weights",
    statistic="centering_ratio",
    criterion=Criterion("less", threshold=0.5),
    axes={"composition": WORD_AXES["composition"],
          "representation": WORD_AXES["representation"],
          "transform": ("raw",)},
    needs=WORD_NEEDS,
    reconstructed=True,
))
