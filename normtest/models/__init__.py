"""Models by name: the one registry, the installable store, the hub, the embedding cache.

``named`` (``NamedModel``, the record of a model known by name), ``registry`` (every model
normtest knows by name, the one lookup, and ``load``), ``store`` and ``install`` (the
installable models, checked against pinned digests), ``hub`` (Hugging Face ids, cache first),
``cache`` (embeddings kept on disk), ``extraction`` and ``ray`` (forward passes in batches, on
Ray where asked) and ``synthetic`` (models built to satisfy or violate a condition exactly).
"""
