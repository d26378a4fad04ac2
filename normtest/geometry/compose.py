"""Composition functions: token vectors of one word or text → one vector (docs/theory.md §4).

A composition maps an ``(n, d)`` array of token vectors ``v_1 … v_n`` to one ``d``-vector. The
registry holds the named ones of docs/theory.md §4::

    sum      Σ v_i                      mean    (1/n) Σ v_i         sqrt_n   (1/√n) Σ v_i
    f_ind    F_{1,0}                    f_joint F_{1,1}             f_inf    F_{1, min/max norm}
    f_avg    F_{1/4,-1/2}               first   v_1                 last     v_n

plus the general ICDS family (Amigó et al., Computational Linguistics 48(4), 2022)::

    F_{α,β}(u, v) = (u + v)/‖u + v‖ · √(α(‖u‖² + ‖v‖²) − β⟨u, v⟩)

folded left to right, F(…F(F(v_1, v_2), v_3)…, v_n), or right to left on request. Any α, β is
reachable by the name ``"F[α,β]"`` (for example ``"F[0.5,1]"``) or by :func:`f_composition`.

``cls`` and ``eos`` are not compositions: they name hidden states a model produces (an adapter with
``Capability.SPECIAL_STATES`` returns them). They share the naming of compositions in results, so
:data:`MODEL_STATES` lists them and :func:`get_composition` answers them with a pointer there.

Conventions (never a silent NaN):

* Input must be a finite, non-empty ``(n, d)`` array; NaN/inf or ``n = 0`` raise
  :class:`~normtest.errors.NormtestError`. Arithmetic is float64.
* F's squared norm ``q = α(‖u‖² + ‖v‖²) − β⟨u, v⟩``: a value below ``-SQRT_RTOL · scale`` (scale =
  ``|α|(‖u‖² + ‖v‖²) + |β||⟨u, v⟩|``) raises; a value within ``±SQRT_RTOL · scale`` of zero is
  rounding error and gives the zero vector (magnitude 0 needs no direction). ``q ≥ 0`` is
  guaranteed whenever ``α ≥ |β|/2``, which every named composition satisfies.
* ``u + v = 0`` (``‖u + v‖ ≤ ZERO_SUM_RTOL · (‖u‖ + ‖v‖)``) with ``q > 0`` leaves F without a
  direction and raises; with ``q = 0`` the result is the zero vector.
* When ``β = −2α`` (α ≥ 0), F is exactly ``√α (u + v)``; it is computed that way, without the
  division, so ``F[1,-2]`` is exactly ``sum`` and ``f_avg`` is exactly the mean of two.
* ``f_inf`` uses β = min(‖u‖, ‖v‖)/max(‖u‖, ‖v‖) at each step, and β = 0 when both are zero.
* The composition of a single vector is that vector, for every composition.
* ``direction`` ("left" or "right") changes only the F folds (the right fold is the left fold of the
  reversed tokens); ``sum``, ``mean``, ``sqrt_n``, ``first`` and ``last`` ignore it.
* Batches are a flat ``(N, d)`` array of token vectors plus CSR ``offsets`` ``[0, …, N]`` (item i
  is rows ``offsets[i]:offsets[i + 1]``, never empty); ``sum``, ``mean``, ``sqrt_n``, ``first`` and
  ``last`` are computed for the whole batch at once (``np.add.reduceat``), the F folds one numpy
  step per token position across all items.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from normtest.errors import NormtestError

__all__ = [
    "COMPOSITIONS",
    "MODEL_STATES",
    "SQRT_RTOL",
    "ZERO_SUM_RTOL",
    "Composition",
    "Direction",
    "compose",
    "compose_batch",
    "compose_segments",
    "composition_names",
    "f_alpha_beta",
    "f_composition",
    "fold",
    "fold_batch",
    "get_composition",
    "offsets_from_lengths",
    "pack_token_vectors",
]

Direction = Literal["left", "right"]
FloatArray = NDArray[np.float64]

#: Relative tolerance under which F's squared norm counts as zero (rounding error), see module doc.
SQRT_RTOL = 1e-12
#: ‖u + v‖ at or below this fraction of ‖u‖ + ‖v‖ counts as u + v = 0 in F.
ZERO_SUM_RTOL = 1e-10
#: Names of model states that are reported alongside compositions but produced by adapters.
MODEL_STATES: tuple[str, ...] = ("cls", "eos")

_BetaRule = Callable[[FloatArray, FloatArray], FloatArray]


# --------------------------------------------------------------------------- validation helpers


def _token_matrix(vectors: ArrayLike, what: str = "token vectors") -> FloatArray:
    """Return ``vectors`` as a finite float64 (n, d) array with n ≥ 1, or raise."""
    arr = np.asarray(vectors, dtype=np.float64)
    if arr.ndim != 2:
        raise NormtestError(
            f"{what} must be a 2-D (n_tokens, dim) array, got shape {arr.shape}; "
            "for a single vector v pass v[None, :]"
        )
    if arr.shape[0] == 0:
        raise NormtestError(
            f"empty input: a composition needs at least one of the {what}; "
            "drop words or texts that produced no tokens before composing"
        )
    if arr.shape[1] == 0:
        raise NormtestError(f"{what} have dimension 0; pass vectors with at least one coordinate")
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(arr), axis=1))[0])
        raise NormtestError(
            f"{what} contain NaN or infinity (first at row {bad}); "
            "fix or drop the non-finite vectors before composing"
        )
    return arr


def _group_bounds(offsets: ArrayLike, n_rows: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Validate CSR-style offsets for ``n_rows`` rows; return (starts, lengths)."""
    off = np.asarray(offsets)
    if off.ndim != 1 or off.size < 2:
        raise NormtestError(
            "offsets must be a 1-D array [0, end_1, …, n_rows] with at least two entries "
            f"(got shape {off.shape}); build it with offsets_from_lengths(lengths)"
        )
    if not np.issubdtype(off.dtype, np.integer):
        if not np.all(np.isfinite(off)) or not np.all(off == np.round(off)):
            raise NormtestError("offsets must be integers; build them with offsets_from_lengths")
    off = off.astype(np.intp)
    if off[0] != 0 or off[-1] != n_rows:
        raise NormtestError(
            f"offsets must start at 0 and end at the number of token vectors ({n_rows}); "
            f"got {int(off[0])} … {int(off[-1])}"
        )
    lengths = np.diff(off)
    if np.any(lengths <= 0):
        bad = int(np.flatnonzero(lengths <= 0)[0])
        raise NormtestError(
            f"item {bad} of the batch has no token vectors (offsets must strictly increase); "
            "drop words or texts that produced no tokens before composing"
        )
    return off[:-1], lengths


def offsets_from_lengths(lengths: ArrayLike) -> NDArray[np.intp]:
    """Return CSR offsets ``[0, l_1, l_1 + l_2, …]`` for items of the given token counts."""
    arr = np.asarray(lengths)
    if arr.ndim != 1 or arr.size == 0:
        raise NormtestError("lengths must be a non-empty 1-D array of token counts")
    if not np.issubdtype(arr.dtype, np.integer):
        raise NormtestError("lengths must be integers (token counts)")
    if np.any(arr <= 0):
        raise NormtestError("every item needs at least one token: all lengths must be ≥ 1")
    out = np.zeros(arr.size + 1, dtype=np.intp)
    np.cumsum(arr, out=out[1:])
    return out


def pack_token_vectors(
    items: Sequence[ArrayLike],
) -> tuple[FloatArray, NDArray[np.intp]]:
    """Concatenate per-item (n_i, d) token arrays into (flat vectors, offsets) for batching."""
    if len(items) == 0:
        raise NormtestError("no items to pack: pass at least one (n_tokens, dim) array")
    mats = [_token_matrix(item, what=f"token vectors of item {i}") for i, item in enumerate(items)]
    dims = {m.shape[1] for m in mats}
    if len(dims) != 1:
        raise NormtestError(f"items have different dimensions {sorted(dims)}; they must agree")
    return np.concatenate(mats, axis=0), offsets_from_lengths(
        np.array([m.shape[0] for m in mats], dtype=np.intp)
    )


# --------------------------------------------------------------------------- the F family


def _f_rows(
    u: FloatArray,
    v: FloatArray,
    alpha: float,
    beta: FloatArray,
    where: Callable[[int], str],
    nu2: FloatArray | None = None,
    nv2: FloatArray | None = None,
) -> FloatArray:
    """F_{α,β} row by row on (m, d) arrays, with β given per row; ``where(i)`` names row i.
    ``nu2`` and ``nv2``: the rows' squared norms, when the caller has them already."""
    if beta.size and np.all(beta == -2.0 * alpha) and alpha >= 0.0:
        # Exact special case: q = α‖u+v‖², so F = √α (u + v) with no cancellation or division.
        return math.sqrt(alpha) * (u + v)
    nu2 = np.einsum("ij,ij->i", u, u) if nu2 is None else nu2
    nv2 = np.einsum("ij,ij->i", v, v) if nv2 is None else nv2
    uv = np.einsum("ij,ij->i", u, v)
    q = alpha * (nu2 + nv2) - beta * uv
    scale = abs(alpha) * (nu2 + nv2) + np.abs(beta) * np.abs(uv)
    tol = SQRT_RTOL * scale
    negative = q < -tol
    if np.any(negative):
        i = int(np.flatnonzero(negative)[0])
        raise NormtestError(
            f"F_{{α,β}} with α={alpha:g}, β={float(beta[i]):g} is undefined {where(i)}: "
            f"α(‖u‖²+‖v‖²) − β⟨u,v⟩ = {float(q[i]):.6g} < 0 under the square root; "
            "use α ≥ |β|/2, which keeps it non-negative for all inputs"
        )
    s = u + v
    ns = np.sqrt(np.einsum("ij,ij->i", s, s))
    zero_magnitude = q <= tol
    zero_sum = ns <= ZERO_SUM_RTOL * (np.sqrt(nu2) + np.sqrt(nv2))
    undirected = zero_sum & ~zero_magnitude
    if np.any(undirected):
        i = int(np.flatnonzero(undirected)[0])
        raise NormtestError(
            f"F_{{α,β}} with α={alpha:g}, β={float(beta[i]):g} has no direction {where(i)}: "
            "u + v = 0, so (u + v)/‖u + v‖ is undefined while the squared norm is positive; "
            "perturb the inputs or use sum, mean or sqrt_n, which need no direction"
        )
    factor = np.zeros_like(q)  # rows of zero magnitude become 0
    ok = ~zero_magnitude
    np.divide(np.sqrt(q, where=ok, out=np.zeros_like(q)), ns, out=factor, where=ok)
    s *= factor[:, None]
    return s


def _constant_beta(beta: float) -> _BetaRule:
    """β rule returning the same β for every row."""

    def rule(nu: FloatArray, nv: FloatArray) -> FloatArray:
        return np.full(nu.shape, beta, dtype=np.float64)

    return rule


def _inf_beta(nu: FloatArray, nv: FloatArray) -> FloatArray:
    """f_inf's β = min(‖u‖,‖v‖)/max(‖u‖,‖v‖), and 0 when both are zero."""
    hi = np.maximum(nu, nv)
    lo = np.minimum(nu, nv)
    out = np.zeros_like(hi)
    pos = hi > 0
    out[pos] = lo[pos] / hi[pos]
    return out


def _check_alpha_beta(alpha: float, beta: float) -> None:
    """Reject non-finite α or β."""
    if not (math.isfinite(alpha) and math.isfinite(beta)):
        raise NormtestError(f"F_{{α,β}} needs finite α and β, got α={alpha}, β={beta}")


def f_alpha_beta(u: ArrayLike, v: ArrayLike, alpha: float, beta: float) -> FloatArray:
    """F_{α,β}(u, v) of docs/theory.md §4 for two vectors (or row-wise for two (m, d) arrays)."""
    alpha, beta = float(alpha), float(beta)
    _check_alpha_beta(alpha, beta)
    ua = np.asarray(u, dtype=np.float64)
    va = np.asarray(v, dtype=np.float64)
    if ua.shape != va.shape or ua.ndim not in (1, 2):
        raise NormtestError(
            f"u and v must be two d-vectors or two (m, d) arrays of one shape; "
            f"got {ua.shape} and {va.shape}"
        )
    single = ua.ndim == 1
    u2 = _token_matrix(ua[None, :] if single else ua, what="u")
    v2 = _token_matrix(va[None, :] if single else va, what="v")
    out = _f_rows(
        u2, v2, alpha, np.full(u2.shape[0], beta), lambda i: "for u, v" if single else f"at row {i}"
    )
    return out[0] if single else out


def _fold_rows(
    flat: FloatArray,
    starts: NDArray[np.intp],
    lengths: NDArray[np.intp],
    alpha: float,
    beta_rule: _BetaRule,
    direction: Direction,
) -> FloatArray:
    """Fold F over each item, vectorised across items (one numpy step per token position).

    The items are taken longest first, so the items still folding at step k are the first
    m_k: their accumulators are a slice, updated in place (no gather and scatter per step).
    """
    if direction not in ("left", "right"):
        raise NormtestError(f"direction must be 'left' or 'right', got {direction!r}")
    order = np.argsort(-lengths, kind="stable")
    first = (starts if direction == "left" else starts + lengths - 1)[order]
    lengths = lengths[order]
    step = 1 if direction == "left" else -1
    acc = np.asarray(flat[first], dtype=np.float64)  # a gather: a copy, in float64
    folding = np.searchsorted(-lengths, -np.arange(int(lengths.max()) if lengths.size else 0),
                              side="left")  # folding[k]: how many items are longer than k
    for k in range(1, folding.size):
        m = int(folding[k])
        cur, nxt = acc[:m], np.asarray(flat[first[:m] + step * k], dtype=np.float64)
        nu2, nv2 = np.einsum("ij,ij->i", cur, cur), np.einsum("ij,ij->i", nxt, nxt)
        beta = beta_rule(np.sqrt(nu2), np.sqrt(nv2))
        acc[:m] = _f_rows(cur, nxt, alpha, beta, _step_location(order[:m], k), nu2, nv2)
    out = np.empty_like(acc)
    out[order] = acc
    return out


def _step_location(active: NDArray[np.intp], step: int) -> Callable[[int], str]:
    """Names row i of a fold step in error messages: the batch item and the token step."""

    def where(i: int) -> str:
        return f"at item {int(active[i])}, token step {step}"

    return where


def fold(
    vectors: ArrayLike, alpha: float, beta: float, *, direction: Direction = "left"
) -> FloatArray:
    """Fold F_{α,β} over the rows of an (n, d) array, left to right unless ``direction='right'``."""
    flat = _token_matrix(vectors)
    return fold_batch(flat, [0, flat.shape[0]], alpha, beta, direction=direction)[0]


def fold_batch(
    vectors: ArrayLike,
    offsets: ArrayLike,
    alpha: float,
    beta: float,
    *,
    direction: Direction = "left",
) -> FloatArray:
    """Fold F_{α,β} over each item of a batch (flat (N, d) vectors, CSR offsets) → (m, d)."""
    alpha, beta = float(alpha), float(beta)
    _check_alpha_beta(alpha, beta)
    flat = _token_matrix(vectors)
    starts, lengths = _group_bounds(offsets, flat.shape[0])
    return _fold_rows(flat, starts, lengths, alpha, _constant_beta(beta), direction)


# --------------------------------------------------------------------------- the registry

_BatchFn = Callable[[FloatArray, NDArray[np.intp], NDArray[np.intp], Direction], FloatArray]


@dataclass(frozen=True)
class Composition:
    """A named composition: token vectors (n, d) → one d-vector, with a batched form."""

    name: str
    description: str
    _batch: _BatchFn
    alpha: float | None = None
    beta: float | None = None

    def __call__(self, vectors: ArrayLike, *, direction: Direction = "left") -> FloatArray:
        """Compose the rows of an (n, d) array into one d-vector."""
        flat = _token_matrix(vectors)
        offsets = np.array([0, flat.shape[0]], dtype=np.intp)
        return self.batch(flat, offsets, direction=direction)[0]

    def batch(
        self, vectors: ArrayLike, offsets: ArrayLike, *, direction: Direction = "left"
    ) -> FloatArray:
        """Compose every item of a batch: flat (N, d) token vectors split by CSR offsets."""
        if direction not in ("left", "right"):
            raise NormtestError(f"direction must be 'left' or 'right', got {direction!r}")
        flat = _token_matrix(vectors)
        starts, lengths = _group_bounds(offsets, flat.shape[0])
        return self._batch(flat, starts, lengths, direction)


def _sums(flat: FloatArray, starts: NDArray[np.intp], lengths: NDArray[np.intp]) -> FloatArray:
    """Per-item sums of rows ``[start, start + length)`` via one np.add.reduceat call, in float64
    whatever ``flat``'s dtype. The items need not be contiguous: reduceat sums between each
    index and the next, so the indices run start_1, end_1, start_2, end_2, … and every other
    sum is kept (an end at the last row is left out: reduceat's last sum runs to the end)."""
    ends = starts + lengths
    edges = np.stack([starts, ends], axis=1).ravel()
    if edges[-1] == flat.shape[0]:
        edges = edges[:-1]
    return np.add.reduceat(flat, edges, axis=0, dtype=np.float64)[0::2]


def _batch_sum(
    flat: FloatArray, starts: NDArray[np.intp], lengths: NDArray[np.intp], _: Direction
) -> FloatArray:
    return _sums(flat, starts, lengths)


def _batch_mean(
    flat: FloatArray, starts: NDArray[np.intp], lengths: NDArray[np.intp], _: Direction
) -> FloatArray:
    return _sums(flat, starts, lengths) / lengths[:, None]


def _batch_sqrt_n(
    flat: FloatArray, starts: NDArray[np.intp], lengths: NDArray[np.intp], _: Direction
) -> FloatArray:
    return _sums(flat, starts, lengths) / np.sqrt(lengths)[:, None]


def _batch_first(
    flat: FloatArray, starts: NDArray[np.intp], lengths: NDArray[np.intp], _: Direction
) -> FloatArray:
    return np.asarray(flat[starts], dtype=np.float64)


def _batch_last(
    flat: FloatArray, starts: NDArray[np.intp], lengths: NDArray[np.intp], _: Direction
) -> FloatArray:
    return np.asarray(flat[starts + lengths - 1], dtype=np.float64)


def _fold_batch_fn(alpha: float, beta_rule: _BetaRule) -> _BatchFn:
    """Batched fold of F with fixed α and a β rule."""

    def run(
        flat: FloatArray, starts: NDArray[np.intp], lengths: NDArray[np.intp], direction: Direction
    ) -> FloatArray:
        return _fold_rows(flat, starts, lengths, alpha, beta_rule, direction)

    return run


def _format_number(x: float) -> str:
    """Shortest round-tripping text for a float, used in F[α,β] names."""
    return repr(float(x)).removesuffix(".0") if float(x).is_integer() else repr(float(x))


def f_composition(alpha: float, beta: float) -> Composition:
    """The general F_{α,β} fold as a Composition named ``F[α,β]``."""
    alpha, beta = float(alpha), float(beta)
    _check_alpha_beta(alpha, beta)
    name = f"F[{_format_number(alpha)},{_format_number(beta)}]"
    return Composition(
        name=name,
        description=f"ICDS fold with α={alpha:g}, β={beta:g}",
        _batch=_fold_batch_fn(alpha, _constant_beta(beta)),
        alpha=alpha,
        beta=beta,
    )


def _named_f(name: str, description: str, alpha: float, beta: float) -> Composition:
    """A registered F_{α,β} composition with its own name."""
    return Composition(name, description, _fold_batch_fn(alpha, _constant_beta(beta)), alpha, beta)


_REGISTRY: dict[str, Composition] = {
    c.name: c
    for c in (
        Composition("sum", "Σ v_i; squared norm grows quadratically", _batch_sum),
        Composition("mean", "(1/n) Σ v_i; converges to a fixed point", _batch_mean),
        Composition("sqrt_n", "(1/√n) Σ v_i, the scaled average; grows linearly", _batch_sqrt_n),
        _named_f("f_ind", "F with α=1, β=0: squared norms add", 1.0, 0.0),
        _named_f("f_joint", "F with α=1, β=1: ‖u‖²+‖v‖²−⟨u,v⟩ at each step", 1.0, 1.0),
        Composition(
            "f_inf",
            "F with α=1, β=min(‖u‖,‖v‖)/max(‖u‖,‖v‖) at each step",
            _fold_batch_fn(1.0, _inf_beta),
            alpha=1.0,
        ),
        _named_f("f_avg", "F with α=1/4, β=−1/2: the mean of two at each step", 0.25, -0.5),
        Composition("first", "the first token vector v_1", _batch_first),
        Composition("last", "the last token vector v_n", _batch_last),
    )
}

#: Read-only view of the registered compositions, by name.
COMPOSITIONS: Mapping[str, Composition] = MappingProxyType(_REGISTRY)

_F_NAME = re.compile(r"^F\[\s*([^,\]]+)\s*,\s*([^,\]]+)\s*\]$")


def composition_names() -> tuple[str, ...]:
    """Names of the registered compositions, in registry order."""
    return tuple(_REGISTRY)


def get_composition(name: str) -> Composition:
    """Look up a composition by name (registered, or ``F[α,β]``); unknown names suggest others."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    match = _F_NAME.match(name)
    if match:
        try:
            alpha, beta = float(match.group(1)), float(match.group(2))
        except ValueError:
            raise NormtestError(
                f"cannot read α, β from {name!r}; write F[alpha,beta] with numbers, e.g. F[1,0.5]"
            ) from None
        return f_composition(alpha, beta)
    if name in MODEL_STATES:
        raise NormtestError(
            f"{name!r} is a model state, not a composition: ask the model adapter for it "
            "(Capability.SPECIAL_STATES) instead of composing token vectors"
        )
    close = difflib.get_close_matches(name, [*_REGISTRY, *MODEL_STATES], n=3)
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    raise NormtestError(
        f"unknown composition {name!r}.{hint} Known: {', '.join(_REGISTRY)}, or F[alpha,beta]."
    )


def compose_segments(
    vectors: NDArray[np.floating], starts: ArrayLike, lengths: ArrayLike, name: str, *,
    direction: Direction = "left",
) -> FloatArray:
    """Compose items that are row ranges ``[start, start + length)`` of one (N, d) array, which
    may leave rows out between items or share them, float32 or float64 (each item computed in
    float64 as :func:`compose_batch` does, with the same numbers). What a batch of model
    sequences needs: each sequence's own tokens, its special tokens left where they stand."""
    flat = np.asarray(vectors)
    if flat.ndim != 2 or flat.dtype not in (np.float32, np.float64):
        raise NormtestError(
            f"token vectors must be a 2-D float32 or float64 array, got {flat.dtype} {flat.shape}"
        )
    first = np.asarray(starts, dtype=np.intp)
    size = np.asarray(lengths, dtype=np.intp)
    if first.shape != size.shape or first.ndim != 1 or first.size == 0:
        raise NormtestError("starts and lengths must be two 1-D arrays of one size, not empty")
    if np.any(size < 1) or np.any(first < 0) or np.any(first + size > flat.shape[0]):
        raise NormtestError("every segment needs at least one row, inside the array")
    if not np.isfinite(flat).all():
        bad = int(np.flatnonzero(~np.isfinite(flat).all(axis=1))[0])
        raise NormtestError(
            f"token vectors contain NaN or infinity (first at row {bad}); "
            "fix or drop the non-finite vectors before composing"
        )
    if direction not in ("left", "right"):
        raise NormtestError(f"direction must be 'left' or 'right', got {direction!r}")
    return get_composition(name)._batch(flat, first, size, direction)


def compose(vectors: ArrayLike, name: str, *, direction: Direction = "left") -> FloatArray:
    """Compose an (n, d) array of token vectors into one d-vector with the named composition."""
    return get_composition(name)(vectors, direction=direction)


def compose_batch(
    vectors: ArrayLike, offsets: ArrayLike, name: str, *, direction: Direction = "left"
) -> FloatArray:
    """Compose many items at once: flat (N, d) token vectors and CSR offsets → (m, d)."""
    return get_composition(name).batch(vectors, offsets, direction=direction)
