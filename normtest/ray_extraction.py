"""Embedding extraction on Ray: the embedding cache's misses computed by a pool of Ray actors.

With ``executor = "ray"`` an audit runs as it always does, except that whenever the cache
(:class:`~normtest.cache.CachedAdapter`) lacks some vectors, it sends just those items to Ray
Data: ``map_batches`` with :class:`_Extractor`, a callable class that loads the model once per
actor (from the adapter's recipe: its name or path and load options) and computes each batch
with :func:`normtest.extraction.compute_items` — the very function the local path runs. The
driver keeps the cache as the one source of truth: it reads what is cached, sends only the
misses, and writes the results (one writer), so a Ray run and a local run share one cache and
give the same report.

The cluster is the one ``ray_address`` (or ``$RAY_ADDRESS``) names, else a local one started
here with one CPU per worker. Actors ask for one CPU each, or one GPU when the model runs on
``cuda``. Ray is the ``ray`` extra: ``pip install 'normtest[ray]'``.
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from normtest.errors import NormtestError

__all__ = ["RayExtraction", "connect", "enable", "require_ray", "unwrap"]

#: Items per Ray Data batch: enough for a model's own batching, small enough to spread.
MIN_BATCH, MAX_BATCH = 16, 2048


def require_ray() -> Any:
    """The ``ray`` module, or a NormtestError naming the extra to install."""
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise NormtestError(
            "--executor ray needs Ray, which is not installed: pip install 'normtest[ray]' (or "
            "pip install 'ray[data]'); --executor local runs everything in this process"
        ) from exc
    return ray


def connect(address: str | None = None, workers: int | None = None) -> Any:
    """Join the Ray cluster at ``address`` (or ``$RAY_ADDRESS``), or start a local one with
    ``workers`` CPUs (default: this machine's); a cluster already joined is kept."""
    ray = require_ray()
    if not ray.is_initialized():
        target = address or os.environ.get("RAY_ADDRESS") or None
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                   "logging_level": logging.ERROR}
        if target is None and workers is not None:
            options["num_cpus"] = workers
        try:
            ray.init(address=target, **options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise NormtestError(f"cannot join the Ray cluster at {target}: {exc}; check "
                                "--ray-address (ray status shows a running cluster)") from exc
    _quiet_ray_data()
    return ray


def _quiet_ray_data() -> None:
    """Ray Data's progress bars and execution logs off: normtest's display says what runs."""
    import ray.data

    with warnings.catch_warnings():  # reading the context warns about Ray's own renamed fields
        warnings.simplefilter("ignore", DeprecationWarning)
        context = ray.data.DataContext.get_current()
        for name, value in (("enable_progress_bars", False),
                            ("print_on_execution_start", False),
                            ("enable_operator_progress_bars", False)):
            if hasattr(context, name):
                setattr(context, name, value)
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.ERROR)


@dataclass(frozen=True)
class RayExtraction:
    """A :data:`normtest.extraction.Remote` on Ray Data (one job per batch of misses)."""

    recipe: tuple[str, dict[str, Any]]
    workers: int | None = None
    address: str | None = None

    def for_model(self, recipe: tuple[str, dict[str, Any]]) -> RayExtraction:
        """The same cluster and workers, for another model (the surprisal model)."""
        return RayExtraction(recipe, self.workers, self.address)

    def __call__(self, method: str, items: list[Any], params: dict[str, Any]) -> list[np.ndarray]:
        """One array per item, computed by the actors."""
        if not items:
            return []
        ray = connect(self.address, self.workers)
        gpus = 1.0 if str(self.recipe[1].get("device") or "cpu").startswith("cuda") else 0.0
        available = ray.cluster_resources().get("GPU" if gpus else "CPU", 1)
        actors = max(1, min(self.workers or int(available), int(available) or 1, len(items)))
        batch = max(MIN_BATCH, min(MAX_BATCH, -(-len(items) // (actors * 2))))
        blocks = -(-len(items) // batch)  # a block goes to one actor: one block per batch
        actors = min(actors, blocks)  # no actor started that would have nothing to do
        rows = [{"i": i, "item": json.dumps(item)} for i, item in enumerate(items)]
        # the recipe travels with the class (no constructor arguments in the object store)
        extractor = type("Extractor", (_Extractor,), {"recipe": self.recipe})
        with warnings.catch_warnings():  # max_restarts has no named parameter in Ray Data yet
            warnings.simplefilter("ignore", DeprecationWarning)
            # an actor that dies is not restarted (the job fails and says so): Ray would log an
            # error line on the terminal for every actor it could restart
            done = unwrap(ray, lambda: ray.data.from_items(rows, override_num_blocks=blocks)
                          .map_batches(
                extractor, fn_kwargs={"method": method, "params": params}, batch_size=batch,
                compute=ray.data.ActorPoolStrategy(size=actors), num_cpus=0 if gpus else 1,
                num_gpus=gpus, batch_format="numpy", max_restarts=0).take_all())
        out: list[np.ndarray | None] = [None] * len(items)
        for row in done:
            shape = tuple(json.loads(row["shape"]))
            out[int(row["i"])] = np.frombuffer(row["data"], dtype=np.dtype(str(row["dtype"]))
                                               ).reshape(shape).copy()
        missing = [i for i, a in enumerate(out) if a is None]
        if missing:
            raise NormtestError(f"the Ray workers returned no {method} for {len(missing)} items")
        return [a for a in out if a is not None]


def unwrap(ray: Any, call: Any) -> Any:
    """``call()``, with an error raised inside a Ray worker re-raised as itself: a
    NormtestError from a worker reads as it would locally (not as a RayTaskError)."""
    try:
        return call()
    except ray.exceptions.RayError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, NormtestError):
            raise cause from None
        raise NormtestError(f"a Ray worker failed: {cause or exc}") from exc


class _Extractor:
    """A Ray actor: the model loaded once, then :func:`compute_items` on each batch (a
    subclass made per job carries its ``recipe``). An actor reserves one CPU and computes on one
    thread, so that ``workers`` actors use ``workers`` CPUs and never oversubscribe them."""

    recipe: tuple[str, dict[str, Any]]
    threads: int = 1

    def __init__(self) -> None:
        import torch

        from normtest.models import load

        torch.set_num_threads(self.threads)
        target, options = self.recipe
        self.adapter = load(target, cache=False, **options)

    def __call__(self, batch: dict[str, Any], method: str,
                 params: dict[str, Any]) -> dict[str, list[Any]]:
        from normtest.extraction import compute_items

        items = [_item(json.loads(str(s))) for s in batch["item"]]
        arrays = [np.ascontiguousarray(a) for a in compute_items(self.adapter, method, items,
                                                                   params)]
        return {"i": [int(i) for i in batch["i"]], "data": [a.tobytes() for a in arrays],
                "shape": [json.dumps(list(a.shape)) for a in arrays],
                "dtype": [a.dtype.str for a in arrays]}


def _item(value: Any) -> Any:
    """A JSON item back as the extraction expects it: a text, or (text, prefix lengths)."""
    return (value[0], [int(n) for n in value[1]]) if isinstance(value, list) else value


def enable(adapter: Any, workers: int | None = None, address: str | None = None) -> None:
    """Compute ``adapter``'s cache misses on Ray (it must come from :func:`normtest.load`, whose
    recipe tells the workers how to load the same model)."""
    from normtest.cache import CachedAdapter

    require_ray()
    if not isinstance(adapter, CachedAdapter) or adapter.recipe is None:
        raise NormtestError(
            "--executor ray needs a model loaded by name or path with the embedding cache on "
            "(normtest.load(...) without cache=False), so that each worker can load it too; a "
            "module:attribute object runs with --executor local")
    adapter.remote = RayExtraction(adapter.recipe, workers, address)
