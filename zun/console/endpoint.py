"""Node side of the console: the RPC method that hands out relay tickets, and the relay.

zun-compute loads :func:`build_endpoint` (see :mod:`zun.compute.agent`). The relay's listener
is opened on the first console asked for, so a node that never serves a remote console (e.g.
zun-all, whose proxy reaches the engine directly) opens no port.
"""

from __future__ import annotations

import logging
import ssl
import threading
from typing import Any

import sqlalchemy as sa

from zun.common import exception
from zun.console import options
from zun.console.relay import RelayServer, Target
from zun.db import engine, models

LOG = logging.getLogger(__name__)


class ConsoleEndpoint:
    def __init__(
        self,
        host: str,
        *,
        relay_host: str | None = None,
        relay_port: int | None = None,
        relay_ssl: ssl.SSLContext | None | bool = True,
    ) -> None:
        """``relay_*`` default to the ``[websocket_proxy]/relay_*`` settings; ``relay_ssl``
        True means "from the settings", None means plain TCP."""
        self.host = host
        self._relay_host = relay_host
        self._relay_port = relay_port
        self._relay_ssl = relay_ssl
        self._relay: RelayServer | None = None
        self._lock = threading.Lock()

    def relay(self) -> RelayServer:
        with self._lock:
            if self._relay is None:
                context = (
                    options.relay_server_ssl()
                    if self._relay_ssl is True
                    else self._relay_ssl or None
                )
                relay = RelayServer(
                    self._relay_host or options.relay_host(),
                    options.relay_port() if self._relay_port is None else self._relay_port,
                    ssl_context=context,
                )
                relay.start()
                self._relay = relay
            return self._relay

    def cleanup_host(self) -> None:
        with self._lock:
            relay, self._relay = self._relay, None
        if relay is not None:
            relay.stop()

    def console_relay_open(
        self, context: Any, container_uuid: str, exec_id: str | None = None
    ) -> dict[str, Any]:
        """A single-use ticket for the relay, bound to this container (and exec).

        Called by a console proxy once the user's console token has been spent; the message
        bus authenticates the caller.
        """
        with engine.transaction(readonly=True) as session:
            row = session.scalars(
                sa.select(models.Container).where(models.Container.uuid == container_uuid)
            ).first()
            if row is None:
                raise exception.ContainerNotFound(container=container_uuid)
            host, engine_id = row.host, row.container_id
        if host != self.host:
            raise exception.Invalid(
                message=f"Container {container_uuid} is on host {host}, not {self.host}."
            )
        if not engine_id:
            raise exception.Conflict(
                message=f"Container {container_uuid} has no container on the engine."
            )
        relay = self.relay()
        ticket = relay.tickets.issue(Target(engine_id, exec_id))
        address, port = relay.address
        return {"host": address, "port": port, "ticket": ticket, "tls": relay.tls}


def build_endpoint(host: str) -> ConsoleEndpoint:
    return ConsoleEndpoint(host)
