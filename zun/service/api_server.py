"""The REST API served by waitress (a pure-Python, threaded WSGI server) in a thread."""

from __future__ import annotations

import logging
import threading
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

    def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            # waitress' task threads finish the requests under way, then exit.
            self._server.task_dispatcher.shutdown(timeout=10)
        if self._thread is not None:
            self._thread.join(timeout=10)
