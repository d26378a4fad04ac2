"""The data stage: the data every measurement reads, built once per audit and shared.

Three kinds of data, each built on first request (docs/audit.md explains the sampling):

- :class:`WordData` (``"words"``): the word sample, its information content, each word's vector
  under every composition, representation and (cross-fitted) geometry transform, the reference
  corpus's PMI pairs and KL(w);
- :class:`PrefixData` (``"prefixes"``): documents, their prefix-length grids in model tokens, the
  curve s(L) = ‖e(prefix_L)‖² per variant and its growth analysis;
- :class:`TextData` (``"texts"``): sentences, their surprisal under a causal LM, and text vectors.

A claim names the kind it reads (``Claim.data``); :class:`AuditData` builds it for the first claim
that asks and hands the same object to the rest. Nothing here knows a claim.
"""

from typing import TYPE_CHECKING

from normtest.base.lazy import lazy_exports

#: What a measurement can read: the word sample and its vectors, documents' prefix curves,
#: sentences and their surprisal (one :data:`normtest.data.kinds.DATA_KINDS` entry each).
DATA: tuple[str, ...] = ("words", "prefixes", "texts")

# Imported on first use, so that naming the kinds of data (DATA) loads no numerical code.
__getattr__, __dir__ = lazy_exports(__name__, {
    "normtest.data.common": ("as_layer", "text_vectors"),
    "normtest.data.kinds": ("AuditData",),
    "normtest.data.prefixes": ("PrefixData",),
    "normtest.data.texts": ("TextData", "surprisal_model"),
    "normtest.data.words": ("WordData",),
})

if TYPE_CHECKING:  # what the names above are, for type checkers
    from normtest.data.common import as_layer, text_vectors
    from normtest.data.kinds import AuditData
    from normtest.data.prefixes import PrefixData
    from normtest.data.texts import TextData, surprisal_model
    from normtest.data.words import WordData

__all__ = ["DATA", "AuditData", "PrefixData", "TextData", "WordData", "as_layer",
           "surprisal_model", "text_vectors"]
