"""Layer profiles: each claim's effect by layer, from the rows of a ``--layers`` audit.

A layer profile measures the word, text and CER claims at every representation (the input
embedding rows, hidden states 0 … L−1 and the last layer). Its rows below the last layer are
exploratory (Benjamini–Hochberg, like every exploratory row); the last layer's rows are the
audit's own. This module picks, per claim, the variants worth following across layers — those
whose last-layer row is confirmatory, else the claim's first variant — and draws or tabulates
their estimate and interval by layer, so that a reader sees where a correspondence appears and
where CLS/EOS start to converge.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from normtest.errors import NormtestError
from normtest.render.plots import COLOURS, figure, limits, save, svg
from normtest.verdict.formatting import interval as _interval
from normtest.verdict.formatting import number as _number
from normtest.verdict.result import Result

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["MIN_LAYERS", "Profile", "in_profile", "layer_plot", "layer_position",
           "layer_profiles", "layer_table", "profile_summary", "report_profiles",
           "save_layer_plot", "why_no_profile"]

#: Lines drawn per claim (the rest are in the report's rows).
MAX_LINES = 4
#: The fewest representations a profile follows a row across.
MIN_LAYERS = 3


def layer_position(representation: str, n_layers: int) -> float:
    """Where a representation sits on a layer axis: input −1, hidden state k at k, last at L."""
    if representation == "input":
        return -1.0
    if representation == "last":
        return float(n_layers)
    return float(representation)


@dataclass(frozen=True)
class Profile:
    """One variant of one claim followed across layers (rows in layer order)."""

    claim: str
    #: the variant's other axes, values only (``sqrt_n, raw``)
    label: str
    rows: tuple[Result, ...]
    positions: tuple[float, ...]

    @property
    def best(self) -> Result:
        """The row with the largest estimate (the layer where the effect peaks)."""
        finite = [r for r in self.rows if math.isfinite(r.estimate)]
        return max(finite or list(self.rows), key=lambda r: r.estimate
                   if math.isfinite(r.estimate) else -math.inf)


def layer_profiles(results: Sequence[Result], n_layers: int) -> list[Profile]:
    """The profiles of a report's rows: per claim, up to :data:`MAX_LINES` variants measured at
    :data:`MIN_LAYERS` or more representations (confirmatory-at-the-last-layer first)."""
    groups: dict[tuple[str, str], list[Result]] = {}
    for r in results:
        if r.claim is None or "representation" not in r.variant or r.estimate is None:
            continue
        rest = {k: v for k, v in r.variant.items() if k != "representation"}
        groups.setdefault((r.claim, ", ".join(rest.values())), []).append(r)
    by_claim: dict[str, list[Profile]] = {}
    for (claim, label), rows in groups.items():
        if len(rows) < MIN_LAYERS:
            continue
        rows.sort(key=lambda r: layer_position(r.variant["representation"], n_layers))
        positions = tuple(layer_position(r.variant["representation"], n_layers) for r in rows)
        by_claim.setdefault(claim, []).append(Profile(claim, label, tuple(rows), positions))
    out: list[Profile] = []
    for found in by_claim.values():
        headline = [p for p in found if p.rows[-1].confirmatory]
        out.extend((headline or found[:1])[:MAX_LINES])
    return out


def _ranges(names: Sequence[str]) -> str:
    """``1–4, last``: runs of consecutive layer numbers joined by a dash."""
    parts: list[str] = []
    run: list[int] = []

    def flush() -> None:
        if run:
            parts.append(str(run[0]) if len(run) == 1 else f"{run[0]}–{run[-1]}")
            run.clear()

    for name in names:
        if name.isdigit() and (not run or int(name) == run[-1] + 1):
            run.append(int(name))
            continue
        flush()
        if name.isdigit():
            run.append(int(name))
        else:
            parts.append(name)
    flush()
    return ", ".join(parts)


def profile_summary(profile: Profile) -> str:
    """One line: the layers at which the row passes, and where a "greater than" effect peaks."""
    text = f"{profile.claim}[{profile.label}]: "
    passing = [r.variant["representation"] for r in profile.rows if r.verdict.value == "PASS"]
    if not passing:
        text += "PASS at no layer"
    elif len(passing) == len(profile.rows):
        text += "PASS at every layer"
    else:
        text += f"PASS at layers {_ranges(passing)} of {len(profile.rows)}"
    criterion = profile.rows[-1].criterion
    if criterion is not None and criterion.direction == "greater":
        best = profile.best
        text += (f"; peak {_number(best.estimate)} {_interval(best)} at layer "
                 f"{best.variant['representation']}")
    return text


def layer_table(profiles: Sequence[Profile]) -> list[list[str]]:
    """Rows for a table: claim[variant], then ``estimate VERDICT`` per layer (header first)."""
    layers: list[str] = []
    for p in profiles:
        for r in p.rows:
            if r.variant["representation"] not in layers:
                layers.append(r.variant["representation"])
    out = [["row", *layers]]
    for p in profiles:
        cells = {r.variant["representation"]: f"{_number(r.estimate)} {r.verdict.value}"
                 for r in p.rows}
        out.append([f"{p.claim}[{p.label}]", *(cells.get(x, "") for x in layers)])
    return out


def _grid(profiles: Sequence[Profile]) -> tuple[list[str], int, int]:
    """The claims drawn, and the panel grid's columns and rows."""
    claims = list(dict.fromkeys(p.claim for p in profiles))
    if not claims:
        raise NormtestError("the report has no layer profile (audit with --layers all, or "
                            f"a list of {MIN_LAYERS} or more layers)")
    columns = min(2, len(claims))
    return claims, columns, math.ceil(len(claims) / columns)


def _draw(fig: Figure, profiles: Sequence[Profile], n_layers: int, title: str) -> None:
    """One panel per claim: each followed variant's estimate and interval band by layer."""

    claims, columns, rows = _grid(profiles)
    palette = ["#0969da", "#bf3989", "#1a7f37", "#9a6700"]
    axes = fig.subplots(rows, columns, squeeze=False)
    for ax in axes.ravel()[len(claims):]:
        ax.set_visible(False)
    ticks = [-1, *range(n_layers), n_layers]
    labels = ["in", *(str(i) for i in range(n_layers)), "last"]
    step = max(1, math.ceil(len(ticks) / 12))
    for ax, claim in zip(axes.ravel(), claims, strict=False):
        mine = [p for p in profiles if p.claim == claim]
        first = mine[0].rows[-1]
        t, c = first.threshold, first.criterion
        if isinstance(t, tuple):
            ax.axhspan(t[0], t[1], color=COLOURS["PASS"], alpha=0.08, lw=0)
        elif t is not None and c is not None:
            ax.axhline(float(t), color="#57606a", lw=0.9, ls="--")
        for colour, p in zip(palette, mine, strict=False):
            xs = list(p.positions)
            est = [r.estimate for r in p.rows]
            low = [r.ci[0] for r in p.rows]
            high = [r.ci[1] for r in p.rows]
            ax.fill_between(xs, low, high, color=colour, alpha=0.15, lw=0)
            ax.plot(xs, est, color=colour, lw=1.4, marker="o", ms=2.5, label=p.label)
            for x, r in zip(xs, p.rows, strict=True):
                if r.verdict.value == "PASS":
                    ax.plot([x], [r.estimate], marker="o", ms=4.5, color=colour, mec="white",
                            mew=0.5)
        ax.set_ylim(*limits([r for p in mine for r in p.rows if math.isfinite(r.estimate)]))
        statistic = first.measurement.statistic if first.measurement else "estimate"
        ax.set_title(f"{claim}", loc="left")
        ax.set_ylabel(statistic)
        ax.set_xticks(ticks[::step], labels[::step])
        ax.set_xlabel("layer (in = input embedding rows)")
        ax.grid(axis="y", color="#d0d7de", lw=0.5)
        ax.legend(loc="best", frameon=False)
    if title:
        fig.suptitle(title, x=0.01, ha="left", fontsize=9)


def _size(profiles: Sequence[Profile]) -> tuple[float, float]:
    _, columns, rows = _grid(profiles)
    return 4.2 * columns, 2.6 * rows + (0.4 if rows else 0)


def layer_plot(profiles: Sequence[Profile], n_layers: int, title: str = "") -> str:
    """The layer profile as SVG text (see :func:`save_layer_plot` for a file)."""

    with figure(*_size(profiles)) as fig:
        _draw(fig, profiles, n_layers, title)
        return svg(fig)


def save_layer_plot(profiles: Sequence[Profile], n_layers: int, path: Path,
                    title: str = "") -> Path:
    """Write the layer profile to ``path`` (PNG, or SVG/PDF by its suffix)."""

    with figure(*_size(profiles)) as fig:
        _draw(fig, profiles, n_layers, title)
        return save(fig, path)


def report_profiles(report: object) -> tuple[list[Profile], int] | None:
    """A report's layer profiles and its number of layers, or None when it has no profile."""
    provenance = getattr(report, "provenance", {}) or {}
    n_layers = provenance.get("n_layers")
    if not provenance.get("layers") or not isinstance(n_layers, int):
        return None
    profiles = layer_profiles(getattr(report, "results", ()), n_layers)
    return (profiles, n_layers) if profiles else None


def why_no_profile(report: object) -> str:
    """Why a report has no layer profile (:func:`report_profiles` gave None), and what to do."""
    provenance = getattr(report, "provenance", {}) or {}
    layers = provenance.get("layers")
    if not layers:
        return ("it was audited at the last layer only; audit with --layers all (or a list of "
                "three or more layers, such as --layers 0,3,last) first")
    listed = [str(x) for x in layers]
    if len(listed) < MIN_LAYERS:
        return (f"it was audited at {len(listed)} layer{'s' * (len(listed) != 1)} "
                f"({', '.join(listed)}), and a profile follows a row across at least "
                f"{MIN_LAYERS}; audit with --layers all, or list {MIN_LAYERS} or more (such as "
                "--layers 0,3,last)")
    return (f"it was audited at layers {', '.join(listed)}, but none of its claims has rows at "
            f"{MIN_LAYERS} or more of them (only the word, text and CER claims run at other "
            "layers); audit those claims with --layers")


def in_profile(result: Result) -> bool:
    """Whether a row is one of a profile's hidden layers (below the last; not the input)."""
    return result.variant.get("representation", "last").isdigit()
