"""A console stream to the local Docker engine, over its unix socket only.

Docker hands over a console by "hijacking" an HTTP request (``POST /exec/<id>/start`` or
``POST /containers/<id>/attach`` with ``Upgrade: tcp``): after the ``101`` answer the
connection carries the terminal's bytes both ways. docker-py hides the socket behind its own
response objects, so the request is written here on a plain ``AF_UNIX`` socket; inspection and
signals go through docker-py. A ``tcp://`` engine URL is refused: the console never talks to a
Docker API over the network (between machines it goes through :mod:`zun.console.relay`).

Without a TTY Docker multiplexes stdout/stderr in 8-byte-headed frames; :meth:`read` removes
them, so every stream in this package carries plain terminal bytes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import struct
import threading
import time
import urllib.parse
from typing import Any, Protocol

import docker

from zun.conf import CONF
from zun.runtime.docker.client import make_client

LOG = logging.getLogger(__name__)

_HEADER_LIMIT = 64 * 1024
READ_SIZE = 32 * 1024
# How long a hung-up exec gets to leave after SIGHUP before it is killed.
HANGUP_GRACE = 2.0


class ConsoleUnavailable(Exception):
    """The console cannot be opened; ``reason`` is meant for the user."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Stream(Protocol):
    """What the proxy copies bytes to and from: an engine stream or a relay connection."""

    tty: bool

    def read(self) -> bytes: ...  # b"" at the end

    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


def unix_socket_path(api_url: str | None = None) -> str:
    url = api_url or CONF.docker.api_url
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme not in ("unix", "http+unix"):
        raise ConsoleUnavailable(
            f"the console reaches the engine only through its unix socket, not {url}"
        )
    return parsed.path or "/var/run/docker.sock"


class EngineStream:
    """One hijacked console connection to the engine (exec or attach)."""

    def __init__(
        self,
        sock: socket.socket,
        leftover: bytes,
        tty: bool,
        exec_id: str | None,
        client: docker.APIClient,
    ) -> None:
        self.sock = sock
        self.tty = tty
        self.exec_id = exec_id
        self._buffer = leftover
        self._client = client
        self._closed = False
        self._lock = threading.Lock()

    # -- opening -------------------------------------------------------------------------
    @classmethod
    def open_exec(cls, engine_id: str, exec_id: str, api_url: str | None = None) -> EngineStream:
        """Start the created (not yet started) exec ``exec_id`` of container ``engine_id``."""
        client = make_client(api_url)
        try:
            _require_running(client, engine_id)
            try:
                info = client.exec_inspect(exec_id)
            except docker.errors.NotFound:
                raise ConsoleUnavailable(f"exec {exec_id} does not exist") from None
            if not engine_id or not str(info.get("ContainerID", "")).startswith(engine_id):
                raise ConsoleUnavailable(f"exec {exec_id} does not belong to this container")
            if info.get("Running") or info.get("Pid"):
                raise ConsoleUnavailable(f"exec {exec_id} was already started")
            tty = bool((info.get("ProcessConfig") or {}).get("tty"))
            body = json.dumps({"Detach": False, "Tty": tty}).encode()
            sock, leftover = _hijack(client, api_url, f"/exec/{exec_id}/start", body)
        except BaseException:
            client.close()
            raise
        return cls(sock, leftover, tty, exec_id, client)

    @classmethod
    def open_attach(cls, engine_id: str, api_url: str | None = None) -> EngineStream:
        """Attach to the main process of the running container ``engine_id``."""
        client = make_client(api_url)
        try:
            info = _require_running(client, engine_id)
            tty = bool((info.get("Config") or {}).get("Tty"))
            sock, leftover = _hijack(
                client,
                api_url,
                f"/containers/{engine_id}/attach?stream=1&stdin=1&stdout=1&stderr=1",
                b"",
            )
        except BaseException:
            client.close()
            raise
        return cls(sock, leftover, tty, None, client)

    # -- bytes ---------------------------------------------------------------------------
    def read(self) -> bytes:
        if self.tty:
            if self._buffer:
                data, self._buffer = self._buffer, b""
                return data
            return self._recv()
        while True:
            frame = self._take_frame()
            if frame is not None:
                if frame:
                    return frame
                continue
            chunk = self._recv()
            if not chunk:
                return b""
            self._buffer += chunk

    def _take_frame(self) -> bytes | None:
        if len(self._buffer) < 8:
            return None
        (size,) = struct.unpack(">I", self._buffer[4:8])
        if len(self._buffer) < 8 + size:
            return None
        frame, self._buffer = self._buffer[8 : 8 + size], self._buffer[8 + size :]
        return frame

    def _recv(self) -> bytes:
        try:
            return self.sock.recv(READ_SIZE)
        except OSError:
            return b""

    def write(self, data: bytes) -> None:
        if data:
            self.sock.sendall(data)

    # -- ending --------------------------------------------------------------------------
    def close(self) -> None:
        """Close the connection and, for an exec, end its process: a console closed by the
        user must not leave a shell running in the container (Docker would keep it)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        try:
            if self.exec_id:
                hang_up_exec(self._client, self.exec_id)
        finally:
            self._client.close()


def hang_up_exec(client: docker.APIClient, exec_id: str, grace: float = HANGUP_GRACE) -> bool:
    """Send SIGHUP (as a closed terminal would), then SIGKILL, to a still running exec.

    Returns True when the exec no longer runs. The PID Docker reports is the host's: this
    runs on the engine's own machine (in the agent, or in the embedded proxy).
    """
    try:
        info = client.exec_inspect(exec_id)
    except docker.errors.APIError:
        return True
    pid = int(info.get("Pid") or 0)
    if not info.get("Running") or pid <= 0:
        return True
    for sig in (signal.SIGHUP, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            with contextlib.suppress(docker.errors.APIError):
                if not client.exec_inspect(exec_id).get("Running"):
                    return True
            time.sleep(0.05)
    LOG.warning("exec %s still runs after SIGKILL", exec_id)
    return False


def _require_running(client: docker.APIClient, engine_id: str) -> dict[str, Any]:
    if not engine_id:
        raise ConsoleUnavailable("the container has no engine container")
    try:
        info = client.inspect_container(engine_id)
    except docker.errors.NotFound:
        raise ConsoleUnavailable("the container does not exist on its node") from None
    state = info.get("State") or {}
    if state.get("Paused"):
        raise ConsoleUnavailable("the container is paused")
    if not state.get("Running"):
        raise ConsoleUnavailable(f"the container is not running ({state.get('Status', 'unknown')})")
    return info


def _hijack(
    client: docker.APIClient, api_url: str | None, path: str, body: bytes
) -> tuple[socket.socket, bytes]:
    version = getattr(client, "api_version", None) or "1.40"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(float(CONF.docker.default_timeout))
        sock.connect(unix_socket_path(api_url))
        head = (
            f"POST /v{version}{path} HTTP/1.1\r\nHost: docker\r\n"
            "Content-Type: application/json\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        sock.sendall(head + body)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk or len(data) > _HEADER_LIMIT:
                raise ConsoleUnavailable("the engine closed the console connection")
            data += chunk
        header, _, rest = data.partition(b"\r\n\r\n")
        status_line = header.split(b"\r\n", 1)[0].decode("latin-1")
        parts = status_line.split(" ", 2)
        code = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        if code not in (101, 200):
            raise ConsoleUnavailable(
                f"the engine refused the console: {_engine_message(rest)}" or status_line
            )
        sock.settimeout(None)
        return sock, rest
    except ConsoleUnavailable:
        sock.close()
        raise
    except OSError as exc:
        sock.close()
        raise ConsoleUnavailable(f"cannot reach the engine: {exc}") from exc


def _engine_message(rest: bytes) -> str:
    text = rest.decode("utf-8", "replace")
    start = text.find("{")
    if start >= 0:
        with contextlib.suppress(ValueError):
            return str(json.loads(text[start : text.rfind("}") + 1]).get("message", text))
    return text.strip()
