"""Start components, wait for SIGTERM or SIGINT, stop them in reverse order.

Every process (zun-api, zun-compute, zun-wsproxy, zun-all) is a list of components run by
:func:`run`, so shutdown is the same everywhere: no thread is left behind and the database
engine is disposed of last.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

LOG = logging.getLogger(__name__)


class Component(Protocol):
    name: str

    def start(self) -> None: ...

    def stop(self) -> None: ...


def run(
    components: Sequence[Component],
    on_exit: Callable[[], None] | None = None,
    ready: Callable[[], None] | None = None,
) -> int:
    """Run until a signal arrives; return the process exit code."""
    stop_requested = threading.Event()

    def _handle(signum: int, _frame: object) -> None:
        LOG.info("Received %s, shutting down", signal.Signals(signum).name)
        stop_requested.set()

    previous = {sig: signal.signal(sig, _handle) for sig in (signal.SIGTERM, signal.SIGINT)}
    started: list[Component] = []
    code = 0
    try:
        for component in components:
            LOG.info("Starting %s", component.name)
            component.start()
            started.append(component)
        if ready:
            ready()
        while not stop_requested.wait(0.5):
            pass
    except Exception:
        LOG.exception("Start-up failed")
        code = 1
    finally:
        for component in reversed(started):
            try:
                LOG.info("Stopping %s", component.name)
                component.stop()
            except Exception:
                LOG.exception("Stopping %s failed", component.name)
                code = 1
        if on_exit:
            on_exit()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    leftovers = [
        t.name
        for t in threading.enumerate()
        if t is not threading.main_thread() and not t.daemon and t.is_alive()
    ]
    if leftovers:
        LOG.warning("Threads still alive at exit: %s", ", ".join(leftovers))
    LOG.info("Stopped")
    return code
