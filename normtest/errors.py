"""The one exception type a user of normtest can cause and fix, and the words its messages share."""

from __future__ import annotations


class NormtestError(ValueError):
    """Bad input or configuration; the message says what to do about it.

    Every error a user can cause (unknown model, unreadable file, NaN vectors, an empty sample,
    mismatched lengths) raises this type, so callers need to catch only one thing. Data that are
    merely too few for a test do not raise: the test returns an INCONCLUSIVE verdict with a reason.
    """


def nothing_ran(model: str, reasons: list[tuple[str, str]]) -> NormtestError:
    """The error for a run in which no claim could run: each distinct reason once, with the
    claims it stopped (``reasons`` holds (claim id, reason) pairs)."""
    by_reason: dict[str, list[str]] = {}
    for claim, reason in reasons:
        claims = by_reason.setdefault(reason, [])
        if claim not in claims:
            claims.append(claim)
    parts = [f"{reason} ({', '.join(claims)})" for reason, claims in by_reason.items()]
    return NormtestError(f"no claim could run on {model}: " + "; ".join(parts))


def with_article(word: object) -> str:
    """``word`` after its indefinite article: ``an encoder``, ``a decoder``, ``an int``,
    ``a static`` (by its first letter: the words normtest writes so — model families, type
    names — hold no silent h or sounded vowel)."""
    text = str(word)
    return f"{'an' if text[:1].lower() in 'aeiou' and text else 'a'} {text}"
