"""API-side RPC client for one compute host at a time (``zun-compute.<host>``).

The per-method compute API builds on :class:`ComputeRPCClient`. What it guarantees:

* a call never waits longer than its timeout (the caller's, else ``rpc_response_timeout``);
* a host that is known down, or that nobody serves, fails with
  :class:`zun.common.rpc.HostUnreachable` (503) naming the host and the method;
* an error raised by the node comes back as ``<Class>_Remote`` over either transport.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import oslo_messaging as messaging

from zun.common import rpc

HostCheck = Callable[[str], bool]


class ComputeRPCClient:
    def __init__(
        self,
        transport: messaging.Transport | None = None,
        *,
        topic: str | None = None,
        serializer: messaging.Serializer | None = None,
        is_host_up: HostCheck | None = None,
        timeout: float | None = None,
        retry: int | None = None,
    ) -> None:
        """``retry`` bounds reconnection attempts to the broker (None: oslo's default)."""
        self._transport = transport or rpc.get_transport()
        self.topic = topic or rpc.compute_topic(self._transport.conf)
        self._is_host_up = is_host_up
        self._in_process = rpc.is_in_process(self._transport)
        self._client = messaging.get_rpc_client(
            self._transport,
            messaging.Target(topic=self.topic),
            serializer=serializer or rpc.get_serializer(),
            retry=retry,
        )
        # The client registers rpc_response_timeout, so it can be read only now.
        self.timeout = float(
            timeout if timeout is not None else rpc.response_timeout(self._transport.conf)
        )
        # Mandatory publishing: RabbitMQ bounces a message no queue is bound for, so a host
        # that never listened fails at once instead of after the whole timeout.
        self._options = messaging.TransportOptions(at_least_once=True)

    def call(
        self,
        context: Any,
        host: str,
        method: str,
        /,
        *,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run ``method`` on ``host`` and return its result."""
        self._check_host(host, method)
        wait = self.timeout if timeout is None else float(timeout)
        cctxt = self._client.prepare(server=host, timeout=wait, transport_options=self._options)
        try:
            return cctxt.call(context, method, **kwargs)
        except messaging.MessagingTimeout as exc:
            raise rpc.HostUnreachable(
                host=host, method=method, reason=f"no reply within {wait:g} seconds"
            ) from exc
        except Exception as exc:
            raise self._translate(exc, host, method) from exc

    def cast(self, context: Any, host: str, method: str, /, **kwargs: Any) -> None:
        """Queue ``method`` for ``host`` without waiting for it to run."""
        self._check_host(host, method)
        cctxt = self._client.prepare(server=host, transport_options=self._options)
        try:
            cctxt.cast(context, method, **kwargs)
        except Exception as exc:
            raise self._translate(exc, host, method) from exc

    def _check_host(self, host: str, method: str) -> None:
        if not host:
            raise rpc.HostUnreachable(host=host, method=method, reason="no host given")
        if self._is_host_up is not None and not self._is_host_up(host):
            raise rpc.HostUnreachable(host=host, method=method, reason="the host is down")

    def _translate(self, exc: Exception, host: str, method: str) -> BaseException:
        if isinstance(exc, messaging.MessageUndeliverable):
            return rpc.HostUnreachable(
                host=host, method=method, reason=f"nothing listens on {self.topic}.{host}"
            )
        if rpc.raised_by_server(exc) or rpc.is_remote_exception(exc):
            return (
                rpc.to_remote_exception(exc)
                if self._in_process and not rpc.is_remote_exception(exc)
                else exc
            )
        if isinstance(exc, messaging.MessageDeliveryFailure | OSError) or type(
            exc
        ).__module__.partition(".")[0] in ("kombu", "amqp"):
            # The broker itself is gone once the bounded ``retry`` ran out.
            return rpc.HostUnreachable(
                host=host, method=method, reason="the message bus is unreachable"
            )
        return exc
