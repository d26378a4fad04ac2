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
- :mod:`~normtest.data.information.checked_files`: the files of the stored counts and surprisal,
  checksummed and checked on read;
- :mod:`~normtest.data.information.documents`: CER documents and prefix-length grids;
- :mod:`~normtest.data.information.texts`: reading files (non-UTF-8 bytes replaced and counted) and
  the corpora bundled with gensim.

Natural logarithms throughout (nats). Importing this package imports numpy and scipy.sparse;
wordfreq and gensim load when a function needs them. See docs/information.md.
"""
