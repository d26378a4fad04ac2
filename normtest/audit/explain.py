"""How a scorecard line or a claim is operationalised: ``normtest explain LINE_OR_CLAIM``.

A verdict a researcher can defend says what it rests on: the paper's words, whether its criterion
is stated by the paper or reconstructed by normtest, the statistic, the margin and why it is
there, the confirmatory variants (the hypotheses stated in advance), the sample, and the
known-truth tests that back the criterion. Everything here is read from the catalogue's
declarations (``checks/``), so a user's own claims and lines explain themselves the same way.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from normtest.audit.run import applicable_axes
from normtest.audit.selection import Selector, result_id, unknown_id
from normtest.claims.catalogue import (
    FAMILIES,
    REFERENCE,
    SUITES,
    Claim,
    Expectation,
    LineDeclaration,
    claims,
    claims_of_line,
    declared_line,
    declared_lines,
    get,
)
from normtest.claims.line_declarations import builder_of, space_of
from normtest.errors import NormtestError
from normtest.scorecard.controls import POWER_AT_MARGIN
from normtest.scorecard.robustness import MIN_ANALYSES, ROBUST_SHARE, SAMPLE, SUBPOPULATIONS

__all__ = ["explain", "explain_claim", "explain_line", "explain_rows", "explain_suite"]

WIDTH = 100
_LABEL = 16


def explain(name: str) -> str:
    """The operationalisation of what ``name`` names — every id the gate accepts: a scorecard
    line (its key, e.g. ``composition``), a claim (``cond.inner_pmi``), some of a claim's rows
    by their variant (``word.norm_ic[composition=sqrt_n]``, a row id: the rows and their role,
    then the claim) or a suite (``word``: its claims). An unknown name is an error with a "did
    you mean"."""

    name = name.strip()
    keys = [h.key for h in declared_lines()]
    if name in keys:
        return explain_line(declared_line(name))
    ids = [c.id for c in claims()]
    if name in ids:
        return explain_claim(get(name))
    if name in (*SUITES, "all"):
        return explain_suite(name)
    if "[" in name:  # a row id or variant selector, as --require and --claims take them
        selector = Selector.parse(name)  # an unknown claim, axis or value: its own error
        assert selector.claim is not None
        return explain_rows(get(selector.claim), dict(selector.variant), name)
    if name.endswith(".json") or "/" in name:
        raise NormtestError(f"{name!r} is a file; explain takes an id (a scorecard line, a "
                            "claim, a claim's variant or a suite), then --report FILE for why "
                            "that report's line came out as it did; normtest report FILE "
                            "renders a stored report")
    raise unknown_id(name)


def explain_rows(claim: Claim, variant: dict[str, str], text: str | None = None) -> str:
    """Some of a claim's rows, named by their variant (``word.norm_ic[composition=sqrt_n]``):
    which rows that is, their role (confirmatory where the paper states a verdict for a model
    family there, exploratory elsewhere) and what a gate requirement of them judges; then the
    claim itself (:func:`explain_claim`)."""

    shown = text or result_id(claim.id, variant)
    free = [axis for axis in claim.axes if axis not in variant]
    which = ", ".join(f"{k}={v}" for k, v in variant.items()) or "every variant"
    if free:
        which += (f"; {', '.join(free)}: any value (the rows at each are distinct rows of the "
                  "report)")
    stated = [e for e in claim.expected if _expectation_covers(claim, e, variant)]
    out = [f"{shown} — rows of {claim.id}: {claim.statement}", ""]
    out += _field("rows", which)
    if stated:
        out += _items("confirmatory", [*_expectations(claim, stated), "(its rows elsewhere, "
                                       "and for other families, are exploratory)"])
    else:
        out += _field("role", "exploratory: the paper states no verdict at this variant for any "
                      "model family, so its rows are adjusted with the audit's other exploratory "
                      "rows (Benjamini–Hochberg) and never move the scorecard")
    out += _field("gate", f"--require '{shown}' (require = [\"{shown}\"]) judges every row it "
                  "names, whatever its role: each must PASS")
    return "\n".join([*out, "", explain_claim(claim)])


def _expectation_covers(claim: Claim, e: Expectation, variant: dict[str, str]) -> bool:
    """Whether expectation ``e`` speaks about a row of ``variant``: its family has every axis the
    variant names (static vectors have no composition or representation), and the axes it
    names, and the reference axes it does not, agree with the variant's."""

    families = [e.family] if e.family else list(FAMILIES)
    if not any(set(variant) <= set(applicable_axes(claim, family, ("cls", "eos")))
               for family in families):
        return False
    named = {**{k: v for k, v in REFERENCE.items() if k in claim.axes}, **e.variant}
    return all(named.get(axis, value) == value for axis, value in variant.items())


def explain_suite(suite: str) -> str:
    """A suite (or ``all``): each of its claims, with the scorecard lines it decides."""
    chosen = claims(suite)
    out = [f"{suite} — {'every claim of the catalogue' if suite == 'all' else 'the ' + suite}"
           f" suite: {len(chosen)} claims", ""]
    for claim in chosen:
        lines = [h.key for h in declared_lines() if claim.id in claims_of_line(h.key)
                 and _decides(claim, h.key)]
        role = f"decides {', '.join(lines)}" if lines else "exploratory"
        out += _items(claim.id, [f"{claim.statement} ({role})"], 0, len(max(
            (c.id for c in chosen), key=len)) + 2)
    out += ["", f"normtest explain CLAIM explains one; a gate's --require {suite} judges the "
                "confirmatory rows of them all"]
    return "\n".join(out)


def explain_line(line: LineDeclaration) -> str:
    """A scorecard line: its title, the paper's words, its basis, then each claim that decides
    it (confirmatory rows) and those explored around it."""
    deciding = [c for c in _line_claims(line.key) if _decides(c, line.key)]
    explored = [c for c in _line_claims(line.key) if not _decides(c, line.key)]
    basis = ("reconstructed by normtest" if any(c.reconstructed for c in deciding)
             else "stated by the paper")
    out = [f"{line.key} — {line.title}", ""]
    out += _field("the paper", f"“{line.words}”" if line.words else "—")
    out += _field("source", line.source or "—")
    out += _field("criterion", _basis_text(basis))
    if line.reference:
        others = sorted({e.reading for c in deciding for e in c.expected
                         if e.reading and _counts_towards(c, e, line.key)})
        out += _field("readings", f"the status is decided {line.reference}; "
                      + "; ".join(f"the line also reports its status {o}" for o in others)
                      + " (each reading's rows are confirmatory and decided apart)")
    based = [c for c in deciding if c.baseline is not None]
    if based:
        names = " & ".join(dict.fromkeys(c.baseline_name for c in based))
        out += _field("beyond", f"the line is also read beyond its baseline ({names}): "
                      "each deciding row's beyond ρ is judged against the row's own threshold; "
                      "beyond holds when every row passes there (no adjustment: all must "
                      "pass), fails when a row fails at Holm's level over the line's rows, else "
                      "is undecided; the terminal shows it where it differs from the status "
                      "(“· not beyond " + names + "”)")
    out += _items("controls", _controls_text(line.key, deciding))
    out += _field("decision", "from the line's own confirmatory rows: replicated when every row "
                  "is decided as the paper expects (PASS unadjusted: an intersection–union "
                  "test at α), contradicted when one is decided against it (FAIL at Holm's "
                  "level over the line's rows), undecided otherwise")
    out += _field("robustness", _robustness_text(line.key))
    for claim in deciding:
        out += ["", *_claim_block(claim, line.key)]
    if explored:
        out += ["", *_field("explored", ", ".join(c.id for c in explored)
                            + " (exploratory rows: they never move the line)")]
    return "\n".join(out)


def explain_claim(claim: Claim) -> str:
    """One claim: the line it decides (and the paper's words there), then its block."""
    lines = [h for h in declared_lines() if claim.id in claims_of_line(h.key)]
    out = [f"{claim.id} — {claim.statement}", ""]
    for line in lines:
        role = "decides" if _decides(claim, line.key) else "is explored on"
        out += _field("scorecard", f"{role} the line {line.key!r}: {line.title}")
        if line.words:
            out += _field("the paper", f"“{line.words}”")
    out += _field("criterion", _basis_text("reconstructed by normtest" if claim.reconstructed
                                           else "stated by the paper"))
    out += ["", *_claim_block(claim, lines[0].key if lines else None)]
    return "\n".join(out)


def _claim_block(claim: Claim, line: str | None) -> list[str]:
    """A claim's operationalisation: statistic, margin and why, confirmatory variants, sample,
    the axes it expands over, and the known-truth tests."""
    out = [f"{claim.id}" + ("  (reconstructed)" if claim.reconstructed else "")]
    out += _field("claim", claim.statement, 2)
    out += _field("source", claim.source, 2)
    out += _field("statistic", f"{claim.statistic} of {' vs '.join(claim.quantities)} "
                  f"({claim.unit})", 2)
    out += _field("criterion", f"{claim.statistic} {claim.criterion.describe()}", 2)
    out += _field("why", claim.rationale or "— (no rationale declared)", 2)
    if claim.baseline is not None:
        out += _field("baseline", f"{claim.baseline_name}: each row also reports Spearman's ρ "
                      f"of the information with the {claim.baseline_name} on the same rows and "
                      "draws (what the trivial predictor reaches alone), the paired difference "
                      "ρ(information, norm) − ρ(information, "
                      f"{claim.baseline_name}) and the artefact reading ρ(norm, "
                      f"{claim.baseline_name} | information)", 2)
        out += _field("beyond", f"Spearman's ρ of the information and the norm within each "
                      f"stratum of the {claim.baseline_name} (every common value; lengths "
                      "merged until each stratum holds at least max(20, n/12) rows), pooled by "
                      "Fisher's z; 0 in expectation when the norm carries nothing beyond it; "
                      "judged against the claim's threshold carried to the strata (the value "
                      "a norm that carries the information alone at the threshold shows on "
                      "this design)"
                      + (" (a contrast: the difference of the two compositions' beyond ρ, "
                         "0 by identity for two that rank every stratum alike)"
                         if "versus" in claim.axes else ""), 2)
    stated = [e for e in claim.expected if line is None or _counts_towards(claim, e, line)]
    out += _items("confirmatory", _expectations(claim, stated)
                  or ["none: every row is exploratory"], 2)
    out += _field("sample", claim.sample, 2)
    out += _field("variants", "; ".join(f"{axis}: {', '.join(values)}"
                                        for axis, values in claim.axes.items()) or "none", 2)
    if claim.notes:
        out += _field("notes", claim.notes, 2)
    out += _items("backed by", list(claim.backed_by) or ["— (no known-truth test declared)"],
                  2)
    return out


def _robustness_text(key: str) -> str:
    """How the line's robustness is read, in the words every view uses."""

    space = space_of(key)
    if not space.choices:
        return "no space of analyses declared: robustness not assessed"
    analyses = {n: v for n, v in space.choices.items() if n not in (*SUBPOPULATIONS, SAMPLE)}
    subpopulations = {n: v for n, v in space.choices.items() if n in SUBPOPULATIONS}
    listed = "; ".join(f"{name}: {', '.join(values)}" for name, values in analyses.items())
    out = (f"three numbers. The multiverse: the line re-decided on the full sample under every "
           f"combination of its analyses of the same estimand ({listed or 'none'}), each "
           "counted once; analyses that cannot tell (a row not estimable, or power below 0.8 "
           "at the smallest effect to detect; the audit's own analysis held to the same "
           "filter) and analyses on identical data are left out and counted; “holds in 89% of "
           "9 analyses” is the share of the counted analyses that give a decided line its "
           f"headline status: robust from {ROBUST_SHARE:.0%} of at least {MIN_ANALYSES} (an "
           "undecided line shows how its analyses fall instead)")
    if subpopulations:
        panel = "; ".join(f"{name}: {', '.join(values)}" for name, values in
                          subpopulations.items())
        out += (f". The heterogeneity panel: the line in each subpopulation ({panel}), other "
                "estimands, shown and not folded into the share")
    if SAMPLE in space.choices:
        out += (". The sampling stability: each analysis re-decided on the two disjoint halves "
                "of the audit's sample that its seed draws, and how many halves agree with it")
    return out + (". The margin is the criterion, not an analysis: its effect is the line's "
                  "sensitivity (the nearest deciding bound and its distance)")


def _controls_text(key: str, deciding: list[Claim]) -> list[str]:
    """The controls a line runs (when it declares them) and the effect each plants."""

    if builder_of(key) is None:
        return ["none declared for this line"]
    detect = [f"{c.id} {c.detect:g}" for c in deciding if isinstance(c.detect, int | float)]
    out = [("positive: a model built from the audit's own data for which the line holds, "
            + (f"planted at the smallest effect each claim must detect ({', '.join(detect)}); "
               "the line's power there is the chance that every row passes; where it is "
               f"≥ {POWER_AT_MARGIN:g} the control must come out replicated (else the line is "
               "invalid), below it the control may be left undecided and the line says which "
               "sample would give the power" if detect else "clearly; it must come out "
               "replicated")),
           "negative: the same data with the effect absent; it must not come out replicated "
           "(else the line is invalid)"]
    if any(c.baseline is not None for c in deciding):
        names = " & ".join(dict.fromkeys(c.baseline_name for c in deciding if c.baseline))
        out.append(f"confound: the audit's own {names} kept, norms a noisy function of it "
                   "carrying nothing beyond it; the line as stated may pass, its beyond reading "
                   "must not")
    doc = (getattr(builder_of(key), "__doc__", None) or "").strip().split("\n\n")[0]
    out.append("built by: " + " ".join(doc.replace("``", "").split()))
    return out


def _expectations(claim: Claim, stated: Iterable[Expectation]) -> list[str]:
    """The confirmatory variants in words, families of the same variant and verdict together:
    ``PASS for encoder, decoder at composition=sqrt_n, representation=last, transform=raw``."""
    grouped: dict[tuple[str, str, str], list[str]] = {}
    for e in stated:
        named = {**{k: v for k, v in REFERENCE.items() if k in claim.axes}, **e.variant}
        which = ", ".join(f"{k}={named[k]}" for k in claim.axes if k in named) \
            or "every variant"
        extra = "".join(f" ({text})" for text in (e.reading, e.note) if text)
        grouped.setdefault((e.verdict.value, which, extra), []).append(e.family or "any model")
    return [f"{verdict} for {', '.join(dict.fromkeys(families))} at {which}{extra}"
            for (verdict, which, extra), families in grouped.items()]


def _line_claims(key: str) -> list[Claim]:
    return [get(i) for i in claims_of_line(key)]


def _counts_towards(claim: Claim, e: Expectation, key: str) -> bool:
    """Whether a confirmatory expectation of ``claim`` counts towards line ``key``."""
    return (e.hypothesis or claim.hypothesis) == key


def _decides(claim: Claim, key: str) -> bool:
    """Whether any confirmatory row of ``claim`` counts towards line ``key``."""
    return any(_counts_towards(claim, e, key) for e in claim.expected)


def _basis_text(basis: str) -> str:
    if basis.startswith("reconstructed"):
        return ("reconstructed by normtest: the paper's full text is not available, so the "
                "statistic and its margin are normtest's reading of the abstract and of the "
                "authors' earlier work (docs/theory.md §1)")
    return "stated by the paper (or by a source it builds on); the margin is normtest's"


def _items(label: str, items: list[str], indent: int = 0, width: int = _LABEL) -> list[str]:
    """``label:`` and one item per line under it (each wrapped on its own, never mid-word)."""
    out: list[str] = []
    for i, item in enumerate(items):
        head = " " * indent + f"{label + ':' if i == 0 else '':<{width}}"
        out += textwrap.wrap(item, WIDTH, initial_indent=head, subsequent_indent=" " * (
            len(head) + 2), break_long_words=False, break_on_hyphens=False) or [head]
    return out


def _field(label: str, text: str, indent: int = 0) -> list[str]:
    """``label:`` and the text wrapped under it, aligned."""
    head = " " * indent + f"{label + ':':<{_LABEL}}"
    return textwrap.wrap(text, WIDTH, initial_indent=head,
                         subsequent_indent=" " * len(head)) or [head.rstrip()]
