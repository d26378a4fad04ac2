"""Text-level claim: the squared norm of a text's vector tracks its surprisal under an LM."""

from normtest.adapters.protocol import Capability
from normtest.catalogue import Claim, Expectation, register
from normtest.checks.axes import PAPER, POOLINGS, REPRESENTATIONS
from normtest.result import Criterion, Verdict

register(Claim(
    id="text.norm_surprisal",
    statement="‖e(t)‖² increases with IC_LM(t) = −Σ log P(t_i | t_<i) across texts",
    source=f"{PAPER} (information content of texts)",
    suite="text",
    quantities=("squared_norm", "lm_surprisal"),
    unit="nats",
    sample="sentences of the default documents",
    statistic="spearman_rho",
    criterion=Criterion.minimum_effect(0.3),
    axes={"composition": POOLINGS, "representation": REPRESENTATIONS},
    needs=((Capability.TOKEN_VECTORS, Capability.WORD_TOKENS),),
    expected=tuple(Expectation(Verdict.PASS, None, {"composition": c})
                   for c in ("sqrt_n", "f_ind")),
    reconstructed=True,
    notes="surprisal comes from the audited model when it is a causal LM, else from smollm2-135m",
))
