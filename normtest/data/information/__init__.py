"""Information sources: word IC from frequencies, corpus PMI and KL, text IC from a causal LM.

- :mod:`~normtest.data.information.frequency`: IC(w) = −log P(w) from wordfreq or a counts file;
- :mod:`~normtest.data.information.samples`: the stratified default word sample or a user's list;
- :mod:`~normtest.data.information.corpus_counting`: tokens, unigram and ±h window pair counts, in
  chunks;
- :mod:`~normtest.data.information.corpus`: corpus statistics: PMI, KL(w), the shuffled baseline;
- :mod:`~normtest.data.information.readers`: corpus specs (files, folders, globs; plain, gzip,
  bz2, Parquet) read as streams and cut into blocks;
- :mod:`~normtest.data.information.scaled` and :mod:`~normtest.data.information.vocabulary_counts`:
  corpora at scale, counted for a vocabulary in parallel blocks (local processes or Ray), merged and
  stored;
- :mod:`~normtest.data.information.surprisal`: IC_LM(t) = −Σ log P(t_i | t_<i) from a model adapter;
- :mod:`~normtest.data.information.store`: the files of the stored counts and surprisal, checksummed
  and checked on read;
- :mod:`~normtest.data.information.documents`: CER documents and prefix-length grids;
- :mod:`~normtest.data.information.texts`: reading files (non-UTF-8 bytes replaced and counted) and
  the corpora bundled with gensim.

Natural logarithms throughout (nats). Importing this package imports numpy and scipy.sparse;
wordfreq and gensim load when a function needs them. See docs/information.md.
"""

from __future__ import annotations

from normtest.data.information.corpus import (
    CDS_ALPHA,
    DEFAULT_WINDOW,
    CorpusStatistics,
    PairPMI,
    WordKL,
    lee_corpus,
    tokenize,
    wiki_sample,
)
from normtest.data.information.documents import (
    Document,
    PrefixPlan,
    corpus_documents,
    default_documents,
    document_sentences,
    model_token_count,
    plan_prefixes,
    plan_word_prefixes,
    prefix_grid,
    user_documents,
    word_prefix,
)
from normtest.data.information.frequency import (
    CountsFileSource,
    FrequencySource,
    InformationContent,
    WordfreqSource,
    opensubtitles_counts_path,
    opensubtitles_source,
)
from normtest.data.information.readers import corpus_files, iter_documents
from normtest.data.information.reliability import (
    MIN_PMI_RELIABILITY,
    PMIReliability,
    pmi_reliability,
)
from normtest.data.information.samples import (
    WordSample,
    default_word_sample,
    stratified_word_sample,
    user_word_sample,
)
from normtest.data.information.scaled import corpus_counts, corpus_halves, count_block, count_corpus
from normtest.data.information.surprisal import (
    TextSurprisal,
    stored_surprisal,
    surprisal,
    text_information,
    token_surprisal,
)
from normtest.data.information.vocabulary_counts import CorpusCounts

__all__ = [
    "CDS_ALPHA",
    "DEFAULT_WINDOW",
    "MIN_PMI_RELIABILITY",
    "CorpusCounts",
    "CorpusStatistics",
    "CountsFileSource",
    "Document",
    "FrequencySource",
    "InformationContent",
    "PMIReliability",
    "PairPMI",
    "PrefixPlan",
    "TextSurprisal",
    "WordKL",
    "WordSample",
    "WordfreqSource",
    "corpus_counts",
    "corpus_documents",
    "corpus_files",
    "corpus_halves",
    "count_block",
    "count_corpus",
    "default_documents",
    "default_word_sample",
    "document_sentences",
    "iter_documents",
    "lee_corpus",
    "model_token_count",
    "opensubtitles_counts_path",
    "opensubtitles_source",
    "plan_prefixes",
    "plan_word_prefixes",
    "pmi_reliability",
    "prefix_grid",
    "stored_surprisal",
    "stratified_word_sample",
    "surprisal",
    "text_information",
    "token_surprisal",
    "tokenize",
    "user_documents",
    "user_word_sample",
    "wiki_sample",
    "word_prefix",
]
