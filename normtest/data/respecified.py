"""The audit's data under another reasonable analysis (:mod:`normtest.scorecard.robustness`): the
words under another IC source or population, the prefixes on another grid or unit, the sentences
with another information measure or length, and each of these on either half of the audit's sample
(:func:`sample_half`) — views of the vectors already computed, kept while one line is assessed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from normtest.adapters.protocol import optional_method
from normtest.errors import NormtestError

if TYPE_CHECKING:
    from normtest.data.kinds import AuditData

__all__ = ["DATA_CHOICES", "SAMPLES", "AnalysisContext", "respecified", "sample_half",
           "view_key"]

#: The choices that change the data a measurement reads (the other, ``transform``: the variant).
DATA_CHOICES = {"words": ("sample", "ic_source", "population", "min_pair_count"),
                "prefixes": ("sample", "prefix_unit", "grid"),
                "texts": ("sample", "text_ic", "sentences")}
#: The samples a line is re-decided on: the audit's own, and the two disjoint halves of it that
#: the audit's seed draws (:func:`sample_half`).
SAMPLES = ("drawn", "half_1", "half_2")


@dataclass
class AnalysisContext:
    """What re-measuring under a specification reads: the audit's data and its settings."""

    data: AuditData
    family: str
    source: Any
    views: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = field(default_factory=dict)
    information: dict[str, Any] = field(default_factory=dict)


def respecified(kind: str, choices: Mapping[str, str], context: AnalysisContext) -> tuple[Any, Any]:
    """The data a claim reads (``kind``) and the settings, under the specification's choices
    (kept while the line is assessed: every row of an analysis shares them)."""
    # an analytic interval where one holds (an unclustered Spearman ρ and the difference of
    # two): many specifications, each read in microseconds rather than a bootstrap's tens of
    # ms; and no reading beyond the baseline, which decides no line as stated
    settings = replace(context.data.settings, intervals="analytic", beyond=False)
    if "min_pair_count" in choices and kind == "words":
        settings = replace(settings, min_pair_count=int(choices["min_pair_count"]))
    key = view_key(kind, choices)
    if key not in context.views:
        context.views[key] = _view(kind, dict(key[1]), settings, context)
    return context.views[key], settings


def view_key(kind: str, choices: Mapping[str, str]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """What identifies the data of ``kind`` under the choices: the kind and the choices that
    change it (measurements with the same key read the same view)."""
    return kind, tuple((k, v) for k, v in sorted(choices.items())
                       if k in DATA_CHOICES.get(kind, ()))


def sample_half(units: np.ndarray, half: str, seed: int) -> np.ndarray:
    """The rows of one half of a sample (``half_1`` or ``half_2``; ``drawn``: every row) whose
    sampling units are ``units`` (a label per row: the word itself, a sentence's document, a
    prefix's document): the units are shuffled by ``seed`` and cut in two, so that whole units
    go together and the halves are disjoint, independent samples of the same kind as the audit's,
    at half its size. Re-deciding a line on each asks whether another sample agrees, without a
    forward pass (a new draw at full size is another ``--seed``)."""
    units = np.asarray(units)
    if half == "drawn":
        return np.arange(units.size)
    if half not in SAMPLES:
        raise NormtestError(f"unknown sample {half!r}; use one of {', '.join(SAMPLES)}")
    labels, codes = np.unique(units, return_inverse=True)
    order = np.random.default_rng([int(seed), 0x5A3E]).permutation(labels.size)
    first = np.zeros(labels.size, dtype=bool)
    first[order[: (labels.size + 1) // 2]] = True
    return np.flatnonzero(first[codes] == (half == "half_1"))


def _view(kind: str, choices: Mapping[str, str], settings: Any, context: AnalysisContext) -> Any:
    data = context.data.get(kind)
    if kind == "words":
        return _word_view(data, choices, settings, context)
    if kind == "prefixes":
        return _prefix_view(data, choices, context)
    if kind == "texts":
        return _text_view(data, choices, context)
    raise NormtestError(f"no specification of {kind!r} data")


def _word_view(words: Any, choices: Mapping[str, str], settings: Any,
               context: AnalysisContext) -> Any:
    """The words of a sample under an IC source and a population (and the settings' minimum
    pair count)."""
    rows = sample_half(np.arange(len(words.words)), choices.get("sample", "drawn"),
                       context.data.settings.seed)
    information = None
    source = choices.get("ic_source", "wordfreq")
    if source != "wordfreq":
        ic = _information(source, words, context)
        known = {w: v for w, v in zip(ic.words, ic.values, strict=True)}
        rows = np.array([i for i in rows if words.words[i] in known], dtype=np.intp)
        information = np.array([known[words.words[i]] for i in rows], dtype=np.float64)
    population = choices.get("population", "all")
    if population != "all":
        ic = words.information[rows] if information is None else information
        counts = words.token_counts()[rows]
        median = float(np.median(ic))
        keep = {"one_token": counts == 1, "multitoken": counts >= 2,
                "frequent": ic <= median, "rare": ic > median}[population]
        rows = rows[keep]
        information = None if information is None else information[keep]
    if information is None and rows.size == len(words.words) \
            and settings.min_pair_count == words.settings.min_pair_count:
        return words
    # the audit's geometry: another IC source changes what is correlated, not the transforms
    return words.view(rows, information=information, settings=settings, refit=False)


def _information(source: str, words: Any, context: AnalysisContext) -> Any:
    """The sample words' IC from another source (kept for the assessment)."""
    if source not in context.information:
        if source == "corpus":
            found = words.corpus().information_content(list(words.words))
        elif source == "subtitles":
            from normtest.data.information.frequency import opensubtitles_source

            found = opensubtitles_source().information_content(list(words.words))
        else:
            raise NormtestError(f"unknown IC source {source!r}")
        context.information[source] = found
    return context.information[source]


def _prefix_view(prefixes: Any, choices: Mapping[str, str], context: AnalysisContext) -> Any:
    """The prefixes of a sample of the documents, on another grid, their lengths in another
    unit."""
    unit = choices.get("prefix_unit")
    grid = choices.get("grid", "every")
    sample = choices.get("sample", "drawn")
    own = "words" if prefixes.unit == "words" else "tokens"
    if (unit in (None, own)) and grid == "every" and sample == "drawn":
        return prefixes
    if unit in (None, own):
        lengths = [plan.lengths.astype(np.float64) for plan in prefixes.plans]
    elif own == "words":  # a word grid read in model tokens: its lengths in tokens
        lengths = [np.asarray(plan.tokens, dtype=np.float64) for plan in prefixes.plans]
    else:
        lengths = _words_of_prefixes(prefixes, context)
    at = [np.arange(plan.lengths.size) for plan in prefixes.plans]
    if grid == "every_other":
        keep = [i % 2 == 0 for i in at]
    elif grid == "short":
        keep = [i < np.ceil(i.size / 2) for i in at]
    else:
        keep = [np.ones(i.size, dtype=bool) for i in at]
    kept = set(sample_half(np.arange(len(prefixes.plans)), sample,
                           context.data.settings.seed).tolist())
    keep = [k & (d in kept) for d, k in enumerate(keep)]
    return prefixes.view(_flat(keep, bool), _flat(lengths, np.float64),
                         "words" if (unit or own) == "words" else "model tokens")


def _flat(parts: Sequence[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(parts).astype(dtype) if parts else np.empty(0, dtype=dtype)


def _words_of_prefixes(prefixes: Any, context: AnalysisContext) -> list[np.ndarray]:
    """How many whole (whitespace-separated) words each token prefix holds: a document's
    words take the model tokens they take in running text (``word_token_counts``; the
    pre-tokenisers of WordPiece and byte-level BPE split at whitespace first), and the prefix
    of L tokens holds the words whose tokens all fit in L (at least one)."""
    key = "prefix words"
    if key in context.information:
        return list(context.information[key])
    adapter = context.data.adapter
    counter = optional_method(adapter, "word_token_counts")
    texts = []
    for plan in prefixes.plans:
        most = int(plan.lengths.max()) if plan.lengths.size else 0
        texts.append(plan.document.text.split()[:most])
    flat = [w for words in texts for w in words]
    if counter is not None:
        counts = np.asarray(counter(flat), dtype=np.int64)
    else:
        tokens = getattr(adapter, "word_tokens")  # noqa: B009 (every token model has it)
        counts = np.array([len(tokens(w).ids) for w in flat], dtype=np.int64)
    out, start = [], 0
    for plan, words in zip(prefixes.plans, texts, strict=True):
        ends = np.cumsum(counts[start:start + len(words)])
        start += len(words)
        whole = np.searchsorted(ends, plan.lengths, side="right")
        out.append(np.maximum(whole, 1).astype(np.float64))
    context.information[key] = tuple(out)
    return out


def _text_view(texts: Any, choices: Mapping[str, str], context: AnalysisContext) -> Any:
    """The sentences of a sample of the documents, of another length, their IC from another
    measure."""
    rows = sample_half(texts.documents, choices.get("sample", "drawn"),
                       context.data.settings.seed)
    information, name = None, None
    if choices.get("text_ic", "surprisal") == "unigram":
        information, name = _unigram_ic(texts.sentences), "unigram IC (wordfreq)"
    part = choices.get("sentences", "all")
    if part != "all":
        sizes = np.array([len(texts.sentences[i].split()) for i in rows])
        median = float(np.median(sizes))
        rows = rows[sizes <= median] if part == "short" else rows[sizes > median]
    if information is None and rows.size == len(texts.sentences):
        return texts
    return texts.view(rows, None if information is None else information[rows], name)


def _unigram_ic(sentences: Sequence[str]) -> np.ndarray:
    """Σ IC(w) over each sentence's words under wordfreq (a word it does not know counts as a
    word of frequency 10⁻⁸): a text's information without its context."""
    from wordfreq import tokenize, word_frequency

    out = []
    for text in sentences:
        out.append(sum(-math.log(max(word_frequency(w, "en"), 1e-8))
                       for w in tokenize(text, "en")))
    return np.array(out, dtype=np.float64)
