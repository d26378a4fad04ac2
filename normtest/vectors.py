"""The vectors stage: the data every measurement reads, built once per audit and shared.

Three kinds of data, each built on first request (docs/audit.md explains the sampling):

- :class:`WordData` (``"words"``): the word sample, its information content, each word's vector
  under every composition, representation and (cross-fitted) geometry transform, the reference
  corpus's PMI pairs and KL(w);
- :class:`PrefixData` (``"prefixes"``): documents, their prefix-length grids in model tokens, the
  curve s(L) = ‖e(prefix_L)‖² per variant and its growth analysis;
- :class:`TextData` (``"texts"``): sentences, their surprisal under a causal LM, and text vectors.

A claim names the kind it reads (``Claim.data``); :class:`AuditData` builds it for the first claim
that asks and hands the same object to the rest. Nothing here knows a claim.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from normtest.adapters.protocol import Capability, prefix_vectors_of, supports
from normtest.catalogue import DATA
from normtest.errors import NormtestError
from normtest.memo import ByteMemo
from normtest.result import Measurement
from normtest.settings import AuditSettings

if TYPE_CHECKING:
    from normtest.adapters.protocol import (
        Layer,
        LogProbModel,
        ModelAdapter,
        SpecialStateModel,
        TextVectorModel,
        TokenVectorModel,
        WordVectorModel,
    )

__all__ = ["AuditData", "PrefixData", "TextData", "WordData", "surprisal_model",
           "text_vectors"]


def as_layer(representation: str) -> Layer:
    """A variant's representation as an adapter's ``layer`` argument: ``"input"``, ``"last"``
    or a layer index."""
    if representation in ("input", "last"):
        return cast("Layer", representation)
    try:
        return int(representation)
    except ValueError:
        raise NormtestError(
            f"representation must be 'input', 'last' or a layer number, got {representation!r}"
        ) from None


def text_vectors(adapter: ModelAdapter, texts: Sequence[str]) -> np.ndarray:
    """A sentence encoder's vectors of ``texts`` (float64), refused when every vector has the
    same length: a model that normalises its output (a sentence-transformers ``Normalize``
    module, ``normalize_embeddings=True``) leaves the norm no information to carry."""
    vectors = np.asarray(cast("TextVectorModel", adapter).text_vectors(list(texts)),
                         dtype=np.float64)
    if vectors.shape != (len(texts), adapter.dim):
        raise NormtestError(
            f"model {adapter.name!r} returned vectors of shape {vectors.shape} for {len(texts)} "
            f"texts; text_vectors must return one row of {adapter.dim} numbers per text"
        )
    if not np.isfinite(vectors).all():
        raise NormtestError(f"model {adapter.name!r} returned NaN or infinite vectors")
    norms = np.einsum("ij,ij->i", vectors, vectors)
    if norms.size >= 3 and np.ptp(norms) <= 1e-6 * max(float(norms.mean()), 1e-12):
        raise NormtestError(
            f"model {adapter.name!r} returns vectors of one length (every ‖e‖² = "
            f"{norms.mean():.4g}): it normalises its output, so the norm carries no information. "
            "Audit it without the normalisation (sentence-transformers: drop the Normalize "
            "module and pass normalize_embeddings=False; normtest does both for a folder)"
        )
    return vectors


#: Bytes of the words' token vectors kept (per representation), and of transformed word vectors
#: (per variant: 16 of the 27 of a default audit, 5,000 words × 384 dimensions), each: the first
#: ones asked for are kept (the claims ask in one order, again and again).
TRANSFORMED_BYTES = 256 << 20


@dataclass
class WordData:
    """The word sample, its information content, and vectors per variant, computed once."""

    adapter: ModelAdapter
    settings: AuditSettings
    family: str
    words: list[str] = field(default_factory=list)
    information: np.ndarray = field(default_factory=lambda: np.empty(0))
    dropped: dict[str, int] = field(default_factory=dict)
    #: how many words the sample held before words without an IC or a vector were dropped
    requested: int = 0
    #: a population of another word data's words (:meth:`one_token`): (that data, its rows)
    _parent: tuple[WordData, np.ndarray] | None = None
    _one_token: WordData | None = None
    _reliability: Any = None
    _vectors: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    _token_counts: np.ndarray | None = None
    _corpus: Any = None
    _pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    _kl: tuple[np.ndarray, np.ndarray] | None = None
    _norms: dict[tuple[tuple[str, str], ...], np.ndarray] = field(default_factory=dict)
    _fits: dict[tuple[str, str, str], list[Any]] = field(default_factory=dict)
    #: the words' token vectors per representation: every composition composes the same ones
    _tokens: ByteMemo = field(default_factory=lambda: ByteMemo(TRANSFORMED_BYTES, "keep"))
    #: transformed vectors per variant: every claim over the words asks for them in turn
    _transformed: ByteMemo = field(default_factory=lambda: ByteMemo(TRANSFORMED_BYTES, "keep"))

    @classmethod
    def build(cls, adapter: ModelAdapter, settings: AuditSettings, family: str,
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
        # static vectors, and a sentence encoder that knows only some keys (precomputed vectors),
        # say which words they represent; an open-vocabulary encoder represents every word
        if family == "static" or (family == "sentence"
                                  and callable(getattr(adapter, "represents", None))):
            known = np.asarray(cast("WordVectorModel", adapter).represents(kept), dtype=np.bool_)
            dropped["no vector"] = int((~known).sum())
            kept = [w for w, k in zip(kept, known, strict=True) if k]
            values = values[known]
        if not kept:
            raise NormtestError(
                "no word of the sample has both an IC and a vector; check the model and sample"
            )
        return cls(adapter, settings, family, kept, values, dropped, len(sample))

    @property
    def coverage(self) -> float:
        """The share of the requested sample the data keep (words with an IC and a vector)."""
        return len(self.words) / self.requested if self.requested else 1.0

    def rows(self, population: str = "all") -> np.ndarray:
        """Row indices of a word population: ``all``, ``one_token`` (words the model keeps as
        one token: every word of a whole-word model) or ``multitoken`` (two or more)."""
        counts = self.token_counts()
        if population == "all":
            return np.arange(len(self.words))
        if population == "one_token":
            return np.flatnonzero(counts == 1)
        if population == "multitoken":
            return np.flatnonzero(counts >= 2)
        raise NormtestError(
            f"unknown word population {population!r}; use all, one_token or multitoken"
        )

    def one_token(self) -> WordData:
        """The words the model keeps as one token, as word data of their own: a word's vector
        is its token's under every composition (all compositions of one vector return it), so
        nothing measured on them depends on the composition; the transforms are fitted, and
        cross-fitted, on these words alone, and their pairs are the pairs of two such words.
        A whole-word model's data are their own one-token population."""
        if self._parent is not None or self.family == "static" \
                or bool((self.token_counts() == 1).all()):
            return self
        if self._one_token is None:
            rows = self.rows("one_token")
            if rows.size == 0:
                raise NormtestError(
                    f"no word of the sample is a single token of {self.adapter.name}; the "
                    "claims over one-token words need some (a larger --words)"
                )
            self._one_token = WordData(
                self.adapter, self.settings, self.family, [self.words[i] for i in rows],
                self.information[rows], dict(self.dropped), self.requested, _parent=(self, rows),
                _token_counts=np.ones(rows.size, dtype=np.intp))
        return self._one_token

    @property
    def probabilities(self) -> np.ndarray:
        """Unigram weights p(w) = exp(−IC(w)) (renormalised by the transforms)."""
        return np.exp(-self.information)

    def token_counts(self) -> np.ndarray:
        """Number of model tokens of each word (1 for whole-word models, and for a sentence
        encoder that cannot tokenize)."""
        if self._token_counts is None:
            if self.family == "static" or not (
                    callable(getattr(self.adapter, "word_token_counts", None))
                    or callable(getattr(self.adapter, "word_tokens", None))):
                self._token_counts = np.ones(len(self.words), dtype=np.intp)
            elif callable(batched := getattr(self.adapter, "word_token_counts", None)):
                self._token_counts = np.asarray(batched(self.words), dtype=np.intp)  # one call
            else:
                tokens = cast("TokenVectorModel", self.adapter)
                self._token_counts = np.array([len(tokens.word_tokens(w)) for w in self.words],
                                              dtype=np.intp)
        return self._token_counts

    def vectors(self, composition: str, representation: str) -> np.ndarray:
        """Word vectors for a composition and representation (float64, one row per word)."""
        if self._parent is not None:  # one-token words: every composition is the token itself
            parent, rows = self._parent
            key = ("token", representation)
            if key not in self._vectors:
                self._vectors[key] = parent.vectors("first", representation)[rows]
            return self._vectors[key]
        key = (composition, representation)
        if key not in self._vectors:
            if self.family == "static":
                raw = np.asarray(cast("WordVectorModel", self.adapter).word_vectors(self.words),
                                 dtype=np.float64)
            elif self.family == "sentence":
                raw = text_vectors(self.adapter, self.words)
            else:
                from normtest.geometry.compose import compose_batch

                batch = self._tokens.get(representation)
                if batch is None:  # one forward pass per representation, when it fits
                    batch = cast("TokenVectorModel", self.adapter).token_vectors(
                        self.words, layer=as_layer(representation), words=True)
                    self._tokens.put(representation, batch, np.asarray(batch.vectors).nbytes)
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
        from normtest.geometry.transforms import make_transform

        composition = "token" if self._parent is not None else variant.get("composition",
                                                                            "whole")
        vectors = self.vectors(composition, variant.get("representation", "last"))
        transform = variant.get("transform", "raw")
        if transform == "raw":
            return vectors
        key = (composition, variant.get("representation", "last"), transform)
        out = self._transformed.get(key)
        if out is not None:
            return out
        fold, p = self.folds(), self.probabilities
        if key not in self._fits:  # fitted once per variant (an SVD per half when whitening)
            self._fits[key] = [make_transform(transform).fit(vectors[fold != f], p[fold != f])
                               for f in (0, 1)]
        out = np.empty_like(vectors)
        for f, fitted in enumerate(self._fits[key]):
            out[fold == f] = fitted.apply(vectors[fold == f], input_axes=True)
        out.setflags(write=False)  # shared by every later caller
        self._transformed.put(key, out, out.nbytes)
        return out

    def squared_norms(self, variant: Mapping[str, str]) -> np.ndarray:
        """‖e(w)‖² under the variant's composition, representation and transform (kept)."""
        key = tuple(sorted((k, v) for k, v in variant.items()
                           if k in ("composition", "representation", "transform")))
        if key not in self._norms:
            vectors = self.transformed(variant)
            self._norms[key] = np.einsum("ij,ij->i", vectors, vectors)
        return self._norms[key]

    def corpus(self) -> Any:
        """The reference corpus statistics: the user's corpus counted for the sample words (in
        blocks, on the settings' executor; read from the store when counted before), else the
        Wikipedia sample."""
        if self._parent is not None:
            return self._parent[0].corpus()
        if self._corpus is None:
            from normtest import progress
            from normtest.information import corpus_counts, wiki_sample

            s = self.settings
            with progress.task("counting the reference corpus (PMI, KL)"):
                self._corpus = (corpus_counts(list(s.corpus), self.words, split="paragraph",
                                              executor=s.executor, workers=s.workers,
                                              ray_address=s.ray_address)
                                if s.corpus else wiki_sample())
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

    def pmi_reliability(self) -> Any:
        """The split-half reliability of the reference corpus's PMI over this data's pairs
        (:func:`~normtest.information.pmi_reliability`, the audit's seed), computed once."""
        if self._reliability is None:
            from normtest import progress
            from normtest.information import pmi_reliability

            x, y, _ = self.pairs()
            pairs = [(self.words[a], self.words[b]) for a, b in zip(x, y, strict=True)]
            with progress.task("measuring PMI's split-half reliability"):
                self._reliability = pmi_reliability(
                    self.corpus(), pairs, min_count=self.settings.min_pair_count,
                    seed=self.settings.seed)
        return self._reliability

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
    """CER documents, their prefix grids (in model tokens; in words for a sentence encoder,
    which is given each prefix as a text), and prefix vectors per variant."""

    adapter: ModelAdapter
    plans: list[Any]
    unit: str = "model tokens"
    #: the poolings the audit will ask for (computed together with the first one asked)
    poolings: tuple[str, ...] = ()
    _curves: dict[tuple[str, str], tuple[np.ndarray, ...]] = field(default_factory=dict)
    _growth: dict[tuple[str, str], Measurement] = field(default_factory=dict)

    @classmethod
    def build(cls, adapter: ModelAdapter, settings: AuditSettings,
              family: str = "encoder") -> PrefixData:
        """The default documents with a non-empty prefix grid for this model."""
        from normtest.information import plan_prefixes, plan_word_prefixes
        from normtest.information.documents import on_token_grid

        documents = settings.documents_for(settings.documents)
        words = family == "sentence" or settings.prefix_unit == "words"
        if family == "sentence":
            count, most = getattr(adapter, "count_tokens", None), getattr(adapter, "max_tokens",
                                                                         None)
            limit = (count, int(most)) if callable(count) and most else None
            planned = plan_word_prefixes(documents, settings.prefix_step, settings.max_prefix,
                                         token_limit=limit)
        elif words:  # the same word grid for every tokenizer, read as each prefix's tokens
            planned = on_token_grid(adapter, plan_word_prefixes(
                documents, settings.prefix_step, settings.max_prefix))
        else:
            planned = plan_prefixes(adapter, documents, settings.prefix_step,
                                    settings.max_prefix)
        plans = [p for p in planned if p.lengths.size >= 2]
        return cls(adapter, plans, "words" if words else "model tokens")

    def growth(self, variant: Mapping[str, str], settings: AuditSettings) -> Measurement:
        """How s(L) grows for one variant (:func:`~normtest.stats.measure_linear_growth`),
        analysed once and shared by every claim that reads it (``cer.linear``)."""
        from normtest.stats import measure_linear_growth

        key = (variant["composition"], variant.get("representation", "last"))
        if key not in self._growth:
            lengths, values, groups, _ = self.curves(variant)
            self._growth[key] = measure_linear_growth(lengths, values, groups,
                                                      n_resamples=settings.resamples,
                                                      seed=settings.seed, alpha=settings.alpha)
        return self._growth[key]

    def curves(self, variant: Mapping[str, str]) -> tuple[np.ndarray, ...]:
        """(lengths, squared norms, document ids, vectors) of every prefix, for one variant."""
        key = (variant["composition"], variant.get("representation", "last"))
        if key not in self._curves:
            from normtest.cache import CachedAdapter

            tokens = [p.lengths if p.tokens is None else p.tokens for p in self.plans]
            if self.unit == "words" and self.plans and self.plans[0].tokens is None:
                # a sentence encoder: every prefix text in one call
                from normtest.information import word_prefix

                texts = [word_prefix(p.document.text, int(n)) for p in self.plans
                         for n in p.lengths]
                flat = text_vectors(self.adapter, texts)
                ends = np.cumsum([p.lengths.size for p in self.plans])[:-1]
                matrices = list(np.split(flat, ends))
            elif isinstance(self.adapter, CachedAdapter):  # every pooling asked for at once
                matrices = self.adapter.prefix_vectors_many(
                    [p.document.text for p in self.plans], tokens,
                    key[0], layer=as_layer(key[1]), also=self.poolings)
            else:  # encoders batch every document's prefixes by length
                matrices = prefix_vectors_of(self.adapter, [p.document.text for p in self.plans],
                                             tokens, key[0], layer=as_layer(key[1]))
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


def surprisal_model(name: str, audited: ModelAdapter) -> LogProbModel:
    """The causal LM that gives sentences their IC, read through the audited model's cache.

    The audited adapter's :class:`~normtest.cache.EmbeddingCache` is shared. What the audit
    reads first is the surprisal store (:func:`~normtest.information.stored_surprisal`): a text
    set this model scored for any earlier audit, of any model, is not scored again.
    """
    from normtest import progress
    from normtest.cache import CachedAdapter, default_cache_dir

    with progress.task(f"loading the surprisal model {name}"):
        lm = _loaded_surprisal_model(name, str(default_cache_dir()))
    if not isinstance(audited, CachedAdapter):
        return lm
    cached = CachedAdapter(lm, audited.cache)
    remote = audited.remote
    if remote is not None and hasattr(remote, "for_model"):  # on the same workers
        cached.remote = remote.for_model((name, {"cache_dir": str(default_cache_dir())}))
    return cached


@dataclass
class TextData:
    """Sentences of real documents, their LM surprisal, and text vectors per variant."""

    adapter: ModelAdapter
    sentences: list[str]
    documents: np.ndarray
    information: np.ndarray
    surprisal_model: str
    _vectors: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    _tokens: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, adapter: ModelAdapter, settings: AuditSettings) -> TextData:
        """Sample sentences; their IC from the model itself if it is a causal LM, else from
        ``settings.surprisal_model``."""
        from normtest.information import document_sentences, stored_surprisal

        own = getattr(adapter, "texts", None)
        if own is not None:  # precomputed text vectors: their own texts, each its own cluster
            pairs = list(enumerate(own))
        else:
            documents = settings.documents_for(settings.text_documents)
            pairs = document_sentences(documents, settings.sentences)
        if not pairs:
            raise NormtestError("the documents hold no sentence of 5 to 40 words")
        lm = cast("LogProbModel", adapter) if supports(adapter, Capability.TOKEN_LOGPROBS) \
            else surprisal_model(settings.surprisal_model, adapter)
        texts = [t for _, t in pairs]
        return cls(adapter, texts, np.array([d for d, _ in pairs], dtype=np.intp),
                   stored_surprisal(lm, texts).information, lm.name)

    def squared_norms(self, variant: Mapping[str, str]) -> np.ndarray:
        """‖e(t)‖² of each sentence under the variant's pooling and representation."""
        from normtest.geometry.compose import MODEL_STATES, compose_batch

        key = (variant["composition"], variant.get("representation", "last"))
        if key not in self._vectors:
            if supports(self.adapter, Capability.TEXT_VECTORS) \
                    and not supports(self.adapter, Capability.TOKEN_VECTORS):
                v = text_vectors(self.adapter, self.sentences)
            elif key[0] in MODEL_STATES:
                v = cast("SpecialStateModel", self.adapter).special_states(
                    self.sentences, key[0], layer=as_layer(key[1]))
            else:
                if key[1] not in self._tokens:  # one forward pass per representation
                    self._tokens[key[1]] = cast("TokenVectorModel", self.adapter).token_vectors(
                        self.sentences, layer=as_layer(key[1]))
                batch = self._tokens[key[1]]
                v = compose_batch(np.asarray(batch.vectors, dtype=np.float64), batch.offsets,
                                  key[0])
            v = np.asarray(v, dtype=np.float64)
            self._vectors[key] = np.einsum("ij,ij->i", v, v)
        return self._vectors[key]


@dataclass
class AuditData:
    """Everything measurements share: the word data and the prefix data, each built on demand."""

    adapter: ModelAdapter
    settings: AuditSettings
    family: str
    words: Sequence[str] | None = None
    source: Any | None = None
    #: the poolings of the prefix claims the audit runs (see PrefixData.poolings)
    prefix_poolings: tuple[str, ...] = ()
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
            self._prefix = PrefixData.build(self.adapter, self.settings, self.family)
            self._prefix.poolings = self.prefix_poolings
        return self._prefix

    def text(self) -> TextData:
        """The sentences, their surprisal and text vectors (built once)."""
        if self._text is None:
            self._text = TextData.build(self.adapter, self.settings)
        return self._text

    def get(self, kind: str) -> WordData | PrefixData | TextData:
        """The data a measurement asked for by name (``words``, ``prefixes``, ``texts``)."""
        if kind == "words":
            return self.word()
        if kind == "prefixes":
            return self.prefix()
        if kind == "texts":
            return self.text()
        raise NormtestError(f"unknown data {kind!r}; a claim reads one of {DATA}")

    def built(self) -> dict[str, WordData | PrefixData | TextData]:
        """The data built so far, by name (what the report's provenance and plots describe)."""
        return {kind: value for kind, value in (("words", self._word),
                                                ("prefixes", self._prefix),
                                                ("texts", self._text)) if value is not None}
