"""Embedding extraction on Ray: the embedding cache's misses computed by a pool of Ray actors.

With ``executor = "ray"`` an audit runs as it always does, except that whenever the cache
(:class:`~normtest.models.cache.CachedAdapter`) lacks some vectors, it sends just those items to Ray
Data: ``map_batches`` with :class:`_Extractor`, a callable class that loads the model once per
actor (from the adapter's recipe: its name or path and load options) and computes each batch
with :func:`normtest.models.extraction.compute_items` — the very function the local path runs. The
driver keeps the cache as the one source of truth: it reads what is cached, sends only the
misses, and writes the results (one writer), so a Ray run and a local run share one cache and
give the same report.

The cluster is the one ``ray_address`` (or ``$RAY_ADDRESS``) names, else a local one started
here with one CPU per worker. Actors ask for one CPU each, or one GPU when the model runs on
``cuda``. Ray is the ``ray`` extra: ``pip install 'normtest[ray]'``.

Two things Ray does on its own are undone here, so that a Ray audit fails and stops as a local
one does:

- An address where no Ray cluster answers would have ``ray.init`` retry for minutes ("Failed to
  connect to GCS"). :func:`check_address` asks the address first, with a plain TCP connection
  and the HTTP/2 greeting every gRPC server (Ray's GCS) answers, each within
  :data:`PROBE_SECONDS`, and refuses it in one line.
- ``ray.init`` takes over SIGTERM: its native failure handler prints a stack dump and aborts
  (SIGABRT). The handler the process had before is put back after ``ray.init``, so SIGTERM ends
  a Ray audit as it ends a local one (by default: at once, quietly, exit status −15 / 143);
  the cache keeps every finished batch, and the same command resumes from it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from normtest.errors import NormtestError
from normtest.models.cache.adapter import CachedAdapter
from normtest.models.extraction import compute_items
from normtest.models.registry import load

__all__ = ["RayExtraction", "check_address", "connect", "enable", "require_ray", "unwrap"]

#: Items per Ray Data batch: enough for a model's own batching, small enough to spread.
MIN_BATCH, MAX_BATCH = 16, 2048
#: Seconds :func:`check_address` waits for the cluster's address to answer (each of its steps).
PROBE_SECONDS = 5.0
#: What an HTTP/2 client sends first (RFC 9113 §3.4): the preface, then an empty SETTINGS frame.
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


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


def _split(address: str) -> tuple[str, int] | None:
    """(host, port) of ``HOST:PORT``, ``[IPv6]:PORT`` or ``ray://HOST:PORT``; None when the
    address has no port to probe (Ray reads it as it likes)."""
    rest = address.split("://", 1)[1] if "://" in address else address
    rest = rest.split("/", 1)[0]
    if rest.startswith("["):
        host, _, tail = rest[1:].partition("]")
        port = tail[1:] if tail.startswith(":") else ""
    else:
        host, _, port = rest.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host, int(port)


def _ray_host(host: str) -> str:
    """The host Ray itself connects to: a loopback address is replaced by this node's IP."""
    try:
        from ray._private.services import resolve_ip_for_localhost

        return str(resolve_ip_for_localhost(host))
    except Exception:  # another Ray version: the host as given
        return host


def _why_not(host: str, port: int, *, greet: bool) -> str | None:
    """Why ``host:port`` is not a gRPC server (None when it is): no connection within
    :data:`PROBE_SECONDS`, or (``greet``) no HTTP/2 SETTINGS frame in answer to the preface."""
    try:
        with socket.create_connection((host, port), timeout=PROBE_SECONDS) as conn:
            if not greet:
                return None
            conn.settimeout(PROBE_SECONDS)
            conn.sendall(_H2_PREFACE)
            head = b""
            while len(head) < 9:
                chunk = conn.recv(9 - len(head))
                if not chunk:
                    break
                head += chunk
    except socket.gaierror as exc:
        return f"unknown host: {exc.strerror or exc}"
    except TimeoutError:
        return f"no answer within {PROBE_SECONDS:g} s"
    except OSError as exc:
        return str(exc.strerror or exc).lower()
    if len(head) < 9 or head[3] != 4:  # the frame type of SETTINGS, what a gRPC server sends
        return "something answers there, but not a Ray cluster (no gRPC greeting)"
    return None


def check_address(address: str | None = None) -> None:
    """Refuse, within seconds, a Ray address where no cluster answers (``address``, else
    ``$RAY_ADDRESS``; nothing to check for a local cluster, ``auto`` or an address Ray parses
    itself). ``ray.init`` would retry such an address for minutes."""
    given = address or os.environ.get("RAY_ADDRESS") or None
    if given is None or given in ("auto", "local"):
        return
    name = f"--ray-address {given}" if address else f"$RAY_ADDRESS={given}"
    parts = _split(given)
    if parts is None:
        return
    host, port = parts
    target = host if "://" in given else _ray_host(host)
    tls = os.environ.get("RAY_USE_TLS", "").lower() in ("1", "true")
    why = _why_not(target, port, greet=not tls)
    if why is None:
        return
    via = f" (Ray connects to {target}:{port})" if target != host else ""
    raise NormtestError(
        f"{name}: no Ray cluster answers there{via}: {why}. Start one with `ray start --head` "
        "and give the address it prints (HOST:6379), or leave out --ray-address (and "
        "$RAY_ADDRESS) to start a local cluster")


def connect(address: str | None = None, workers: int | None = None) -> Any:
    """Join the Ray cluster at ``address`` (or ``$RAY_ADDRESS``), or start a local one with
    ``workers`` CPUs (default: this machine's); a cluster already joined is kept. An address
    where no cluster answers is refused within seconds (:func:`check_address`); SIGTERM keeps
    the handler it had (see the module doc)."""
    ray = require_ray()
    if not ray.is_initialized():
        target = address or os.environ.get("RAY_ADDRESS") or None
        check_address(address)
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                   "logging_level": logging.ERROR}
        if target is None and workers is not None:
            options["num_cpus"] = workers
        with _keeping_sigterm():
            try:
                ray.init(address=target, **options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise NormtestError(f"cannot join the Ray cluster at {target}: {exc}; check "
                                    "--ray-address (ray status shows a running cluster)"
                                    ) from exc
    _quiet_ray_data()
    return ray


@contextlib.contextmanager
def _keeping_sigterm() -> Iterator[None]:
    """Around ``ray.init``: SIGTERM's handler as it was before, afterwards.

    ``ray.init`` sets a Python handler (``sys.exit(15)``) and then its native failure signal
    handler, which answers SIGTERM with a stack dump and SIGABRT. Putting the earlier handler
    back (``signal.signal`` replaces the native one too) makes SIGTERM do what it did before
    Ray: by default, end the process at once and quietly. A SIGTERM that arrives during
    ``ray.init`` itself (Ray's ``sys.exit(15)``) is delivered again once the handler is back.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread sets handlers (and Ray sets none from another)
        return
    before = signal.getsignal(signal.SIGTERM)
    before = signal.SIG_DFL if before is None else before  # None: set outside Python
    try:
        yield
    except SystemExit as exc:
        signal.signal(signal.SIGTERM, before)
        if exc.code == signal.SIGTERM:  # Ray's handler ran: the SIGTERM, as it was meant
            os.kill(os.getpid(), signal.SIGTERM)
        raise
    finally:
        signal.signal(signal.SIGTERM, before)


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
    """A :data:`normtest.models.extraction.Remote` on Ray Data (one job per batch of misses)."""

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


        torch.set_num_threads(self.threads)
        target, options = self.recipe
        self.adapter = load(target, cache=False, **options)

    def __call__(self, batch: dict[str, Any], method: str,
                 params: dict[str, Any]) -> dict[str, list[Any]]:

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

    require_ray()
    if not isinstance(adapter, CachedAdapter) or adapter.recipe is None:
        raise NormtestError(
            "--executor ray needs a model loaded by name or path with the embedding cache on, "
            "so that each worker can load it too and the workers' vectors land in the cache: "
            "drop --no-cache (Python: normtest.load(...) without cache=False; to compute every "
            "vector afresh, point NORMTEST_CACHE_DIR at an empty folder); a module:attribute "
            "object runs with --executor local")
    check_address(address)
    adapter.remote = RayExtraction(adapter.recipe, workers, address)
