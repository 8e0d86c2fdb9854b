"""The RPC client for container methods on ``zun-compute.<host>``.

Arguments are plain JSON values (container UUIDs, never objects); the first argument of every
method is the request context. Casts return at once; calls wait at most their timeout.

Before any message, the target host's zun-compute service must be up (heartbeat within
``service_down_time``): a known-dead host is answered at once with :class:`ContainerHostDown`
(409, message naming the container and host), where Zun answered an obfuscated 500 for calls
and silently lost casts. ``container_create`` skips the check (the scheduler just picked an up
host). A container with no host (never scheduled) is :class:`ContainerHasNoHost` (409).
A host that is up on paper but does not answer in time gives ``HostUnreachable`` (503)
from :mod:`zun.common.rpc_client`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import oslo_messaging as messaging
from sqlalchemy.orm import Session

from zun.common import exception, rpc
from zun.common.context import RequestContext
from zun.common.rpc_client import ComputeRPCClient
from zun.db import engine
from zun.db.queries import compute_nodes

# Calls a user waits for: long enough for the node's own bounded work (exec's 5 s timeout,
# archives), short enough that a hung node does not hold an API thread for a minute.
DEFAULT_CALL_TIMEOUT = 30.0
# Refreshing a container on GET must never make a read slow.
SHOW_TIMEOUT = 5.0


class ContainerHostDown(exception.ContainerHostNotUp):
    """The container's host is known to be down: a clear 409 instead of Zun's opaque 500."""

    message = (
        "Container %(container)s host %(host)s is not up: its zun-compute service has "
        "not reported within service_down_time. Retry when the host is back, or ask "
        "an operator."
    )
    code = 409


class ContainerHasNoHost(exception.Conflict):
    """The container was never placed on a node (scheduling failed): nothing can act on it."""

    message = (
        "Container %(container)s has no host: it was never placed on a node (its "
        "status_reason says why). Delete it and create it again."
    )
    code = 409


def host_is_up(host: str) -> bool:
    with engine.transaction(readonly=True) as session:
        return compute_nodes.compute_service_up(session, host)


class ContainerRPCAPI:
    """Container methods of the node; see the contract (containers-contract.md)."""

    def __init__(
        self,
        transport: messaging.Transport | None = None,
        *,
        is_host_up: Callable[[str], bool] | None = host_is_up,
        call_timeout: float | None = None,
    ) -> None:
        self._client = ComputeRPCClient(transport)
        self._is_host_up = is_host_up
        self.call_timeout = min(self._client.timeout, call_timeout or DEFAULT_CALL_TIMEOUT)

    # --- plumbing -----------------------------------------------------------------------

    def host_up(self, host: str, session: Session | None = None, known: bool | None = None) -> bool:
        """Whether ``host`` is up: ``known`` when the caller read it already (the same query
        as :func:`host_is_up`), else read in the caller's ``session`` when it has one."""
        if self._is_host_up is None:
            return True
        if self._is_host_up is host_is_up:
            if known is not None:
                return known
            if session is not None:
                return compute_nodes.compute_service_up(session, host)
        return self._is_host_up(host)

    def require_up(self, host: str | None, container_uuid: str) -> str:
        if not host:
            raise ContainerHasNoHost(container=container_uuid)
        if self._is_host_up is not None and not self._is_host_up(host):
            raise ContainerHostDown(container=container_uuid, host=host)
        return host

    def _cast(
        self,
        ctx: RequestContext,
        host: str | None,
        method: str,
        container_uuid: str,
        check: bool = True,
        **kwargs: Any,
    ) -> None:
        if check:
            host = self.require_up(host, container_uuid)
        self._client.cast(ctx, host or "", method, container_uuid=container_uuid, **kwargs)

    def _call(
        self,
        ctx: RequestContext,
        host: str | None,
        method: str,
        container_uuid: str,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> Any:
        host = self.require_up(host, container_uuid)
        return self._client.call(
            ctx,
            host,
            method,
            timeout=timeout or self.call_timeout,
            container_uuid=container_uuid,
            **kwargs,
        )

    # --- casts ----------------------------------------------------------------------------

    def container_create(
        self,
        ctx: RequestContext,
        host: str,
        container_uuid: str,
        *,
        run: bool,
        requested_networks: list[dict[str, Any]],
        requested_volumes: list[dict[str, Any]],
    ) -> None:
        self._cast(
            ctx,
            host,
            "container_create",
            container_uuid,
            check=False,
            run=run,
            requested_networks=requested_networks,
            requested_volumes=requested_volumes,
        )

    def container_delete(
        self, ctx: RequestContext, host: str, container_uuid: str, *, force: bool, stop_first: bool
    ) -> None:
        self._cast(
            ctx, host, "container_delete", container_uuid, force=force, stop_first=stop_first
        )

    def container_start(self, ctx: RequestContext, host: str, container_uuid: str) -> None:
        self._cast(ctx, host, "container_start", container_uuid)

    def container_pause(self, ctx: RequestContext, host: str, container_uuid: str) -> None:
        self._cast(ctx, host, "container_pause", container_uuid)

    def container_unpause(self, ctx: RequestContext, host: str, container_uuid: str) -> None:
        self._cast(ctx, host, "container_unpause", container_uuid)

    def container_stop(
        self, ctx: RequestContext, host: str, container_uuid: str, timeout: int | None
    ) -> None:
        self._cast(ctx, host, "container_stop", container_uuid, timeout=timeout)

    def container_reboot(
        self, ctx: RequestContext, host: str, container_uuid: str, timeout: int | None
    ) -> None:
        self._cast(ctx, host, "container_reboot", container_uuid, timeout=timeout)

    def container_kill(
        self, ctx: RequestContext, host: str, container_uuid: str, signal: str | None
    ) -> None:
        self._cast(ctx, host, "container_kill", container_uuid, signal=signal)

    def container_rebuild(
        self,
        ctx: RequestContext,
        host: str,
        container_uuid: str,
        *,
        run: bool | None,
        image: str | None,
        image_driver: str | None,
    ) -> None:
        self._cast(
            ctx,
            host,
            "container_rebuild",
            container_uuid,
            run=run,
            image=image,
            image_driver=image_driver,
        )

    def resize_container(
        self,
        ctx: RequestContext,
        host: str,
        container_uuid: str,
        *,
        cpu: float | None,
        memory: str | None,
    ) -> None:
        self._cast(ctx, host, "resize_container", container_uuid, cpu=cpu, memory=memory)

    def network_attach(
        self,
        ctx: RequestContext,
        host: str,
        container_uuid: str,
        *,
        network: str,
        fixed_ip: str | None,
        requested_network: dict[str, Any] | None = None,
    ) -> None:
        kwargs: dict[str, Any] = {"network": network, "fixed_ip": fixed_ip}
        if requested_network is not None:  # kuryr: the request the API resolved in Neutron
            kwargs["requested_network"] = requested_network
        self._cast(ctx, host, "network_attach", container_uuid, **kwargs)

    def add_security_group(
        self, ctx: RequestContext, host: str, container_uuid: str, *, security_group: str
    ) -> None:
        self._cast(ctx, host, "add_security_group", container_uuid, security_group=security_group)

    def remove_security_group(
        self, ctx: RequestContext, host: str, container_uuid: str, *, security_group: str
    ) -> None:
        self._cast(
            ctx, host, "remove_security_group", container_uuid, security_group=security_group
        )

    def network_detach(
        self, ctx: RequestContext, host: str, container_uuid: str, *, network: str
    ) -> None:
        self._cast(ctx, host, "network_detach", container_uuid, network=network)

    def container_commit(
        self,
        ctx: RequestContext,
        host: str,
        container_uuid: str,
        *,
        repository: str,
        tag: str | None,
        image_uuid: str,
    ) -> None:
        self._cast(
            ctx,
            host,
            "container_commit",
            container_uuid,
            repository=repository,
            tag=tag,
            image_uuid=image_uuid,
        )

    # --- calls ----------------------------------------------------------------------------

    def container_show(
        self, ctx: RequestContext, host: str, container_uuid: str, *, host_checked: bool = False
    ) -> Any:
        """``host_checked``: the caller already saw the host up (in its own transaction)."""
        if host_checked:
            return self._client.call(
                ctx, host, "container_show", timeout=SHOW_TIMEOUT, container_uuid=container_uuid
            )
        return self._call(ctx, host, "container_show", container_uuid, timeout=SHOW_TIMEOUT)

    def container_logs(
        self,
        ctx: RequestContext,
        host: str,
        container_uuid: str,
        *,
        stdout: bool,
        stderr: bool,
        timestamps: bool,
        tail: str | int | None,
        since: str | int | None,
    ) -> Any:
        return self._call(
            ctx,
            host,
            "container_logs",
            container_uuid,
            stdout=stdout,
            stderr=stderr,
            timestamps=timestamps,
            tail=tail,
            since=since,
        )

    def container_exec(
        self,
        ctx: RequestContext,
        host: str,
        container_uuid: str,
        *,
        command: list[str],
        run: bool,
        interactive: bool,
    ) -> Any:
        return self._call(
            ctx,
            host,
            "container_exec",
            container_uuid,
            command=command,
            run=run,
            interactive=interactive,
        )

    def container_exec_resize(
        self,
        ctx: RequestContext,
        host: str,
        container_uuid: str,
        *,
        exec_id: str,
        height: int | None,
        width: int | None,
    ) -> Any:
        return self._call(
            ctx,
            host,
            "container_exec_resize",
            container_uuid,
            exec_id=exec_id,
            height=height,
            width=width,
        )

    def container_attach(self, ctx: RequestContext, host: str, container_uuid: str) -> Any:
        return self._call(ctx, host, "container_attach", container_uuid)

    def container_resize(
        self,
        ctx: RequestContext,
        host: str,
        container_uuid: str,
        *,
        height: int | None,
        width: int | None,
    ) -> Any:
        return self._call(ctx, host, "container_resize", container_uuid, height=height, width=width)

    def container_top(
        self, ctx: RequestContext, host: str, container_uuid: str, *, ps_args: str | None
    ) -> Any:
        return self._call(ctx, host, "container_top", container_uuid, ps_args=ps_args)

    def container_get_archive(
        self, ctx: RequestContext, host: str, container_uuid: str, *, path: str
    ) -> Any:
        return self._call(ctx, host, "container_get_archive", container_uuid, path=path)

    def container_put_archive(
        self, ctx: RequestContext, host: str, container_uuid: str, *, path: str, data_b64: str
    ) -> Any:
        return self._call(
            ctx, host, "container_put_archive", container_uuid, path=path, data_b64=data_b64
        )

    def container_stats(self, ctx: RequestContext, host: str, container_uuid: str) -> Any:
        return self._call(ctx, host, "container_stats", container_uuid)

    def container_update(
        self,
        ctx: RequestContext,
        host: str,
        container_uuid: str,
        *,
        cpu: float | None,
        memory: str | None,
    ) -> Any:
        return self._call(ctx, host, "container_update", container_uuid, cpu=cpu, memory=memory)

    def network_list(self, ctx: RequestContext, host: str, container_uuid: str) -> Any:
        return self._call(ctx, host, "network_list", container_uuid)


def get_rpcapi() -> ContainerRPCAPI:
    """The process' client (a 503 in a process without a message bus)."""
    return rpc.client_for(ContainerRPCAPI)
