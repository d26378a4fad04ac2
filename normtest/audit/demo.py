"""A demonstration audit of the verdict engine on synthetic models with known truth.

Used by ``normtest demo`` (and ``make audit`` until the real audit exists). Each synthetic model is
built to satisfy or to violate a claim, so the expected verdict is known in advance and the table
shows whether the engine recovers it. Nothing here is hard-coded: every verdict is computed.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from normtest.audit.report import Report, provenance
from normtest.stats.correlation import correlation
from normtest.stats.growth import fixed_point, linear_growth
from normtest.stats.multiplicity import adjust
from normtest.verdict.result import Result, Verdict


def _zipf_information(n_words: int, rng: np.random.Generator) -> np.ndarray:
    """IC(w) = −log P(w) for a Zipfian vocabulary (exponent 1), sampled across ranks."""
    ranks = np.unique(np.geomspace(1, 100_000, n_words).astype(int))
    probability = 1.0 / ranks
    probability /= probability.sum() + 1.0 / np.arange(ranks[-1] + 1, 10 * ranks[-1]).sum()
    return np.asarray(rng.permutation(-np.log(probability)))


Curves = tuple[np.ndarray, np.ndarray, np.ndarray]


def _curves(kind: str, rng: np.random.Generator, n_docs: int = 30) -> Curves:
    lengths = np.arange(8, 257, 8, dtype=np.float64)
    rows = []
    for doc in range(n_docs):
        level = rng.normal(1.0, 0.1)
        if kind == "linear":
            s = level * lengths / 64
        else:  # saturating towards a fixed point
            s = level * 4 * (1 - np.exp(-lengths / 48))
        s = s + rng.normal(0, 0.1, lengths.size)
        rows.append((lengths, s, np.full(lengths.size, doc)))
    lengths_col, values_col, docs_col = (np.concatenate(c) for c in zip(*rows, strict=True))
    return lengths_col, values_col, docs_col


def run_demo(seed: int = 0, n_words: int = 2000) -> Report:
    """Judge four synthetic claims whose truth is known; Holm within each claim's family (the
    demo's rows are not the paper's hypotheses, so the audit's roles do not apply)."""
    rng = np.random.default_rng(seed)
    information = _zipf_information(n_words, rng)
    faithful = 0.8 * information + 2.0 + rng.normal(0, 1.5, information.size)
    shuffled = rng.permutation(faithful)

    word = [
        _named(correlation(information, faithful, seed=seed), "demo.norm_ic",
               {"model": "faithful"}, Verdict.PASS),
        _named(correlation(information, shuffled, seed=seed), "demo.norm_ic",
               {"model": "shuffled_norms"}, Verdict.FAIL),
    ]
    lin = _curves("linear", rng)
    sat = _curves("saturating", rng)
    growth = [
        _named(linear_growth(*lin, seed=seed), "demo.cer_linear", {"process": "linear"},
               Verdict.PASS),
        _named(linear_growth(*sat, seed=seed), "demo.cer_linear", {"process": "saturating"},
               Verdict.FAIL),
    ]
    fixed = [
        _named(fixed_point(*sat, seed=seed), "demo.fixed_point", {"process": "saturating"},
               Verdict.PASS),
        _named(fixed_point(*lin, seed=seed), "demo.fixed_point", {"process": "linear"},
               Verdict.FAIL),
    ]
    results = adjust(word) + adjust(growth) + adjust(fixed)
    return Report(
        results=results,
        model={"name": "synthetic demonstration", "kind": "synthetic"},
        provenance=provenance(seed=seed, words=int(information.size), documents=30,
                              note="demonstration of the verdict engine on synthetic data"),
    )


def _named(result: Result, claim: str, variant: dict[str, str], expected: Verdict) -> Result:
    return replace(result, claim=claim, variant=variant, expected=expected)
