"""The console relay: how a proxy on one machine reaches a console on another node.

The relay runs inside zun-compute, next to the engine. It never exposes the Docker API: a
connection can only open the one console named by a *ticket*, which the node hands out over
RPC (the message bus is the authenticated channel between proxy and node). A ticket is
random, single-use, bound to (container, exec) and lives :data:`TICKET_TTL` seconds in the
agent's memory only.

Wire protocol (plain TCP, or TLS when the node has a certificate)::

    proxy -> relay   "ZUNRELAY1 <ticket>\\n"
    relay -> proxy   "OK tty\\n" | "OK raw\\n" | "ERR <reason>\\n"
    then terminal bytes both ways; either side closing ends the console.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import secrets
import socket
import ssl
import threading
import time
from collections.abc import Callable

from zun.console.pump import pump_sockets
from zun.runtime.docker.engine_stream import ConsoleUnavailable, EngineStream, Stream

LOG = logging.getLogger(__name__)

MAGIC = b"ZUNRELAY1"
TICKET_TTL = 15.0
HANDSHAKE_TIMEOUT = 10.0
_LINE_LIMIT = 512


@dataclasses.dataclass(frozen=True)
class Target:
    engine_id: str
    exec_id: str | None = None


class TicketBook:
    """Single-use tickets kept in memory by digest; taking one removes it."""

    def __init__(self, ttl: float = TICKET_TTL) -> None:
        self.ttl = ttl
        self._tickets: dict[str, tuple[Target, float]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(ticket: str) -> str:
        return hashlib.sha256(ticket.encode()).hexdigest()

    def issue(self, target: Target) -> str:
        ticket = secrets.token_urlsafe(32)
        now = time.monotonic()
        with self._lock:
            self._tickets = {k: v for k, v in self._tickets.items() if v[1] > now}
            self._tickets[self._key(ticket)] = (target, now + self.ttl)
        return ticket

    def take(self, ticket: str) -> Target | None:
        with self._lock:
            entry = self._tickets.pop(self._key(ticket), None)
        if entry is None or entry[1] < time.monotonic():
            return None
        return entry[0]

    def __len__(self) -> int:
        return len(self._tickets)


Opener = Callable[[Target], Stream]


def open_local(target: Target) -> Stream:
    if target.exec_id:
        return EngineStream.open_exec(target.engine_id, target.exec_id)
    return EngineStream.open_attach(target.engine_id)


class RelayServer:
    """TCP (optionally TLS) listener in zun-compute; one thread per console."""

    name = "console-relay"

    def __init__(
        self,
        host: str,
        port: int = 0,
        *,
        ssl_context: ssl.SSLContext | None = None,
        opener: Opener = open_local,
        tickets: TicketBook | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.ssl_context = ssl_context
        self.opener = opener
        self.tickets = tickets or TicketBook()
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._sessions: set[threading.Thread] = set()
        self._socks: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    @property
    def address(self) -> tuple[str, int]:
        assert self._listener is not None, "relay not started"
        host, port = self._listener.getsockname()[:2]
        return self.host, port

    @property
    def tls(self) -> bool:
        return self.ssl_context is not None

    def start(self) -> None:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.host, self.port))
        listener.listen(64)
        listener.settimeout(0.5)  # lets the accept loop notice stop()
        self._listener = listener
        self._stopping.clear()
        self._thread = threading.Thread(target=self._accept_loop, name="console-relay", daemon=True)
        self._thread.start()
        LOG.info("Console relay listening on %s:%s%s", *self.address, " (TLS)" if self.tls else "")

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        with self._lock:
            socks, sessions = list(self._socks), list(self._sessions)
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in sessions:
            thread.join(10)

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                conn, peer = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stopping.is_set():
                    return
                raise
            thread = threading.Thread(
                target=self._serve, args=(conn, peer), name=f"console-relay-{peer[1]}", daemon=True
            )
            with self._lock:
                self._sessions.add(thread)
            thread.start()

    def _serve(self, conn: socket.socket, peer: tuple) -> None:
        try:
            conn.settimeout(HANDSHAKE_TIMEOUT)
            if self.ssl_context is not None:
                conn = self.ssl_context.wrap_socket(conn, server_side=True)
            with self._lock:
                self._socks.add(conn)
            self._handle(conn, peer)
        except Exception:
            LOG.exception("Console relay session from %s failed", peer[0])
        finally:
            with self._lock:
                self._socks.discard(conn)
                self._sessions.discard(threading.current_thread())
            with contextlib.suppress(OSError):
                conn.close()

    def _handle(self, conn: socket.socket, peer: tuple) -> None:
        line = _read_line(conn)
        magic, _, ticket = line.partition(b" ")
        target = self.tickets.take(ticket.decode("ascii", "replace")) if magic == MAGIC else None
        if target is None:
            LOG.warning("Console relay: refused %s (unknown, used or expired ticket)", peer[0])
            conn.sendall(b"ERR invalid or expired relay ticket\n")
            return
        try:
            stream = self.opener(target)
        except ConsoleUnavailable as exc:
            conn.sendall(b"ERR " + exc.reason.encode()[:400] + b"\n")
            return
        try:
            conn.sendall(b"OK tty\n" if stream.tty else b"OK raw\n")
            conn.settimeout(None)
            LOG.info("Console relay: %s opened %s", peer[0], target)
            pump_sockets(stream, _SocketStream(conn, stream.tty))
        finally:
            stream.close()
        LOG.info("Console relay: session of %s ended", peer[0])


def _read_line(conn: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(1)
        if not chunk or len(data) >= _LINE_LIMIT:
            break
        data += chunk
    return data.strip()


class _SocketStream:
    """A connected socket seen as a :class:`Stream`."""

    def __init__(self, sock: socket.socket, tty: bool) -> None:
        self.sock = sock
        self.tty = tty
        self._closed = False

    def read(self) -> bytes:
        try:
            return self.sock.recv(32 * 1024)
        except OSError:
            return b""

    def write(self, data: bytes) -> None:
        if data:
            self.sock.sendall(data)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


def connect(
    host: str,
    port: int,
    ticket: str,
    *,
    ssl_context: ssl.SSLContext | None = None,
    server_hostname: str | None = None,
    timeout: float = HANDSHAKE_TIMEOUT,
) -> Stream:
    """Open the console a ticket names, from the proxy's side."""
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as exc:
        raise ConsoleUnavailable(f"cannot reach the console relay of the node: {exc}") from exc
    try:
        if ssl_context is not None:
            sock = ssl_context.wrap_socket(sock, server_hostname=server_hostname or host)
        sock.sendall(MAGIC + b" " + ticket.encode() + b"\n")
        answer = _read_line(sock).decode("utf-8", "replace")
    except OSError as exc:
        sock.close()
        raise ConsoleUnavailable(f"console relay handshake failed: {exc}") from exc
    if answer.startswith("OK"):
        sock.settimeout(None)
        return _SocketStream(sock, tty=answer.split()[-1] == "tty")
    sock.close()
    reason = answer[4:] if answer.startswith("ERR ") else "the console relay closed"
    raise ConsoleUnavailable(reason)
