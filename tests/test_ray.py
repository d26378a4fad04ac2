"""Audits on Ray: the same report as a local audit, the cache shared, several models as tasks,
and a clear message where Ray is missing. The local cluster (two CPUs, no dashboard) is the
session's, from tests/conftest.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import normtest
from normtest.audit.report import Report
from normtest.audit.run import run_audit
from normtest.base.settings import AuditSettings
from normtest.cli.common import EXIT_USAGE
from normtest.cli.main import main
from normtest.errors import NormtestError

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

SMALL = {"words": 200, "documents": 10, "resamples": 200}
#: the word and CER suites of MiniLM (word claims on 200 words, CER on 10 documents: the test
#: holds the two executors to the same numbers, whatever the verdicts at these sizes)
CLAIMS = ["word.norm_ic", "word.norm_ic.multitoken", "cer.monotone", "cer.linear",
          "cer.fixed_point"]


def _same(a: Report, b: Report) -> None:
    """Every row of the two reports agrees: verdict, estimate, interval, adjusted p-values."""
    assert [r.id for r in a.results] == [r.id for r in b.results]
    for x, y in zip(a.results, b.results, strict=True):
        assert (x.verdict, x.estimate, x.ci, x.p_adjusted, x.p_fail_adjusted) == \
            (y.verdict, y.estimate, y.ci, y.p_adjusted, y.p_fail_adjusted), x.id


def test_a_ray_audit_of_minilm_equals_the_local_one_and_shares_its_cache(
        ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local = run_audit(normtest.load("minilm-l6", cache_dir=tmp_path / "local", progress=False),
                      claim_ids=CLAIMS, settings=AuditSettings(**SMALL))
    on_ray = normtest.load("minilm-l6", cache_dir=tmp_path / "ray", progress=False)
    remote = run_audit(on_ray, claim_ids=CLAIMS,
                       settings=AuditSettings(**SMALL, executor="ray", workers=2))
    assert on_ray.remote is not None  # the misses went to the actors
    _same(local, remote)
    # robustness and controls run on the Ray audit too, on the vectors it computed
    assert remote.robustness and remote.controls
    assert [(x.line, x.status, x.share, [s.status for s in x.specifications])
            for x in remote.robustness] == \
        [(x.line, x.status, x.share, [s.status for s in x.specifications])
         for x in local.robustness]
    assert [(c.line, c.valid, c.positive and c.positive.status,
             c.negative and c.negative.status) for c in remote.controls] == \
        [(c.line, c.valid, c.positive and c.positive.status, c.negative and c.negative.status)
         for c in local.controls]
    # the Ray run filled its cache: a local audit on it computes nothing and agrees
    def no_model(*args: object, **kwargs: object) -> None:
        raise AssertionError("a vector was computed although the cache holds every one")

    monkeypatch.setattr("normtest.models.cache.adapter.compute_items", no_model)
    again = run_audit(normtest.load("minilm-l6", cache_dir=tmp_path / "ray", progress=False),
                      claim_ids=CLAIMS, settings=AuditSettings(**SMALL))
    _same(local, again)


def test_several_models_are_audited_as_ray_tasks(
        ray_cluster: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["audit", "--model", "glove-6b-50d", "--model", "minilm-l6", "--claims",
            "word.norm_ic", "--words", "300", "--resamples", "200", "--out", str(tmp_path),
            "--format", "json"]
    assert main([*args, "--executor", "ray"]) == 0
    assert main([*args, "--out", str(tmp_path / "local")]) == 0
    out = capsys.readouterr().out
    assert out.count("Does the model behave as the paper says?") == 4
    for name in ("glove-6b-50d", "minilm-l6"):
        _same(Report.read(tmp_path / name / "report.json"),
              Report.read(tmp_path / "local" / name / "report.json"))


def test_without_ray_the_message_names_the_extra(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails, as when not installed
    code = main(["audit", "--model", "glove-6b-50d", "--claims", "word.norm_ic", "--words",
                 "200", "--resamples", "200", "--executor", "ray", "--format", "json"])
    assert code == EXIT_USAGE
    assert "pip install 'normtest[ray]'" in capsys.readouterr().err


def test_a_model_that_workers_cannot_load_is_refused_on_ray(ray_cluster: Any) -> None:
    with pytest.raises(NormtestError, match="loaded by name or path") as info:
        run_audit(normtest.load("glove-6b-50d", cache=False), claim_ids=["word.norm_ic"],
                  settings=AuditSettings(words=200, resamples=200, executor="ray"))
    # the message names the cause (the cache turned off) as Python and the command line say it
    assert "cache=False" in str(info.value) and "--no-cache" in str(info.value)


def test_the_pytest_plugin_runs_on_ray(ray_cluster: Any, pytester: pytest.Pytester) -> None:
    import normtest.checks

    checks = Path(normtest.checks.__file__).parent
    result = pytester.runpytest(str(checks), "-p", "no:cacheprovider", "--normtest-model",
                                "glove-6b-50d", "--normtest-claims", "word.norm_ic",
                                "--normtest-words", "300", "--normtest-resamples", "200",
                                "--normtest-executor", "ray")
    # GloVe's confirmatory row: Zipf-whitened norms track IC (the paper's positive control)
    result.assert_outcomes(passed=1)


pytest_plugins = ["pytester"]


# -- an address where no Ray cluster answers ------------------------------------------------------
OFFLINE = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _refused_quickly(address: str, tmp_path: Path) -> str:
    """``normtest audit --executor ray --ray-address ADDRESS`` (a fresh cache, so the workers
    would be needed): exit 2 within 30 s, in one line; that line."""
    pytest.importorskip("ray", reason="the ray extra is not installed")
    command = [sys.executable, "-m", "normtest", "audit", "--model", "glove-6b-50d", "--suite",
               "word", "--words", "60", "--resamples", "100", "--format", "json", "--out",
               str(tmp_path / "out"), "--executor", "ray", "--ray-address", address]
    began = time.monotonic()
    done = subprocess.run(command, env={**OFFLINE, "NORMTEST_CACHE_DIR": str(tmp_path / "c")},
                          capture_output=True, text=True, timeout=120, check=False)
    seconds = time.monotonic() - began
    print(f"--ray-address {address}: refused in {seconds:.1f} s")
    assert seconds < 30, f"{seconds:.0f} s: {done.stderr[-2000:]}"
    assert done.returncode == EXIT_USAGE, done.stderr
    assert "Traceback" not in done.stderr and "GCS" not in done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.strip()]
    assert line.startswith(f"normtest: error: --ray-address {address}: no Ray cluster answers")
    assert "ray start --head" in line and "leave out --ray-address" in line
    assert not (tmp_path / "out" / "report.json").exists()
    return line


def test_an_address_where_nothing_listens_is_refused_within_30_seconds(tmp_path: Path) -> None:
    with socket.socket() as taken:  # a port that was free a moment ago: nothing listens there
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
    line = _refused_quickly(f"127.0.0.1:{port}", tmp_path)
    assert "refused" in line
    _refused_quickly("127.0.0.1:1", tmp_path)


def test_an_address_where_something_else_listens_is_refused_within_30_seconds(
        tmp_path: Path) -> None:
    """A web server, not a Ray cluster: it accepts the connection but does not speak gRPC."""
    import http.server

    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), http.server.BaseHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        line = _refused_quickly(f"127.0.0.1:{server.server_address[1]}", tmp_path)
    finally:
        server.shutdown()
        server.server_close()
    assert "not a Ray cluster" in line


def test_a_running_clusters_address_passes_the_check(
        ray_cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from normtest.models.ray import check_address

    address = ray_cluster.get_runtime_context().gcs_address
    began = time.monotonic()
    check_address(address)  # a real GCS answers the gRPC greeting
    assert time.monotonic() - began < 5
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    with pytest.raises(NormtestError, match=r"\$RAY_ADDRESS=127\.0\.0\.1:1: no Ray cluster"):
        check_address(None)
