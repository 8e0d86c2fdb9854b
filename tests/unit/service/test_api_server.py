"""The API server stops promptly, even with clients holding keep-alive connections."""

from __future__ import annotations

import http.client
import socket
import threading
import time

from zun.service import api_server
from zun.service.api_server import ApiServer


def _app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]


def test_stop_with_idle_keep_alive_connections() -> None:
    server = ApiServer(_app, "127.0.0.1", 0, threads=2)
    server.start()
    clients = []
    for _ in range(3):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        conn.request("GET", "/")
        assert conn.getresponse().read() == b"ok"
        clients.append(conn)  # kept open: HTTP/1.1 keep-alive
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 5
    assert not any(t.name == "zun-api-server" and t.is_alive() for t in threading.enumerate())
    for conn in clients:
        conn.close()


def test_stop_waits_for_a_running_request() -> None:
    release = threading.Event()

    def slow(environ, start_response):
        release.wait(5)
        start_response("200 OK", [("Content-Length", "4")])
        return [b"done"]

    server = ApiServer(slow, "127.0.0.1", 0, threads=2)
    server.start()
    result = {}

    def call() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("GET", "/")
        result["body"] = conn.getresponse().read()

    caller = threading.Thread(target=call)
    caller.start()
    time.sleep(0.3)
    stopper = threading.Thread(target=server.stop)
    stopper.start()
    time.sleep(0.3)
    release.set()
    caller.join(10)
    stopper.join(15)
    assert result.get("body") == b"done"


def _open_idle(port: int, count: int, partial: bytes = b"") -> list[socket.socket]:
    socks = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        if partial:
            sock.sendall(partial)
        socks.append(sock)
    return socks


def test_a_request_is_answered_past_a_thousand_idle_and_slow_connections() -> None:
    # The old settings (100 connections, select()) left this request in the backlog.
    server = ApiServer(_app, "127.0.0.1", 0, threads=2)
    server.start()
    held: list[socket.socket] = []
    try:
        held += _open_idle(server.port, 700)
        held += _open_idle(server.port, 400, b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        assert max(s.fileno() for s in held) > 1024  # past select()'s reach
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("GET", "/")
        assert conn.getresponse().read() == b"ok"
        conn.close()
    finally:
        for sock in held:
            sock.close()
        server.stop()


def test_a_request_that_never_completes_is_cut_off(monkeypatch) -> None:
    monkeypatch.setattr(api_server, "REQUEST_READ_TIMEOUT", 0.5)
    monkeypatch.setattr(api_server, "CLEANUP_INTERVAL", 0.2)
    server = ApiServer(_app, "127.0.0.1", 0, threads=2)
    server.start()
    try:
        slow = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        started = time.monotonic()
        # A byte at a time keeps the connection active, so only the read timeout ends it.
        closed = False
        for byte in b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200:
            try:
                slow.sendall(bytes([byte]))
            except OSError:
                closed = True
                break
            slow.settimeout(0.1)
            try:
                if slow.recv(1) == b"":
                    closed = True
                    break
            except TimeoutError:
                pass
        assert closed, "the slow request was never cut off"
        assert time.monotonic() - started < 15
        slow.close()
        # A well-behaved client on a fresh connection is served as usual.
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        conn.request("GET", "/")
        assert conn.getresponse().read() == b"ok"
    finally:
        server.stop()


# --- the bytes on the wire are plain waitress' (our channel only adds a read deadline) ------


def _fixed(body: bytes, length: int | None = None, status: str = "200 OK", chunks: int = 1):
    def app(environ, start_response):
        headers = [("Content-Type", "application/json")]
        if length is not None:
            headers.append(("Content-Length", str(length)))
        start_response(status, headers)
        step = max(1, len(body) // chunks)
        return [body[i : i + step] for i in range(0, len(body), step)] or [b""]

    return app


ANSWERS = {
    "small": _fixed(b'{"a":1}', 7),
    "two chunks": _fixed(b'{"a":"' + b"x" * 5000 + b'"}', 5008, chunks=2),
    "large": _fixed(b"y" * 70_000, 70_000),
    "longer than its Content-Length": _fixed(b"0123456789", 4),
    "no Content-Length (chunked)": _fixed(b'{"b":2}'),
    "no body (204)": _fixed(b"", 0, status="204 No Content"),
    "empty": _fixed(b"", 0),
}


def _exchange(port: int, requests: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(requests)
        sock.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    # The only header that may differ between two servers is the date.
    return b"\r\n".join(line for line in received.split(b"\r\n") if not line.startswith(b"Date: "))


def _serve_plain_waitress(app):
    from waitress.server import create_server

    server = create_server(app, host="127.0.0.1", port=0, threads=1, ident="zun-api")
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    return server


def test_answers_are_byte_for_byte_those_of_plain_waitress() -> None:
    requests = (
        b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
        b"HEAD /b HTTP/1.1\r\nHost: x\r\n\r\n"
        b"GET /c HTTP/1.0\r\n\r\n"
    )
    for name, app in ANSWERS.items():
        ours = ApiServer(app, "127.0.0.1", 0, threads=1)
        ours.start()
        plain = _serve_plain_waitress(app)
        try:
            got = _exchange(ours.port, requests)
            want = _exchange(plain.effective_port, requests)
        finally:
            ours.stop()
            plain.close()
        assert got == want, name
        assert b"HTTP/1.1 " in got, name
