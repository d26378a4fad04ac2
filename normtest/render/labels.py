"""What the Markdown and HTML renderings share: families, agreement, labels; and, from
:mod:`normtest.verdict.formatting`, the numbers, intervals and thresholds every rendering writes."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from normtest.claims.catalogue import REFERENCE, get
from normtest.errors import NormtestError
from normtest.verdict.result import Result, Verdict, variant_key

#: Verdicts in the order a summary lists them.
ORDER: tuple[Verdict, ...] = (Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE, Verdict.ERROR,
                              Verdict.SKIPPED)


def confidence(result: Result) -> str:
    """The interval's two-sided level, e.g. ``90%``."""
    alpha = result.criterion.alpha if result.criterion else 0.05
    return f"{100 * (1 - 2 * alpha):g}%"


def p_value(value: float | None) -> str:
    """A p-value to three decimals (``< 0.001`` below)."""
    if value is None or not math.isfinite(value):
        return "—"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def agreement(result: Result) -> str | None:
    """:attr:`Result.agreement`: ``yes``, ``NO``, ``undecided`` or None."""
    return result.agreement


def variant_label(result: Result) -> str:
    """The variant in words for a row label; the claim id when there is no variant."""
    return (variant_key(result.shown_variant, ", ")
            or (result.claim or result.id))


def row_labels(rows: Sequence[Result]) -> tuple[list[str], str]:
    """Row labels naming only the variant axes that differ between rows, and the shared rest."""
    shown = [r.shown_variant for r in rows]
    axes = list(dict.fromkeys(k for v in shown for k in v))
    varying = [k for k in axes if len({v.get(k) for v in shown}) > 1]
    shared = variant_key({k: shown[0][k] for k in axes if k not in varying and k in shown[0]},
                         ", ")
    if not varying:
        return [variant_label(r) for r in rows], shared if len(rows) > 1 else ""
    labels = [variant_key({k: v[k] for k in varying if k in v}, ", ") or r.id
              for r, v in zip(rows, shown, strict=True)]
    return labels, shared


@dataclass(frozen=True)
class Family:
    """One claim and its results (its variants), in report order."""

    claim: str
    results: tuple[Result, ...]
    statement: str | None

    def count(self, verdict: Verdict) -> int:
        """How many of its results ended in ``verdict``."""
        return sum(r.verdict is verdict for r in self.results)

    @property
    def measured(self) -> tuple[Result, ...]:
        """Results with a finite estimate (what a forest plot can draw)."""
        return tuple(r for r in self.results if math.isfinite(r.estimate))


def statement(claim: str) -> str | None:
    """The catalogue's statement of a claim, or None for a claim it does not hold."""

    try:
        return get(claim).statement
    except NormtestError:
        return None


def families(results: Sequence[Result]) -> list[Family]:
    """Results grouped by claim, in order of first appearance."""
    grouped: dict[str, list[Result]] = {}
    for r in results:
        grouped.setdefault(r.claim or r.id, []).append(r)
    return [Family(claim, tuple(rs), statement(claim)) for claim, rs in grouped.items()]


def counts_text(summary: Mapping[str, int], joiner: str = " · ") -> str:
    """``4 PASS · 2 FAIL`` (zero counts left out, PASS/FAIL/INCONCLUSIVE always shown)."""
    parts = [f"{summary.get(v.value, 0)} {v.value}" for v in ORDER
             if summary.get(v.value, 0) or v in (Verdict.PASS, Verdict.FAIL,
                                                  Verdict.INCONCLUSIVE)]
    return joiner.join(parts)


def agreement_text(results: Sequence[Result]) -> str:
    """How often the audit agrees with the paper where the paper states an expectation."""
    stated = [r for r in results if r.expected is not None]
    if not stated:
        return "the paper states no expectation for these results"
    agree = sum(agreement(r) == "yes" for r in stated)
    differ = sum(agreement(r) == "NO" for r in stated)
    return (f"the paper states an expectation for {len(stated)} confirmatory row"
            f"{'s' * (len(stated) != 1)}; the audit agrees on {agree}, disagrees on {differ} and "
            f"leaves {len(stated) - agree - differ} undecided")


def disagreements(results: Sequence[Result]) -> list[Result]:
    """Results decided (PASS or FAIL) against the paper's expectation; an undecided row is
    never a disagreement."""
    return [r for r in results if agreement(r) == "NO"]


def model_line(model: Mapping[str, Any]) -> tuple[str, str]:
    """(model name, a short description: family, dimension)."""
    name = str(model.get("name") or "unnamed model")
    bits = []
    if model.get("family"):
        bits.append(str(model["family"]))
    if model.get("dim"):
        bits.append(f"{model['dim']} dimensions")
    return name, ", ".join(bits)


def flatten(value: Any) -> str:
    """A provenance value as one line of text (mappings as ``key: value; …``)."""
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {flatten(v)}" for k, v in value.items()) or "—"
    if isinstance(value, (list, tuple)):
        return ", ".join(flatten(v) for v in value) or "—"
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


#: A command-line option as reasons quote it (``--sentences 1,286``): shown as code.
_OPTION = r"--[a-z][a-z-]*(?: [0-9](?:[0-9,]*[0-9])?)?"


def split_ids(text: str, ids: Iterable[str]) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is_code) parts: the ids it quotes (result and claim ids, as the
    scorecard's reasons write them) and command-line options are code, the rest prose. An id
    counts only whole: not as the start of a longer id (``word.norm_ic`` in
    ``word.norm_ic.partial``), nor inside a word."""
    names = sorted({i for i in ids if i}, key=len, reverse=True)
    alternatives = [re.escape(n) for n in names] + [_OPTION]
    pattern = re.compile(r"(?<![\w.\[-])(?:" + "|".join(alternatives) + r")(?![\w\[]|\.\w)")
    out: list[tuple[str, bool]] = []
    at = 0
    for match in pattern.finditer(text):
        if match.start() > at:
            out.append((text[at:match.start()], False))
        out.append((match.group(0), True))
        at = match.end()
    if at < len(text):
        out.append((text[at:], False))
    return out


def short_variant(r: Result) -> dict[str, str]:
    """The axes of a row's variant that are not at their reference value (the raw last
    layer)."""
    return {k: v for k, v in r.shown_variant.items() if REFERENCE.get(k) != v}


def deciding_label(r: Result, claims: Iterable[str | None]) -> str:
    """The row that decides a scorecard line, named in a few words: the values of its variant
    that are not at their reference (the raw last layer), a contrast as ``sqrt_n − mean``; the
    claim's name instead where the variant says nothing and the line (``claims``: the claims of
    its rows) has several claims (``inner_pmi``)."""
    shown = short_variant(r)
    if "versus" in r.variant:
        pair = f"{r.variant.get('composition', '?')} − {r.variant['versus']}"
        shown = {"pair": pair, **{k: v for k, v in shown.items()
                                  if k not in ("composition", "versus")}}
    tail = (r.claim or "").split(".", 1)[-1]
    return ", ".join(shown.values()) or (tail if len(set(claims)) > 1 else "")
