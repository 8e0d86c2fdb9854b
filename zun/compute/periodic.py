"""A small runner for periodic tasks: one thread, each task at its own spacing.

Tasks run one after another in the runner's thread, so a slow task delays the others rather
than piling up; an exception is logged and the task runs again at its next turn.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

LOG = logging.getLogger(__name__)


@dataclass
class PeriodicTask:
    name: str
    func: Callable[[], object]
    spacing: float
    run_immediately: bool = True
    next_run: float = 0.0


class PeriodicRunner:
    name = "periodic-tasks"

    def __init__(self, tasks: list[PeriodicTask] | None = None, name: str = "zun-periodic") -> None:
        self.tasks = list(tasks or [])
        self.thread_name = name
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def add(
        self, name: str, func: Callable[[], object], spacing: float, run_immediately: bool = True
    ) -> None:
        self.tasks.append(PeriodicTask(name, func, spacing, run_immediately))

    def start(self) -> None:
        now = time.monotonic()
        for task in self.tasks:
            task.next_run = now if task.run_immediately else now + task.spacing
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name=self.thread_name)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic()
            for task in self.tasks:
                if self._stop.is_set():
                    return
                if task.next_run <= now:
                    try:
                        task.func()
                    except Exception:
                        LOG.exception("Periodic task %s failed", task.name)
                    task.next_run = time.monotonic() + task.spacing
            upcoming = min((t.next_run for t in self.tasks), default=now + 1.0)
            self._stop.wait(max(0.05, min(1.0, upcoming - time.monotonic())))
