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
