"""The RPC client for the capsule methods of ``zun-compute.<host>`` (both casts).

* ``capsule_create(ctx, capsule_uuid, volumes)``: build the scheduled capsule on the node.
  ``volumes`` are the template's volumes with their mounts, as plain values:
  ``[{"name", "size", "volume_id", "auto_remove", "mounts": [{"container_uuid",
  "mount_path", "read_only"}]}]`` (the rows hold everything else).
* ``capsule_delete(ctx, capsule_uuid)``: remove the members, the sandbox, the volumes the
  capsule made, the project network if nothing else uses it, and the rows.

The method names differ from the container ones, so the capsule endpoint and the container
manager can share one RPC server.
"""

from __future__ import annotations

from typing import Any

import oslo_messaging as messaging

from zun.common import rpc
from zun.common.context import RequestContext
from zun.common.rpc_client import ComputeRPCClient
from zun.compute import rpcapi as container_rpcapi


class CapsuleRPCAPI:
    def __init__(self, transport: messaging.Transport | None = None) -> None:
        self._client = ComputeRPCClient(transport)

    @staticmethod
    def require_up(host: str | None, capsule_uuid: str) -> str:
        """409 naming the host when it is known down (as for containers), else the host."""
        if not host:
            raise container_rpcapi.ContainerHasNoHost(container=capsule_uuid)
        if not container_rpcapi.host_is_up(host):
            raise container_rpcapi.ContainerHostDown(container=capsule_uuid, host=host)
        return host

    def capsule_create(
        self, ctx: RequestContext, host: str, capsule_uuid: str, volumes: list[dict[str, Any]]
    ) -> None:
        # No host check: the scheduler has just chosen an up host.
        self._client.cast(ctx, host, "capsule_create", capsule_uuid=capsule_uuid, volumes=volumes)

    def capsule_delete(self, ctx: RequestContext, host: str, capsule_uuid: str) -> None:
        self._client.cast(ctx, host, "capsule_delete", capsule_uuid=capsule_uuid)


def get_rpcapi() -> CapsuleRPCAPI:
    """The process' client (a 503 in a process without a message bus)."""
    return rpc.client_for(CapsuleRPCAPI)
