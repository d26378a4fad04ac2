"""What a trivial predictor already explains, and what a norm carries beyond it
(docs/statistics.md, "Baselines and the beyond reading").

A correspondence between ‖e‖² and information is only interesting beyond what a trivial
predictor of the information already gives: the number of subword tokens of a word (rare words
take more tokens), the length of a text (surprisal grows with it). Two measurements sit beside
every correlational row that declares such a *baseline*:

- **baseline**: Spearman ρ(information, baseline) on the same rows and the same draws — how much
  of the correspondence the trivial predictor reaches on its own;
- **beyond**: the rank correlation of the information and the norm *within* strata of the
  baseline (:func:`measure_within_strata`): Spearman's ρ in each stratum — every token count of a
  word, or adjacent lengths of a text merged until each stratum holds :data:`MIN_STRATUM` rows
  (:func:`strata`) — pooled over the strata by Fisher's z, weighted by n − 3 (a stratified
  Spearman). A norm that is a monotone function of another inside every stratum (‖mean‖² =
  ‖sqrt_n‖²/n for one token count) gets the same value, so a contrast of such compositions is 0
  by construction; a norm that is a function of the baseline plus noise reads about 0 however
  strongly the baseline predicts the information. Each stratum's own ρ is kept beside the pooled
  one (``settings["strata"]``).

Conditioning on a baseline that carries much of the information shrinks every correlation: a
norm that carries the information alone, at the claim's threshold ρ, reads well under ρ within
the strata (0.206 for ρ = 0.3 on MiniLM-L6's default 5,000 words). The beyond reading is therefore
judged against that attenuated value on the audit's own design — :func:`attenuation`, the
expected within-strata ρ of a norm that depends on the information alone, as a function of its
marginal ρ, simulated on the audit's information and strata and stored with the measurement
(``settings["attenuation"]``), so that a re-judged report re-derives it for another threshold.

Both are measured with the headline's own resampling (units or clusters, seed, B), so their
intervals are as honest as the headline's; the beyond ρ is judged against the claim's own
threshold carried to the strata (:func:`attenuation`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from normtest.base.kept import kept
from normtest.errors import NormtestError
from normtest.stats import bootstrap
from normtest.stats._inputs import as_vector, check_resamples, group_codes, same_length
from normtest.stats._spearman import Spearman
from normtest.stats.bootstrap import digest
from normtest.stats.contrast import measure_contrast, measure_correlation_contrast
from normtest.stats.correlation import measure_correlation, measure_partial_correlation
from normtest.verdict.formatting import BY_IDENTITY
from normtest.verdict.measurement import Measurement
from normtest.verdict.sampling import Sampling

__all__ = ["MAX_STRATA", "MIN_STRATUM", "attenuation", "beyond_threshold",
           "conditional_permutation_excess", "exact_strata", "measure_baseline",
           "measure_baseline_contrast", "measure_within_strata", "strata", "strata_of",
           "within_strata_estimate"]

#: The fewest rows a stratum of the baseline holds (adjacent values are merged until it does).
MIN_STRATUM = 20
#: The most strata a baseline is cut into (adjacent values merged further beyond that).
MAX_STRATA = 12

Interval = Literal["bootstrap", "analytic"]


def strata(baseline: ArrayLike, min_size: int = MIN_STRATUM,
           max_strata: int = MAX_STRATA) -> np.ndarray:
    """Stratum codes 0..k−1 of each row: the baseline's distinct values in order, adjacent ones
    merged until each stratum holds at least ``max(min_size, n / max_strata)`` rows (a last
    stratum short of it joins the one before). A baseline of few values (token counts) keeps
    one stratum per value wherever each is common enough."""
    values = np.asarray(baseline, dtype=np.float64)
    if values.ndim != 1:
        raise NormtestError(f"a baseline must be one value per row, got shape {values.shape}")
    if values.size == 0:
        return np.zeros(0, dtype=np.intp)
    distinct, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    floor = max(int(min_size), math.ceil(values.size / max(int(max_strata), 1)))
    code_of = np.empty(distinct.size, dtype=np.intp)
    code, held = 0, 0
    for i, c in enumerate(counts):
        code_of[i] = code
        held += int(c)
        if held >= floor:
            code, held = code + 1, 0
    if held and code > 0:  # the last stratum is short: it joins the one before
        code_of[code_of == code] = code - 1
    return code_of[inverse]


def exact_strata(baseline: ArrayLike, min_size: int = MIN_STRATUM) -> np.ndarray:
    """Stratum codes 0..k−1, one per distinct baseline value that at least ``min_size`` rows
    share, and −1 for the rows of rarer values (left out of a within-strata reading: too few to
    rank). Nothing is merged, so a norm rescaled by any function of the baseline ranks the same
    inside every stratum."""
    values = np.asarray(baseline, dtype=np.float64)
    distinct, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    kept = counts >= min_size
    code_of = np.full(distinct.size, -1, dtype=np.intp)
    code_of[kept] = np.arange(int(kept.sum()))
    return code_of[inverse] if values.size else np.zeros(0, dtype=np.intp)


def strata_of(baseline: ArrayLike) -> np.ndarray:
    """The strata a beyond reading ranks within: every value of a baseline of few values (a
    word's token count: :func:`exact_strata`), else adjacent values merged (a text's length:
    :func:`strata`)."""
    values = np.asarray(baseline, dtype=np.float64)
    if np.unique(values).size <= 2 * MAX_STRATA:
        return exact_strata(values)
    return strata(values)


class _WithinStrata:
    """The stratified Spearman ρ as a function of (b, n) resampling weights: each stratum's
    weighted Spearman ρ, pooled by Fisher's z with weights n_s − 3 (n_s: the stratum's weight in
    the resample); a stratum of fewer than four drawn rows, or an undefined ρ, weighs 0."""

    def __init__(self, x: np.ndarray, y: np.ndarray, codes: np.ndarray) -> None:

        self.parts = []
        for code in range(int(codes.max()) + 1 if codes.size else 0):
            rows = np.flatnonzero(codes == code)
            if rows.size >= 4 and np.ptp(x[rows]) > 0 and np.ptp(y[rows]) > 0:
                self.parts.append((code, rows, Spearman(x[rows], y[rows])))

    def _pool(self, w: np.ndarray, each: Any) -> np.ndarray:
        sizes, rhos = [], []
        for _, rows, spearman in self.parts:
            part = np.ascontiguousarray(w[:, rows])
            sizes.append(part.sum(axis=1))
            with np.errstate(invalid="ignore", divide="ignore"):
                rhos.append(each(spearman, part))
        return _fisher_pool(np.array(sizes).reshape(-1, w.shape[0]),
                            np.array(rhos).reshape(-1, w.shape[0]))

    def __call__(self, w: np.ndarray) -> np.ndarray:
        return self._pool(w, lambda spearman, part: spearman(part))

    def each(self) -> list[tuple[int, int, float]]:
        """(stratum code, rows, ρ) of every stratum ranked, on the sample itself."""
        return [(code, int(rows.size), float(spearman.explicit(np.ones((1, rows.size)))[0]))
                for code, rows, spearman in self.parts]


def measure_within_strata(
    information: ArrayLike, norms: ArrayLike, baseline: ArrayLike, *,
    units: ArrayLike | None = None, clusters: ArrayLike | None = None,
    n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05,
    interval: Interval = "bootstrap", codes: ArrayLike | None = None,
) -> Measurement:
    """The stratified Spearman ρ of ``information`` and ``norms`` within the strata of
    ``baseline`` (:func:`strata_of`), resampled as the headline is (``units`` or ``clusters``,
    ``seed``, B): bootstrap replicates on the headline's own draws, or, with ``interval=
    "analytic"``, a Fisher z interval (the Bonett–Wright variance, pooled). Its settings hold each
    stratum's rows and ρ and the :func:`attenuation` of the design.

    ``codes`` (one non-negative integer per row, −1 to leave a row out) gives the strata
    instead — each document of a text sample, say (the within-document reading); such a
    reading is reported, not judged, so no attenuation curve is simulated for it."""

    n_resamples = check_resamples(n_resamples)
    x, y = as_vector("information", information), as_vector("norms", norms)
    base = as_vector("baseline", baseline)
    n = same_length(information=x, norms=y, baseline=base)
    given = codes is not None
    codes = strata_of(base) if codes is None else np.unique(
        np.asarray(codes), return_inverse=True)[1].astype(np.intp)
    if given and codes.size != n:
        raise NormtestError(f"codes must give one stratum per row ({n}), got {codes.size}")
    clustered = None if clusters is None else group_codes("clusters", clusters, n)
    if units is not None:  # rows in unit-label order: each unit draws the headline's weight
        order = np.argsort(group_codes("units", units, n), kind="stable")
        x, y, codes, base = x[order], y[order], codes[order], base[order]
    statistic, label = ("within_strata_spearman", "Spearman ρ within baseline strata") \
        if not given else ("within_group_spearman", "Spearman ρ within the given groups")
    drawn = units if units is not None else clusters
    seeded = isinstance(seed, int | np.integer) and not isinstance(seed, bool)
    draws = None if drawn is None or not seeded or interval == "analytic" else (
        bootstrap.draws_digest("units" if units is not None else "clusters",
                               bootstrap.labels_digest(drawn), n_resamples, seed))
    inputs = None if not seeded else bootstrap.digest(
        x, y, codes, clustered, np.array([n_resamples, seed]), np.array([alpha]),
        np.frombuffer(f"{statistic};{interval};{draws}".encode(), np.uint8))
    kept = int((codes >= 0).sum())

    def measure() -> Measurement:  # only for inputs not measured before (the memo)
        stat = _WithinStrata(x, y, codes)
        each = stat.each()
        settings: dict[str, object] = {
            "strata": [{"baseline": str(code) if given else _stratum_label(base, codes, code),
                        "n": rows,
                        "rho": round(rho, 6) if math.isfinite(rho) else None}
                       for code, rows, rho in each],
            "left_out": int((codes < 0).sum()),
            "attenuation": [] if given else [[round(a, 4), round(b, 6)]
                                             for a, b in attenuation(x, codes)
                                             if math.isfinite(b)],
            "n_resamples": n_resamples}
        estimate = float(_fisher_pool(np.array([[float(rows)] for _, rows, _ in each]),
                                      np.array([[rho] for _, _, rho in each]))[0]) \
            if each else math.nan
        if not math.isfinite(estimate):
            return Measurement.not_estimable(
                statistic, kept, label, "no stratum of the baseline holds enough rows to rank "
                f"(each needs {MIN_STRATUM})", seed=seed, settings=settings, inputs=inputs)
        if interval == "analytic":
            weight = sum(rows - 3 for _, rows, _ in each)
            r = min(max(estimate, -1 + 1e-12), 1 - 1e-12)
            sampling = Sampling("fisher_z", center=math.atanh(r),
                                scale=math.sqrt((1 + r * r / 2) / max(weight, 1)))
            how = f"{label}, pooled Fisher z interval (Bonett–Wright)"
        else:
            reps = bootstrap.replicates(stat, n, n_resamples, seed, clustered)
            sampling = Sampling.bootstrap(reps, estimate, units=None if clustered is None
                                          or clustered.ndim != 1 else int(clustered.max()) + 1)
            unit = "rows drawn by unit" if units is not None else (
                "rows" if clustered is None else f"{int(clustered.max()) + 1} clusters")
            how = f"{label}, percentile bootstrap over {unit} (B={n_resamples})"
        return Measurement(statistic=statistic, estimate=estimate, n=kept, method=how,
                           sampling=sampling, confidence=1 - 2 * alpha, seed=seed,
                           settings=settings, inputs=inputs,
                           draws=draws if sampling.kind == "bootstrap" else None)

    return bootstrap.remembered(inputs, measure)


def within_strata_estimate(information: ArrayLike, norms: ArrayLike,
                           baseline: ArrayLike) -> tuple[float, int]:
    """(the stratified Spearman ρ of :func:`measure_within_strata`, the rows it ranks) on these
    rows alone, without an interval: a breakdown beside a measured one (by source, say)."""
    x = np.asarray(information, dtype=np.float64)
    y = np.asarray(norms, dtype=np.float64)
    codes = strata_of(np.asarray(baseline, dtype=np.float64))
    each = _WithinStrata(x, y, codes).each() if x.size else []
    if not each:
        return math.nan, 0
    estimate = _fisher_pool(np.array([[float(rows)] for _, rows, _ in each]),
                            np.array([[rho] for _, _, rho in each]))[0]
    return float(estimate), int(sum(rows for _, rows, _ in each))


def _fisher_pool(sizes: np.ndarray, rhos: np.ndarray) -> np.ndarray:
    """Fisher's z pooling over strata (rows of ``sizes`` and ``rhos``, one column per
    resample), weights size − 3; a ρ that is undefined, or a stratum of three rows or fewer,
    weighs 0; NaN where nothing is left."""
    r = np.clip(rhos, -1 + 1e-12, 1 - 1e-12)
    weight = np.where(np.isfinite(r) & (sizes > 3), sizes - 3, 0.0)
    top = (weight * np.arctanh(np.nan_to_num(r))).sum(axis=0)
    bottom = weight.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(bottom > 0, np.tanh(top / np.where(bottom > 0, bottom, 1.0)), np.nan)


def _stratum_label(base: np.ndarray, codes: np.ndarray, k: int) -> str:
    values = base[codes == k]
    low, high = float(values.min()), float(values.max())
    return f"{low:g}" if low == high else f"{low:g}–{high:g}"


#: The marginal ρ at which :func:`attenuation` is simulated (a threshold between is
#: interpolated), and how many norms it draws at each.
_GRID = tuple(round(0.05 * k, 2) for k in range(1, 20))
_SIMULATED = 256
_SEED = 20250734
_ATTENUATION: dict[str, list[tuple[float, float]]] = {}


def attenuation(information: ArrayLike, codes: ArrayLike) -> list[tuple[float, float]]:
    """(ρ, expected within-strata ρ) on a grid of ρ: what the beyond reading of a norm that
    depends on the information alone shows on this design when its marginal Spearman ρ with the
    information is ρ. The norm is drawn from a Gaussian copula, r·z + √(1 − r²)·ε with z the
    normal scores of the information and r = 2 sin(πρ/6) (Spearman's ρ of a binormal pair),
    :data:`_SIMULATED` times per ρ with a fixed seed; kept per design (in this process, and
    between processes by :func:`normtest.base.kept.kept`)."""
    x = np.asarray(information, dtype=np.float64)
    strata_codes = np.asarray(codes, dtype=np.intp)
    key = digest(x, strata_codes)
    if key not in _ATTENUATION:  # a pure function of the design: kept between processes too
        _ATTENUATION[key] = kept(
            "attenuation", {"design": key, "grid": _GRID, "simulated": _SIMULATED,
                            "seed": _SEED},
            lambda: [list(point) for point in _simulated(x, strata_codes)],
            lambda found: [(float(rho), float(within)) for rho, within in found])
    return _ATTENUATION[key]


def _simulated(x: np.ndarray, strata_codes: np.ndarray) -> list[tuple[float, float]]:
    """:func:`attenuation`'s curve, simulated."""
    from scipy import special

    n = x.size
    z = special.ndtri((_ranks(x) - 0.5) / max(n, 1)) if n else x
    rng = np.random.default_rng(_SEED)
    noise = rng.standard_normal((_SIMULATED, n))
    groups = [np.flatnonzero(strata_codes == c) for c in range(int(strata_codes.max()) + 1)] \
        if n else []
    groups = [g for g in groups if g.size >= 4]
    x_ranks = [_ranks(x[g]) for g in groups]
    ranks_of = {g.size: np.broadcast_to(np.arange(g.size, dtype=np.float64), (_SIMULATED, g.size))
                for g in groups}
    curve = []
    for rho in _GRID:
        r = 2 * math.sin(math.pi * rho / 6)
        norms = r * z + math.sqrt(1 - r * r) * noise
        top, bottom = np.zeros(_SIMULATED), 0.0
        for g, rx in zip(groups, x_ranks, strict=True):
            order = np.argsort(norms[:, g], axis=1)
            ry = np.empty(order.shape)  # ranks, without a second sort
            np.put_along_axis(ry, order, ranks_of[g.size], axis=1)
            a = rx - rx.mean()
            b = ry - ry.mean(axis=1, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                rs = (b @ a) / np.sqrt((a @ a) * (b * b).sum(axis=1))
            top += (g.size - 3) * np.arctanh(np.clip(np.nan_to_num(rs), -1 + 1e-12, 1 - 1e-12))
            bottom += g.size - 3
        curve.append((rho, float(np.tanh(top / bottom).mean()) if bottom > 0 else math.nan))
    return curve


def _ranks(values: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return np.asarray(rankdata(values), dtype=np.float64)


def beyond_threshold(curve: Sequence[Sequence[float]], threshold: float) -> float:
    """The beyond reading's threshold for a claim threshold ρ: the :func:`attenuation` curve
    read at ρ (linear between its points, 0 at ρ = 0, the identity at ρ = 1)."""
    points = [(0.0, 0.0)] + [(float(a), float(b)) for a, b in curve
                             if math.isfinite(float(b))] + [(1.0, 1.0)]
    xs, ys = zip(*points, strict=True)
    return float(np.interp(threshold, xs, ys))


def measure_baseline(
    information: ArrayLike, norms: ArrayLike, baseline: ArrayLike, *,
    units: ArrayLike | None = None, clusters: ArrayLike | None = None,
    n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05,
    interval: Interval = "bootstrap", readings: bool = True,
) -> dict[str, Measurement]:
    """The measurements beside one correlational row (see the module doc), resampled as the
    headline is (``units`` or ``clusters``, ``seed``, ``n_resamples``):

    - ``baseline``: ρ(information, baseline);
    - ``beyond``: the within-strata ρ(information, norms) (:func:`measure_within_strata`);
    - ``difference`` (with ``readings``): ρ(information, norms) − ρ(information, baseline) on
      the same draws (paired; :func:`~normtest.stats.contrast.measure_correlation_contrast`) —
      below 0 where the baseline alone predicts the information better than the norm;
    - ``artefact`` (with ``readings``): the partial Spearman ρ(norms, baseline | information),
      how strongly the norm follows the baseline once the information is held fixed (the
      direct reading of a length artefact; reported, not judged, so read by Fisher's z with the
      Bonett–Wright standard error where rows are drawn alone, by the cluster bootstrap where
      they come in clusters)."""

    out = {"baseline": measure_correlation(
               information, baseline, units=units, clusters=clusters, n_resamples=n_resamples,
               seed=seed, alpha=alpha, interval=interval),
           "beyond": measure_within_strata(
               information, norms, baseline, units=units, clusters=clusters,
               n_resamples=n_resamples, seed=seed, alpha=alpha, interval=interval)}
    if readings:
        out["difference"] = measure_correlation_contrast(
            information, norms, baseline, units=units, clusters=clusters,
            n_resamples=n_resamples, seed=seed, alpha=alpha, interval=interval)
        # reported, not judged: Fisher's z where it holds (rows drawn alone; a resampled
        # partial ρ costs twice a plain one), the cluster bootstrap where rows come in clusters
        out["artefact"] = measure_partial_correlation(
            norms, baseline, information, units=units, clusters=clusters,
            n_resamples=n_resamples, seed=seed, alpha=alpha, interval="analytic")
    return out


def measure_baseline_contrast(
    information: ArrayLike, first: ArrayLike, second: ArrayLike, baseline: ArrayLike, *,
    units: ArrayLike | None = None, n_resamples: int = 1000, seed: int = 0,
    alpha: float = 0.05, interval: Interval = "bootstrap",
) -> dict[str, Measurement]:
    """The ``baseline`` and ``beyond`` measurements of a contrast row: ρ(information, baseline),
    and the difference of the two compositions' beyond ρ on the same draws (its null
    expectation under the baseline is 0, not the difference of the plain ρ). With analytic
    intervals the difference is read as normal with the variances added (no credit for their
    correlation: conservative)."""

    a = measure_baseline(information, first, baseline, units=units, n_resamples=n_resamples,
                         seed=seed, alpha=alpha, interval=interval, readings=False)
    b = measure_baseline(information, second, baseline, units=units, n_resamples=n_resamples,
                         seed=seed, alpha=alpha, interval=interval, readings=False)
    one, two = a["beyond"], b["beyond"]
    name = f"{one.statistic}_difference"
    if _same_within_strata(one, two):
        return {"baseline": a["baseline"], "beyond": Measurement(
            statistic=name, estimate=0.0, n=one.n, method="difference of two beyond ρ",
            confidence=one.confidence, seed=one.seed, components={"first": one, "second": two},
            reason="the two compositions rank every stratum of the baseline alike (one is a "
                   "function of the other and the baseline), so their beyond difference is "
                   f"{BY_IDENTITY}: beyond the baseline they are one composition")}
    if interval == "bootstrap" and one.sampling is not None and two.sampling is not None \
            and one.inputs != two.inputs:
        beyond = measure_contrast(one, two)
    else:
        beyond = _normal_difference(name, one, two, alpha)
    return {"baseline": a["baseline"], "beyond": beyond}


def _same_within_strata(one: Measurement, two: Measurement) -> bool:
    """Whether two beyond measurements are one: the same estimate and, where bootstrapped, the
    same replicates, to the bit (two compositions that rank every stratum alike)."""
    if one.estimate != two.estimate or not math.isfinite(one.estimate):
        return False
    if one.sampling is None or two.sampling is None:
        return one.sampling is two.sampling
    a, b = one.sampling, two.sampling
    if a.kind != "bootstrap" or b.kind != "bootstrap":
        return (a.kind, a.center, a.scale, a.df) == (b.kind, b.center, b.scale, b.df)
    return bool(np.array_equal(a.replicates, b.replicates))


def _normal_difference(name: str, one: Measurement, two: Measurement,
                       alpha: float) -> Measurement:
    """``one − two`` read as normal, each part's variance from its own interval (added)."""
    parts = {"first": one, "second": two}
    method = "difference of two beyond ρ, normal with the variances added (conservative)"
    missing = [f"{p}: {m.reason or 'not estimable'}" for p, m in parts.items()
               if m.sampling is None or not math.isfinite(m.estimate)]
    if not missing and one.inputs is not None and one.inputs == two.inputs:
        missing = ["the two variants are one measurement on these data"]
    if missing:
        return Measurement.not_estimable(name, one.n, method, "; ".join(missing),
                                         seed=one.seed, components=parts)
    z = float(_ndtri(1 - alpha))
    spreads = [(high - low) / (2 * z) for low, high in
               (m.interval(1 - 2 * alpha) for m in (one, two))]
    scale = math.sqrt(sum(s * s for s in spreads))
    estimate = one.estimate - two.estimate
    if not scale > 0:
        return Measurement.not_estimable(name, one.n, method, "the difference has no spread",
                                         seed=one.seed, components=parts)
    return Measurement(statistic=name, estimate=estimate, n=one.n, method=method,
                       sampling=Sampling("normal", center=estimate, scale=scale),
                       confidence=1 - 2 * alpha, seed=one.seed, components=parts)


def _ndtri(p: float) -> float:
    from scipy import special

    return float(special.ndtri(p))


def conditional_permutation_excess(information: ArrayLike, norms: ArrayLike,
                                   baseline: ArrayLike, permutations: int = 200,
                                   seed: int = 0) -> dict[str, Any]:
    """An independent check of the beyond reading: Spearman ρ(information, norms), its mean
    and spread with the norms shuffled among the rows of each baseline value (every token
    count), and the excess ρ − E_perm[ρ] (docs/statistics.md)."""
    from scipy.stats import rankdata, spearmanr

    x = np.asarray(information, dtype=np.float64)
    y = np.asarray(norms, dtype=np.float64)
    codes = np.unique(np.asarray(baseline, dtype=np.float64), return_inverse=True)[1]
    rng = np.random.default_rng(seed)
    observed = float(spearmanr(x, y).statistic)
    ry = rankdata(y)
    rx = rankdata(x)
    groups: Sequence[np.ndarray] = [np.flatnonzero(codes == c) for c in np.unique(codes)]
    null = np.empty(permutations)
    for b in range(permutations):
        shuffled = ry.copy()
        for g in groups:
            shuffled[g] = ry[rng.permutation(g)]
        null[b] = float(np.corrcoef(rx, shuffled)[0, 1])
    return {"rho": observed, "null_mean": float(null.mean()), "null_sd": float(null.std()),
            "excess": observed - float(null.mean()),
            "p_value": float((1 + np.sum(null >= observed)) / (1 + permutations))}
