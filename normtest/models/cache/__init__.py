"""The embedding cache: a second audit reads vectors from disk instead of running the model.

:class:`EmbeddingCache` (:mod:`normtest.models.cache.store`) is the SQLite file and everything that
keeps it sound; :class:`CachedAdapter` (:mod:`normtest.models.cache.adapter`) wraps any adapter so
that every vector is read through it.
"""

from normtest.base.paths import CACHE_ENV, default_cache_dir
from normtest.models.cache.adapter import CachedAdapter
from normtest.models.cache.store import CacheWarning, EmbeddingCache

__all__ = ["CACHE_ENV", "CacheWarning", "CachedAdapter", "EmbeddingCache", "default_cache_dir"]
