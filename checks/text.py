"""Text-level claim: the squared norm of a text's vector tracks its surprisal under an LM.

Declared, measured and judged here, on the audit's text data
(:class:`normtest.data.TextData`: sentences of real documents and their surprisal).
"""

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from normtest.checks.axes import PAPER, POOLINGS, REPRESENTATIONS, TEXT_LEVEL
from normtest.checks.word import MIN_RHO, MIN_RHO_RATIONALE, RHO_MARGINS
from normtest.claims import (
    SAMPLES,
    AuditSettings,
    Capability,
    Claim,
    Criterion,
    Expectation,
    Measurement,
    TextData,
    Verdict,
    controls,
    measure_baseline,
    measure_correlation,
    measure_within_strata,
    measures,
    specifications,
    text_controls,
    within_strata_estimate,
)


@measures(Claim(
    id="text.norm_surprisal",
    baseline="length",
    statement="‖e(t)‖² increases with IC_LM(t) = −Σ log P(t_i | t_<i) across texts",
    source=f"{PAPER} (information content of texts)",
    suite="text",
    quantities=("squared_norm", "lm_surprisal"),
    unit="nats",
    sample="sentences of 40 or more documents: news, Wikipedia, the Python reference",
    statistic="spearman_rho",
    criterion=Criterion.minimum_effect(MIN_RHO),
    margins=RHO_MARGINS,
    axes={"composition": POOLINGS, "representation": REPRESENTATIONS},
    needs=((Capability.TOKEN_VECTORS, Capability.WORD_TOKENS), (Capability.TEXT_VECTORS,)),
    expected=tuple(Expectation(Verdict.PASS, None, {"composition": c})
                   for c in ("sqrt_n", "f_ind")),
    hypothesis=TEXT_LEVEL,
    reconstructed=True,
    notes="surprisal comes from the audited model when it is a causal LM, else from smollm2-135m",
    rationale=MIN_RHO_RATIONALE + "; sentences are resampled by document (clusters)",
    backed_by=("tests/test_calibration.py::test_cluster_bootstrap_keeps_false_pass_and_false_fail_at_alpha",
               "tests/test_calibration.py::test_correlation_power_above_threshold"),
), data="texts")
def norm_surprisal(texts: TextData, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    """Spearman ρ of ‖e(t)‖² with IC_LM(t) over sentences, documents resampled as clusters."""
    norms = texts.squared_norms(variant)
    measured = measure_correlation(texts.information, norms, clusters=texts.documents,
                                   n_resamples=s.resamples, seed=s.seed, alpha=s.alpha
                                   ).with_settings(surprisal_model=texts.surprisal_model)
    if texts.lengths.size != norms.size or not s.beyond:  # no lengths, or not asked
        return measured
    beside = measure_baseline(texts.information, norms, texts.lengths,
                              clusters=texts.documents, n_resamples=s.resamples, seed=s.seed,
                              alpha=s.alpha, readings=s.readings)
    if s.readings:
        beside.update(beyond_breakdown(texts, norms, beside["beyond"], s))
    return replace(measured, components={**measured.components, **beside})


def beyond_breakdown(texts: TextData, norms: np.ndarray, beyond: Measurement,
                     s: AuditSettings) -> dict[str, Measurement]:
    """Where the text rows' beyond reading comes from: the beyond ρ of each source's sentences
    (news, encyclopedia, technical prose: ``settings.by_source`` of the beyond measurement,
    point estimates), and the within-document reading — ρ(surprisal, norm) among the sentences
    of one document, pooled over documents (component ``within_documents``, resampled by
    document; reported, not judged)."""
    sources = np.array([texts.document_ids[d].split(":")[0] if texts.document_ids else "all"
                        for d in texts.documents])
    by_source = []
    for name in dict.fromkeys(sources.tolist()):
        rows = np.flatnonzero(sources == name)
        rho, kept = within_strata_estimate(texts.information[rows], norms[rows],
                                           texts.lengths[rows])
        by_source.append({"source": name, "n": kept,
                          "rho": round(rho, 6) if np.isfinite(rho) else None})
    within = measure_within_strata(texts.information, norms, texts.lengths,
                                   clusters=texts.documents, codes=texts.documents,
                                   n_resamples=s.resamples, seed=s.seed, alpha=s.alpha)
    return {"beyond": beyond.with_settings(by_source=by_source), "within_documents": within}


# a sentence's information measured another way, and which sentences
specifications(TEXT_LEVEL, text_ic=("surprisal", "unigram"),
               sentences=("all", "short", "long"), sample=SAMPLES)

# the controls on the audit's own data (normtest.claims.control_models)
controls(TEXT_LEVEL, text_controls)
