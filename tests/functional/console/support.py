"""Helpers of the console tests: WebSocket reads with deadlines, and a program run in a pty.

Imported as ``functional.console.support`` (tests/ is on sys.path) by the functional and e2e
console tests.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import socket
import struct
import subprocess
import termios
import time
from collections.abc import Sequence
from typing import Any

import websocket

SUBPROTOCOLS = ["binary", "base64"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def origin_of(url: str) -> str:
    # What python-zunclient sends (WebSocketClient._compute_origin_header).
    from urllib.parse import urlparse

    parsed = urlparse(url)
    scheme = "https" if parsed.scheme == "wss" else "http"
    return f"{scheme}://{parsed.hostname}:{parsed.port}"


def connect(
    url: str,
    origin: str | None = None,
    subprotocols: Sequence[str] = SUBPROTOCOLS,
    timeout: float = 30,
) -> websocket.WebSocket:
    """Open the console like python-zunclient's WebSocketClient.connect does."""
    return websocket.create_connection(
        url,
        skip_utf8_validation=True,
        origin=origin or origin_of(url),
        subprotocols=list(subprotocols),
        timeout=timeout,
    )


def read_until(ws: websocket.WebSocket, needle: bytes | str, timeout: float = 10) -> bytes:
    """Everything received until ``needle`` (a regex when str) shows up; fails on a deadline."""
    got = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ws.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            opcode, data = ws.recv_data(control_frame=False)
        except websocket.WebSocketTimeoutException:
            break
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            break
        got += data
        if (needle in got) if isinstance(needle, bytes) else re.search(needle.encode(), got):
            return got
    raise AssertionError(f"{needle!r} not received in {timeout} s; got {got[-500:]!r}")


def read_to_close(ws: websocket.WebSocket, timeout: float = 10) -> tuple[bytes, int | None, str]:
    """Data received until the server's close frame: (data, close code, close reason)."""
    got = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ws.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            frame = ws.recv_frame()
        except websocket.WebSocketConnectionClosedException:
            return got, None, ""
        except websocket.WebSocketTimeoutException:
            break
        if frame.opcode == websocket.ABNF.OPCODE_CLOSE:
            code = struct.unpack("!H", frame.data[:2])[0] if len(frame.data) >= 2 else None
            try:  # answer the close and hang up, as a client program does
                ws.send_close()
                ws.shutdown()
            except (websocket.WebSocketException, OSError):
                pass
            return got, code, frame.data[2:].decode("utf-8", "replace")
        if frame.opcode in (
            websocket.ABNF.OPCODE_TEXT,
            websocket.ABNF.OPCODE_BINARY,
            websocket.ABNF.OPCODE_CONT,
        ):
            got += frame.data
    raise AssertionError(f"no close frame in {timeout} s; got {got[-500:]!r}")


def set_winsize(fd: int, rows: int, cols: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


class PtyProgram:
    """A program whose stdin/stdout/stderr are a fresh pseudo-terminal (its controlling tty).

    Resizing the terminal makes the kernel send SIGWINCH to the program, as a terminal
    emulator would.
    """

    def __init__(
        self, argv: Sequence[str], env: dict[str, str] | None = None, rows: int = 24, cols: int = 80
    ) -> None:
        self.master, slave = os.openpty()
        set_winsize(slave, rows, cols)

        def _controlling_tty() -> None:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
            preexec_fn=_controlling_tty,
            close_fds=True,
        )
        os.close(slave)
        self.output = b""
        self._answered = 0

    def _pump(self, wait: float) -> None:
        ready, _, _ = select.select([self.master], [], [], wait)
        if ready:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # EIO: the program closed the terminal
                data = b""
            self.output += data
            # Answer cursor-position queries as a terminal emulator does: busybox's line
            # editor asks (ESC [6n) at every prompt and waits for the answer.
            asked = self.output.count(b"\x1b[6n")
            while self._answered < asked:
                self._answered += 1
                os.write(self.master, b"\x1b[12;5R")

    def expect(self, pattern: str, timeout: float = 20, start: int = 0) -> re.Match[bytes]:
        """Wait for ``pattern`` in the output after offset ``start``."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern.encode())
        while True:
            match = regex.search(self.output, start)
            if match:
                return match
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{pattern!r} not seen in {timeout} s; output: {self.output[-1500:]!r}"
                )
            self._pump(0.1)
            if self.proc.poll() is not None:
                self._pump(0.2)
                match = regex.search(self.output, start)
                if match:
                    return match
                raise AssertionError(
                    f"program exited {self.proc.returncode} before "
                    f"{pattern!r}; output: {self.output[-1500:]!r}"
                )

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def prompt(self, prompt: str = r"/ # (\x1b\[J|\x1b\[6n)?$", timeout: float = 20) -> None:
        """Wait until the output ends with the shell's prompt (the shell waits for input)."""
        deadline = time.monotonic() + timeout
        regex = re.compile(prompt.encode())
        while not regex.search(self.output):
            assert time.monotonic() < deadline, f"no prompt; output: {self.output[-800:]!r}"
            self._pump(0.1)

    def resize(self, rows: int, cols: int) -> None:
        set_winsize(self.master, rows, cols)

    def wait(self, timeout: float = 20) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._pump(0.1)
        if self.proc.poll() is None:
            raise AssertionError(f"program still runs; output: {self.output[-1500:]!r}")
        self._pump(0)
        return self.proc.returncode

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        os.close(self.master)


def docker_exec_running(client: Any, exec_id: str) -> bool:
    return bool(client.api.exec_inspect(exec_id)["Running"])


def wait_exec_stopped(client: Any, exec_id: str, timeout: float = 10) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = client.api.exec_inspect(exec_id)
        if not info["Running"]:
            return info
        time.sleep(0.1)
    raise AssertionError(f"exec {exec_id} still runs after {timeout} s")
