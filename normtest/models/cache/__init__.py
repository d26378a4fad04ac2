"""The embedding cache: a second audit reads vectors from disk instead of running the model.

:class:`EmbeddingCache` (:mod:`normtest.models.cache.embeddings`) is the SQLite file and everything
that keeps it sound; :class:`CachedAdapter` (:mod:`normtest.models.cache.adapter`) wraps any adapter
so that every vector is read through it.
"""
