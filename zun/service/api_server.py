"""The REST API served by waitress (a pure-Python, threaded WSGI server) in a thread."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import waitress

LOG = logging.getLogger(__name__)


class ApiServer:
    name = "zun-api"

    def __init__(self, app: Callable[..., Any], host: str, port: int, threads: int = 8) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.threads = threads
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._server = waitress.create_server(
            self.app, host=self.host, port=self.port, threads=self.threads,
            ident="zun-api", clear_untrusted_proxy_headers=True, channel_timeout=300,
            # Keep large list pages in memory: spooling past 1 MiB to a file costs more
            # than the page itself takes to build.
            outbuf_overflow=16 * 1024 * 1024)
        self.port = self._server.effective_port
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
            self._close_idle_channels(server)
            server.task_dispatcher.shutdown(timeout=10)
            # Answers written by the last requests are flushed by the loop thread.
            deadline = time.monotonic() + 5
            while server.active_channels and time.monotonic() < deadline:
                self._close_idle_channels(server)
                time.sleep(0.05)
            for channel in list(server.active_channels.values()):
                channel.close()
            server.close()
        if self._thread is not None:
            self._thread.join(timeout=10)
            if self._thread.is_alive():
                LOG.warning("The API server thread did not stop within 10 s")
