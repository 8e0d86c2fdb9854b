"""What a container takes on a node besides its engine container: networks and volumes.

The project network is Docker's bridge network ``zun-<project>`` (zun.network.docker_network),
made on first use and removed when nothing uses it; with ``[network]/driver = kuryr`` a
container gets Neutron ports on kuryr's Docker networks instead (zun.network.kuryr_network).
Volumes and injected files are the local driver's (zun.volume.local). The drivers are handed
the runtime's engine handle: this module never talks to the engine itself.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zun.common import exception
from zun.db import engine
from zun.db.queries import node as node_q
from zun.network import docker_network, kuryr_network, kuryr_networks, mode
from zun.network import neutron as neutron_api
from zun.volume import local as local_volume

LOG = logging.getLogger(__name__)


@dataclass
class Taken:
    """What a create (or rebuild) took so far, to give back on failure."""

    records: list[dict[str, Any]] = field(default_factory=list)
    project_network: str | None = None
    engine_created: bool = False
    # Neutron ports and the exposed-ports group (kuryr driver).
    neutron: kuryr_network.PortsTaken = field(default_factory=kuryr_network.PortsTaken)
    # Row fields the networking decided (kuryr: addresses, security groups).
    row_values: dict[str, Any] = field(default_factory=dict)


class NodeResources:
    """Networks and volumes of the containers of one host."""

    def __init__(
        self, host: str, engine_handle: Callable[[], Any], state_dir: Callable[[], Path]
    ) -> None:
        self.host = host
        self._engine = engine_handle
        self._state_dir = state_dir
        # Project networks this process made or saw (see networking()).
        self.known_networks: set[str] = set()

    @contextlib.contextmanager
    def networking(
        self, row: Any, requested: list[dict[str, Any]] | None, taken: Taken
    ) -> Iterator[dict[str, Any]]:
        """The networking of a create; holds the project network's lock while it is used,
        so that a concurrent cleanup cannot remove the network before the container is on it."""
        if mode.kuryr_enabled():
            yield self._kuryr_networking(row, requested, taken)
            return
        client = self._engine()
        if requested:
            endpoints: dict[str, dict[str, Any]] = {}
            for entry in requested:
                if entry.get("port"):
                    raise exception.Invalid(
                        message="Ports are Neutron's: this node attaches Docker networks only."
                    )
                name = docker_network.network_name(client, entry.get("network"))
                endpoint: dict[str, Any] = {}
                if entry.get("v4-fixed-ip"):
                    endpoint["ipv4_address"] = entry["v4-fixed-ip"]
                if entry.get("v6-fixed-ip"):
                    endpoint["ipv6_address"] = entry["v6-fixed-ip"]
                endpoints[name] = endpoint
            yield {"network_mode": next(iter(endpoints)), "endpoints": endpoints}
            return
        project = row.project_id or "default"
        name = docker_network.project_network_name(project)
        # Networks this process made or saw stay until it removes them itself (under this
        # lock, exclusive); one removed behind our back makes the create fail with a 404,
        # after which the caller forgets it and tries once more. A known network is only
        # used, so creates share the lock and reach the engine side by side.
        known = name in self.known_networks
        with docker_network.project_network_lock(client, project, shared=known):
            if not known:
                name = docker_network.ensure_project_network_locked(client, project).name
                self.known_networks.add(name)
            taken.project_network = project
            yield {"network_mode": name, "endpoints": {name: {}}}

    def _kuryr_networking(
        self, row: Any, requested: list[dict[str, Any]] | None, taken: Taken
    ) -> dict[str, Any]:
        """Neutron ports (made or the user's) on kuryr's Docker networks; what is made is
        recorded in ``taken.neutron`` at once, so a failure gives it back."""
        client = self._engine()
        neutron = neutron_api.for_service()
        requests = list(requested or [])
        if not requests:
            # The API resolves the networks; a create that came without any (an older
            # message) gets the project's network as the original chose it.
            net = neutron.available_network(row.project_id)
            requests = [
                {"network": net["id"], "port": "", "fixed_ip": "", "preserve_on_delete": False}
            ]
        # Ports of this container that no request names are from an earlier attempt (a
        # create done again after a node restart, or on another host after node loss): the
        # dead attempt never gave them back, and a fixed IP would collide with them.
        named = {str(r.get("port")) for r in requests if r.get("port")}
        stale = [p["id"] for p in neutron.ports(device_id=row.uuid) if p["id"] not in named]
        if stale:
            LOG.info("Container %s: deleting ports of an earlier attempt: %s", row.uuid, stale)
            kuryr_network.release_ports(neutron, [(port_id, False) for port_id in stale])
        groups = list(row.security_groups) if row.security_groups else None
        if row.exposed_ports:
            existing = neutron.security_groups(
                name=kuryr_network.exposed_group_name(row.uuid), project_id=row.project_id
            )
            group = (
                existing[0]["id"]
                if existing
                else kuryr_network.expose_ports(
                    neutron, row.uuid, row.project_id, row.exposed_ports, taken.neutron
                )
            )
            groups = list(dict.fromkeys([*(groups or []), group]))
        addresses: dict[str, list[dict[str, Any]]] = {}
        endpoints: dict[str, dict[str, Any]] = {}
        mac = None
        for request in requests:
            port = kuryr_network.take_port(
                neutron, row.uuid, row.project_id, request, groups, taken.neutron
            )
            net_id = str(port["network_id"])
            kuryr_networks.ensure(
                client,
                neutron,
                net_id,
                kuryr_networks.Owner(self.host, row.project_id, row.user_id),
            )
            addrs = kuryr_network.addresses_of(port, bool(request.get("preserve_on_delete")))
            addresses[net_id] = addrs
            endpoints[net_id] = kuryr_network.endpoint_of(addrs)
            mac = mac or port.get("mac_address")
        row.addresses = addresses
        taken.row_values["addresses"] = addresses
        if groups is not None:
            row.security_groups = groups
            taken.row_values["security_groups"] = groups
        return {
            "network_mode": next(iter(endpoints)),
            "endpoints": endpoints,
            "mac_address": mac,
            "publish": False,
        }

    def release_neutron(self, row: Any, taken: Taken) -> None:
        """Give back the ports and group a failed create took (kuryr; never raises)."""
        if not (taken.neutron.ports or taken.neutron.exposed_group):
            return
        try:
            neutron = neutron_api.for_service()
        except Exception:
            LOG.warning("Could not release the Neutron ports of %s", row.uuid, exc_info=True)
            return
        kuryr_network.release(neutron, row.uuid, row.project_id, taken.neutron)

    def release_container_networking(self, row: Any, strict: bool = False) -> None:
        """After the engine container is gone: its ports (deleted, or handed back when the
        user brought them) and its exposed-ports group (kuryr). Never raises, unless
        ``strict``: then Neutron not answering fails the caller, which keeps the row."""
        if not mode.kuryr_enabled():
            self.release_project_network(row.project_id)
            return
        if strict:
            neutron = neutron_api.for_service()
            kuryr_network.release_ports(neutron, kuryr_network.ports_of(row.addresses), strict=True)
            if row.exposed_ports:
                kuryr_network.remove_exposed_group(neutron, row.uuid, row.project_id)
            return
        try:
            neutron = neutron_api.for_service()
            kuryr_network.release_ports(neutron, kuryr_network.ports_of(row.addresses))
            if row.exposed_ports:
                kuryr_network.remove_exposed_group(neutron, row.uuid, row.project_id)
        except Exception:
            LOG.warning("Could not release the Neutron ports of %s", row.uuid, exc_info=True)

    def forget_project_network(self, project_id: str | None) -> None:
        self.known_networks.discard(docker_network.project_network_name(project_id or "default"))

    @staticmethod
    def stored_networks(row: Any) -> list[dict[str, Any]] | None:
        """The networks a container was on (its ``addresses`` keys), to rebuild it alike;
        None (the project network) when it was on that one only, or on none."""
        if mode.kuryr_enabled():
            # The same ports again (the engine let them go with the old container).
            return [
                {"network": net, "port": port, "fixed_ip": "", "preserve_on_delete": preserve}
                for net in (row.addresses or {})
                for port, preserve in kuryr_network.ports_of(row.addresses, net)
            ] or None
        project_net = docker_network.project_network_name(row.project_id or "default")
        names = list(row.addresses or {})
        if not names or names == [project_net]:
            return None
        return [{"network": name} for name in names]

    def prepare_volumes(self, row: Any, requested: list[dict[str, Any]], taken: Taken) -> list[Any]:
        """Mounts of the requested volumes; their records are stored at once, so that a
        crash before the engine container exists still leaves them to be released."""
        if not requested:
            return []
        mounts, records = local_volume.prepare_mounts(
            self._engine(),
            row.uuid,
            requested,
            self._state_dir(),
            project_id=row.project_id,
            user_id=row.user_id,
            host=self.host,
        )
        taken.records = records
        with engine.transaction() as session:
            node_q.save_volume_records(session, records)
        return mounts

    def stored_mounts(self, container_uuid: str) -> list[Any]:
        """Mounts of the volumes recorded for the container (a rebuild keeps them)."""
        with engine.transaction(readonly=True) as session:
            records = node_q.volume_records(session, container_uuid)
        return local_volume.docker_mounts_for(self._engine(), records, self._state_dir())

    def release_volumes(self, container_uuid: str, records: list[dict[str, Any]]) -> None:
        try:
            local_volume.release_mounts(self._engine(), records, self._state_dir())
        finally:
            local_volume.release_container_volumes(
                self._engine(), container_uuid, self._state_dir()
            )

    def release_stored_volumes(self, container_uuid: str) -> None:
        with engine.transaction(readonly=True) as session:
            records = node_q.volume_records(session, container_uuid)
        self.release_volumes(container_uuid, records)

    def release_project_network(self, project_id: str | None) -> None:
        """Remove the project's network if nothing uses it (never raises)."""
        if mode.kuryr_enabled():
            return
        project = project_id or "default"
        try:
            # Inside the try: an unreachable engine fails here already.
            client = self._engine()
            with docker_network.project_network_lock(client, project):
                # A network still in use stays known: the next creates share the lock
                # instead of each looking the network up again under it alone.
                if docker_network.remove_project_network_if_unused_locked(client, project):
                    self.known_networks.discard(docker_network.project_network_name(project))
        except Exception:
            LOG.warning("Could not remove the network of project %s", project_id, exc_info=True)

    def connect(self, engine_ref: str, network: str, fixed_ip: str | None) -> None:
        docker_network.connect(self._engine(), engine_ref, network, ip=fixed_ip or None)

    def disconnect(self, engine_ref: str, network: str) -> None:
        docker_network.disconnect(self._engine(), engine_ref, network)
