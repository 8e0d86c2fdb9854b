"""An RPC server for one node: it listens on ``<topic>.<host>`` (``zun-compute.<host>``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from types import TracebackType

import oslo_messaging as messaging

from zun.common import rpc

LOG = logging.getLogger(__name__)


class RPCService:
    """Serve ``endpoints`` on ``Target(topic, server=host)`` with the threading executor.

    ``start()`` returns at once; ``stop()`` refuses new messages; ``wait()`` lets the ones
    in flight finish and releases the server's threads and connections. Both are idempotent.
    The transport itself belongs to :mod:`zun.common.rpc` and outlives the service.
    """

    def __init__(
        self,
        host: str,
        endpoints: Iterable[object],
        *,
        topic: str | None = None,
        transport: messaging.Transport | None = None,
        serializer: messaging.Serializer | None = None,
    ) -> None:
        self.host = host
        self._transport = transport or rpc.get_transport()
        self.topic = topic or rpc.compute_topic(self._transport.conf)
        self.target = messaging.Target(topic=self.topic, server=host)
        self._endpoints = list(endpoints)
        self._serializer = serializer
        self._server: messaging.MessageHandlingServer | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> None:
        with self._lock:
            if self._server is not None:
                return
            server = rpc.build_server(
                self._transport, self.target, self._endpoints, self._serializer
            )
            server.start()
            self._server = server
        LOG.info("RPC server listening on %s.%s", self.topic, self.host)

    def stop(self) -> None:
        with self._lock:
            server = self._server
        if server is not None:
            server.stop()

    def wait(self) -> None:
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            # stop() first is harmless if already done; wait() alone would block forever.
            server.stop()
            server.wait()
            LOG.info("RPC server on %s.%s stopped", self.topic, self.host)

    def __enter__(self) -> RPCService:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        self.wait()
