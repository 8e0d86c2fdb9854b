"""A Docker network plugin, served by the test process, whose endpoint release is slow.

Docker 20.10 releases a container's endpoint (the driver's Leave, then DeleteEndpoint) before
``docker rm`` returns, and kuryr does it in 0.5-0.7 s here, so a network removal that overlaps
a container's removal is a narrow race. This plugin takes :data:`RELEASE_DELAY` seconds for
each of the two calls, which holds the engine in each phase of a release long enough for a
test to act in it. It is a real network driver of the machine's dockerd (a ``.spec`` file in
the plugin directory, found at first use, as kuryr-libnetwork's): Join makes a veth pair whose
peer the engine moves into the container.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RELEASE_DELAY = 1.5
PLUGIN_DIR = Path(os.environ.get("ZUN_OS_DOCKER_PLUGIN_DIR", "/etc/docker/plugins"))


def _link(endpoint_id: str, side: str) -> str:
    return f"zt{side}{endpoint_id[:10]}"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: Any) -> None:  # the test's output stays readable
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        call = self.path.rsplit(".", 1)[-1]
        self.server.calls.append((time.monotonic(), call))
        reply: dict[str, Any] = {}
        if call == "Activate":
            reply = {"Implements": ["NetworkDriver"]}
        elif call == "GetCapabilities":
            reply = {"Scope": "local"}
        elif call == "Join":
            host, peer = _link(body["EndpointID"], "h"), _link(body["EndpointID"], "c")
            subprocess.run(
                ["ip", "link", "add", host, "type", "veth", "peer", "name", peer], check=True
            )
            subprocess.run(["ip", "link", "set", host, "up"], check=True)
            reply = {"InterfaceName": {"SrcName": peer, "DstPrefix": "eth"}}
        elif call in ("Leave", "DeleteEndpoint"):
            time.sleep(self.server.delay)
            if call == "Leave":
                subprocess.run(
                    ["ip", "link", "del", _link(body["EndpointID"], "h")],
                    check=False,
                    capture_output=True,
                )
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.docker.plugins.v1+json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, delay: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.delay = delay
        self.calls: list[tuple[float, str]] = []


@contextmanager
def slow_endpoint_driver(delay: float = RELEASE_DELAY) -> Iterator[tuple[str, _Server]]:
    """(driver name, server): a plugin of a name unique to this use, removed afterwards
    (dockerd keeps the name it activated; a later run uses another)."""
    server = _Server(delay)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    name = f"zun-test-slowep-{uuid.uuid4().hex[:8]}"
    spec = PLUGIN_DIR / f"{name}.spec"
    PLUGIN_DIR.mkdir(parents=True, exist_ok=True)
    spec.write_text(f"http://127.0.0.1:{server.server_address[1]}\n")
    try:
        yield name, server
    finally:
        spec.unlink(missing_ok=True)
        server.shutdown()
        server.server_close()
