"""The word data (``"words"``): the word sample, its information content, each word's vector under
every composition, representation and (cross-fitted) geometry transform, the reference corpus's
PMI pairs and KL(w), computed once per audit and shared."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from normtest.adapters.protocol import optional_method
from normtest.base.byte_memo import ByteMemo
from normtest.base.settings import AuditSettings
from normtest.data.common import TRANSFORMED_BYTES, as_layer, each_variant, rounded, text_vectors
from normtest.data.information.frequency import WordfreqSource
from normtest.data.information.samples import default_word_sample
from normtest.errors import NormtestError
from normtest.geometry.transforms import make_transform
from normtest.stats.bootstrap import digest
from normtest.verdict.result import variant_key

if TYPE_CHECKING:
    from normtest.adapters.protocol import ModelAdapter, TokenVectorModel, WordVectorModel

__all__ = ["WordData"]


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
    #: a view of another word data's words (:meth:`view`, :meth:`one_token`): that data, its rows
    _parent: tuple[WordData, np.ndarray] | None = None
    #: how a view's vectors relate to its parent's: ``token`` (one-token words: a word's vector
    #: is its token's whatever the composition; transforms fitted on the view), ``rows`` (the
    #: parent's vectors and transformed vectors at the view's rows: the same geometry) or
    #: ``refit`` (the parent's vectors at its rows, transforms fitted on the view with its IC)
    _geometry: str = ""
    _one_token: WordData | None = None
    _reliability: Any = None
    _vectors: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    _token_counts: np.ndarray | None = None
    _corpus: Any = None
    _pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    _kl: tuple[np.ndarray, np.ndarray] | None = None
    _norms: dict[tuple[tuple[str, str], ...], np.ndarray] = field(default_factory=dict)
    _fits: dict[tuple[str, str, str], list[Any]] = field(default_factory=dict)
    #: inner products per variant and pair set (:meth:`inner_products`)
    _inner: dict[tuple[tuple[str, str, str], str], np.ndarray] = field(default_factory=dict)
    #: the words' token vectors per representation: every composition composes the same ones
    _tokens: ByteMemo = field(default_factory=lambda: ByteMemo(TRANSFORMED_BYTES, "keep"))
    #: transformed vectors per variant: every claim over the words asks for them in turn
    _transformed: ByteMemo = field(default_factory=lambda: ByteMemo(TRANSFORMED_BYTES, "keep"))

    # -- what the report keeps of it (the data-kind registry, normtest.data.kinds) ------
    def provenance(self, settings: AuditSettings) -> dict[str, Any]:
        """What the report's provenance says of the sample (``settings``: the audit's)."""
        return {"words": len(self.words), "words_requested": self.requested,
                "dropped_words": self.dropped}

    def plot_data(self, variants: Sequence[Mapping[str, str]],
                  pair_variants: Sequence[Mapping[str, str]] = ()) -> dict[str, Any] | None:
        """The report's ``data["words"]``: the words, their IC and token counts, and the squared
        norms of each measured variant (None when no variant was measured); with
        ``pair_variants`` (the variants of a claim of inner products against PMI), the
        one-token words' co-occurring pairs (``pairs``: each pair's PMI and its inner product
        under each variant)."""
        if not variants and not pair_variants:
            return None
        out: dict[str, Any] = {
            "words": list(self.words), "information": rounded(self.information),
            "token_counts": [int(c) for c in self.token_counts()],
            "squared_norms": {variant_key(v): rounded(self.squared_norms(v)) for v in variants}}
        if pair_variants:
            try:
                single = self.one_token()
                x, y, pmi = single.pairs()
            except NormtestError:  # no pairs: the rows that read them say why
                return out
            out["pairs"] = {
                "pmi": rounded(pmi),
                "inner_products": {variant_key(v): rounded(single.inner_products(v, x, y))
                                   for v in pair_variants}}
        return out

    @staticmethod
    def fingerprint(section: Mapping[str, Any]) -> Any:
        """What identifies the sample in the report's ``data["words"]`` (its digest pairs two
        reports word by word)."""
        return [list(section["words"]), rounded(section.get("information", []))]

    @classmethod
    def build(cls, adapter: ModelAdapter, settings: AuditSettings, family: str,
              words: Sequence[str] | None = None, source: Any | None = None) -> WordData:
        """Draw (or take) the sample, keep words with an IC the model can represent.

        ``source`` is any frequency source with ``information_content(words)`` (default:
        wordfreq English); words it does not know are dropped and counted.
        """

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
        if self._geometry == "token" or self.family == "static" \
                or bool((self.token_counts() == 1).all()):
            return self
        if self._one_token is None:
            rows = self.rows("one_token")
            if rows.size == 0:
                raise NormtestError(
                    f"no word of the sample is a single token of {self.adapter.name}; the "
                    "claims over one-token words need some (a larger --words)"
                )
            if self._parent is not None and self._geometry == "rows":
                # a view in its parent's geometry keeps the parent's one-token geometry too:
                # its one-token words are rows of the parent's one-token data (no refit)
                parent, kept = self._parent
                single = parent.one_token()
                own = single._parent[1] if single._parent is not None else \
                    np.arange(len(single.words))
                at = np.searchsorted(own, kept[rows])
                self._one_token = single._view(at, self.information[rows], self.settings,
                                               "rows")
            else:
                self._one_token = self._view(rows, self.information[rows], self.settings,
                                             "token")
        return self._one_token

    def view(self, rows: np.ndarray, *, information: np.ndarray | None = None,
             settings: AuditSettings | None = None, refit: bool = False) -> WordData:
        """Word data of some of these words (``rows``), for another analysis of the same
        vectors, with ``information`` (their IC from another source) and ``settings`` (another
        minimum pair count: its pairs and KL follow them) when given. The view keeps this
        data's geometry (its transformed vectors at those rows), or with ``refit`` fits the
        transforms again on its own words and the weights its IC gives."""
        rows = np.asarray(rows, dtype=np.intp)
        ic = self.information[rows] if information is None else np.asarray(information,
                                                                            dtype=np.float64)
        return self._view(rows, ic, settings or self.settings, "refit" if refit else "rows")

    def _view(self, rows: np.ndarray, information: np.ndarray, settings: AuditSettings,
              geometry: str) -> WordData:
        counts = self.token_counts()[rows] if geometry != "token" else np.ones(rows.size,
                                                                                 dtype=np.intp)
        return WordData(self.adapter, settings, self.family, [self.words[i] for i in rows],
                        information, dict(self.dropped), self.requested, _parent=(self, rows),
                        _geometry=geometry, _token_counts=counts)

    @property
    def probabilities(self) -> np.ndarray:
        """Unigram weights p(w) = exp(−IC(w)) (renormalised by the transforms)."""
        return np.exp(-self.information)

    def token_counts(self) -> np.ndarray:
        """Number of model tokens of each word (1 for whole-word models, and for a sentence
        encoder that cannot tokenize)."""
        if self._token_counts is None:
            batched = optional_method(self.adapter, "word_token_counts")
            if self.family == "static" or not (
                    batched is not None or callable(getattr(self.adapter, "word_tokens", None))):
                self._token_counts = np.ones(len(self.words), dtype=np.intp)
            elif batched is not None:
                self._token_counts = np.asarray(batched(self.words), dtype=np.intp)  # one call
            else:
                tokens = cast("TokenVectorModel", self.adapter)
                self._token_counts = np.array([len(tokens.word_tokens(w)) for w in self.words],
                                              dtype=np.intp)
        return self._token_counts

    def vectors(self, composition: str, representation: str) -> np.ndarray:
        """Word vectors for a composition and representation (float64, one row per word)."""
        if self._parent is not None:  # a view: the parent's vectors at its rows
            parent, rows = self._parent
            # one-token words: every composition is the token itself
            composition = "token" if self._geometry == "token" else composition
            key = (composition, representation)
            if key not in self._vectors:
                self._vectors[key] = parent.vectors(
                    "first" if composition == "token" else composition, representation)[rows]
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

        The claims themselves read what they need of these through :meth:`squared_norms` and
        :meth:`inner_products`, which are kept per variant and compute no more than they need:
        a whole transformed sample is n × d floats, and at 4,096 dimensions only one fits the
        memo's budget.
        """
        composition, representation, transform = self._variant_parts(variant)
        if transform == "raw":
            return self.vectors(composition, representation)
        key = (composition, representation, transform)
        out = self._transformed.get(key)
        if out is not None:
            return out
        if self._parent is not None and self._geometry == "rows":  # the parent's geometry
            parent, rows = self._parent
            out = parent.transformed(variant)[rows]
        else:
            out = self._apply_fits(key, np.arange(len(self.words)))
        out.setflags(write=False)  # shared by every later caller
        self._transformed.put(key, out, out.nbytes)
        return out

    def _variant_parts(self, variant: Mapping[str, str]) -> tuple[str, str, str]:
        """The variant's (composition, representation, transform); one-token words have one
        composition, the token itself."""
        composition = "token" if self._geometry == "token" else variant.get("composition",
                                                                             "whole")
        return composition, variant.get("representation", "last"), variant.get("transform",
                                                                                "raw")

    def _apply_fits(self, key: tuple[str, str, str], rows: np.ndarray, *,
                    input_axes: bool = True) -> np.ndarray:
        """The transform of ``key`` applied to these rows of this data's own vectors, each row
        by the fit on the other half of the sample (fitted once per variant: an SVD per half
        when whitening); ``input_axes=False`` leaves whitened rows in their fit's rank space
        (the same norms, fewer columns)."""

        composition, representation, transform = key
        vectors = self.vectors(composition, representation)
        fold, p = self.folds(), self.probabilities
        if key not in self._fits:
            self._fits[key] = [make_transform(transform).fit(vectors[fold != f], p[fold != f])
                               for f in (0, 1)]
        parts = [(rows[fold[rows] == f], fitted.apply(vectors[rows[fold[rows] == f]],
                                                       input_axes=input_axes))
                 for f, fitted in enumerate(self._fits[key])]
        if not input_axes:  # rank spaces differ between the halves: only norms are returned
            out = np.empty(rows.size)
            for at, part in parts:
                out[np.searchsorted(rows, at)] = np.einsum("ij,ij->i", part, part)
            return out
        out = np.empty((rows.size, vectors.shape[1]))
        for at, part in parts:
            out[np.searchsorted(rows, at)] = part
        return out

    def prepare(self, variants: Sequence[Mapping[str, str]], threads: int = 1) -> None:
        """Make what every one of these variants reads (its vectors, its transform's fits, its
        squared norms) in this process, before rows are measured in others; a variant that
        cannot be had is left to the rows that read it. The vectors come first, from the
        adapter; the fits and norms of distinct geometries, independent of each other, are then
        made on ``threads`` threads (LAPACK and BLAS release the GIL: whitening's SVDs are most
        of an audit's work above 1,000 dimensions)."""
        self.token_counts()
        each_variant(variants, lambda v: self.vectors(*self._variant_parts(v)[:2]))
        distinct = list({self._variant_parts(v): v for v in variants}.values())
        if threads > 1 and len(distinct) > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(min(threads, len(distinct))) as pool:
                list(pool.map(lambda v: each_variant([v], self.squared_norms), distinct))
        each_variant(variants, self.squared_norms)  # every key of the norms' memo

    def _at_hand(self, parts: tuple[str, str, str]) -> np.ndarray | None:
        """The whole sample's vectors of a geometry when no transform need be applied for them:
        the raw vectors, or a transformed sample the memo still holds."""
        if parts[2] == "raw":
            return self.vectors(parts[0], parts[1])
        held: np.ndarray | None = self._transformed.get(parts)
        return held

    def squared_norms(self, variant: Mapping[str, str]) -> np.ndarray:
        """‖e(w)‖² under the variant's composition, representation and transform (kept)."""
        key = tuple(sorted((k, v) for k, v in variant.items()
                           if k in ("composition", "representation", "transform")))
        if key not in self._norms:
            if self._parent is not None and self._geometry == "rows":  # the parent's geometry
                parent, rows = self._parent
                self._norms[key] = parent.squared_norms(variant)[rows]
            else:
                parts = self._variant_parts(variant)
                vectors = self._at_hand(parts)
                if vectors is not None:
                    self._norms[key] = np.einsum("ij,ij->i", vectors, vectors)
                else:  # whitened norms are the same in the fit's rank space: half the work
                    self._norms[key] = self._apply_fits(parts, np.arange(len(self.words)),
                                                        input_axes=False)
        return self._norms[key]

    def inner_products(self, variant: Mapping[str, str], x: np.ndarray,
                       y: np.ndarray) -> np.ndarray:
        """⟨e(x), e(y)⟩ for the row pairs (x, y) under the variant, kept per pair set: only the
        pairs' own words are transformed when the whole transformed sample is not at hand."""
        x, y = np.asarray(x, dtype=np.intp), np.asarray(y, dtype=np.intp)
        if self._parent is not None and self._geometry == "rows":  # the parent's geometry
            parent, rows = self._parent
            return parent.inner_products(variant, rows[x], rows[y])

        parts = self._variant_parts(variant)
        key = (parts, digest(x, y))
        if key not in self._inner:
            vectors = self._at_hand(parts)
            if vectors is not None:
                inner = np.einsum("ij,ij->i", vectors[x], vectors[y])
            else:
                used = np.unique(np.concatenate([x, y]))
                vectors = self._apply_fits(parts, used)
                inner = np.einsum("ij,ij->i", vectors[np.searchsorted(used, x)],
                                  vectors[np.searchsorted(used, y)])
            inner.setflags(write=False)
            self._inner[key] = inner
        return self._inner[key]

    def corpus(self) -> Any:
        """The reference corpus statistics: the user's corpus counted for the sample words (in
        blocks, on the settings' executor; read from the store when counted before), else the
        Wikipedia sample."""
        if self._parent is not None:
            return self._parent[0].corpus()
        if self._corpus is None:
            from normtest.base import progress
            from normtest.data.information.corpus import wiki_sample
            from normtest.data.information.scaled import corpus_counts

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
        (:func:`~normtest.data.information.pmi_reliability`, the audit's seed), computed once."""
        if self._reliability is None:
            from normtest.base import progress
            from normtest.data.information.reliability import pmi_reliability

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
