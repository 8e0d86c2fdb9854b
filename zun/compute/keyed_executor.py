"""A bounded thread pool where jobs sharing a key run one at a time, in submission order.

The container endpoint keys jobs by container UUID: a start sent right after a create waits for
the create, and a burst of actions on one container never takes more than one worker (the
others stay free for other containers). Jobs of different keys run in parallel.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

LOG = logging.getLogger(__name__)

_Job = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any], Future]


class KeyedExecutor:
    def __init__(self, max_workers: int, name: str = "zun-worker") -> None:
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix=name)
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._queues: dict[str, collections.deque[_Job]] = {}
        self._pending = 0

    def submit(self, key: str, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        """Queue ``fn(*args, **kwargs)`` behind the jobs already queued for ``key``."""
        future: Future = Future()
        with self._lock:
            self._pending += 1
            queue = self._queues.get(key)
            if queue is not None:
                queue.append((fn, args, kwargs, future))
                return future
            self._queues[key] = collections.deque([(fn, args, kwargs, future)])
        try:
            self._pool.submit(self._drain, key)
        except RuntimeError:  # the pool is shut down
            with self._lock:
                self._queues.pop(key, None)
                self._pending -= 1
            raise
        return future

    def busy(self, key: str) -> bool:
        """Whether a job for ``key`` is running or queued."""
        with self._lock:
            return key in self._queues

    def _drain(self, key: str) -> None:
        while True:
            with self._lock:
                fn, args, kwargs, future = self._queues[key][0]
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as exc:  # handed to whoever holds the future
                    future.set_exception(exc)
            with self._lock:
                queue = self._queues[key]
                queue.popleft()
                self._pending -= 1
                if self._pending == 0:
                    self._idle.notify_all()
                if not queue:
                    del self._queues[key]
                    return

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no job is queued or running; False if ``timeout`` passed first."""
        with self._lock:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def shutdown(self, wait: bool = True) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=not wait)
