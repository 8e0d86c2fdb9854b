"""What a container takes on a node besides its engine container: networks and volumes.

The project network is Docker's bridge network ``zun-<project>`` (zun.network.docker_network),
made on first use and removed when nothing uses it; volumes and injected files are the local
driver's (zun.volume.local). Both drivers are handed the runtime's engine handle: this module
never talks to the engine itself.
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
from zun.network import docker_network
from zun.volume import local as local_volume

LOG = logging.getLogger(__name__)


@dataclass
class Taken:
    """What a create (or rebuild) took so far, to give back on failure."""

    records: list[dict[str, Any]] = field(default_factory=list)
    project_network: str | None = None
    engine_created: bool = False


class NodeResources:
    """Networks and volumes of the containers of one host."""

    def __init__(self, host: str, engine_handle: Callable[[], Any],
                 state_dir: Callable[[], Path]) -> None:
        self.host = host
        self._engine = engine_handle
        self._state_dir = state_dir
        # Project networks this process made or saw (see networking()).
        self.known_networks: set[str] = set()

    @contextlib.contextmanager
    def networking(self, row: Any, requested: list[dict[str, Any]] | None,
                   taken: Taken) -> Iterator[dict[str, Any]]:
        """The networking of a create; holds the project network's lock while it is used,
        so that a concurrent cleanup cannot remove the network before the container is on it."""
        client = self._engine()
        if requested:
            endpoints: dict[str, dict[str, Any]] = {}
            for entry in requested:
                if entry.get("port"):
                    raise exception.Invalid(
                        message="Ports are Neutron's: this node attaches Docker networks only.")
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

    def forget_project_network(self, project_id: str | None) -> None:
        self.known_networks.discard(docker_network.project_network_name(project_id or "default"))

    @staticmethod
    def stored_networks(row: Any) -> list[dict[str, Any]] | None:
        """The networks a container was on (its ``addresses`` keys), to rebuild it alike;
        None (the project network) when it was on that one only, or on none."""
        project_net = docker_network.project_network_name(row.project_id or "default")
        names = list(row.addresses or {})
        if not names or names == [project_net]:
            return None
        return [{"network": name} for name in names]

    def prepare_volumes(self, row: Any, requested: list[dict[str, Any]],
                        taken: Taken) -> list[Any]:
        """Mounts of the requested volumes; their records are stored at once, so that a
        crash before the engine container exists still leaves them to be released."""
        if not requested:
            return []
        mounts, records = local_volume.prepare_mounts(
            self._engine(), row.uuid, requested, self._state_dir(), project_id=row.project_id,
            user_id=row.user_id, host=self.host)
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
            local_volume.release_container_volumes(self._engine(), container_uuid,
                                                   self._state_dir())

    def release_stored_volumes(self, container_uuid: str) -> None:
        with engine.transaction(readonly=True) as session:
            records = node_q.volume_records(session, container_uuid)
        self.release_volumes(container_uuid, records)

    def release_project_network(self, project_id: str | None) -> None:
        """Remove the project's network if nothing uses it (never raises)."""
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
