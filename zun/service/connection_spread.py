"""An even spread of connections over API worker processes that share one socket.

All workers accept on the one inherited listening socket, and the kernel hands a new connection
to whichever worker it wakes first. With a few keep-alive clients (a load balancer's pool, a
benchmark's eight clients) one process often ended up holding most of them: eight connections to
two workers came out 8/0, 7/1 or 6/2 in half of the tries, and then one GIL served them while
the other worker idled.

Each worker publishes its count of open connections in a page shared by all of them (an
anonymous shared mapping made before the fork), and a worker holding more connections than the
least loaded live one stops watching the listening socket, so the next connection goes to that
one. A worker that has not written its slot for :data:`STALE_AFTER_NS` (stopped, hung, or
inside one long call that keeps its event loop from running) does not count, so no connection
waits longer than that for it; the loops write their slots at least every
:data:`LOOP_TIMEOUT` seconds, and the parent clears a dead worker's slot when it reaps it. A
worker decides whether to watch the socket before it
sleeps, so a worker that accepts a connection wakes the others (an eventfd each, made with the
page), which then decide again: the least loaded one is watching when the next one arrives.
"""

from __future__ import annotations

import mmap
import os
import time

# A worker whose loop has not written its slot for this long is left out (nanoseconds).
STALE_AFTER_NS = 1_200_000_000
# Seconds a worker's event loop may sleep: how often it writes its slot when nothing happens
# (waitress' default is 1 s; at 0.05 s an idle zun-api with 2 workers used 13 ms of CPU a
# second instead of 4).
LOOP_TIMEOUT = 0.5
# Each slot: open connections, then the monotonic time of the last write (ns); 0 = withdrawn.
_FIELDS = 2


class ConnectionLedger:
    """The shared page: one slot per worker, made by the parent before it forks."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        # mmap(-1, ...) is MAP_SHARED | MAP_ANONYMOUS: the children write the same page.
        self._page = mmap.mmap(-1, 8 * _FIELDS * workers)
        self._slots = memoryview(self._page).cast("q")
        self._wakes = [os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC) for _ in range(workers)]

    def vacate(self, slot: int) -> None:
        """The worker of ``slot`` died: the others stop waiting for it at once."""
        self.seat(slot).withdraw()

    def seat(self, slot: int) -> Seat:
        if not 0 <= slot < self.workers:
            raise ValueError(f"slot {slot} is not one of the {self.workers} workers'")
        return Seat(self, slot)


class Seat:
    """One worker's slot in the ledger."""

    def __init__(self, ledger: ConnectionLedger, slot: int) -> None:
        self._ledger = ledger
        self._slot = slot

    def should_accept(self, connections: int) -> bool:
        """Publish ``connections``; True unless a live worker holds fewer."""
        now = time.monotonic_ns()
        self._publish(connections, now)
        slots = self._ledger._slots
        mine = _FIELDS * self._slot
        for other in range(0, _FIELDS * self._ledger.workers, _FIELDS):
            if other == mine:
                continue
            written = slots[other + 1]
            if written and now - written < STALE_AFTER_NS and slots[other] < connections:
                return False
        return True

    def _publish(self, connections: int, now: int) -> None:
        slots = self._ledger._slots
        slots[_FIELDS * self._slot] = connections
        slots[_FIELDS * self._slot + 1] = now

    @property
    def wake_fd(self) -> int:
        """Readable when another worker accepted a connection: decide again."""
        return self._ledger._wakes[self._slot]

    def accepted(self, connections: int) -> None:
        """This worker took a connection and holds ``connections`` now: the others may be
        the least loaded. The count is written before they are woken, so they see it."""
        self._publish(connections, time.monotonic_ns())
        for slot, fd in enumerate(self._ledger._wakes):
            if slot != self._slot:
                try:
                    os.eventfd_write(fd, 1)
                except OSError:  # BlockingIOError: its counter is full, it is awake anyway
                    pass

    def drain(self) -> None:
        """Clear the wake-up (the loop is running, and decides again on this pass)."""
        try:
            os.eventfd_read(self.wake_fd)
        except BlockingIOError:
            pass

    def withdraw(self) -> None:
        """Not accepting (stopping, or at the connection limit): the others stop waiting."""
        self._ledger._slots[_FIELDS * self._slot + 1] = 0
