"""zun-wsproxy: the WebSocket console proxy for interactive exec and attach.

A client (python-zunclient, a browser) connects to the URL the API handed out::

    <base_url>?token=<t>&uuid=<container uuid>[&exec_id=<exec id>]

The proxy checks the Origin, spends the token (:mod:`zun.console.tokens`), opens the console
on the container's node, copies bytes both ways until either side closes, and records the
session as a ``console`` action of the container.

The console is opened on the engine's unix socket when the container lives on this process's
host (zun-all), else through the node's relay (:mod:`zun.console.relay`), for which the
node hands out a ticket over RPC. Nothing here speaks to a Docker API over the network.

A refused connection gets one text line ``zun-wsproxy: <reason>`` (python-zunclient prints
what it receives; it ignores close frames) and a close frame with code 1008 and the reason.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import logging
import socket
import ssl
import threading
import urllib.parse
import uuid
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request
from websockets.protocol import State
from websockets.sync.server import Server, ServerConnection, serve

from zun.common import context as zun_context
from zun.common.rpc_client import ComputeRPCClient
from zun.conf import CONF
from zun.console import options, relay, tokens
from zun.console.pump import pump_sockets
from zun.db import engine
from zun.db.queries import actions
from zun.runtime.docker.engine_stream import ConsoleUnavailable, Stream, unix_socket_path

LOG = logging.getLogger(__name__)

SUBPROTOCOLS = ["binary", "base64"]
CLOSE_POLICY = 1008  # policy violation: refused token, origin...
CLOSE_UNAVAILABLE = 1011  # the console could not be opened on the engine
ACTION = "console"
RELAY_RPC_TIMEOUT = 10.0
# The console is opened during the handshake: leave room for the RPC and the relay.
OPEN_TIMEOUT = 30.0
# Seconds a closing console waits for the client's half of the closing handshake.
CLOSE_TIMEOUT = 2.0


class Refused(Exception):
    def __init__(self, reason: str, code: int = CLOSE_POLICY) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


def utf8_split(data: bytes) -> tuple[bytes, bytes]:
    """``data`` cut before an incomplete UTF-8 sequence at its end: (complete, rest).

    python-zunclient decodes every binary frame as UTF-8 on its own; a character split over two
    frames would crash it, so the tail waits for the next read.
    """
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:  # continuation byte: keep looking for the lead byte
            continue
        need = (
            2
            if byte & 0xE0 == 0xC0
            else 3
            if byte & 0xF0 == 0xE0
            else 4
            if byte & 0xF8 == 0xF0
            else 1
        )
        if need > back:
            return data[:-back], data[-back:]
        break
    return data, b""


def origin_allowed(
    origin: str | None, host_header: str | None, base_url: str, allowed_origins: list[str]
) -> str | None:
    """None when the Origin is acceptable, else the reason it is not.

    Browsers always send an Origin; a request without one comes from a program, which the
    token alone authorises. The Origin's host must be the proxy's (as the client addressed it,
    or as ``base_url`` names it) or one of ``allowed_origins``; its scheme must match the one
    the proxy is published with (https for wss).
    """
    if not origin:
        return None
    parsed = urllib.parse.urlparse(origin)
    hostname = (parsed.hostname or "").lower()
    if not hostname:
        return f"origin {origin} is not a URL"
    expected = {h.strip().lower() for h in allowed_origins if h.strip()}
    base = urllib.parse.urlparse(base_url)
    if base.hostname:
        expected.add(base.hostname.lower())
    if host_header:
        expected.add(urllib.parse.urlparse(f"//{host_header}").hostname or host_header.lower())
    if hostname not in expected:
        return f"origin {hostname} is not allowed"
    scheme = "https" if base.scheme in ("wss", "https") else "http"
    if parsed.scheme != scheme:
        return f"origin scheme {parsed.scheme} does not match the proxy's ({scheme})"
    return None


class _WebSocketSide:
    """The client's WebSocket seen as a :class:`Stream` for the pump."""

    tty = True

    def __init__(self, conn: ServerConnection) -> None:
        self.conn = conn
        self.b64 = conn.subprotocol == "base64"
        self._tail = b""

    def read(self) -> bytes:
        while True:  # an empty frame is not the end of the console: wait for the next one
            try:
                message = self.conn.recv()
            except ConnectionClosed:
                return b""
            if isinstance(message, str):
                if not self.b64:
                    data = message.encode("utf-8")
                else:
                    try:
                        data = base64.b64decode(message)
                    except (binascii.Error, ValueError):
                        return b""  # garbage from the client ends its console
            else:
                data = message
            if data:
                return data

    def write(self, data: bytes) -> None:
        data, self._tail = utf8_split(self._tail + data)
        if not data:
            return
        try:
            if self.b64:
                self.conn.send(base64.b64encode(data).decode("ascii"))
            else:
                self.conn.send(data)
        except ConnectionClosed as exc:
            raise OSError("client went away") from exc

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close(1000, "console session ended")


@dataclasses.dataclass
class _Session:
    grant: tokens.Grant
    request_id: str
    event: str
    peer: str
    stream: Stream | None = None


class ConsoleProxy:
    """The proxy as a process component: ``start()`` returns once it listens."""

    name = "zun-wsproxy"

    def __init__(
        self,
        host: str,
        port: int,
        *,
        base_url: str | None = None,
        allowed_origins: list[str] | None = None,
        local_host: str | None = None,
        ssl_context: ssl.SSLContext | None = None,
        relay_ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        """``relay_ssl_context`` checks TLS relays (default: ``relay_ca_file``, else the
        system's CAs)."""
        self.host = host
        self.relay_ssl_context = relay_ssl_context
        self._port = port
        self.base_url = base_url or f"ws://{host}:{port}/"
        self.allowed_origins = list(allowed_origins or [])
        self.local_host = local_host or socket.gethostname()
        self.ssl_context = ssl_context
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self._rpc: Any = None
        # Consoles opened by the handshake hook, waiting for their handler (same thread).
        self._sessions: dict[ServerConnection, _Session | Refused] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_conf(cls) -> ConsoleProxy:
        conf = CONF.websocket_proxy
        context = None
        if conf.cert:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(conf.cert, conf.key or None)
        elif conf.ssl_only:
            raise RuntimeError("[websocket_proxy]/ssl_only is set but no cert is configured")
        host = str(conf.wsproxy_host or options.my_ip())
        port = int(conf.wsproxy_port)
        return cls(
            host,
            port,
            base_url=str(conf.base_url or f"ws://{host}:{port}/"),
            allowed_origins=list(conf.allowed_origins or []),
            local_host=CONF.host or socket.gethostname(),
            ssl_context=context,
        )

    @property
    def port(self) -> int:
        if self._server is not None:
            return int(self._server.socket.getsockname()[1])
        return self._port

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        self._server = serve(
            self._handle,
            self.host,
            self._port,
            ssl=self.ssl_context,
            subprotocols=SUBPROTOCOLS,
            compression=None,
            select_subprotocol=_select_subprotocol,
            process_request=self._prepare,
            server_header="zun-wsproxy",
            close_timeout=CLOSE_TIMEOUT,
            open_timeout=OPEN_TIMEOUT,
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="zun-wsproxy", daemon=True
        )
        self._thread.start()
        LOG.info(
            "Console proxy listening on %s:%s (published as %s)",
            self.host,
            self.port,
            self.base_url,
        )

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown(code=1001, reason="console proxy stopping")
        self._reap(everything=True)
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None

    # -- one connection ------------------------------------------------------------------
    def _prepare(self, conn: ServerConnection, request: Request) -> None:
        """Check the request and open the console *before* the handshake completes.

        Runs as websockets' ``process_request`` hook, so by the time the client sees the
        connection open the exec is already started: python-zunclient resizes it at once,
        and Docker cannot resize an exec that has not started.
        """
        self._reap()
        peer = conn.remote_address[0] if conn.remote_address else "?"
        query = urllib.parse.parse_qs(urllib.parse.urlparse(request.path).query)
        container_uuid = (query.get("uuid") or [""])[0]
        exec_id = (query.get("exec_id") or [None])[0] or None
        token = (query.get("token") or [""])[0]
        try:
            reason = origin_allowed(
                request.headers.get("Origin"),
                request.headers.get("Host"),
                self.base_url,
                self.allowed_origins,
            )
            if reason:
                raise Refused(reason)
            if not container_uuid:
                raise Refused("no container uuid given")
            # The Origin is checked first so a refused page does not burn the user's token.
            try:
                grant = tokens.consume(container_uuid, token, exec_id)
            except tokens.TokenRefused as exc:
                raise Refused(exc.reason) from None
            prepared: _Session | Refused = self._open_session(grant, peer)
        except Refused as exc:
            LOG.warning(
                "Console for %s from %s refused: %s", container_uuid or "?", peer, exc.reason
            )
            prepared = exc
        except Exception:
            LOG.exception("Console for %s from %s failed", container_uuid or "?", peer)
            prepared = Refused("internal error of the console proxy", CLOSE_UNAVAILABLE)
        with self._lock:
            self._sessions[conn] = prepared

    def _reap(self, everything: bool = False) -> None:
        """Close consoles whose handshake failed after they were opened (no handler runs)."""
        with self._lock:
            dead = [
                c for c in self._sessions if everything or c.state in (State.CLOSING, State.CLOSED)
            ]
            found = [self._sessions.pop(c) for c in dead]
        for item in found:
            if isinstance(item, _Session) and item.stream is not None:
                item.stream.close()
                _record_finish(
                    item.grant,
                    item.request_id,
                    item.event,
                    error="the client left during the handshake",
                )

    def _open_session(self, grant: tokens.Grant, peer: str) -> _Session:
        request_id = f"req-{uuid.uuid4()}"
        ctx = zun_context.RequestContext(
            user_id=grant.user_id, project_id=grant.project_id, request_id=request_id, is_admin=True
        )
        session = _Session(grant, request_id, f"{ACTION}__{grant.kind}", peer)
        _record_start(ctx, grant, session.event)
        try:
            session.stream = self._open(ctx, grant)
        except ConsoleUnavailable as exc:
            LOG.warning("Console for %s: %s", grant.container_uuid, exc.reason)
            _record_finish(grant, request_id, session.event, error=exc.reason)
            raise Refused(exc.reason, CLOSE_UNAVAILABLE) from None
        return session

    def _handle(self, conn: ServerConnection) -> None:
        with self._lock:
            prepared = self._sessions.pop(conn, None)
        if prepared is None:
            prepared = Refused("internal error of the console proxy", CLOSE_UNAVAILABLE)
        if isinstance(prepared, Refused):
            _refuse(conn, prepared)
            return
        grant, stream = prepared.grant, prepared.stream
        assert stream is not None
        LOG.info("Console %s of %s opened for %s", grant.kind, grant.container_uuid, prepared.peer)
        try:
            pump_sockets(stream, _WebSocketSide(conn))
        finally:
            stream.close()
            _record_finish(grant, prepared.request_id, prepared.event, error=None)
            LOG.info("Console %s of %s closed", grant.kind, grant.container_uuid)

    def _is_local(self, grant: tokens.Grant) -> bool:
        if grant.host != self.local_host:
            return False
        try:
            unix_socket_path()
        except ConsoleUnavailable:
            return False
        return True

    def _open(self, ctx: zun_context.RequestContext, grant: tokens.Grant) -> Stream:
        if not grant.engine_id:
            raise ConsoleUnavailable("the container has no container on the engine yet")
        if self._is_local(grant):
            return relay.open_local(relay.Target(grant.engine_id, grant.exec_id))
        if not grant.host:
            raise ConsoleUnavailable("the container has no host")
        try:
            ticket = self._relay_rpc().call(
                ctx,
                grant.host,
                "console_relay_open",
                timeout=RELAY_RPC_TIMEOUT,
                container_uuid=grant.container_uuid,
                exec_id=grant.exec_id,
            )
        except Exception as exc:
            LOG.warning("No relay ticket from %s: %s", grant.host, exc)
            raise ConsoleUnavailable(
                f"the node {grant.host} did not open the console: "
                f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
            ) from exc
        context = None
        if ticket.get("tls"):
            context = self.relay_ssl_context or options.relay_client_ssl()
        return relay.connect(
            ticket["host"], int(ticket["port"]), ticket["ticket"], ssl_context=context
        )

    def _relay_rpc(self) -> Any:
        if self._rpc is None:
            self._rpc = ComputeRPCClient()
        return self._rpc


def _select_subprotocol(conn: ServerConnection, offered: Any) -> Any:
    # python-zunclient offers both and expects binary; noVNC-style pages offer base64 only.
    for name in SUBPROTOCOLS:
        if name in offered:
            return name
    return None


def _refuse(conn: ServerConnection, exc: Refused) -> None:
    reason = exc.reason
    with contextlib.suppress(Exception):
        conn.send(f"zun-wsproxy: {reason}\r\n".encode())
    # Close reasons are limited to 123 bytes by the protocol.
    with contextlib.suppress(Exception):
        conn.close(exc.code, reason.encode()[:123].decode("utf-8", "ignore"))


def _record_start(ctx: zun_context.RequestContext, grant: tokens.Grant, event: str) -> None:
    try:
        with engine.transaction() as session:
            actions.start_action(session, ctx, grant.container_uuid, ACTION)
            actions.start_event(session, grant.container_uuid, ctx.request_id, event)
    except Exception:
        LOG.exception("Could not record the console of %s", grant.container_uuid)


def _record_finish(grant: tokens.Grant, request_id: str, event: str, error: str | None) -> None:
    try:
        with engine.transaction() as session:
            actions.finish_event(
                session,
                grant.container_uuid,
                request_id,
                event,
                result=actions.RESULT_ERROR if error else actions.RESULT_SUCCESS,
                traceback=error,
            )
    except Exception:
        LOG.exception("Could not record the end of the console of %s", grant.container_uuid)
