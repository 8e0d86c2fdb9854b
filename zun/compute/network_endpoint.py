"""Node side of the network resource (embedded mode): Docker bridge networks on this engine.

``network_create`` makes (or finds: it is idempotent per ID) a Zun-managed bridge network
named after the network ID, as Zun's Kuryr driver named its Docker networks after the Neutron
network; ``network_delete`` removes it (409 while a container uses it). The API records the
``network`` row.
"""

from __future__ import annotations

from typing import Any

import docker

from zun.common.context import RequestContext
from zun.network import docker_network
from zun.runtime.docker.client import make_client

ROW_FIELDS = ("name", "network_id", "neutron_net_id", "project_id", "user_id")


class NetworkEndpoint:
    def __init__(self, host: str, client: docker.DockerClient | None = None) -> None:
        self.host = host
        self._client = client

    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            client = docker.DockerClient.__new__(docker.DockerClient)
            client.api = make_client()  # DockerClient's only state
            self._client = client
        return self._client

    def network_create(self, context: RequestContext, name: str,
                       neutron_net_id: str) -> dict[str, Any]:
        view = docker_network.create_network(
            self.client, neutron_net_id, neutron_net_id=neutron_net_id,
            project_id=context.project_id, user_id=context.user_id)
        out = {key: view.get(key) for key in ROW_FIELDS}
        out["name"] = name
        out["host"] = self.host
        return out

    def network_delete(self, context: RequestContext, neutron_net_id: str) -> bool:
        return docker_network.delete_network(self.client, neutron_net_id)


def build_endpoint(host: str) -> NetworkEndpoint:
    return NetworkEndpoint(host)
