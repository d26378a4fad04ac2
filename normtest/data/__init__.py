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
