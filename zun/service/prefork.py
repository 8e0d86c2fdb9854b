"""Worker processes sharing one listening socket: ``[api] workers`` for zun-api.

The parent binds the socket, forks ``workers`` children and only supervises: each child builds
its own database engine, message transport and WSGI application (nothing with a thread or a
connection crosses ``fork``) and serves the inherited socket with its own event loop. The
kernel hands each new connection to whichever child accepts first, so a busy child (its GIL
held by a request) leaves new connections to an idle one. Each child gets a slot number, from
0 to ``workers - 1``, that its replacement inherits (``zun.service.connection_spread``).

SIGTERM or SIGINT to the parent is passed on to every child, which finishes the requests it
is running (``ApiServer.stop``) and exits; a child still alive after ``STOP_TIMEOUT`` seconds
is killed; a child whose parent dies (even killed) gets SIGTERM from the kernel. A child that
dies is replaced, unless it exited with an error during start-up
(``STARTUP_GRACE`` seconds): then the configuration or the environment is wrong and the
parent stops everything and exits with an error instead of looping.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
import threading
import time
from collections.abc import Callable

LOG = logging.getLogger(__name__)

STOP_TIMEOUT = 40.0
STARTUP_GRACE = 5.0
_POLL = 0.2
_PR_SET_PDEATHSIG = 1


def _spawn(child_main: Callable[[int], int], slot: int) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        _stop_with_parent()
        code = child_main(slot)
    except BaseException:  # the child must never return into the parent's code
        LOG.exception("API worker %s failed", os.getpid())
    finally:
        logging.shutdown()
        os._exit(code)
    return 0  # not reached


def _stop_with_parent() -> None:
    """Ask Linux for a SIGTERM when the parent dies (even by SIGKILL): no orphan workers
    keep serving the port."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        LOG.debug("prctl(PR_SET_PDEATHSIG) is not available here")
    if os.getppid() == 1:  # the parent died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


def run_workers(
    workers: int,
    child_main: Callable[[int], int],
    on_exit: Callable[[int], None] | None = None,
) -> int:
    """Fork ``workers`` children running ``child_main(slot)`` and supervise them until a
    signal; ``on_exit(slot)`` runs in the parent when a child has died, before its
    replacement starts."""
    stop = threading.Event()

    def _handle(signum: int, _frame: object) -> None:
        LOG.info("Received %s, stopping %d API workers", signal.Signals(signum).name, workers)
        stop.set()

    previous = {sig: signal.signal(sig, _handle) for sig in (signal.SIGTERM, signal.SIGINT)}
    # pid -> (start time, slot)
    children: dict[int, tuple[float, int]] = {}
    code = 0
    try:
        for slot in range(workers):
            children[_spawn(child_main, slot)] = (time.monotonic(), slot)
        LOG.info(
            "Started %d API worker processes: %s", workers, ", ".join(str(pid) for pid in children)
        )
        while not stop.wait(_POLL):
            code = _reap(children, child_main, on_exit)
            if code:
                break
    finally:
        _stop_children(children)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return code


def _reap(
    children: dict[int, tuple[float, int]],
    child_main: Callable[[int], int],
    on_exit: Callable[[int], None] | None = None,
) -> int:
    """Replace children that died; non-zero when one died during start-up."""
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 0
        if pid == 0:
            return 0
        entry = children.pop(pid, None)
        if entry is None:
            continue
        started, slot = entry
        if on_exit is not None:
            on_exit(slot)
        exit_code = os.waitstatus_to_exitcode(status)
        # A child killed by a signal is replaced whenever it died; one that gave up by
        # itself right after starting found a problem another child would find too.
        if exit_code > 0 and time.monotonic() - started < STARTUP_GRACE:
            LOG.error("API worker %s exited during start-up (%s); stopping", pid, exit_code)
            return 1
        LOG.warning("API worker %s exited (%s); starting another", pid, exit_code)
        children[_spawn(child_main, slot)] = (time.monotonic(), slot)
    return 0


def _stop_children(children: dict[int, tuple[float, int]]) -> None:
    for pid in children:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while children and time.monotonic() < deadline:
        for pid in list(children):
            try:
                done, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                children.pop(pid)
        if children:
            time.sleep(_POLL)
    for pid in list(children):
        LOG.warning("API worker %s did not stop within %.0f s; killing it", pid, STOP_TIMEOUT)
        _signal(pid, signal.SIGKILL)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        children.pop(pid)


def _signal(pid: int, sig: signal.Signals) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
