"""Independent work over forked processes (normtest.base.parallel): the same numbers as in one
process, in item order, errors raised where the map was called, and one process where forking
cannot help or is not possible."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from normtest.adapters.static import StaticVectors
from normtest.audit.run import AuditSettings, run_audit
from normtest.base import parallel
from normtest.data.information.frequency import WordfreqSource
from normtest.data.information.samples import default_word_sample
from normtest.errors import NormtestError

needs_fork = pytest.mark.skipif(parallel.worker_count(2, 2) != 2,
                                reason="no fork start method on this platform")


def _pid(_: int) -> int:
    return os.getpid()


@needs_fork
def test_a_map_over_two_processes_returns_every_result_in_item_order() -> None:
    done: list[int] = []
    squares = parallel.forked_map(lambda x: x * x, list(range(7)), 2, done=done.append,
                                  cost=lambda x: x)
    assert squares == [x * x for x in range(7)]
    assert sorted(done) == list(range(7))  # each item reported once, as it came back
    pids = set(parallel.forked_map(_pid, list(range(6)), 2))
    assert os.getpid() not in pids and 1 <= len(pids) <= 2  # the work ran in the workers


@needs_fork
def test_an_error_in_a_worker_is_raised_in_the_caller() -> None:
    def fail_on_three(x: int) -> int:
        if x == 3:
            raise NormtestError("three is not allowed")
        return x

    with pytest.raises(NormtestError, match="three is not allowed"):
        parallel.forked_map(fail_on_three, list(range(5)), 2)


def _dispositions(_: int) -> tuple[Any, Any, bool]:
    import signal

    held = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    return (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM),
            bool(held & {signal.SIGINT, signal.SIGTERM}))


@needs_fork
def test_a_parents_sigterm_handler_never_runs_in_a_worker() -> None:
    """Ray installs a SIGTERM handler that raises SystemExit, and the pool sends its workers
    SIGTERM when it closes: a worker that ran the parent's handler while still in the parent's
    copied stack raised there, as if it were the test process itself (a CI failure). A worker
    is forked with both signals held, then ignores Ctrl-C and ends on SIGTERM."""
    import signal

    def exiting(signum: int, frame: object) -> None:
        raise SystemExit(signum)

    before = signal.signal(signal.SIGTERM, exiting)
    try:
        seen = set(parallel.forked_map(_dispositions, list(range(4)), 2))
        assert seen == {(signal.SIG_IGN, signal.SIG_DFL, False)}, seen
        assert signal.getsignal(signal.SIGTERM) is exiting  # the parent's own is kept
        assert not signal.pthread_sigmask(signal.SIG_BLOCK, set()) & {signal.SIGINT,
                                                                       signal.SIGTERM}
    finally:
        signal.signal(signal.SIGTERM, before)


def test_one_worker_or_one_item_runs_here() -> None:
    assert parallel.worker_count(1, 10) == 1
    assert parallel.worker_count(8, 1) == 1
    assert parallel.worker_count(None, 0) == 1
    assert parallel.forked_map(_pid, [0, 1, 2], 1) == [os.getpid()] * 3


def test_the_default_worker_count_is_the_variable_else_one_per_cpu(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "available_cpus", lambda: 4)
    monkeypatch.setattr(parallel, "_can_fork", lambda: True)
    monkeypatch.delenv(parallel.WORKERS_ENV, raising=False)
    assert parallel.worker_count(None, 10) == 4 and parallel.worker_count(None, 3) == 3
    monkeypatch.setenv(parallel.WORKERS_ENV, "2")
    assert parallel.worker_count(None, 10) == 2
    monkeypatch.setenv(parallel.WORKERS_ENV, "1")
    assert parallel.worker_count(None, 10) == 1 and parallel.worker_count(3, 10) == 3
    monkeypatch.setenv(parallel.WORKERS_ENV, "")  # empty: as if unset
    assert parallel.worker_count(None, 10) == 4
    for told in ("many", "0", "-3"):  # not a count: refused, as --workers refuses it
        monkeypatch.setenv(parallel.WORKERS_ENV, told)
        with pytest.raises(NormtestError, match="NORMTEST_WORKERS"):
            parallel.worker_count(None, 10)


@needs_fork
def test_a_worker_runs_its_own_maps_in_process() -> None:
    def nested(_: int) -> int:
        return parallel.worker_count(8, 8)

    assert parallel.forked_map(nested, [0, 1], 2) == [1, 1]


def _without_seconds(section: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in line.items() if k != "seconds"} for line in section]


@needs_fork
def test_an_audit_gives_the_same_numbers_on_one_process_and_on_two() -> None:
    """Two scorecard lines (word level, conditions) of a static model whose squared norms are
    the words' IC: every row, and the robustness and the controls of each line (every
    specification and every control row), are the same whether the work ran in this process or
    was spread over two others."""
    words = default_word_sample(size=1200, seed=0)
    ic = WordfreqSource().information_content(words)
    kept = list(ic.words)
    rng = np.random.default_rng(0)
    directions = rng.standard_normal((len(kept), 16))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    model = StaticVectors("faithful", kept, directions * np.sqrt(ic.values)[:, None],
                          "synthetic:faithful")
    settings = AuditSettings(words=len(kept), resamples=200)
    claims = ["word.norm_ic", "cond.inner_pmi", "cond.self_pmi"]
    serial = run_audit(model, claim_ids=claims, words=kept,
                       settings=replace(settings, workers=1)).to_dict()
    assert len(serial["robustness"]) == 2 and len(serial["controls"]) == 2
    assert len(serial["results"]) > 2
    # on two workers, by rows (what auto picks there) and by whole claims
    for schedule in ("rows", "claims"):
        spread = run_audit(model, claim_ids=claims, words=kept,
                           settings=replace(settings, workers=2, schedule=schedule)).to_dict()
        assert spread["results"] == serial["results"], schedule
        assert _without_seconds(spread["robustness"]) == _without_seconds(
            serial["robustness"])
        assert _without_seconds(spread["controls"]) == _without_seconds(serial["controls"])


def test_auto_spreads_whole_claims_from_four_workers() -> None:
    from normtest.audit.run import CLAIMS_FROM_WORKERS, spread_by_claims

    assert CLAIMS_FROM_WORKERS == 4
    assert not spread_by_claims(AuditSettings(workers=2), 10)
    assert spread_by_claims(AuditSettings(workers=4), 10)
    assert not spread_by_claims(AuditSettings(workers=8), 1)  # one claim: nothing to spread
    assert spread_by_claims(AuditSettings(workers=2, schedule="claims"), 10)
    assert not spread_by_claims(AuditSettings(workers=8, schedule="rows"), 10)
