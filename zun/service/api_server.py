"""The REST API served by waitress in a thread of its own.

Waitress reads and writes every socket from one event loop (``poll()`` here, so there is no
1024-descriptor ceiling) and hands only *complete* requests to its worker threads: an idle or
slow client costs a file descriptor and a few hundred bytes, never a thread. What waitress does
not bound by itself is how long a client may take to send one request (``channel_timeout``
only counts silence, so a client sending a byte every few seconds stays forever); the channel
and server classes below close a connection whose request is not complete within
:data:`REQUEST_READ_TIMEOUT` seconds of its first byte.

Several processes can serve one port: bind with :func:`bind_socket` before forking and hand the
socket to each process's :class:`ApiServer` (``zun/service/prefork.py``), with a seat in a
:class:`~zun.service.connection_spread.ConnectionLedger` so that the connections spread evenly
over them.
"""

from __future__ import annotations

import logging
import resource
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer
from waitress.wasyncore import file_dispatcher

from zun.service.connection_spread import LOOP_TIMEOUT, Seat

LOG = logging.getLogger(__name__)

# Seconds a connection may stay silent between requests (waitress' channel_timeout).
IDLE_TIMEOUT = 60
# Seconds from the first byte of a request to its last (headers and body).
REQUEST_READ_TIMEOUT = 30
# How often the loop looks for connections past those timeouts.
CLEANUP_INTERVAL = 2
# Open connections per process, at most; more wait in the listen backlog.
MAX_CONNECTIONS = 10_000
# Descriptors kept back from the connection budget (database pool, message bus, logs).
RESERVED_FDS = 256
BACKLOG = 2048
# Seconds a thread may hold the GIL while another waits (Python's default is 5 ms). A thread
# back from a socket read waits that long for a thread that is building a page; pymysql
# reads a 1000-row result in ~100 reads and waitress writes it in ~60 sends, so with the
# default a worker serving 4 lists at once served them ~10 times slower than one at a time
# (benchmarks/read_path.py: C=8 gave 0.1 requests/s against 1.0 at C=1 with 2 workers).
GIL_SWITCH_INTERVAL = 0.0005


def raise_fd_limit() -> int:
    """Raise the soft descriptor limit to the hard one; return the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            LOG.warning("Could not raise the open file limit above %s", soft)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def connection_limit() -> int:
    return max(100, min(MAX_CONNECTIONS, raise_fd_limit() - RESERVED_FDS))


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket, to share between processes (inheritable across fork)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    sock.bind((host, port))
    sock.listen(BACKLOG)
    sock.setblocking(False)
    return sock


class _TimedChannel(HTTPChannel):
    """Remembers when the request being read started."""

    request_started: float | None = None

    def received(self, data: bytes) -> bool:
        if self.request is None and data:
            self.request_started = time.monotonic()
        result = super().received(data)
        if self.request is None:  # every request read so far is complete
            self.request_started = None
        return result


class _Server(TcpWSGIServer):
    channel_class = _TimedChannel
    # Set by ApiServer when several processes share the socket.
    seat: Seat | None = None

    def readable(self) -> bool:
        # Called by the loop on every pass, before it polls: the place to decide whether the
        # listening socket is watched this time.
        accepting = bool(super().readable())
        if self.seat is None:
            return accepting
        if not accepting:
            self.seat.withdraw()
            return False
        return self.seat.should_accept(len(self.active_channels))

    def handle_accept(self) -> None:
        before = len(self.active_channels)
        super().handle_accept()
        if self.seat is not None and len(self.active_channels) > before:
            self.seat.accepted(len(self.active_channels))

    def maintenance(self, now: float) -> None:
        super().maintenance(now)
        cutoff = time.monotonic() - REQUEST_READ_TIMEOUT
        for channel in list(self.active_channels.values()):
            started = getattr(channel, "request_started", None)
            if started is not None and started < cutoff and not channel.requests:
                channel.will_close = True


class _Wake(file_dispatcher):
    """Wakes the loop when another worker accepted a connection (its seat's eventfd), so that
    :meth:`_Server.readable` decides again whether to watch the listening socket."""

    def __init__(self, seat: Seat, map: dict[int, Any]) -> None:
        super().__init__(seat.wake_fd, map=map)
        self._seat = seat

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def handle_read(self) -> None:
        self._seat.drain()


class ApiServer:
    name = "zun-api"

    def __init__(
        self,
        app: Callable[..., Any],
        host: str,
        port: int,
        threads: int = 8,
        sock: socket.socket | None = None,
        seat: Seat | None = None,
    ) -> None:
        self.app = app
        self.seat = seat
        self.host = host
        self.port = port
        self.threads = threads
        self.sock = sock
        self._server: Any = None
        self._wake: _Wake | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        sys.setswitchinterval(GIL_SWITCH_INTERVAL)
        sock = self.sock if self.sock is not None else bind_socket(self.host, self.port)
        adj = Adjustments(
            sockets=[sock],
            threads=self.threads,
            ident="zun-api",
            clear_untrusted_proxy_headers=True,
            channel_timeout=IDLE_TIMEOUT,
            cleanup_interval=CLEANUP_INTERVAL,
            connection_limit=connection_limit(),
            backlog=BACKLOG,
            # select() cannot watch descriptors past 1024; poll() can.
            asyncore_use_poll=True,
            # Keep large list pages in memory: spooling past 1 MiB to a file costs more
            # than the page itself takes to build.
            outbuf_overflow=16 * 1024 * 1024,
        )
        if self.seat is not None:
            # Set after parsing: Adjustments casts its loop timeout to an int.
            adj.asyncore_loop_timeout = LOOP_TIMEOUT
        sockinfo = (sock.family, sock.type, sock.proto, sock.getsockname())
        self._server = _Server(
            self.app, map={}, _sock=sock, adj=adj, bind_socket=False, sockinfo=sockinfo
        )
        self._server.seat = self.seat
        self._wake = None if self.seat is None else _Wake(self.seat, self._server._map)
        self.port = int(self._server.effective_port)
        self._thread = threading.Thread(target=self._server.run, name="zun-api-server")
        self._thread.start()
        LOG.info("API listening on http://%s:%s", self.host, self.port)

    @staticmethod
    def _close_idle_channels(server: Any) -> None:
        for channel in list(server.active_channels.values()):
            if not channel.requests and not channel.total_outbufs_len:
                channel.will_close = True
        server.pull_trigger()

    def stop(self) -> None:
        server = self._server
        if server is not None:
            # Idle keep-alive connections would keep waitress' loop alive forever: ask every
            # channel to close once its response is out, let running requests finish, then
            # close whatever is left and the listening socket.
            server.accepting = False
            if self.seat is not None:
                self.seat.withdraw()
            self._close_idle_channels(server)
            server.task_dispatcher.shutdown(timeout=10)
            # Answers written by the last requests are flushed by the loop thread.
            deadline = time.monotonic() + 5
            while server.active_channels and time.monotonic() < deadline:
                self._close_idle_channels(server)
                time.sleep(0.05)
            for channel in list(server.active_channels.values()):
                channel.close()
            if self._wake is not None:
                self._wake.close()
            server.close()
        if self._thread is not None:
            self._thread.join(timeout=10)
            if self._thread.is_alive():
                LOG.warning("The API server thread did not stop within 10 s")
