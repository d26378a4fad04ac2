"""The control models of each scorecard line, built from the audit's own data
(:mod:`normtest.scorecard.controls`): the same words and their IC, token counts, corpus and PMI
pairs, documents and prefix grids, sentences and their surprisal, at the audit's sample sizes. Only
the vectors are made up, so that the line holds (positive) or fails (negative) by construction.

- **words** (``word_level``): squared norms a known noisy function of the claim's quantity — a
  rank correlation with IC (or with 2·KL for ``word.norm_kl``) of the smallest effect the claim must
  detect (:attr:`~normtest.claims.catalogue.Claim.detect`: ρ 0.4 against the threshold 0.3) — on
  random directions; the negative control's norms are unrelated to it. Subword models get
  :class:`~normtest.models.synthetic.SubwordModel` tokens (the audit's own token counts) whose
  scaled average is that norm.
- **composition**: subword tokens, as many as the audit's own words have, whose scaled
  average carries IC (ρ 0.4) and whose plain mean, its norm divided by that token count,
  carries what the token count gives; negatively, no composition carries IC.
- **confound** (every line whose rows declare a baseline): the audit's own token counts (or
  sentence lengths) kept, and norms a noisy function of them (rank correlation
  :data:`CONFOUND_EFFECT`) carrying nothing beyond them: the line as stated may pass, its
  beyond reading must not.
- **conditions**: vectors whose Gram matrix is the reference corpus's PMI of the audit's pairs
  with noise (ρ of :data:`POSITIVE_EFFECT`) off the diagonal and IC on it — C1 and C2 hold by
  construction (slope 1 on both sides); negatively, random directions with ‖e‖² = IC.
- **growth** (``cer_growth``): token vectors sharing a component (v_i = μ + ε_i) on each
  document's own grid: ``sqrt_n`` and ``f_ind`` grow linearly, ``sum`` quadratically, ``mean`` not
  at all; negatively a fading sum (the tokens shrink geometrically), which saturates.
- **fixed points**: a state converging to a fixed point (s_L → μ at rate e^(−L/16)); negatively
  an additive one (a sum of independent vectors), which grows linearly.
- **texts**: sentence norms a noisy function of surprisal (ρ 0.4, the claim's ``detect``);
  negatively unrelated to it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import special

from normtest.adapters.static import StaticVectors
from normtest.claims.catalogue import get
from normtest.claims.line_declarations import ControlContext
from normtest.data.prefixes import PrefixData
from normtest.data.words import WordData
from normtest.errors import NormtestError
from normtest.geometry.compose import compose_segments
from normtest.models.synthetic import SubwordModel

__all__ = ["CONFOUND_EFFECT", "POSITIVE_EFFECT", "composition_controls", "condition_controls",
           "fixed_point_controls", "growth_controls", "text_controls", "word_controls"]

#: The rank correlation a positive control carries: halfway between the threshold its claims
#: are held to (ρ > 0.3) and a perfect correspondence, 0.3 + (1 − 0.3)/2 — a model for which the
#: claim clearly holds, as the paper's "strong correspondence" does.
POSITIVE_EFFECT = 0.65
#: The rank correlation of a confound control's norms with the baseline (token count, length):
#: a norm that is nearly a function of the trivial predictor.
CONFOUND_EFFECT = 0.9
#: The spread (of log ‖e‖²) of the composition's negative control: wide enough that dividing by
#: a token count (at most a factor of ten or so) barely reorders the words.
NEGATIVE_SPREAD = 12.0
DIM = 32


def _planted(context: ControlContext, claim_id: str) -> float:
    """The effect a control plants for a claim: the smallest effect the claim must detect (its
    ``detect``, one step beyond its threshold) for the positive control, 0 otherwise."""

    if context.kind != "positive":
        return 0.0
    detect = get(claim_id).detect
    return float(detect) if isinstance(detect, int | float) else POSITIVE_EFFECT


def _confounded(baseline: np.ndarray, rng: np.random.Generator,
                spread: float = 1.0) -> np.ndarray:
    """Positive numbers that are a noisy function of ``baseline`` alone (ties broken at random):
    a rank correlation of :data:`CONFOUND_EFFECT` with it, nothing else."""
    jittered = np.asarray(baseline, dtype=np.float64) + 0.5 * rng.random(baseline.size)
    return _targets(jittered, CONFOUND_EFFECT, rng, spread)


def _rng(context: ControlContext) -> np.random.Generator:
    stream = {"positive": 0, "negative": 1}.get(context.kind, 2)
    return np.random.default_rng([context.seed, stream])


def _targets(values: np.ndarray, effect: float, rng: np.random.Generator,
             spread: float = 1.0) -> np.ndarray:
    """Positive numbers whose rank correlation with ``values`` is ``effect`` (in expectation):
    a Gaussian copula, z = r·score + √(1 − r²)·ε with Pearson r = 2·sin(π·effect/6) (the
    bivariate normal's Spearman ρ is (6/π)·arcsin(r/2)), then exp(spread·z)."""
    from scipy.stats import rankdata  # 1 s to import: only when a control is built

    n = values.size
    scores = special.ndtri((rankdata(values) - 0.5) / n)
    r = 2 * math.sin(math.pi * effect / 6)
    z = r * scores + math.sqrt(1 - r * r) * rng.standard_normal(n)
    return np.exp(spread * z)


def _static_words(words: Any, squared: np.ndarray, rng: np.random.Generator, name: str,
                  corpus: bool = False) -> Any:
    """Word data over the audit's words whose whole-word vectors have these squared norms, in
    random directions."""

    directions = rng.standard_normal((len(words.words), DIM))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    model = StaticVectors(name, list(words.words), directions * np.sqrt(squared)[:, None],
                          f"control:{name}")
    return WordData(model, words.settings, "static", list(words.words), words.information,
                    dict(words.dropped), words.requested,
                    _corpus=words.corpus() if corpus else None)


def _subword_words(words: Any, squared: np.ndarray, counts: np.ndarray, name: str,
                   seed: int) -> Any:
    """Word data over the audit's words whose subword tokens' scaled average has these squared
    norms (``counts`` tokens per word)."""

    listed = list(words.words)
    model = SubwordModel(dict(zip(listed, squared.tolist(), strict=True)), faithful="sqrt_n",
                         noise=0.0, dim=DIM, seed=seed, name=name,
                         token_counts=dict(zip(listed, (int(c) for c in counts), strict=True)))
    return WordData(model, words.settings, "encoder", listed, words.information,
                    dict(words.dropped), words.requested, _token_counts=counts.astype(np.intp))


def word_controls(context: ControlContext) -> tuple[Mapping[str, Any], str]:
    """Word-level controls: ‖e(w)‖² with a rank correlation with IC (2·KL for
    ``word.norm_kl``) of the claim's ``detect`` (positive) or none (negative), or a noisy
    function of the words' token counts (confound)."""

    words = context.data.word()
    rng = _rng(context)
    out: dict[str, Any] = {}
    effect = 0.0
    for row in context.rows:
        claim = get(str(row.claim))
        if claim.id in out:
            continue
        effect = _planted(context, claim.id)
        if context.kind == "confound":
            squared = _confounded(words.token_counts(), rng)
        else:
            squared = _targets(words.information, effect, rng)
            if "information_gain" in claim.quantities:  # the words whose KL the corpus gives
                rows, kl = words.information_gain()
                squared[rows] = _targets(2 * kl, effect, rng)
        name = f"{context.kind} control"
        out[claim.id] = (_static_words(words, squared, rng, name, corpus=True)
                         if context.family in ("static", "sentence") else
                         _subword_words(words, squared, words.token_counts(), name,
                                        context.seed))
    how = (f"norms with a rank correlation of {effect:g} with the claim's quantity, on the "
           f"audit's {len(words.words):,} words" if context.kind != "confound" else
           f"norms a noisy function of the words' own token counts (ρ {CONFOUND_EFFECT:g} with "
           f"them), nothing beyond them, on the audit's {len(words.words):,} words")
    return out, how


def composition_controls(context: ControlContext) -> tuple[Mapping[str, Any], str]:
    """Composition controls on the audit's words with their own token counts, the plain mean
    dividing the scaled average's squared norm by the token count (‖mean‖² = ‖sqrt_n‖²/n): the
    scaled average carries IC (positive: ρ of the word line's ``detect``, its norms within a
    narrow range, so the division reorders them) or nothing (negative: spread so widely that
    the division does not reorder them); the confound control's scaled average is a noisy
    function of the token count alone."""
    words = context.data.word()
    rng = _rng(context)
    counts = words.token_counts()
    several = int((counts >= 2).sum())
    if context.kind == "confound":
        squared = _confounded(counts, rng, spread=0.15)
        how = (f"subword tokens, the words' own counts ({several:,} multi-token), whose scaled "
               f"average's ‖·‖² is a noisy function of the token count (ρ {CONFOUND_EFFECT:g})")
    elif context.kind == "positive":
        effect = _planted(context, "word.norm_ic")
        squared = _targets(words.information, effect, rng, spread=0.15)
        how = (f"subword tokens, the words' own counts ({several:,} multi-token), whose scaled "
               f"average's ‖·‖² has a rank correlation of {effect:g} with IC")
    else:  # norms unrelated to IC, spread so wide that dividing by a count cannot reorder them
        squared = _targets(words.information, 0.0, rng, spread=NEGATIVE_SPREAD)
        how = (f"subword tokens, the words' own counts ({several:,} multi-token), whose scaled "
               "average's ‖·‖² is unrelated to IC and spread so widely that the plain mean "
               "(divided by the token count) ranks the words alike: no composition carries IC")
    data = _subword_words(words, squared, counts, f"{context.kind} control", context.seed)
    return {"words": data}, how


#: The most words a condition control factorises (a Cholesky factor of their Gram matrix).
MAX_CONTROL_WORDS = 3000


def condition_controls(context: ControlContext) -> tuple[Mapping[str, Any], str]:
    """Condition controls on the words of the audit's pairs: a Gram matrix that is the
    corpus's PMI with noise off the diagonal (every pair the corpus gives among those words),
    IC (+ a constant) on it; negatively random directions with ‖e‖² = IC."""

    words = context.data.word()
    rng = _rng(context)
    row_of = {w: i for i, w in enumerate(words.words)}
    keep = np.zeros(len(words.words), dtype=bool)
    for data in (words, words.one_token()):
        x, y, _ = data.pairs()
        for idx in (x, y):
            keep[[row_of[data.words[i]] for i in idx]] = True
    chosen = np.flatnonzero(keep)
    if chosen.size > MAX_CONTROL_WORDS:
        chosen = np.sort(rng.choice(chosen, MAX_CONTROL_WORDS, replace=False))
    if chosen.size < 10:
        raise NormtestError("fewer than 10 words of the sample co-occur in the corpus")
    listed = [words.words[i] for i in chosen]
    ic = words.information[chosen]
    if context.kind == "positive":
        vectors = _gram_vectors(listed, ic, words.corpus(), words.settings.min_pair_count, rng)
        how = (f"vectors whose Gram matrix is PMI with noise (ρ {POSITIVE_EFFECT:g}) on the "
               f"pairs and IC on the diagonal, over {len(listed):,} words of the pairs")
    else:
        directions = rng.standard_normal((len(listed), DIM))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        vectors = directions * np.sqrt(ic)[:, None]
        how = f"random directions with ‖e‖² = IC, over {len(listed):,} words of the pairs"
    model = StaticVectors(f"{context.kind} control", listed, vectors,
                          f"control:{context.kind}:{context.seed}")
    data = WordData(model, words.settings, "static", listed, ic, dict(words.dropped),
                    words.requested, _corpus=words.corpus())
    return {"words": data}, how


def _gram_vectors(listed: list[str], ic: np.ndarray, corpus: Any, min_count: int,
                  rng: np.random.Generator) -> np.ndarray:
    """Vectors with ⟨e_x, e_y⟩ = PMI(x, y) + noise on every pair of ``listed`` the corpus
    gives (seen ``min_count`` times), 0 on the others, and ‖e_x‖² = IC(x) + δ (δ the smallest
    shift that makes the matrix positive definite by Gershgorin's bound): a Cholesky factor.
    The noise makes ρ(⟨e_x, e_y⟩, PMI) about :data:`POSITIVE_EFFECT`; both slopes stay 1."""
    index = {w: i for i, w in enumerate(listed)}
    gram = np.zeros((len(listed), len(listed)))
    pairs = corpus.cooccurring_pairs(listed, min_count=min_count)
    if pairs:
        pmi = corpus.pmi(pairs, min_count=min_count)
        a = np.array([index[p] for p, _ in pmi.pairs], dtype=np.intp)
        b = np.array([index[q] for _, q in pmi.pairs], dtype=np.intp)
        values = np.asarray(pmi.values, dtype=np.float64)
        r = 2 * math.sin(math.pi * POSITIVE_EFFECT / 6)
        noisy = values + float(np.std(values)) * math.sqrt(1 / (r * r) - 1) * \
            rng.standard_normal(values.size)
        gram[a, b] = noisy
        gram[b, a] = noisy
    np.fill_diagonal(gram, 0.0)
    shift = max(0.0, float((np.abs(gram).sum(axis=1) - ic).max())) + 1e-6
    np.fill_diagonal(gram, ic + shift)
    return np.linalg.cholesky(gram)


def _prefix_control(prefixes: Any, curves: Mapping[str, Any]) -> Any:
    """Prefix data on the audit's documents and grids whose curves are ``curves`` (per
    composition: lengths, squared norms, document ids, vectors)."""

    return PrefixData.with_curves(prefixes, {(composition, "last"): parts
                                             for composition, parts in curves.items()})


def _grids(prefixes: Any) -> list[np.ndarray]:
    return [np.asarray(plan.lengths, dtype=np.intp) for plan in prefixes.plans]


def _composed(tokens: list[np.ndarray], grids: list[np.ndarray],
              compositions: set[str]) -> dict[str, tuple[np.ndarray, ...]]:
    """Each composition of every prefix of every document (its first L tokens)."""

    flat = np.concatenate(tokens)
    starts = np.cumsum([0] + [t.shape[0] for t in tokens[:-1]])
    item_starts = np.concatenate([np.full(g.size, s) for s, g in zip(starts, grids, strict=True)])
    lengths = np.concatenate(grids)
    groups = np.concatenate([np.full(g.size, d) for d, g in enumerate(grids)])
    out: dict[str, tuple[np.ndarray, ...]] = {}
    for composition in compositions:
        vectors = compose_segments(flat, item_starts, lengths, composition)
        out[composition] = (lengths.astype(np.float64), np.einsum("ij,ij->i", vectors, vectors),
                            groups, vectors)
    return out


def growth_controls(context: ControlContext) -> tuple[Mapping[str, Any], str]:
    """Growth controls: tokens sharing a component (v_i = μ + ε_i); negatively a fading sum
    (v_i = γ^i·(μ + ε_i), γ = 0.95)."""
    prefixes = context.data.prefix()
    rng = _rng(context)
    grids = _grids(prefixes)
    tokens = []
    for grid in grids:
        longest = int(grid.max()) if grid.size else 1
        mu = rng.standard_normal(DIM)
        mu /= np.linalg.norm(mu)
        v = mu + rng.standard_normal((longest, DIM)) / math.sqrt(DIM)
        if context.kind == "negative":
            v *= 0.95 ** np.arange(longest)[:, None]
        tokens.append(v)
    wanted = {str(r.variant.get("composition")) for r in context.rows}
    how = ("tokens sharing a component, v_i = μ + ε_i" if context.kind == "positive"
           else "a fading sum, v_i = 0.95^i·(μ + ε_i)")
    return {"prefixes": _prefix_control(prefixes, _composed(tokens, grids, wanted))}, \
        how + ", on the audit's documents and grids"


def fixed_point_controls(context: ControlContext) -> tuple[Mapping[str, Any], str]:
    """Fixed-point controls for a model's own state (CLS, EOS): a state converging to a fixed
    point, s_L = μ + (s₀ − μ)·e^(−L/16); negatively an additive one, s_L = Σ_{i≤L} u_i."""
    prefixes = context.data.prefix()
    rng = _rng(context)
    grids = _grids(prefixes)
    states = []
    for grid in grids:
        if context.kind == "positive":
            mu, start = rng.standard_normal(DIM), rng.standard_normal(DIM)
            fade = np.exp(-grid / 16.0)[:, None]
            states.append(mu + (start - mu) * fade
                          + 0.01 * rng.standard_normal((grid.size, DIM)))
        else:
            longest = int(grid.max()) if grid.size else 1
            steps = np.cumsum(rng.standard_normal((longest, DIM)), axis=0)
            states.append(steps[grid - 1])
    lengths = np.concatenate(grids).astype(np.float64)
    groups = np.concatenate([np.full(g.size, d) for d, g in enumerate(grids)])
    vectors = np.concatenate(states)
    curve = (lengths, np.einsum("ij,ij->i", vectors, vectors), groups, vectors)
    wanted = {str(r.variant.get("composition")) for r in context.rows}
    how = ("a state converging to a fixed point" if context.kind == "positive"
           else "an additive state (a sum of independent vectors)")
    return {"prefixes": _prefix_control(prefixes, dict.fromkeys(wanted, curve))}, \
        how + ", on the audit's documents and grids"


def text_controls(context: ControlContext) -> tuple[Mapping[str, Any], str]:
    """Text controls: each sentence's ‖e(t)‖² with a rank correlation with its surprisal of
    the claim's ``detect`` (positive) or none (negative), or a noisy function of its length
    (confound)."""

    texts = context.data.text()
    rng = _rng(context)
    norms = {}
    effect = 0.0
    for row in context.rows:
        key = (str(row.variant.get("composition")), row.variant.get("representation", "last"))
        effect = _planted(context, str(row.claim))
        norms[key] = (_confounded(texts.lengths, rng) if context.kind == "confound"
                      else _targets(texts.information, effect, rng))
    made = texts.with_norms(norms)
    if context.kind == "confound":
        return {"texts": made}, (f"sentence norms a noisy function of their length (ρ "
                                 f"{CONFOUND_EFFECT:g} with it), nothing beyond it, on the "
                                 f"audit's {len(texts.sentences)} sentences")
    return {"texts": made}, (f"sentence norms with a rank correlation of {effect:g} with "
                             f"their surprisal, on the audit's {len(texts.sentences)} sentences")
