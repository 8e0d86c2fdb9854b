"""KeyedExecutor: one job at a time per key, in order; keys in parallel; bounded pool."""

from __future__ import annotations

import threading
import time

import pytest

from zun.compute.keyed_executor import KeyedExecutor


def test_jobs_of_one_key_run_in_order_one_at_a_time() -> None:
    pool = KeyedExecutor(8)
    seen: list[int] = []
    running = []

    def job(i: int) -> None:
        running.append(i)
        assert len(running) == 1, running
        time.sleep(0.005)
        seen.append(i)
        running.remove(i)

    for i in range(20):
        pool.submit("a", job, i)
    assert pool.wait_idle(10)
    assert seen == list(range(20))
    assert not pool.busy("a")
    pool.shutdown()


def test_keys_run_in_parallel() -> None:
    pool = KeyedExecutor(4)
    barrier = threading.Barrier(3, timeout=5)
    futures = [pool.submit(key, barrier.wait) for key in ("a", "b", "c")]
    for future in futures:
        future.result(timeout=5)  # a BrokenBarrierError here means they ran one by one
    pool.shutdown()


def test_a_failing_job_does_not_stop_the_queue() -> None:
    pool = KeyedExecutor(2)
    first = pool.submit("k", lambda: 1 / 0)
    second = pool.submit("k", lambda: "ok")
    with pytest.raises(ZeroDivisionError):
        first.result(timeout=5)
    assert second.result(timeout=5) == "ok"
    pool.shutdown()


def test_busy_and_wait_idle_timeout() -> None:
    pool = KeyedExecutor(1)
    release = threading.Event()
    pool.submit("k", release.wait, 5)
    assert pool.busy("k")
    assert not pool.wait_idle(0.05)
    release.set()
    assert pool.wait_idle(5)
    assert not pool.busy("k")
    pool.shutdown()
