"""Fixtures shared by the test modules: the embedded models and a local Ray cluster, each
loaded or started once per test process (once per worker under pytest-xdist).

The adapters are read-only, so one instance serves every test; they are the uncached adapters
(a test that exercises the embedding cache builds its own, in a temporary folder). Loading them
here, before any ``pytester`` run, also keeps their modules out of pytester's import snapshots.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from normtest.adapters.decoder import DecoderAdapter
    from normtest.adapters.encoder import EncoderAdapter
    from normtest.adapters.static import StaticVectors


@pytest.fixture(scope="session", autouse=True)
def _results_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    """An audit without --out writes to reports/MODEL/REVISION/; in tests, under a temporary
    folder rather than the checkout's reports/."""
    import os

    from normtest.base.paths import RESULTS_ENV

    os.environ[RESULTS_ENV] = str(tmp_path_factory.mktemp("results"))


@pytest.fixture(scope="session", autouse=True)
def _audits_in_one_process() -> None:
    """pytest-xdist already spreads the tests over the cores: each audit runs its work in its
    own process (the tests of normtest.base.parallel give their worker counts explicitly)."""
    import os

    from normtest.base.parallel import WORKERS_ENV

    os.environ[WORKERS_ENV] = "1"


@pytest.fixture
def ctrl_c_delivered() -> Iterator[None]:
    """Python's own Ctrl-C handler for the test, however the test process was started: a
    background job of a non-interactive shell (``make test &``) starts with SIGINT ignored, and
    Python then keeps it ignored, so a Ctrl-C the test sends itself would be lost."""
    import signal

    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.fixture(scope="session")
def glove() -> StaticVectors:
    """GloVe-6B-50d (static vectors, 400,000 words × 50)."""
    from normtest.models.registry import load_model

    return load_model("glove-6b-50d", cache=False)


@pytest.fixture(scope="session")
def minilm() -> EncoderAdapter:
    """all-MiniLM-L6-v2 (a BERT encoder, 6 layers × 384)."""
    from normtest.adapters.encoder import EncoderAdapter

    return EncoderAdapter.minilm_l6(progress=False)


@pytest.fixture(scope="session")
def smollm2() -> DecoderAdapter:
    """SmolLM2-135M-Instruct (a LLaMA decoder, 30 layers × 576)."""
    from normtest.adapters.decoder import DecoderAdapter

    return DecoderAdapter.smollm2_135m(progress=False)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """A local Ray cluster (two CPUs, no dashboard), started once per test process for every
    module that audits or counts on Ray, and stopped at the end of the session."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'normtest[ray]')")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()
