"""The embedding cache: a second audit reads vectors from disk instead of running the model.

:class:`EmbeddingCache` (:mod:`normtest.cache.store`) is the SQLite file and everything that keeps
it sound; :class:`CachedAdapter` (:mod:`normtest.cache.adapter`) wraps any adapter so that every
vector is read through it.
"""

from normtest.cache.adapter import CachedAdapter
from normtest.cache.store import CacheWarning, EmbeddingCache
from normtest.paths import CACHE_ENV, default_cache_dir

__all__ = ["CACHE_ENV", "CacheWarning", "CachedAdapter", "EmbeddingCache", "default_cache_dir"]
