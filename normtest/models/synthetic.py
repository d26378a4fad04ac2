"""Synthetic reference models with a known answer, speaking the adapter protocol.

* :class:`JointDistribution`: a vocabulary with unigram probabilities p(x) and co-occurrence
  probabilities P(x, y), from which IC, PMI and joint information follow (docs/theory.md §2). The
  diagonal is P(x, x) = p(x) (the event "x and x" is the event x), so PMI(x, x) = IC(x) by
  construction.
* :func:`random_distribution` draws one (Zipfian unigrams, Gaussian PMI), and
  :func:`nearest_psd_pmi` moves its PMI matrix, diagonal included, to the nearest positive
  semidefinite matrix with the same diagonal, so it can be factorised exactly.
* :class:`OracleModel`: vectors with ⟨e(x), e(y)⟩ = a·PMI(x, y) + b for all x, y, the diagonal
  included: C1 and C2 hold exactly at ``noise=0``; ``noise`` adds isotropic Gaussian vectors whose
  RMS norm is ``noise`` times the RMS norm of the exact vectors.
* :class:`ShuffledNormModel`: the oracle's directions with its norms permuted among the words.
* :class:`IsotropicModel`: i.i.d. isotropic Gaussian vectors, unrelated to the distribution.
* :class:`SubwordModel`: real words split into subword tokens whose vectors make one composition
  (``sqrt_n``, ``mean`` or ``sum``) exactly faithful to a given IC: the known truth of the
  composition claims (a contextual model: its words are tokens, not rows of a vocabulary).

Every model is deterministic given its seed. Every synthetic word is a single model token, so the
token-level methods return one row per word of a whitespace-separated text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from normtest.adapters.protocol import Capability, Layer, TokenBatch, Tokenization, check_layer
from normtest.errors import NormtestError

__all__ = [
    "IsotropicModel",
    "JointDistribution",
    "OracleModel",
    "ShuffledNormModel",
    "SubwordModel",
    "factor_gram",
    "make_oracle",
    "nearest_psd_pmi",
    "random_distribution",
]

FloatArray = NDArray[np.float64]

#: Relative tolerance for the co-occurrence bound P(x, y) ≤ min(p(x), p(y)) (rounding only).
BOUND_RTOL = 1e-9
#: Eigenvalues below ``-GRAM_RTOL · max|λ|`` make a Gram matrix not positive semidefinite.
GRAM_RTOL = 1e-9


def _word_names(n: int) -> tuple[str, ...]:
    """Synthetic word names w000, w001, … (zero-padded so they sort in index order)."""
    width = max(3, len(str(n - 1)))
    return tuple(f"w{i:0{width}d}" for i in range(n))


def _array_digest(*arrays: FloatArray) -> str:
    """Short content hash of float arrays, for revisions and cache keys."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()[:16]


@dataclass(frozen=True, eq=False)
class JointDistribution:
    """Unigram probabilities p (sum 1) and symmetric co-occurrence probabilities P(x, y)."""

    words: tuple[str, ...]
    unigram: FloatArray
    cooccurrence: FloatArray
    _index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        """Validate shapes, symmetry, the diagonal and the bound P(x, y) ≤ min(p(x), p(y))."""
        p = np.asarray(self.unigram, dtype=np.float64)
        c = np.asarray(self.cooccurrence, dtype=np.float64)
        n = len(self.words)
        if n < 2:
            raise NormtestError("a joint distribution needs at least two words")
        if len(set(self.words)) != n:
            raise NormtestError("words of a joint distribution must be distinct")
        if p.shape != (n,) or c.shape != (n, n):
            raise NormtestError(
                f"unigram must have shape ({n},) and cooccurrence ({n}, {n}); "
                f"got {p.shape} and {c.shape}"
            )
        if not (np.all(np.isfinite(p)) and np.all(np.isfinite(c))):
            raise NormtestError("probabilities must be finite")
        if np.any(p <= 0) or abs(float(p.sum()) - 1.0) > 1e-9:
            raise NormtestError("unigram probabilities must be positive and sum to 1")
        if np.any(c <= 0) or not np.allclose(c, c.T, rtol=1e-12, atol=0.0):
            raise NormtestError(
                "co-occurrence probabilities must be positive and symmetric (PMI would be -inf)"
            )
        if not np.array_equal(np.diag(c), p):
            raise NormtestError("the co-occurrence diagonal must equal the unigram: P(x, x) = p(x)")
        bound = np.minimum.outer(p, p)
        if np.any(c > bound * (1.0 + BOUND_RTOL)):
            raise NormtestError("co-occurrence P(x, y) must not exceed min(p(x), p(y))")
        object.__setattr__(self, "unigram", p)
        object.__setattr__(self, "cooccurrence", np.minimum(c, bound))
        object.__setattr__(self, "_index", {w: i for i, w in enumerate(self.words)})

    @classmethod
    def from_pmi(
        cls, unigram: ArrayLike, pmi: ArrayLike, words: Sequence[str] | None = None
    ) -> JointDistribution:
        """Build from p and off-diagonal PMI: P(x, y) = p(x)p(y)e^{PMI}, and P(x, x) = p(x)."""
        p = np.asarray(unigram, dtype=np.float64)
        m = np.asarray(pmi, dtype=np.float64)
        n = p.shape[0] if p.ndim == 1 else -1
        if p.ndim != 1 or m.shape != (n, n):
            raise NormtestError(f"pmi must be square with the unigram's length; got {m.shape}")
        c = np.outer(p, p) * np.exp(m)
        np.fill_diagonal(c, p)
        return cls(tuple(words) if words is not None else _word_names(n), p, c)

    @property
    def n_words(self) -> int:
        """Vocabulary size."""
        return len(self.words)

    def index(self, words: Sequence[str]) -> NDArray[np.intp]:
        """Row indices of the given words; unknown words raise."""
        try:
            return np.array([self._index[w] for w in words], dtype=np.intp)
        except KeyError as err:
            raise NormtestError(
                f"word {err.args[0]!r} is not in this synthetic vocabulary "
                f"({self.words[0]} … {self.words[-1]})"
            ) from None

    def information_content(self) -> FloatArray:
        """IC(x) = −log p(x), in nats."""
        return -np.log(self.unigram)

    def pmi(self) -> FloatArray:
        """PMI(x, y) = log P(x, y) − log p(x) − log p(y); its diagonal is IC(x)."""
        lp = np.log(self.unigram)
        return np.log(self.cooccurrence) - lp[:, None] - lp[None, :]

    def joint_information(self) -> FloatArray:
        """IC(x, y) = −log P(x, y), which equals IC(x) + IC(y) − PMI(x, y)."""
        return -np.log(self.cooccurrence)

    def digest(self) -> str:
        """Content hash of the distribution."""
        return _array_digest(self.unigram, self.cooccurrence)


def random_distribution(
    n_words: int,
    *,
    seed: int = 0,
    zipf_exponent: float = 1.0,
    pmi_scale: float = 0.5,
) -> JointDistribution:
    """Draw a distribution: Zipfian p over shuffled ranks, PMI ~ N(0, pmi_scale²) off the diagonal.

    Off-diagonal PMI is capped at min(IC(x), IC(y)) so that P(x, y) ≤ min(p(x), p(y)).
    """
    if n_words < 2:
        raise NormtestError("n_words must be at least 2")
    if not (zipf_exponent >= 0 and pmi_scale >= 0):
        raise NormtestError("zipf_exponent and pmi_scale must be non-negative")
    rng = np.random.default_rng([seed, 0])
    ranks = rng.permutation(n_words) + 1.0
    p = ranks**-zipf_exponent
    p /= p.sum()
    ic = -np.log(p)
    z = rng.normal(scale=pmi_scale, size=(n_words, n_words))
    m = np.triu(z, 1)
    m = m + m.T
    m = np.minimum(m, np.minimum.outer(ic, ic))
    return JointDistribution.from_pmi(p, m)


def _psd_part(x: FloatArray) -> FloatArray:
    """Projection onto the PSD cone in Frobenius norm (negative eigenvalues set to zero)."""
    w, v = np.linalg.eigh((x + x.T) / 2.0)
    return np.asarray((v * np.maximum(w, 0.0)) @ v.T, dtype=np.float64)


def nearest_psd_pmi(
    distribution: JointDistribution, *, max_iter: int = 300, tol: float = 1e-10
) -> JointDistribution:
    """The distribution whose PMI matrix (diagonal = IC) is the nearest PSD one with that diagonal.

    Dykstra's alternating projections (Higham 2002, "Computing the nearest correlation matrix")
    between the PSD cone and {diagonal = IC, PMI(x, y) ≤ min(IC(x), IC(y))}; the off-diagonal is
    then scaled by the largest t ≤ 1 that makes the matrix exactly PSD, so what is returned is valid
    and exactly factorisable even when the iteration stops early. p and IC are unchanged.
    """
    m = distribution.pmi()
    ic = np.diag(m).copy()
    upper = np.minimum.outer(ic, ic)

    def box(x: FloatArray) -> FloatArray:
        y = np.minimum(x, upper)
        np.fill_diagonal(y, ic)
        return y

    x = m.copy()
    p_corr = np.zeros_like(m)
    q_corr = np.zeros_like(m)
    size = float(np.linalg.norm(m))
    for _ in range(max_iter):
        y = _psd_part(x + p_corr)
        p_corr = x + p_corr - y
        x_new = box(y + q_corr)
        q_corr = y + q_corr - x_new
        done = float(np.linalg.norm(x_new - y)) <= tol * size
        x = x_new
        if done:
            break
    off = x - np.diag(ic)
    inv_sqrt = 1.0 / np.sqrt(ic)
    lam_min = float(np.linalg.eigvalsh(inv_sqrt[:, None] * off * inv_sqrt[None, :])[0])
    if lam_min < -1.0:
        off *= (1.0 - 1e-12) / -lam_min
    return JointDistribution.from_pmi(distribution.unigram, off, distribution.words)


def factor_gram(gram: ArrayLike, dim: int, seed: int = 0) -> FloatArray:
    """Vectors E (n, dim) with E Eᵀ = gram in a random orientation; gram PSD with rank ≤ dim."""
    g = np.asarray(gram, dtype=np.float64)
    if g.ndim != 2 or g.shape[0] != g.shape[1] or not np.all(np.isfinite(g)):
        raise NormtestError("gram must be a finite square matrix")
    w, v = np.linalg.eigh((g + g.T) / 2.0)
    top = float(np.max(np.abs(w))) if w.size else 0.0
    if w[0] < -GRAM_RTOL * top:
        raise NormtestError(
            f"gram matrix is not positive semidefinite (smallest eigenvalue {w[0]:.3g}); "
            "project it first, e.g. with nearest_psd_pmi, or use b ≥ 0"
        )
    keep = w > GRAM_RTOL * top
    rank = int(keep.sum())
    if dim < rank:
        raise NormtestError(f"dim={dim} is below the Gram matrix's rank {rank}; use dim ≥ {rank}")
    base = v[:, keep] * np.sqrt(w[keep])
    rng = np.random.default_rng([seed, 1])
    q, r = np.linalg.qr(rng.normal(size=(dim, max(rank, 1))))
    q = q * np.sign(np.where(np.diag(r) == 0, 1.0, np.diag(r)))
    return np.asarray(base @ q[:, :rank].T, dtype=np.float64)


class _Identified:
    """A synthetic model's identity: its name, its revision (the generating parameters and a
    content hash, part of every cache key) and the capabilities its class declares."""

    _capabilities: frozenset[Capability] = frozenset()
    _name: str
    _revision: str

    @property
    def name(self) -> str:
        """Model name used in results."""
        return self._name

    @property
    def revision(self) -> str:
        """Generating parameters and content hash."""
        return self._revision

    @property
    def capabilities(self) -> frozenset[Capability]:
        """What the model offers (its class's declaration)."""
        return self._capabilities


class _SyntheticModel(_Identified):
    """Shared lookup for synthetic models: a distribution and one vector per word (every word
    is also one token)."""

    _capabilities = frozenset(
        {Capability.WORD_VECTORS, Capability.WORD_TOKENS, Capability.TOKEN_VECTORS}
    )

    def __init__(self, name: str, revision: str, distribution: JointDistribution,
                 vectors: FloatArray) -> None:
        """Hold the model's identity, its distribution and its (read-only) word vectors."""
        self._name = name
        self._revision = revision
        self.distribution = distribution
        self.vectors = vectors
        self.vectors.setflags(write=False)

    @property
    def words(self) -> tuple[str, ...]:
        """The vocabulary, in row order."""
        return self.distribution.words

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return int(self.vectors.shape[1])

    @property
    def unigram(self) -> FloatArray:
        """Unigram probabilities p(x), aligned with ``words``."""
        return self.distribution.unigram

    @property
    def information_content(self) -> FloatArray:
        """IC(x) = −log p(x), aligned with ``words``."""
        return self.distribution.information_content()

    @property
    def pmi(self) -> FloatArray:
        """PMI matrix (diagonal = IC), aligned with ``words``."""
        return self.distribution.pmi()

    def word_vectors(self, words: Sequence[str]) -> FloatArray:
        """Vectors of the given words: (len(words), dim)."""
        return np.array(self.vectors[self.distribution.index(words)], dtype=np.float64)

    def represents(self, words: Sequence[str]) -> NDArray[np.bool_]:
        """Which words belong to the synthetic vocabulary."""
        known = set(self.words)
        return np.array([w in known for w in words], dtype=bool)

    def tokenize(self, text: str) -> Tokenization:
        """One token per whitespace-separated word; the token id is the word's row."""
        words = text.split()
        if not words:
            raise NormtestError("empty text: it has no tokens; pass at least one word")
        ids = self.distribution.index(words)
        return Tokenization(ids=tuple(int(i) for i in ids), tokens=tuple(words))

    def word_tokens(self, word: str) -> Tokenization:
        """A synthetic word is a single token."""
        return self.tokenize(word)

    def token_vectors(
        self, texts: Sequence[str], *, layer: Layer = "last", special_tokens: bool = False,
        words: bool = False,
    ) -> TokenBatch:
        """One row per whitespace-separated word of each text (a single representation)."""
        check_layer(layer, n_layers=0)
        rows = [self.vectors[list(self.tokenize(t).ids)] for t in texts]
        return TokenBatch.from_list(rows, self.dim)


def _check_noise(noise: float) -> float:
    """Validate a noise level."""
    noise = float(noise)
    if not (np.isfinite(noise) and noise >= 0):
        raise NormtestError(f"noise must be a finite number ≥ 0, got {noise}")
    return noise


class OracleModel(_SyntheticModel):
    """Vectors with ⟨e(x), e(y)⟩ = a·PMI(x, y) + b exactly (C1 and C2), plus optional noise."""

    def __init__(
        self,
        distribution: JointDistribution,
        *,
        a: float = 1.0,
        b: float = 0.0,
        dim: int | None = None,
        noise: float = 0.0,
        seed: int = 0,
        name: str = "oracle",
    ) -> None:
        """Factorise a·PMI + b into ``dim`` dimensions (default: vocabulary size) and add noise."""
        if not (np.isfinite(a) and a > 0 and np.isfinite(b)):
            raise NormtestError("the oracle needs a finite slope a > 0 and a finite intercept b")
        noise = _check_noise(noise)
        dim = distribution.n_words if dim is None else int(dim)
        self.a, self.b, self.noise, self.seed = float(a), float(b), noise, int(seed)
        self.exact_vectors = factor_gram(a * distribution.pmi() + b, dim, seed)
        self.exact_vectors.setflags(write=False)
        vectors = self.exact_vectors.copy()
        if noise > 0:
            rms = float(np.sqrt(np.mean(np.sum(self.exact_vectors**2, axis=1))))
            draws = np.random.default_rng([seed, 2]).normal(size=vectors.shape)
            vectors += noise * rms * draws / np.sqrt(dim)
        revision = (
            f"oracle:a={a:g}:b={b:g}:dim={dim}:noise={noise:g}:seed={seed}:"
            f"dist={distribution.digest()}"
        )
        super().__init__(name, revision, distribution, vectors)


def make_oracle(
    n_words: int,
    *,
    seed: int = 0,
    a: float = 1.0,
    b: float = 0.0,
    dim: int | None = None,
    noise: float = 0.0,
    zipf_exponent: float = 1.0,
    pmi_scale: float = 0.5,
) -> OracleModel:
    """An oracle on a fresh :func:`random_distribution` made PSD by :func:`nearest_psd_pmi`."""
    dist = nearest_psd_pmi(
        random_distribution(n_words, seed=seed, zipf_exponent=zipf_exponent, pmi_scale=pmi_scale)
    )
    return OracleModel(dist, a=a, b=b, dim=dim, noise=noise, seed=seed)


def _spearman(x: FloatArray, y: FloatArray) -> float:
    """Spearman rank correlation (average ranks for ties); 0 when either side is constant."""
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return 0.0
    from scipy.stats import spearmanr  # 1 s to import: only when asked

    return float(spearmanr(x, y).statistic)


class ShuffledNormModel(_SyntheticModel):
    """A model's directions with its norms permuted among the words (a negative control)."""

    def __init__(
        self,
        base: _SyntheticModel,
        *,
        seed: int = 0,
        max_rank_correlation: float = 0.05,
        max_tries: int = 1000,
        name: str = "shuffled_norm",
    ) -> None:
        """Permute ``base``'s norms with a seeded permutation that keeps their ranks unrelated.

        The permutation π is drawn uniformly at random, redrawn until the Spearman correlation of
        ‖e(x)‖ with ‖e(π(x))‖ is within ±``max_rank_correlation`` (the best of ``max_tries`` draws
        otherwise), so the shuffled norms are rank-unrelated to the original ones by construction,
        not just in expectation.
        """
        norms = np.linalg.norm(base.vectors, axis=1)
        if np.any(norms == 0):
            raise NormtestError("cannot keep the direction of a zero vector; base has one")
        rng = np.random.default_rng([seed, 3])
        best, best_rho = np.arange(norms.size), np.inf
        for _ in range(max_tries):
            perm = rng.permutation(norms.size)
            rho = abs(_spearman(norms, norms[perm]))
            if rho < best_rho:
                best, best_rho = perm, rho
            if rho <= max_rank_correlation:
                break
        self.permutation = best
        self.rank_correlation = best_rho
        vectors = base.vectors / norms[:, None] * norms[best][:, None]
        revision = f"shuffled_norm:seed={seed}:base=({base.revision})"
        super().__init__(name, revision, base.distribution, vectors)


class IsotropicModel(_SyntheticModel):
    """I.i.d. isotropic Gaussian vectors N(0, scale²/dim · I), unrelated to the distribution."""

    def __init__(
        self,
        distribution: JointDistribution,
        *,
        dim: int = 64,
        scale: float = 1.0,
        seed: int = 0,
        name: str = "isotropic",
    ) -> None:
        """Draw one vector per word of ``distribution``; ``scale`` is the expected RMS norm."""
        if dim < 1 or not (np.isfinite(scale) and scale > 0):
            raise NormtestError("the isotropic model needs dim ≥ 1 and a finite scale > 0")
        rng = np.random.default_rng([seed, 4])
        vectors = rng.normal(scale=scale / np.sqrt(dim), size=(distribution.n_words, dim))
        revision = f"isotropic:dim={dim}:scale={scale:g}:seed={seed}:dist={distribution.digest()}"
        super().__init__(name, revision, distribution, vectors)


#: What the faithful composition's squared norm is made of: per word, k(n) scales the shared
#: vector e_w so that the named composition of its tokens is e_w itself (sum = n·k·e_w).
_FAITHFUL_SCALE = {"mean": lambda n: 1.0, "sqrt_n": lambda n: 1.0 / np.sqrt(n),
                   "sum": lambda n: 1.0 / n}


class SubwordModel(_Identified):
    """Words split into subword tokens, built so that one composition is faithful.

    Each word w with information content IC(w) (given: the audit's own frequency source)
    gets a direction u_w and a target vector e_w = √(IC(w) + σ·z_w)·u_w, z_w standard normal
    (``noise`` = σ as a share of the IC's standard deviation), and n(w) tokens, drawn from
    ``1 … max_tokens`` independently of IC (``multitoken_share`` of the words get two or
    more). Its tokens are v_i = k(n)·e_w + η_i with Σ_i η_i = 0 and every η_i orthogonal to
    e_w (relative size ``spread``), k(n) chosen so that the ``faithful`` composition of the
    tokens is e_w exactly: for ``sqrt_n``, k = 1/√n; ``mean``, k = 1; ``sum``, k = 1/n. Then

    - the faithful composition's ‖·‖² is IC(w) + σ·z_w: ρ with IC is known, whatever n;
    - ``sum``, ``mean`` and ``sqrt_n`` are e_w times n·k, k and √n·k: the others differ from the
      faithful one by a factor of n(w)^±½ or n(w)^±1, which scrambles their ranks (n is
      independent of IC), so a contrast of the faithful composition against another is
      positive by construction, and the reverse contrast negative;
    - f_ind's ‖·‖² is Σ‖v_i‖² = n·k²·‖e_w‖² + Σ‖η_i‖².

    Deterministic for a seed; words not given have no vectors (the audit gives it its sample).
    """

    #: subword tokens and their vectors (no whole-word lookup)
    _capabilities = frozenset({Capability.WORD_TOKENS, Capability.TOKEN_VECTORS})

    def __init__(self, information: dict[str, float], *, faithful: str = "sqrt_n",
                 dim: int = 64, noise: float = 0.1, max_tokens: int = 4,
                 multitoken_share: float = 0.5, spread: float = 0.3, seed: int = 0,
                 name: str = "subword", token_counts: dict[str, int] | None = None) -> None:
        """Build the tokens of every word of ``information`` (word → IC in nats; or any
        positive target of the faithful composition's squared norm, with ``noise=0``).
        ``token_counts`` gives each word's number of tokens (a real model's, say) instead of
        drawing them."""
        if faithful not in _FAITHFUL_SCALE:
            raise NormtestError(f"faithful must be one of {sorted(_FAITHFUL_SCALE)}, got "
                                f"{faithful!r}")
        if not information:
            raise NormtestError("the subword model needs at least one word with its IC")
        if max_tokens < 2 or not 0 <= multitoken_share <= 1 or dim < 2:
            raise NormtestError("the subword model needs max_tokens ≥ 2, dim ≥ 2 and a "
                                "multitoken_share in [0, 1]")
        noise, spread = _check_noise(noise), _check_noise(spread)
        self.faithful, self.seed, self._dim = faithful, int(seed), int(dim)
        self.words = tuple(information)
        ic = np.array([information[w] for w in self.words], dtype=np.float64)
        if not np.isfinite(ic).all() or (ic <= 0).any():
            raise NormtestError("every IC must be a finite number of nats > 0")
        rng = np.random.default_rng([seed, 5])
        squared = np.maximum(ic + noise * ic.std() * rng.normal(size=ic.size), 1e-6)
        several = rng.random(ic.size) < multitoken_share
        counts = np.where(several, rng.integers(2, max_tokens + 1, size=ic.size), 1)
        if token_counts is not None:
            counts = np.array([int(token_counts[w]) for w in self.words], dtype=np.intp)
            if (counts < 1).any():
                raise NormtestError("every word needs at least one token")
        self.token_counts = counts.astype(np.intp)
        self.target_squared_norms = squared
        self._tokens: dict[str, np.ndarray] = {}
        for i, word in enumerate(self.words):
            u = rng.normal(size=dim)
            target = np.sqrt(squared[i]) * u / np.linalg.norm(u)
            n = int(counts[i])
            eta = rng.normal(size=(n, dim))
            eta -= eta.mean(axis=0)  # Σ η_i = 0
            eta -= np.outer(eta @ target, target) / (target @ target)  # ⟂ e_w
            eta *= spread * np.sqrt(squared[i] / (n * dim))  # ‖η_i‖ ≈ spread·‖e_w‖/√n
            tokens = _FAITHFUL_SCALE[faithful](n) * target + eta
            tokens.setflags(write=False)
            self._tokens[word] = tokens
        self._name = name
        self._revision = (f"subword:faithful={faithful}:dim={dim}:noise={noise:g}:"
                          f"max_tokens={max_tokens}:share={multitoken_share:g}:"
                          f"spread={spread:g}:seed={seed}:words={_words_digest(self.words)}"
                          f":counts={_words_digest([str(c) for c in counts])}")

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return self._dim

    def _of(self, word: str) -> np.ndarray:
        if word not in self._tokens:
            raise NormtestError(f"the subword model has no tokens for {word!r}; build it with "
                                "the words it will be asked about")
        return self._tokens[word]

    def tokenize(self, text: str) -> Tokenization:
        """The tokens of each whitespace-separated word, in order (``word#i``)."""
        words = text.split()
        if not words:
            raise NormtestError("empty text: it has no tokens; pass at least one word")
        tokens = tuple(f"{w}#{i}" for w in words for i in range(len(self._of(w))))
        ids = tuple(int.from_bytes(hashlib.blake2b(t.encode(), digest_size=4).digest(), "big")
                    for t in tokens)
        return Tokenization(ids=ids, tokens=tokens)

    def word_tokens(self, word: str) -> Tokenization:
        """The word's subword tokens."""
        return self.tokenize(word)

    def word_token_counts(self, words: Sequence[str]) -> NDArray[np.intp]:
        """How many tokens each word has."""
        return np.array([len(self._of(w)) for w in words], dtype=np.intp)

    def token_vectors(
        self, texts: Sequence[str], *, layer: Layer = "last", special_tokens: bool = False,
        words: bool = False,
    ) -> TokenBatch:
        """The token vectors of each text's words, in order (one representation)."""
        check_layer(layer, n_layers=0)
        rows = [np.concatenate([self._of(w) for w in t.split()]) for t in texts]
        return TokenBatch.from_list(rows, self._dim)


def _words_digest(words: Sequence[str]) -> str:
    return hashlib.blake2b("\0".join(words).encode("utf-8"), digest_size=6).hexdigest()
