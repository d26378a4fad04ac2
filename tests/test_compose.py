"""Unit tests for normtest.geometry.compose: registry, conventions, errors, batching."""

from __future__ import annotations

import numpy as np
import pytest

import normtest.geometry.compose as compose_module
from normtest.errors import NormtestError
from normtest.geometry.compose import (
    COMPOSITIONS,
    MODEL_STATES,
    compose,
    compose_batch,
    compose_segments,
    composition_names,
    f_alpha_beta,
    f_composition,
    fold,
    fold_batch,
    get_composition,
    offsets_from_lengths,
    pack_token_vectors,
)

NAMES = composition_names()
RNG_LENGTHS = (1, 3, 2, 7, 1, 5, 4)


def _batch(seed: int = 0, dim: int = 4) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Random items of varied lengths, their flat array and offsets."""
    rng = np.random.default_rng(seed)
    items = [rng.normal(size=(n, dim)) for n in RNG_LENGTHS]
    flat, offsets = pack_token_vectors(items)
    return items, flat, offsets


def test_registry_holds_the_named_compositions() -> None:
    assert set(NAMES) == {
        "sum", "mean", "sqrt_n", "f_ind", "f_joint", "f_inf", "f_avg", "first", "last",
    }
    assert tuple(COMPOSITIONS) == NAMES
    with pytest.raises(TypeError):
        COMPOSITIONS["x"] = COMPOSITIONS["sum"]  # type: ignore[index]
    for name in NAMES:
        assert get_composition(name).name == name
        assert get_composition(name).description


def test_named_f_parameters() -> None:
    assert (COMPOSITIONS["f_ind"].alpha, COMPOSITIONS["f_ind"].beta) == (1.0, 0.0)
    assert (COMPOSITIONS["f_joint"].alpha, COMPOSITIONS["f_joint"].beta) == (1.0, 1.0)
    assert (COMPOSITIONS["f_avg"].alpha, COMPOSITIONS["f_avg"].beta) == (0.25, -0.5)
    assert COMPOSITIONS["f_inf"].alpha == 1.0 and COMPOSITIONS["f_inf"].beta is None


def test_unknown_name_suggests_close_ones() -> None:
    with pytest.raises(NormtestError, match="Did you mean 'mean'"):
        get_composition("maen")
    with pytest.raises(NormtestError, match="unknown composition 'zzz'"):
        get_composition("zzz")


@pytest.mark.parametrize("state", MODEL_STATES)
def test_model_states_are_not_compositions(state: str) -> None:
    with pytest.raises(NormtestError, match=r"model state.*SPECIAL_STATES"):
        get_composition(state)


def test_general_f_by_name() -> None:
    assert get_composition("F[0.5,1]").name == "F[0.5,1]"
    assert get_composition("F[ 1 , -2 ]").name == "F[1,-2]"
    assert f_composition(0.25, -0.5).name == "F[0.25,-0.5]"
    comp = get_composition("F[0.5,1]")
    assert (comp.alpha, comp.beta) == (0.5, 1.0)
    with pytest.raises(NormtestError, match="cannot read"):
        get_composition("F[a,b]")
    with pytest.raises(NormtestError, match="finite"):
        f_composition(float("nan"), 0.0)


def test_general_f_matches_named_ones() -> None:
    tokens = np.random.default_rng(1).normal(size=(6, 3))
    np.testing.assert_array_equal(compose(tokens, "F[1,0]"), compose(tokens, "f_ind"))
    np.testing.assert_array_equal(compose(tokens, "F[1,1]"), compose(tokens, "f_joint"))
    np.testing.assert_array_equal(compose(tokens, "F[0.25,-0.5]"), compose(tokens, "f_avg"))
    np.testing.assert_allclose(compose(tokens, "F[1,-2]"), tokens.sum(axis=0), rtol=1e-13)


@pytest.mark.parametrize("name", NAMES)
def test_empty_input_raises(name: str) -> None:
    with pytest.raises(NormtestError, match="empty input"):
        compose(np.zeros((0, 3)), name)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("name", NAMES)
def test_non_finite_input_raises(name: str, bad: float) -> None:
    tokens = np.ones((3, 2))
    tokens[1, 0] = bad
    with pytest.raises(NormtestError, match=r"NaN or infinity.*row 1"):
        compose(tokens, name)


def test_shape_errors() -> None:
    with pytest.raises(NormtestError, match="2-D"):
        compose(np.ones(3), "mean")
    with pytest.raises(NormtestError, match="dimension 0"):
        compose(np.ones((3, 0)), "mean")
    with pytest.raises(NormtestError, match="one shape"):
        f_alpha_beta(np.ones(2), np.ones(3), 1.0, 0.0)
    with pytest.raises(NormtestError, match="direction"):
        compose(np.ones((2, 2)), "f_ind", direction="up")  # type: ignore[arg-type]


def test_negative_square_root_raises() -> None:
    u = np.array([1.0, 0.0])
    with pytest.raises(NormtestError, match=r"under the square root.*α ≥ \|β\|/2"):
        f_alpha_beta(u, u, 0.0, 1.0)
    # β = −2α with α < 0 is not the exact sum case: q = α‖u + v‖² < 0.
    with pytest.raises(NormtestError, match="under the square root"):
        f_alpha_beta(u, u, -1.0, 2.0)
    with pytest.raises(NormtestError, match="token step 1"):
        fold(np.stack([u, u]), 0.0, 1.0)


def test_zero_squared_norm_within_rounding_gives_zero_vector() -> None:
    # F[1,2](u, u): q = ‖u − v‖² = 0 while u + v = 2u ≠ 0: magnitude 0, so the zero vector.
    u = np.array([0.3, -1.7, 2.2])
    np.testing.assert_array_equal(f_alpha_beta(u, u, 1.0, 2.0), np.zeros(3))


def test_zero_sum_convention() -> None:
    u = np.array([1.5, -2.0])
    for name in ("f_ind", "f_joint", "f_inf"):
        with pytest.raises(NormtestError, match=r"no direction.*u \+ v = 0"):
            compose(np.stack([u, -u]), name)
    # Compositions of zero magnitude at u + v = 0 return the zero vector, no error.
    np.testing.assert_array_equal(compose(np.stack([u, -u]), "f_avg"), np.zeros(2))
    np.testing.assert_array_equal(compose(np.stack([u, -u]), "sum"), np.zeros(2))
    np.testing.assert_array_equal(compose(np.zeros((3, 2)), "f_ind"), np.zeros(2))
    np.testing.assert_array_equal(compose(np.zeros((3, 2)), "f_inf"), np.zeros(2))
    # Just above the tolerance F still has a direction.
    v = -u + 1e-6
    assert np.all(np.isfinite(compose(np.stack([u, v]), "f_ind")))


def test_errors_name_item_and_step() -> None:
    # f_ind: step 1 gives (1, 1) exactly, step 2 adds (−1, −1): u + v = 0 with q = 4.
    items = [np.ones((2, 2)), np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])]
    flat, offsets = pack_token_vectors(items)
    with pytest.raises(NormtestError, match="no direction at item 1, token step 2"):
        compose_batch(flat, offsets, "f_ind")
    # α < |β|/2: the square root's argument turns negative at step 2 of item 1.
    items = [np.ones((2, 2)), np.array([[1.0, 1.0], [2.0, 0.0], [-3.0, -1.0]])]
    flat, offsets = pack_token_vectors(items)
    with pytest.raises(NormtestError, match="undefined at item 1, token step 2"):
        compose_batch(flat, offsets, "F[1,-2.5]")


def test_non_finite_alpha_beta_raise() -> None:
    with pytest.raises(NormtestError, match="finite"):
        f_alpha_beta(np.ones(2), np.ones(2), np.inf, 0.0)
    with pytest.raises(NormtestError, match="finite"):
        fold(np.ones((2, 2)), 1.0, np.nan)


@pytest.mark.parametrize("name", NAMES)
def test_single_vector_and_float32(name: str) -> None:
    v = np.array([[1.0, -2.0, 0.5]], dtype=np.float32)
    out = compose(v, name)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, v[0].astype(np.float64))


def test_reductions_on_a_known_example() -> None:
    tokens = np.array([[1.0, 0.0], [3.0, 4.0], [2.0, 2.0]])
    np.testing.assert_allclose(compose(tokens, "sum"), [6.0, 6.0])
    np.testing.assert_allclose(compose(tokens, "mean"), [2.0, 2.0])
    np.testing.assert_allclose(compose(tokens, "sqrt_n"), [6 / np.sqrt(3), 6 / np.sqrt(3)])
    np.testing.assert_array_equal(compose(tokens, "first"), [1.0, 0.0])
    np.testing.assert_array_equal(compose(tokens, "last"), [2.0, 2.0])
    # f_ind: squared norm 1 + 25 + 8 = 34, direction that of the running (normalised) sum.
    assert np.isclose(np.sum(compose(tokens, "f_ind") ** 2), 34.0)
    # f_joint of the first two: 1 + 25 − 3 = 23.
    assert np.isclose(np.sum(compose(tokens[:2], "f_joint") ** 2), 23.0)
    # f_inf of the first two: β = 1/5, so 1 + 25 − 3/5.
    assert np.isclose(np.sum(compose(tokens[:2], "f_inf") ** 2), 26.0 - 0.6)


@pytest.mark.parametrize("direction", ["left", "right"])
@pytest.mark.parametrize("name", [*NAMES, "F[0.5,0.3]", "F[2,-1]"])
def test_batch_equals_loop(name: str, direction: str) -> None:
    items, flat, offsets = _batch()
    batched = compose_batch(flat, offsets, name, direction=direction)  # type: ignore[arg-type]
    looped = np.stack([compose(item, name, direction=direction) for item in items])  # type: ignore[arg-type]
    assert batched.shape == (len(items), flat.shape[1])
    np.testing.assert_allclose(batched, looped, rtol=1e-12, atol=1e-12)


def test_right_fold_is_left_fold_of_reversed_tokens() -> None:
    tokens = np.random.default_rng(3).normal(size=(5, 3))
    for name in ("f_ind", "f_joint", "f_inf", "f_avg", "F[0.7,0.4]"):
        np.testing.assert_allclose(compose(tokens, name, direction="right"),
                                   compose(tokens[::-1], name), rtol=1e-13, atol=1e-13)
    left, right = compose(tokens, "f_joint"), compose(tokens, "f_joint", direction="right")
    assert not np.allclose(left, right)  # the fold direction matters for F in general


def test_fold_matches_named_and_batch() -> None:
    items, flat, offsets = _batch(seed=5)
    np.testing.assert_array_equal(fold_batch(flat, offsets, 1.0, 1.0),
                                  compose_batch(flat, offsets, "f_joint"))
    np.testing.assert_array_equal(fold(items[3], 1.0, 0.0), compose(items[3], "f_ind"))


def test_f_fold_is_vectorised_across_items(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    original = compose_module._f_rows

    def counting(*args: object, **kwargs: object) -> np.ndarray:
        calls.append(args[0].shape[0])  # type: ignore[attr-defined]
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(compose_module, "_f_rows", counting)
    _, flat, offsets = _batch()
    compose_batch(flat, offsets, "f_joint")
    assert len(calls) == max(RNG_LENGTHS) - 1  # one numpy step per token position, not per item
    assert calls[0] == sum(n > 1 for n in RNG_LENGTHS)


def test_offsets_validation() -> None:
    flat = np.ones((5, 2))
    with pytest.raises(NormtestError, match="start at 0 and end"):
        compose_batch(flat, [0, 2, 4], "sum")
    with pytest.raises(NormtestError, match="start at 0 and end"):
        compose_batch(flat, [1, 5], "sum")
    with pytest.raises(NormtestError, match=r"item 1 .*no token vectors"):
        compose_batch(flat, [0, 2, 2, 5], "sum")
    with pytest.raises(NormtestError, match="integers"):
        compose_batch(flat, [0.0, 2.5, 5.0], "sum")
    with pytest.raises(NormtestError, match="at least two entries"):
        compose_batch(flat, [5], "sum")
    np.testing.assert_array_equal(compose_batch(flat, [0.0, 2.0, 5.0], "sum"), [[2, 2], [3, 3]])


def test_offsets_helpers() -> None:
    np.testing.assert_array_equal(offsets_from_lengths(np.array([2, 1, 3])), [0, 2, 3, 6])
    with pytest.raises(NormtestError, match="≥ 1"):
        offsets_from_lengths(np.array([2, 0]))
    with pytest.raises(NormtestError, match="integers"):
        offsets_from_lengths(np.array([1.5]))
    with pytest.raises(NormtestError, match="non-empty"):
        offsets_from_lengths(np.array([], dtype=int))
    with pytest.raises(NormtestError, match="different dimensions"):
        pack_token_vectors([np.ones((1, 2)), np.ones((1, 3))])
    with pytest.raises(NormtestError, match="no items"):
        pack_token_vectors([])
    with pytest.raises(NormtestError, match="item 1"):
        pack_token_vectors([np.ones((1, 2)), np.ones((0, 2))])


def test_vectorised_reductions_on_a_large_batch() -> None:
    rng = np.random.default_rng(7)
    lengths = rng.integers(1, 6, size=20_000)
    flat = rng.normal(size=(int(lengths.sum()), 8))
    offsets = offsets_from_lengths(lengths)
    sums = compose_batch(flat, offsets, "sum")
    starts = offsets[:-1]
    np.testing.assert_allclose(sums[123], flat[starts[123] : starts[123] + lengths[123]].sum(0))
    np.testing.assert_allclose(compose_batch(flat, offsets, "mean"), sums / lengths[:, None])
    np.testing.assert_allclose(compose_batch(flat, offsets, "sqrt_n"),
                               sums / np.sqrt(lengths)[:, None])
    np.testing.assert_array_equal(compose_batch(flat, offsets, "first"), flat[starts])
    np.testing.assert_array_equal(compose_batch(flat, offsets, "last"), flat[offsets[1:] - 1])


@pytest.mark.parametrize("name", [*NAMES, "F[0.5,0.3]"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_segments_equal_the_batch_of_their_rows(name: str, dtype: type) -> None:
    """Items as row ranges of one array, with rows left out between them, shared, and at the
    end: the same numbers, bit for bit, as composing the gathered rows (in float64)."""
    rng = np.random.default_rng(11)
    flat = rng.normal(size=(60, 5)).astype(dtype)
    starts = np.array([1, 5, 5, 20, 40, 57])
    lengths = np.array([3, 9, 2, 1, 15, 3])  # the last one ends at the last row
    for direction in ("left", "right"):
        got = compose_segments(flat, starts, lengths, name, direction=direction)  # type: ignore[arg-type]
        rows = np.concatenate([np.arange(s, s + n) for s, n in zip(starts, lengths, strict=True)])
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        want = compose_batch(flat[rows].astype(np.float64), offsets, name,
                             direction=direction)  # type: ignore[arg-type]
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, want)


def test_segments_are_checked() -> None:
    flat = np.ones((4, 2))
    with pytest.raises(NormtestError, match="inside the array"):
        compose_segments(flat, [3], [2], "sum")
    with pytest.raises(NormtestError, match="at least one row"):
        compose_segments(flat, [0], [0], "sum")
    with pytest.raises(NormtestError, match="one size"):
        compose_segments(flat, [0, 1], [1], "sum")
    with pytest.raises(NormtestError, match="NaN"):
        compose_segments(np.array([[1.0, np.nan]]), [0], [1], "mean")
    with pytest.raises(NormtestError, match="float32 or float64"):
        compose_segments(np.ones((2, 2), dtype=np.int64), [0], [1], "mean")
