"""The RPC client for the image and network methods of ``zun-compute.<host>``.

Casts: ``image_pull``, ``image_delete`` (the API answers before the node acts). Calls:
``image_search``, ``network_create``, ``network_delete`` (the API waits, bounded). Zun sent the
calls "to any zun-compute"; here :func:`pick_host` chooses an up, enabled compute host (in the
embedded mode, the local one), and no host up is a clear 503 instead of a timeout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import oslo_messaging as messaging

from zun.common import rpc
from zun.common.context import RequestContext
from zun.common.rpc_client import ComputeRPCClient
from zun.db import engine
from zun.db.queries import compute_nodes

# Image search reads a registry catalogue; network calls touch the engine. Both are quick.
DEFAULT_CALL_TIMEOUT = 30.0


def host_is_up(host: str) -> bool:
    with engine.transaction(readonly=True) as session:
        return compute_nodes.compute_service_up(session, host)


def up_hosts() -> list[str]:
    """Compute hosts whose zun-compute service is up and enabled, by hostname."""
    with engine.transaction(readonly=True) as session:
        states = compute_nodes.list_node_states(session)
    return [s.hostname for s in states if s.service_up and not s.service_disabled]


def pick_host(method: str) -> str:
    hosts = up_hosts()
    if not hosts:
        raise rpc.HostUnreachable(
            host="(any)", method=method, reason="no zun-compute service is up"
        )
    return hosts[0]


class ImageNetworkRPCAPI:
    def __init__(
        self,
        transport: messaging.Transport | None = None,
        *,
        is_host_up: Callable[[str], bool] | None = host_is_up,
        call_timeout: float | None = None,
    ) -> None:
        self._client = ComputeRPCClient(transport, is_host_up=is_host_up)
        self.call_timeout = min(self._client.timeout, call_timeout or DEFAULT_CALL_TIMEOUT)

    # --- images ---------------------------------------------------------------------------

    def image_pull(
        self, ctx: RequestContext, host: str, image_uuid: str, image_driver: str | None = None
    ) -> None:
        kwargs: dict[str, Any] = {"image_uuid": image_uuid}
        if image_driver:
            kwargs["image_driver"] = image_driver
        self._client.cast(ctx, host, "image_pull", **kwargs)

    def image_delete(self, ctx: RequestContext, host: str, image_uuid: str) -> None:
        self._client.cast(ctx, host, "image_delete", image_uuid=image_uuid)

    def image_search(
        self,
        ctx: RequestContext,
        host: str,
        image: str,
        image_driver: str | None,
        exact_match: bool,
    ) -> list[dict[str, Any]]:
        return self._client.call(
            ctx,
            host,
            "image_search",
            timeout=self.call_timeout,
            image=image,
            image_driver=image_driver,
            exact_match=exact_match,
        )

    # --- networks -------------------------------------------------------------------------

    def network_create(
        self, ctx: RequestContext, host: str, name: str, neutron_net_id: str
    ) -> dict[str, Any]:
        return self._client.call(
            ctx,
            host,
            "network_create",
            timeout=self.call_timeout,
            name=name,
            neutron_net_id=neutron_net_id,
        )

    def network_delete(self, ctx: RequestContext, host: str, neutron_net_id: str) -> bool:
        return self._client.call(
            ctx, host, "network_delete", timeout=self.call_timeout, neutron_net_id=neutron_net_id
        )


def get_rpcapi() -> ImageNetworkRPCAPI:
    """The process' client (a 503 in a process without a message bus)."""
    return rpc.client_for(ImageNetworkRPCAPI)
