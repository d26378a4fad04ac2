"""Constant Entropy Rate claims: how ‖e(prefix_L)‖² grows with the prefix length L."""

from normtest.adapters.protocol import Capability
from normtest.catalogue import Claim, Expectation, register
from normtest.checks.axes import PAPER, POOLINGS, REPRESENTATIONS
from normtest.result import Criterion, Verdict
from normtest.stats.growth import (
    CURVATURE_MARGIN,
    FIXED_POINT_MAX_RATIO,
    FIXED_POINT_MIN_COSINE,
    RATIO_MARGIN,
)

CER = "Genzel & Charniak, ACL 2002 (Constant Entropy Rate)"
PREFIX_NEEDS = ((Capability.PREFIX_VECTORS,),)
PREFIX_AXES = {"composition": POOLINGS, "representation": REPRESENTATIONS}

register(Claim(
    id="cer.monotone",
    statement="s(L) = ‖e(prefix_L)‖² rises with L within a document",
    source=f"{PAPER}; {CER}",
    suite="cer",
    quantities=("squared_norm", "prefix_length"),
    unit="model tokens",
    sample="prefixes of the default documents on a length grid",
    statistic="median per-document spearman_rho",
    criterion=Criterion.minimum_effect(0.5),
    axes=PREFIX_AXES,
    needs=PREFIX_NEEDS,
    expected=tuple(Expectation(Verdict.PASS, None, {"composition": c})
                   for c in ("sqrt_n", "f_ind", "f_inf")),
))

register(Claim(
    id="cer.linear",
    statement="s(L) grows linearly: positive slope, late/early slope ratio ≈ 1, no curvature",
    source=f"{PAPER}; {CER}",
    suite="cer",
    quantities=("squared_norm", "prefix_length"),
    unit="model tokens",
    sample="prefixes of the default documents on a length grid",
    statistic="late_early_ratio",
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
                    note="BERT's CLS; the paper finds ModernBERT's CLS closer to CER"),
        Expectation(Verdict.FAIL, "decoder", {"composition": "eos"}, note="LLaMA's EOS"),
    ),
))

register(Claim(
    id="cer.fixed_point",
    statement="s(L) and the direction of e(prefix_L) converge as the text grows",
    source=f"{PAPER} (BERT CLS and LLaMA EOS converge to a fixed point)",
    suite="cer",
    quantities=("squared_norm", "prefix_length", "prefix_direction"),
    unit="model tokens",
    sample="prefixes of the default documents on a length grid",
    statistic="late_early_ratio",
    criterion=Criterion("within", margin=(-FIXED_POINT_MAX_RATIO, FIXED_POINT_MAX_RATIO),
                        components={"end_cosine": Criterion("greater",
                                                            threshold=FIXED_POINT_MIN_COSINE)}),
    axes=PREFIX_AXES,
    needs=PREFIX_NEEDS,
    expected=(
        Expectation(Verdict.PASS, "encoder", {"composition": "cls"}),
        Expectation(Verdict.PASS, "decoder", {"composition": "eos"}),
        Expectation(Verdict.PASS, None, {"composition": "mean"}),
    ),
))
