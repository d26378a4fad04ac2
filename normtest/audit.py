"""The audit runner: plan the claims a model can be checked on, measure once, judge, adjust.

Data flow (ARCHITECTURE.md): the adapter gives vectors, :class:`WordData` composes and transforms
them once per variant and shares them between claims, each claim's measurement function returns a
:class:`~normtest.result.Measurement`, the claim's criterion judges it, and Holm adjusts within
each claim's family of variants. The outcome is one :class:`~normtest.report.Report`.

Every claim of the catalogue is measured: the word suite (``word.norm_ic``, ``.multitoken``,
``.partial``, ``word.norm_kl``), the conditions (``cond.inner_pmi``, ``cond.self_pmi``,
``cond.centered``), PMI and KL coming from the reference corpus (the bundled Wikipedia sample, ±5
window), the text claim on sentences of the documents (IC from a causal LM), and the CER suite on
prefixes of the default documents. A claim the model cannot be checked on (no subword tokens, no
prefixes) is listed as SKIPPED with the reason, never run and never counted as passing.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from normtest.adapters.protocol import Capability, prefix_vectors_of, supports
from normtest.catalogue import Claim, claims, get
from normtest.errors import NormtestError, nothing_ran
from normtest.report import Report, provenance
from normtest.result import Measurement, Result, Verdict
from normtest.stats import (
    adjust,
    correlation,
    fixed_point,
    linear_growth,
    partial_correlation,
)


def model_family(adapter: Any) -> str:
    """``static`` (whole-word vectors), ``decoder`` (a causal LM) or ``encoder``."""
    if supports(adapter, Capability.WORD_VECTORS):
        return "static"
    if supports(adapter, Capability.TOKEN_LOGPROBS):
        return "decoder"
    return "encoder"


@dataclass(frozen=True)
class AuditSettings:
    """What an audit samples and how it resamples."""

    seed: int = 0
    words: int = 2000
    n_resamples: int = 1000
    alpha: float = 0.05
    #: fewest co-occurrences of a pair (PMI) and occurrences of a word (KL) in the corpus
    min_pair_count: int = 10
    min_word_count: int = 20
    max_pairs: int = 5_000
    #: CER: documents, and prefix lengths step, 2·step, … up to max_prefix model tokens
    documents: int = 12
    prefix_step: int = 16
    max_prefix: int = 128
    #: text claim: sentences, taken in turn from this many documents (the bootstrap clusters)
    sentences: int = 240
    sentence_documents: int = 24
    #: text files or folders replacing the bundled corpora (documents, sentences, PMI and KL)
    corpus: tuple[str, ...] = ()
    #: the causal LM whose surprisal is the text IC when the audited model is not one
    surprisal_model: str = "smollm2-135m"
    #: which variants run: ``standard`` (see :data:`SCOPES`) or ``full`` (every declared one)
    scope: str = "standard"

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int | np.integer) \
                or self.seed < 0:
            raise NormtestError(
                f"the seed must be a whole number ≥ 0 (e.g. --seed 0), got {self.seed!r}"
            )

    def documents_for(self, n: int) -> list[Any]:
        """``n`` documents: the user's corpus when one is given, else the bundled ones."""
        from normtest.information import corpus_documents, default_documents

        if self.corpus:
            found = corpus_documents(list(self.corpus), n)
            if not found:
                raise NormtestError(
                    f"the corpus {', '.join(self.corpus)} holds no paragraph of 200 words or "
                    "more; give longer documents separated by blank lines"
                )
            return found
        return default_documents(n)


@dataclass
class WordData:
    """The word sample, its information content, and vectors per variant, computed once."""

    adapter: Any
    settings: AuditSettings
    family: str
    words: list[str] = field(default_factory=list)
    information: np.ndarray = field(default_factory=lambda: np.empty(0))
    dropped: dict[str, int] = field(default_factory=dict)
    _vectors: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    _token_counts: np.ndarray | None = None
    _corpus: Any = None
    _pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    _kl: tuple[np.ndarray, np.ndarray] | None = None
    _norms: dict[tuple[tuple[str, str], ...], np.ndarray] = field(default_factory=dict)
    _fits: dict[tuple[str, str, str], list[Any]] = field(default_factory=dict)

    @classmethod
    def build(cls, adapter: Any, settings: AuditSettings, family: str,
              words: Sequence[str] | None = None, source: Any | None = None) -> WordData:
        """Draw (or take) the sample, keep words with an IC the model can represent.

        ``source`` is any frequency source with ``information_content(words)`` (default:
        wordfreq English); words it does not know are dropped and counted.
        """
        from normtest.information import WordfreqSource, default_word_sample

        sample = list(words) if words is not None else default_word_sample(
            size=settings.words, seed=settings.seed)
        ic = (source or WordfreqSource()).information_content(sample)
        kept, values = list(ic.words), np.asarray(ic.values, dtype=np.float64)
        dropped = {"no frequency": len(ic.missing)}
        if family == "static":
            known = np.asarray(adapter.represents(kept), dtype=bool)
            dropped["no vector"] = int((~known).sum())
            kept = [w for w, k in zip(kept, known, strict=True) if k]
            values = values[known]
        if not kept:
            raise NormtestError(
                "no word of the sample has both an IC and a vector; check the model and sample"
            )
        return cls(adapter, settings, family, kept, values, dropped)

    @property
    def probabilities(self) -> np.ndarray:
        """Unigram weights p(w) = exp(−IC(w)) (renormalised by the transforms)."""
        return np.exp(-self.information)

    def token_counts(self) -> np.ndarray:
        """Number of model tokens of each word (1 for whole-word models)."""
        if self._token_counts is None:
            if self.family == "static":
                self._token_counts = np.ones(len(self.words), dtype=np.intp)
            elif callable(getattr(self.adapter, "word_token_counts", None)):  # one batch call
                self._token_counts = np.asarray(self.adapter.word_token_counts(self.words),
                                                dtype=np.intp)
            else:
                self._token_counts = np.array(
                    [len(self.adapter.word_tokens(w)) for w in self.words], dtype=np.intp)
        return self._token_counts

    def vectors(self, composition: str, representation: str) -> np.ndarray:
        """Word vectors for a composition and representation (float64, one row per word)."""
        key = (composition, representation)
        if key not in self._vectors:
            if self.family == "static":
                raw = np.asarray(self.adapter.word_vectors(self.words), dtype=np.float64)
            else:
                from normtest.compose import compose_batch

                batch = self.adapter.token_vectors(self.words, layer=representation, words=True)
                raw = compose_batch(np.asarray(batch.vectors, dtype=np.float64), batch.offsets,
                                    composition)
            self._vectors[key] = raw
        return self._vectors[key]

    def folds(self) -> np.ndarray:
        """Two halves of the sample, stratified by IC (a seeded coin per adjacent IC pair)."""
        order = np.argsort(self.information, kind="stable")
        coins = np.random.default_rng(self.settings.seed).integers(0, 2, size=order.size // 2 + 1)
        fold = np.empty(order.size, dtype=np.intp)
        fold[order[0::2]] = coins[: order[0::2].size]
        fold[order[1::2]] = 1 - coins[: order[1::2].size]
        return fold

    def transformed(self, variant: Mapping[str, str]) -> np.ndarray:
        """Word vectors under the variant's composition, representation and transform.

        Transforms are cross-fitted: each half of the sample is centred or whitened by the
        transform fitted on the other half, in the input's coordinates. Fitted in-sample, Zipfian
        whitening bounds p(w)·‖e(w)‖² ≤ 1 (a weighted leverage), which alone makes ‖e‖² grow
        with IC = −log p even for random vectors; out-of-sample fitting removes that artefact.
        """
        from normtest.transforms import make_transform

        vectors = self.vectors(variant.get("composition", "whole"),
                               variant.get("representation", "last"))
        transform = variant.get("transform", "raw")
        if transform == "raw":
            return vectors
        fold, p = self.folds(), self.probabilities
        key = (variant.get("composition", "whole"), variant.get("representation", "last"),
               transform)
        if key not in self._fits:  # fitted once per variant (an SVD per half when whitening)
            self._fits[key] = [make_transform(transform).fit(vectors[fold != f], p[fold != f])
                               for f in (0, 1)]
        out = np.empty_like(vectors)
        for f, fitted in enumerate(self._fits[key]):
            out[fold == f] = fitted.apply(vectors[fold == f], input_axes=True)
        return out

    def squared_norms(self, variant: Mapping[str, str]) -> np.ndarray:
        """‖e(w)‖² under the variant's composition, representation and transform (kept)."""
        key = tuple(sorted(variant.items()))
        if key not in self._norms:
            vectors = self.transformed(variant)
            self._norms[key] = np.einsum("ij,ij->i", vectors, vectors)
        return self._norms[key]

    def corpus(self) -> Any:
        """The reference corpus statistics (the user's corpus, else the Wikipedia sample)."""
        if self._corpus is None:
            from normtest.information import CorpusStatistics, wiki_sample

            corpus = self.settings.corpus
            self._corpus = (CorpusStatistics.from_files(list(corpus), split="paragraph")
                            if corpus else wiki_sample())
        return self._corpus

    def information_gain(self) -> tuple[np.ndarray, np.ndarray]:
        """Rows of the words seen ≥ ``min_word_count`` times in the corpus, and their KL(w)."""
        if self._kl is None:
            corpus = self.corpus()
            frequent = [w for w in self.words if corpus.count(w) >= self.settings.min_word_count]
            if not frequent:
                raise NormtestError(
                    f"the corpus ({corpus.source}) is too small: none of the "
                    f"{len(self.words)} sample words occurs {self.settings.min_word_count} times "
                    "or more, so no KL(w) can be estimated. Give a larger corpus with --corpus "
                    "(millions of words), or leave --corpus out to use the bundled Wikipedia "
                    "sample"
                )
            kl = corpus.kl(frequent)
            row = {w: i for i, w in enumerate(self.words)}
            self._kl = (np.array([row[w] for w in kl.words], dtype=np.intp),
                        np.asarray(kl.values, dtype=np.float64))
        return self._kl

    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Row indices (x, y) of co-occurring sample-word pairs, and their PMI (nats).

        Pairs seen fewer than ``min_pair_count`` times are left out; at most ``max_pairs`` are
        kept (a seeded subsample) so the bootstrap stays fast.
        """
        if self._pairs is None:
            corpus, s = self.corpus(), self.settings
            listed = corpus.cooccurring_pairs(self.words, min_count=s.min_pair_count)
            if not listed:
                raise NormtestError(
                    f"the corpus ({corpus.source}) is too small: no two of the "
                    f"{len(self.words)} sample words co-occur {s.min_pair_count} times or more "
                    "within the window, so no PMI can be estimated. Give a larger corpus with "
                    "--corpus (millions of words), or leave --corpus out to use the bundled "
                    "Wikipedia sample"
                )
            pmi = corpus.pmi(listed, min_count=s.min_pair_count)
            row = {w: i for i, w in enumerate(self.words)}
            x = np.array([row[a] for a, _ in pmi.pairs], dtype=np.intp)
            y = np.array([row[b] for _, b in pmi.pairs], dtype=np.intp)
            values = np.asarray(pmi.values, dtype=np.float64)
            if values.size > s.max_pairs:
                keep = np.sort(np.random.default_rng(s.seed).choice(values.size, s.max_pairs,
                                                                    replace=False))
                x, y, values = x[keep], y[keep], values[keep]
            self._pairs = (x, y, values)
        return self._pairs


@dataclass
class PrefixData:
    """CER documents, their prefix grids in model tokens, and prefix vectors per variant."""

    adapter: Any
    plans: list[Any]
    _curves: dict[tuple[str, str], tuple[np.ndarray, ...]] = field(default_factory=dict)
    _growth: dict[tuple[str, str], Measurement] = field(default_factory=dict)

    @classmethod
    def build(cls, adapter: Any, settings: AuditSettings) -> PrefixData:
        """The default documents with a non-empty prefix grid for this model."""
        from normtest.information import plan_prefixes

        documents = settings.documents_for(settings.documents)
        plans = [p for p in plan_prefixes(adapter, documents, settings.prefix_step,
                                          settings.max_prefix) if p.lengths.size >= 2]
        return cls(adapter, plans)

    def curves(self, variant: Mapping[str, str]) -> tuple[np.ndarray, ...]:
        """(lengths, squared norms, document ids, vectors) of every prefix, for one variant."""
        key = (variant["composition"], variant.get("representation", "last"))
        if key not in self._curves:
            # encoders batch every document's prefixes by length
            matrices = prefix_vectors_of(self.adapter, [p.document.text for p in self.plans],
                                         [p.lengths for p in self.plans], key[0], layer=key[1])
            lengths, values, groups, vectors = [], [], [], []
            for doc, (plan, matrix) in enumerate(zip(self.plans, matrices, strict=True)):
                v = np.asarray(matrix, dtype=np.float64)
                lengths.append(plan.lengths.astype(np.float64))
                values.append(np.einsum("ij,ij->i", v, v))
                groups.append(np.full(plan.lengths.size, doc))
                vectors.append(v)
            self._curves[key] = tuple(np.concatenate(x) for x in (lengths, values, groups,
                                                                  vectors))
        return self._curves[key]


@functools.lru_cache(maxsize=1)
def _loaded_surprisal_model(name: str, cache_dir: str) -> Any:
    """The surprisal model, loaded once per process and cache folder (its tokenizer alone takes
    ~0.2 s to read); its weights are read only if a surprisal is not in the cache, and then
    stay in memory for the next audit (SmolLM2: 540 MB)."""
    from normtest.models import load

    return load(name, cache=False, cache_dir=cache_dir)


def surprisal_model(name: str, audited: Any) -> Any:
    """The causal LM that gives sentences their IC, read through the audited model's cache.

    The audited adapter's :class:`~normtest.cache.EmbeddingCache` is shared (so a run with the
    cache off computes every surprisal, and a warm re-run reads them all back).
    """
    from normtest.cache import CachedAdapter, default_cache_dir

    lm = _loaded_surprisal_model(name, str(default_cache_dir()))
    return CachedAdapter(lm, audited.cache) if isinstance(audited, CachedAdapter) else lm


@dataclass
class TextData:
    """Sentences of real documents, their LM surprisal, and text vectors per variant."""

    adapter: Any
    sentences: list[str]
    documents: np.ndarray
    information: np.ndarray
    surprisal_model: str
    _vectors: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    _tokens: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, adapter: Any, settings: AuditSettings) -> TextData:
        """Sample sentences; their IC from the model itself if it is a causal LM, else from
        ``settings.surprisal_model``."""
        from normtest.information import document_sentences, text_information

        documents = settings.documents_for(settings.sentence_documents)
        pairs = document_sentences(documents, settings.sentences)
        if not pairs:
            raise NormtestError("the documents hold no sentence of 5 to 40 words")
        lm = adapter if supports(adapter, Capability.TOKEN_LOGPROBS) \
            else surprisal_model(settings.surprisal_model, adapter)
        texts = [t for _, t in pairs]
        return cls(adapter, texts, np.array([d for d, _ in pairs], dtype=np.intp),
                   np.asarray(text_information(lm, texts), dtype=np.float64), lm.name)

    def squared_norms(self, variant: Mapping[str, str]) -> np.ndarray:
        """‖e(t)‖² of each sentence under the variant's pooling and representation."""
        from normtest.compose import MODEL_STATES, compose_batch

        key = (variant["composition"], variant.get("representation", "last"))
        if key not in self._vectors:
            if key[0] in MODEL_STATES:
                v = self.adapter.special_states(self.sentences, key[0], layer=key[1])
            else:
                if key[1] not in self._tokens:  # one forward pass per representation
                    self._tokens[key[1]] = self.adapter.token_vectors(self.sentences,
                                                                      layer=key[1])
                batch = self._tokens[key[1]]
                v = compose_batch(np.asarray(batch.vectors, dtype=np.float64), batch.offsets,
                                  key[0])
            v = np.asarray(v, dtype=np.float64)
            self._vectors[key] = np.einsum("ij,ij->i", v, v)
        return self._vectors[key]


@dataclass
class AuditData:
    """Everything measurements share: the word data and the prefix data, each built on demand."""

    adapter: Any
    settings: AuditSettings
    family: str
    words: Sequence[str] | None = None
    source: Any | None = None
    _word: WordData | None = None
    _prefix: PrefixData | None = None
    _text: TextData | None = None

    def word(self) -> WordData:
        """The word sample and its vectors (built once)."""
        if self._word is None:
            self._word = WordData.build(self.adapter, self.settings, self.family, self.words,
                                        self.source)
        return self._word

    def prefix(self) -> PrefixData:
        """The CER documents and their prefix vectors (built once)."""
        if self._prefix is None:
            self._prefix = PrefixData.build(self.adapter, self.settings)
        return self._prefix

    def text(self) -> TextData:
        """The sentences, their surprisal and text vectors (built once)."""
        if self._text is None:
            self._text = TextData.build(self.adapter, self.settings)
        return self._text


Measure = Callable[[WordData, Mapping[str, str], AuditSettings], Measurement]
PrefixMeasure = Callable[[PrefixData, Mapping[str, str], AuditSettings], Measurement]
TextMeasure = Callable[[TextData, Mapping[str, str], AuditSettings], Measurement]


def _norm_ic(data: WordData, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    result = correlation(data.information, data.squared_norms(variant),
                         n_resamples=s.n_resamples, seed=s.seed)
    assert result.measurement is not None
    return result.measurement


def _norm_ic_multitoken(data: WordData, variant: Mapping[str, str],
                        s: AuditSettings) -> Measurement:
    several = data.token_counts() >= 2
    result = correlation(data.information[several], data.squared_norms(variant)[several],
                         n_resamples=s.n_resamples, seed=s.seed)
    assert result.measurement is not None
    return result.measurement


def _norm_ic_partial(data: WordData, variant: Mapping[str, str],
                     s: AuditSettings) -> Measurement:
    result = partial_correlation(data.information, data.squared_norms(variant),
                                 data.token_counts().astype(np.float64),
                                 n_resamples=s.n_resamples, seed=s.seed)
    assert result.measurement is not None
    return result.measurement


def _norm_kl(data: WordData, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    rows, kl = data.information_gain()
    result = correlation(2 * kl, data.squared_norms(variant)[rows],
                         n_resamples=s.n_resamples, seed=s.seed)
    assert result.measurement is not None
    return result.measurement


def _inner_pmi(data: WordData, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    x, y, pmi = data.pairs()
    vectors = data.transformed(variant)
    inner = np.einsum("ij,ij->i", vectors[x], vectors[y])
    result = correlation(pmi, inner, clusters=x, n_resamples=s.n_resamples, seed=s.seed)
    assert result.measurement is not None
    return replace(result.measurement, settings={**result.measurement.settings,
                                                 "pairs": int(x.size)})


def _self_pmi(data: WordData, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    """Slope of ‖e‖² on IC over the slope of ⟨e(x), e(y)⟩ on PMI; words resampled jointly."""
    from normtest.stats import bootstrap

    x, y, pmi = data.pairs()
    vectors = data.transformed(variant)
    inner = np.einsum("ij,ij->i", vectors[x], vectors[y])
    norms, ic = data.squared_norms(variant), data.information
    n_words = len(data.words)
    statistic = "self_pmi_slope_ratio"
    if x.size < 10 or n_words < 10:
        return Measurement.not_estimable(statistic, int(x.size), "slope ratio",
                                         f"only {x.size} co-occurring pairs", seed=s.seed)

    def moments(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Columns 1, a, b, ab, a² of a and b centred by their plain means (small cancellation)."""
        a, b = a - a.mean(), b - b.mean()
        return np.column_stack([np.ones_like(a), a, b, a * b, a * a])

    def slope(w: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """Weighted OLS slope of b on a per row of weights, from one matrix product."""
        total, sa, sb, sab, saa = (w @ columns).T
        cov = sab - sa * sb / total
        var = saa - sa * sa / total
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(var > 1e-12 * saa, cov / var, np.nan)

    words_columns, pairs_columns = moments(ic, norms), moments(pmi, inner)

    def ratio(w_words: np.ndarray) -> np.ndarray:
        diagonal = slope(w_words, words_columns)
        w_pairs = w_words[:, x] * w_words[:, y]  # a pair is drawn as often as both its words
        off = slope(w_pairs, pairs_columns)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(off != 0, diagonal / off, np.nan)

    return bootstrap.unit_measurement(statistic, ratio, n_words, n_words,
                                      "slope ratio, bootstrap over words", s.n_resamples, s.seed,
                                      s.alpha, settings={"pairs": int(x.size)})


def _centered(data: WordData, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    """‖Σ p(w)e(w)‖ / √(Σ p(w)‖e(w)‖²), bootstrap over words (weights × p)."""
    from normtest.stats import bootstrap

    vectors = data.transformed(variant)
    p = data.probabilities / data.probabilities.sum()
    squared = np.einsum("ij,ij->i", vectors, vectors)

    def ratio(w: np.ndarray) -> np.ndarray:
        weights = w * p
        weights = weights / weights.sum(axis=1, keepdims=True)
        mean = weights @ vectors
        return np.sqrt(np.einsum("rd,rd->r", mean, mean) / (weights @ squared))

    return bootstrap.unit_measurement(
        "centering_ratio", ratio, int(p.size), int(p.size),
        "weighted-mean norm over weighted RMS norm, bootstrap over words", s.n_resamples, s.seed,
        s.alpha)


def _cer_linear(data: PrefixData, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    key = (variant["composition"], variant.get("representation", "last"))
    if key not in data._growth:  # shared with cer.monotone: one growth analysis per variant
        lengths, values, groups, _ = data.curves(variant)
        result = linear_growth(lengths, values, groups, n_resamples=s.n_resamples, seed=s.seed)
        assert result.measurement is not None
        data._growth[key] = result.measurement
    return data._growth[key]


def _cer_monotone(data: PrefixData, variant: Mapping[str, str], s: AuditSettings) -> Measurement:
    growth = _cer_linear(data, variant, s)
    return growth.components.get("monotonicity", growth)


def _cer_fixed_point(data: PrefixData, variant: Mapping[str, str],
                     s: AuditSettings) -> Measurement:
    lengths, values, groups, vectors = data.curves(variant)
    result = fixed_point(lengths, values, groups, vectors, n_resamples=s.n_resamples,
                         seed=s.seed)
    assert result.measurement is not None
    return result.measurement


def _norm_surprisal(data: TextData, variant: Mapping[str, str],
                    s: AuditSettings) -> Measurement:
    """Spearman ρ of ‖e(t)‖² with IC_LM(t) over sentences, documents resampled as clusters."""
    result = correlation(data.information, data.squared_norms(variant), clusters=data.documents,
                         n_resamples=s.n_resamples, seed=s.seed)
    assert result.measurement is not None
    return replace(result.measurement, settings={**result.measurement.settings,
                                                 "surprisal_model": data.surprisal_model})


#: Text measurement functions by claim id.
TEXT_MEASURES: dict[str, TextMeasure] = {"text.norm_surprisal": _norm_surprisal}

#: Prefix (CER) measurement functions by claim id.
PREFIX_MEASURES: dict[str, PrefixMeasure] = {
    "cer.monotone": _cer_monotone,
    "cer.linear": _cer_linear,
    "cer.fixed_point": _cer_fixed_point,
}

#: Measurement functions by claim id (word and conditions suites in this version).
MEASURES: dict[str, Measure] = {
    "word.norm_ic": _norm_ic,
    "word.norm_ic.multitoken": _norm_ic_multitoken,
    "word.norm_ic.partial": _norm_ic_partial,
    "word.norm_kl": _norm_kl,
    "cond.inner_pmi": _inner_pmi,
    "cond.self_pmi": _self_pmi,
    "cond.centered": _centered,
}


#: Variant scopes: the values each axis keeps (an axis not named keeps all its values).
#: ``standard`` is the model's output (last layer) under the raw geometry, Zipfian centring and
#: Zipfian whitening — the transforms the paper and its companions discuss — with every
#: composition; ``full`` adds the input embedding rows and the uniform-weight transforms.
SCOPES: dict[str, dict[str, tuple[str, ...]]] = {
    "standard": {"representation": ("last",),
                 "transform": ("raw", "center_zipf", "whiten_zipf")},
    "full": {},
}


def applicable_axes(claim: Claim, family: str, states: Sequence[str] = (),
                    scope: str = "full") -> dict[str, tuple[str, ...]]:
    """The claim's variant axes that apply to a model family, its special states and a scope.

    Whole-word (static) models have no subword composition and one representation; the model
    states ``cls``/``eos`` apply only where the model produces them.
    """
    if scope not in SCOPES:
        raise NormtestError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
    axes = {name: tuple(v for v in values if v in SCOPES[scope].get(name, values))
            for name, values in claim.axes.items()}
    if family == "static":
        axes.pop("composition", None)
        axes.pop("representation", None)
    else:
        axes["composition"] = tuple(c for c in axes.get("composition", ())
                                    if c not in ("cls", "eos") or c in states)
    return axes


def variants(claim: Claim, family: str, states: Sequence[str] = (),
             scope: str = "full") -> list[dict[str, str]]:
    """Every variant of a claim for a model family (the product of its applicable axes)."""
    axes = applicable_axes(claim, family, states, scope)
    names = list(axes)
    return [dict(zip(names, combo, strict=True))
            for combo in itertools.product(*(axes[n] for n in names))]


def skip_reason(claim: Claim, adapter: Any) -> str | None:
    """Why the audit cannot run ``claim`` on ``adapter`` (None: it can)."""
    if claim.id not in MEASURES and claim.id not in PREFIX_MEASURES \
            and claim.id not in TEXT_MEASURES:
        return "this version of normtest does not measure this claim yet"
    if claim.needs and not any(all(supports(adapter, c) for c in option)
                               for option in claim.needs):
        return f"the model lacks the capabilities it needs ({claim.needs_text()})"
    if claim.suite in ("text", "cer") and model_family(adapter) == "static":
        return ("whole-word (static) vectors have no composition axis in this version; the text "
                "and prefix claims need a contextual model")
    return None


def run_audit(
    adapter: Any,
    claim_ids: Iterable[str] | None = None,
    suite: str = "all",
    settings: AuditSettings | None = None,
    words: Sequence[str] | None = None,
    source: Any | None = None,
) -> Report:
    """Audit ``adapter`` on the chosen claims and return one report (Holm within each claim).

    ``words`` replaces the default word sample; ``source`` the default frequency source.
    A run in which no claim could run raises NormtestError (never an empty green report).
    """
    from threadpoolctl import threadpool_limits

    # numpy's BLAS threads and torch's OpenMP threads spin against each other in one process:
    # a 1000×384 SVD took 4.6 s after a forward pass instead of 0.12 s on one BLAS thread.
    with threadpool_limits(limits=1, user_api="blas"):
        return _run_audit(adapter, claim_ids, suite, settings or AuditSettings(), words, source)


def _run_audit(adapter: Any, claim_ids: Iterable[str] | None, suite: str,
               settings: AuditSettings, words: Sequence[str] | None,
               source: Any | None) -> Report:
    family = model_family(adapter)
    chosen = [get(i) for i in claim_ids] if claim_ids else claims(suite)
    encoding = None
    if settings.corpus:  # a corpus in another encoding is refused before any work
        from normtest.information.corpus import corpus_encoding

        encoding = corpus_encoding(list(settings.corpus))
    data = AuditData(adapter, settings, family, words, source)
    states = tuple(getattr(adapter, "states", ()))
    results: list[Result] = []
    for claim in chosen:
        reason = skip_reason(claim, adapter)
        if reason is not None:
            results.append(Result(Verdict.SKIPPED, reason, claim=claim.id,
                                  criterion=claim.criterion))
            continue
        family_results = []
        for variant in variants(claim, family, states, settings.scope):
            expected = claim.expectation(family, variant)
            try:
                if claim.id in PREFIX_MEASURES:
                    measurement = PREFIX_MEASURES[claim.id](data.prefix(), variant, settings)
                elif claim.id in TEXT_MEASURES:
                    measurement = TEXT_MEASURES[claim.id](data.text(), variant, settings)
                else:
                    measurement = MEASURES[claim.id](data.word(), variant, settings)
            except NormtestError as exc:
                family_results.append(Result(Verdict.ERROR, str(exc), claim=claim.id,
                                             variant=variant, expected=expected))
                continue
            judged = Result.judged(measurement, claim.criterion.with_alpha(settings.alpha))
            family_results.append(replace(judged, claim=claim.id, variant=variant,
                                          expected=expected,
                                          details={"reconstructed": claim.reconstructed}))
        results.extend(adjust(family_results, "holm"))
    ran = [r for r in results if r.verdict not in (Verdict.SKIPPED, Verdict.ERROR)]
    if not ran:
        raise nothing_ran("this model", [(str(r.claim), r.reason) for r in results])
    model = {"name": adapter.name, "revision": adapter.revision, "family": family,
             "dim": adapter.dim}
    extra: dict[str, Any] = {}
    if data._word is not None:
        extra.update(words=len(data._word.words), dropped_words=data._word.dropped)
    if data._prefix is not None:
        extra.update(documents=len(data._prefix.plans), prefix_step=settings.prefix_step,
                     max_prefix=settings.max_prefix)
    if data._text is not None:
        extra.update(sentences=len(data._text.sentences),
                     surprisal_model=data._text.surprisal_model)
    if settings.corpus:
        extra.update(corpus=list(settings.corpus))
    if encoding is not None:
        extra.update(corpus_bytes=encoding.n_bytes,
                     corpus_replaced_bytes=encoding.n_replaced_bytes)
    extra.update(scope=settings.scope)
    return Report(results=results, model=model,
                  provenance=provenance(seed=settings.seed, n_resamples=settings.n_resamples,
                                        alpha=settings.alpha, **extra),
                  data=plot_data(data, results))


def variant_key(variant: Mapping[str, str]) -> str:
    """The bracket part of a result id: ``composition=sqrt_n,transform=raw``."""
    return ",".join(f"{k}={v}" for k, v in variant.items())


def _rounded(values: np.ndarray) -> list[float]:
    """Six significant digits: enough for a plot, a third of the JSON of full doubles."""
    return [float(f"{v:.6g}") for v in np.asarray(values, dtype=np.float64)]


def plot_data(data: AuditData, results: Sequence[Result]) -> dict[str, Any]:
    """What the report's plots need (see :mod:`normtest.report`), from what was measured."""
    out: dict[str, Any] = {}
    measured: dict[str | None, list[Mapping[str, str]]] = {r.claim: [] for r in results}
    for r in results:
        if r.measurement is not None:
            measured[r.claim].append(r.variant)
    word = data._word
    if word is not None and measured.get("word.norm_ic"):
        out["words"] = {
            "words": list(word.words),
            "information": _rounded(word.information),
            "token_counts": [int(c) for c in word.token_counts()],
            "squared_norms": {variant_key(v): _rounded(word.squared_norms(v))
                              for v in measured["word.norm_ic"]},
        }
    prefix = data._prefix
    if prefix is not None and prefix._curves:
        curves = {}
        for (composition, representation), (lengths, values, groups, _) in prefix._curves.items():
            key = variant_key({"composition": composition, "representation": representation})
            curves[key] = {"lengths": [int(x) for x in lengths], "squared_norms": _rounded(values),
                           "document": [int(g) for g in groups]}
        out["prefixes"] = {"documents": [p.document.doc_id for p in prefix.plans],
                           "curves": curves}
    text = data._text
    if text is not None and text._vectors:
        out["texts"] = {
            "information": _rounded(text.information),
            "document": [int(d) for d in text.documents],
            "squared_norms": {variant_key({"composition": c, "representation": r}): _rounded(v)
                              for (c, r), v in text._vectors.items()},
        }
    return out
