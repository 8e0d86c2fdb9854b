"""kuryr's Docker networks on a node: made on first use, recorded, removed on request.

A Neutron network is used on a node through the Docker network named after its id
(:func:`zun.network.kuryr_network.docker_network_spec`). As in the original, the node that makes
it records a ``network`` row: one per (Neutron network, host), name = the Neutron id, the
project and user of the request that needed it, ``network_id`` = the Docker network. A
container create makes it implicitly; ``POST /v1/networks`` explicitly (with the name given).
The row stays after the containers are gone (as the original's did); ``DELETE /v1/networks``
removes the Docker network of every host that has a row, and the rows.

**IPAM pools.** kuryr-libnetwork's IPAM keeps one Neutron subnet pool per subnet
(``kuryrPool-<cidr>``), found by every node that wraps the subnet; when one node removes its
Docker network, kuryr deletes that pool and takes its tag off the subnet, and the other nodes'
Docker networks point at a pool that is gone: their next container cannot get an address. So
each node gets a pool of its own, made here and named ``zun-pool-<subnet id>-<host>`` (the
subnet's CIDR, its network's ``shared``), handed to kuryr with ``neutron.pool.uuid``
(``neutron.pool.v6.uuid``): kuryr then marks it as an existing pool and never deletes it, and
removing one node's Docker network touches no other node's. Zun deletes its pool after the
Docker network is gone, or when the Docker network could not be made.

Everything runs under the engine's lock for the network (threads and processes of the node).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import docker
import docker.errors

from zun.common import exception
from zun.db import engine
from zun.db.queries import networks as network_q
from zun.network import docker_network, kuryr_network, network_removal
from zun.network.kuryr_pools import POOL_OPTIONS, ensure_pool, remove_pools
from zun.network.neutron import NeutronClient

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class Owner:
    """Who a network row is recorded for: the host, and the request that needed it."""

    host: str
    project_id: str | None
    user_id: str | None
    # The row's name: the Neutron id when a container needed it (as the original), the
    # given name for POST /v1/networks.
    name: str | None = None
    # POST /v1/networks: a row already on this host is a 409, not something to use.
    explicit: bool = False


# --- IPAM pools -------------------------------------------------------------------------------


def pools_of(docker_net: Any) -> list[str]:
    """The pool ids a Docker network of kuryr was made with."""
    options = (docker_net.attrs.get("IPAM") or {}).get("Options") or {}
    return [options[key] for key in POOL_OPTIONS.values() if options.get(key)]


# --- rows -------------------------------------------------------------------------------------


def _claim_row(owner: Owner, net_id: str) -> tuple[int, str, str | None, bool]:
    """The row of the network on this host: (id, uuid, network_id, inserted now)."""
    for _ in range(2):
        try:
            with engine.transaction() as session:
                row = network_q.on_host(session, net_id, owner.host)
                if row is not None:
                    if owner.explicit:
                        raise exception.NetworkAlreadyExists(field="neutron_net_id", value=net_id)
                    return row.id, str(row.uuid), row.network_id, False
                row = network_q.create(
                    session,
                    {
                        "name": owner.name or net_id,
                        "neutron_net_id": net_id,
                        "host": owner.host,
                        "project_id": owner.project_id,
                        "user_id": owner.user_id,
                    },
                )
                return row.id, str(row.uuid), None, True
        except exception.NetworkAlreadyExists:
            # Another process of this host inserted it in between (the unique key is
            # (neutron_net_id, host)): read it back, unless a new one was asked for.
            if owner.explicit:
                raise
    raise exception.ZunException(message=f"Cannot record network {net_id} on {owner.host}")


def _record(owner: Owner, net_id: str, docker_id: str) -> str:
    """Make sure this host's row names ``docker_id`` (a Docker network made before rows were
    kept, or by hand, is adopted); returns the row's uuid."""
    row_id, row_uuid, recorded, _ = _claim_row(owner, net_id)
    if recorded != docker_id:
        with engine.transaction() as session:
            network_q.set_network_id(session, row_id, docker_id)
    return row_uuid


def _forget_row(row_id: int) -> None:
    try:
        with engine.transaction() as session:
            network_q.delete(session, row_id)
    except Exception:
        LOG.warning("Could not delete network row %s", row_id, exc_info=True)


# --- Docker networks --------------------------------------------------------------------------


def ensure(
    client: docker.DockerClient, neutron: NeutronClient, net_id: str, owner: Owner
) -> tuple[str, str]:
    """The Docker network of a Neutron network on this engine and its row on this host,
    made when missing; returns (Docker id, row uuid). A Docker network that cannot be made
    leaves no row (and no pool) behind."""
    with docker_network._lock_for(client, net_id):
        existing = kuryr_network.docker_networks_named(client, net_id)
        if existing:
            return str(existing[0].id), _record(owner, net_id, str(existing[0].id))
        row_id, row_uuid, _, inserted = _claim_row(owner, net_id)
        try:
            docker_id = _make(client, neutron, net_id, owner.host)
            with engine.transaction() as session:
                network_q.set_network_id(session, row_id, docker_id)
        except BaseException:
            if inserted:
                _forget_row(row_id)
            raise
        return docker_id, row_uuid


def _make(client: docker.DockerClient, neutron: NeutronClient, net_id: str, host: str) -> str:
    network = neutron.get_network(net_id)
    subnets = neutron.subnets(net_id)
    spec = kuryr_network.docker_network_spec(network, subnets)
    shared = bool(network.get("shared"))
    pools: list[str] = []
    try:
        for subnet in subnets:
            version = int(subnet.get("ip_version") or 4)
            if spec["options"].get(kuryr_network.SUBNET_OPTIONS[version]) != subnet["id"]:
                continue
            pool_id = ensure_pool(neutron, subnet, shared, host)
            pools.append(pool_id)
            spec["options"][POOL_OPTIONS[version]] = pool_id
            spec["ipam"]["Options"][POOL_OPTIONS[version]] = pool_id
        LOG.info(
            "Creating Docker network %s (%s) for Neutron network %s, pools %s",
            spec["name"],
            spec["driver"],
            net_id,
            pools,
        )
        created = client.api.create_network(
            spec["name"],
            driver=spec["driver"],
            options=spec["options"],
            ipam=spec["ipam"],
            enable_ipv6=spec["enable_ipv6"],
            check_duplicate=True,
        )
    except docker.errors.APIError as err:
        remove_pools(neutron, pools)
        raise kuryr_network.engine_error(err) from err
    except BaseException:
        remove_pools(neutron, pools)
        raise
    return str(created["Id"])


def remove(client: docker.DockerClient, neutron: NeutronClient | None, net_id: str) -> bool:
    """Remove the Docker network of a Neutron network (409 while a container uses it, or when
    the engine has not released its endpoints within ``network_removal.RELEASE_WAIT``), then
    Zun's pools it was made with; False when there was none."""
    with docker_network._lock_for(client, net_id):
        nets = kuryr_network.docker_networks_named(client, net_id)
        pools: list[str] = []
        for net in nets:
            net.reload()
            pools_made = pools_of(net)
            try:
                network_removal.remove(net, net_id, lambda n=net: network_removal.has_containers(n))
            except docker.errors.NotFound:
                continue
            except docker.errors.APIError as err:
                raise kuryr_network.engine_error(err) from err
            pools += pools_made
        if pools and neutron is not None:
            remove_pools(neutron, pools)
        return bool(nets)
