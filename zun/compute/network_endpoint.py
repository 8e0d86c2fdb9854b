"""Node side of the network resource (embedded mode): Docker bridge networks on this engine.

``network_create`` makes (or finds: it is idempotent per ID) a Zun-managed bridge network
named after the network ID, as Zun's Kuryr driver named its Docker networks after the Neutron
network; ``network_delete`` removes it (409 while a container uses it). The API records the
``network`` row; with the kuryr driver the node does (zun.network.kuryr_networks), as for the
networks its containers make.
"""

from __future__ import annotations

from typing import Any

from zun.common.context import RequestContext
from zun.network import docker_network, kuryr_networks, mode
from zun.network import neutron as neutron_api
from zun.runtime.contract import ContainerRuntime
from zun.runtime.docker.driver import DockerDriver

ROW_FIELDS = ("name", "network_id", "neutron_net_id", "project_id", "user_id")


class NetworkEndpoint:
    def __init__(self, host: str, driver: ContainerRuntime | None = None) -> None:
        self.host = host
        self._driver = driver

    @property
    def client(self) -> Any:
        """The engine handle the network driver takes."""
        if self._driver is None:
            self._driver = DockerDriver()
        return self._driver.engine

    def network_create(
        self, context: RequestContext, name: str, neutron_net_id: str
    ) -> dict[str, Any]:
        if mode.kuryr_enabled():
            # The original's Docker network of kuryr, named after the Neutron network; the
            # node records the row, as it does for the networks containers make.
            docker_id, row_uuid = kuryr_networks.ensure(
                self.client,
                neutron_api.for_service(),
                neutron_net_id,
                kuryr_networks.Owner(
                    self.host, context.project_id, context.user_id, name=name, explicit=True
                ),
            )
            return {
                "name": name,
                "network_id": docker_id,
                "neutron_net_id": neutron_net_id,
                "project_id": context.project_id,
                "user_id": context.user_id,
                "host": self.host,
                "uuid": row_uuid,
            }
        view = docker_network.create_network(
            self.client,
            neutron_net_id,
            neutron_net_id=neutron_net_id,
            project_id=context.project_id,
            user_id=context.user_id,
        )
        out = {key: view.get(key) for key in ROW_FIELDS}
        out["name"] = name
        out["host"] = self.host
        return out

    def network_delete(self, context: RequestContext, neutron_net_id: str) -> bool:
        if mode.kuryr_enabled():
            return kuryr_networks.remove(self.client, neutron_api.for_service(), neutron_net_id)
        return docker_network.delete_network(self.client, neutron_net_id)


def build_endpoint(host: str) -> NetworkEndpoint:
    return NetworkEndpoint(host)
