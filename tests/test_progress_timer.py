"""The audit's stage timer: :func:`normtest.base.progress.timings` records the wall time of every
progress task while it is active, nested tasks inclusively, and nothing when it is not. Only the
order and inclusion of the times are asserted, never a speed."""

from __future__ import annotations

import threading
import time

from normtest.base import progress


def test_a_nested_pair_of_tasks_is_recorded_inclusively() -> None:
    with progress.timings() as recorded:
        with progress.task("outer", total=2, unit="steps") as bar:
            time.sleep(0.02)
            with progress.task("inner"):
                time.sleep(0.05)
            bar.update(1)
            bar.describe("outer, renamed on the display")  # the key stays the description
            with progress.task("inner"):
                time.sleep(0.01)
            assert [d for d, _ in recorded.running()] == ["outer"]
    assert set(recorded.seconds) == {"outer", "inner"}
    assert recorded.calls == {"outer": 1, "inner": 2}
    assert recorded.seconds["inner"] >= 0.06  # at least the sleeps
    assert recorded.seconds["outer"] >= recorded.seconds["inner"] + 0.02
    # exclusive: the outer task's own time is its time less the inner tasks'
    assert recorded.own["inner"] == recorded.seconds["inner"]
    assert abs(recorded.own["outer"] - (recorded.seconds["outer"] - recorded.seconds["inner"])) \
        < 1e-9
    assert 0.02 <= recorded.own["outer"] < recorded.seconds["outer"]
    assert recorded.running() == []


def test_nothing_is_recorded_outside_timings() -> None:
    with progress.task("before"):
        pass
    with progress.timings() as recorded:
        pass
    with progress.task("after"):
        pass
    assert recorded.seconds == {} and recorded.calls == {} and recorded.own == {}
    assert progress._TIMINGS == ()  # no record is left active


def test_a_task_without_a_display_still_works_and_is_recorded() -> None:
    assert not progress.active()
    with progress.timings() as recorded:
        with progress.task("no display", total=3, unit="things") as bar:
            bar.update(2)
            bar.describe("still no display")
            assert not progress.active()  # timing turns no display on
    assert recorded.calls == {"no display": 1} and recorded.seconds["no display"] >= 0


def test_a_task_that_raises_is_recorded_and_the_error_passes() -> None:
    with progress.timings() as recorded:
        try:
            with progress.task("failing"):
                raise ValueError("stop")
        except ValueError as exc:
            assert str(exc) == "stop"
        else:  # pragma: no cover
            raise AssertionError("the error was swallowed")
    assert recorded.calls == {"failing": 1}


def test_nested_timings_each_record_what_runs_within_them() -> None:
    with progress.timings() as outer:
        with progress.task("first"):
            pass
        with progress.timings() as inner:
            with progress.task("second"):
                pass
    assert set(outer.calls) == {"first", "second"} and set(inner.calls) == {"second"}


def test_threads_record_their_own_tasks() -> None:
    def work() -> None:
        with progress.task("in a thread"):
            time.sleep(0.01)

    with progress.timings() as recorded:
        with progress.task("main"):
            threads = [threading.Thread(target=work) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    assert recorded.calls == {"main": 1, "in a thread": 4}
    # another thread's task is no part of this thread's nesting
    assert recorded.own["main"] == recorded.seconds["main"]
    assert recorded.own["in a thread"] == recorded.seconds["in a thread"]
