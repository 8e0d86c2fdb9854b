"""The API server stops promptly, even with clients holding keep-alive connections."""

from __future__ import annotations

import http.client
import threading
import time

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
