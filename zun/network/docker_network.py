"""Embedded-mode networking: one Docker bridge network per project on the local engine.

Every project gets a bridge network named ``zun-<project_id>``, labelled
``zun.managed=true`` and ``zun.project_id=<project_id>``. Containers of one project talk freely
on their bridge (inter-container communication is on); containers of different projects cannot
reach each other because Docker's own isolation rules (the ``DOCKER-ISOLATION`` iptables chains,
on by default) drop traffic between two bridges. Nothing here opens a path between bridges.

Concurrency: Docker's ``CheckDuplicate`` is not atomic (parallel creates of one name all
succeed), so creation and removal of a project network are serialised by an in-process lock per
(engine, name) -- the container endpoint's threads are the callers that race -- and, for two
*processes* driving the same engine, by an ``flock`` on a lock file named after the engine and
the network; creating containers on a network that exists takes the same locks shared (a
belt-and-braces adoption remains: a caller that sees an older network of the same name removes
its own and uses the older one).

Address pools: Docker gives each bridge a subnet from its ``default-address-pools`` (out of the
box about 30 networks); a node hosting more projects needs a larger pool in ``daemon.json``.
A fixed IP (``connect(..., ip=...)``) only works on a network created with an explicit subnet,
see :func:`create_network`.

This module is the embedded equivalent of the Neutron/Kuryr network driver: the
``POST /v1/networks`` resource maps to :func:`create_network` / :func:`delete_network`.
Security groups have no Docker equivalent here, see :func:`check_security_groups`.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import re
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import docker
import docker.errors
import docker.types
from docker.models.networks import Network

from zun.common import exception
from zun.network import network_removal
from zun.network.addresses import addresses_from_inspect
from zun.network.ports import port_bindings, published_ports

LOG = logging.getLogger(__name__)

LABEL_MANAGED = "zun.managed"
LABEL_PROJECT = "zun.project_id"
LABEL_USER = "zun.user_id"
LABEL_NEUTRON_NET = "zun.neutron_net_id"
PROJECT_NETWORK_PREFIX = "zun-"
_BRIDGE_OPTIONS = {"com.docker.network.bridge.enable_icc": "true"}

__all__ = [
    "LABEL_MANAGED",
    "LABEL_NEUTRON_NET",
    "LABEL_PROJECT",
    "LABEL_USER",
    "SecurityGroupsNotSupported",
    "addresses_for",
    "check_security_groups",
    "connect",
    "create_network",
    "delete_network",
    "disconnect",
    "ensure_project_network",
    "ensure_project_network_locked",
    "list_container_networks",
    "port_bindings",
    "project_network_lock",
    "project_network_name",
    "published_ports",
    "remove_project_network_if_unused",
    "remove_project_network_if_unused_locked",
]


class SecurityGroupsNotSupported(exception.SecurityGroupCannotBeApplied):
    """Raised when security groups are asked of the embedded (Docker bridge) network driver."""

    message = (
        "Security groups are not supported by the embedded Docker network driver: "
        "containers of a project share a bridge isolated from other projects. "
        "Omit security_groups, or run Zun with Neutron."
    )


def check_security_groups(security_groups: Iterable[str] | None) -> None:
    """Refuse a non-empty ``security_groups`` request with :class:`SecurityGroupsNotSupported`."""
    if security_groups:
        raise SecurityGroupsNotSupported()


def project_network_name(project_id: str) -> str:
    return f"{PROJECT_NETWORK_PREFIX}{project_id}"


class _SharedLock:
    """Many shared holders or one exclusive holder; a waiting exclusive holder goes first."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._shared = 0
        self._exclusive = False
        self._exclusive_waiting = 0

    @contextmanager
    def hold(self, shared: bool) -> Iterator[None]:
        with self._cond:
            if shared:
                self._cond.wait_for(lambda: not (self._exclusive or self._exclusive_waiting))
                self._shared += 1
            else:
                self._exclusive_waiting += 1
                try:
                    self._cond.wait_for(lambda: not (self._exclusive or self._shared))
                finally:
                    self._exclusive_waiting -= 1
                self._exclusive = True
        try:
            yield
        finally:
            with self._cond:
                if shared:
                    self._shared -= 1
                else:
                    self._exclusive = False
                self._cond.notify_all()


_locks_guard = threading.Lock()
_locks: dict[tuple[str, str], _SharedLock] = {}
LOCK_DIR = Path(tempfile.gettempdir()) / "zun-network-locks"


@contextmanager
def _lock_for(client: docker.DockerClient, name: str, shared: bool = False) -> Iterator[None]:
    """Threads of this process, then other processes, per (engine, name): one exclusive
    holder, or any number of shared ones."""
    key = (str(client.api.base_url), name)
    with _locks_guard:
        lock = _locks.setdefault(key, _SharedLock())
    digest = hashlib.sha256("\0".join(key).encode()).hexdigest()[:32]
    with lock.hold(shared):
        LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(LOCK_DIR / f"{digest}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the flock


@contextmanager
def project_network_lock(
    client: docker.DockerClient, project_id: str, shared: bool = False
) -> Iterator[None]:
    """Hold the project's network lock across ensure + container create.

    Without it, :func:`remove_project_network_if_unused` in another thread may remove the
    network between :func:`ensure_project_network` and the container's creation on it.
    ``shared=True`` is for creating containers on a network known to exist: creates in one
    project then run side by side (ten parallel creates used to queue here for a second),
    while creating or removing the network itself stays exclusive.
    The lock is not re-entrant: do not call the functions of this module that take it
    (ensure, remove) while holding it; use the ``_locked`` variants instead.
    """
    with _lock_for(client, project_network_name(project_id), shared):
        yield


def _docker_error(err: docker.errors.APIError) -> exception.ZunException:
    explanation = str(err.explanation or err)
    # 400 and 403 are the engine refusing the request itself (bad or overlapping subnet, a
    # fixed IP on an auto-allocated subnet): the caller's to fix, not a server fault.
    if err.status_code in (400, 403):
        return exception.Invalid(message=explanation)
    return exception.DockerError(error_msg=explanation)


def _created_key(net: Network) -> tuple[str, str, str]:
    """Sort key ordering networks by creation time, then ID (Docker trims trailing zeros)."""
    created = net.attrs.get("Created") or ""
    match = re.match(r"([^.Z+]*)(?:\.(\d+))?", created)
    base, frac = (match.group(1), match.group(2) or "") if match else (created, "")
    return base, frac.ljust(9, "0"), net.id


def _networks_named(client: docker.DockerClient, name: str) -> list[Network]:
    # The engine's name filter matches substrings: keep exact matches only.
    return [n for n in client.networks.list(names=[name]) if n.name == name]


def _managed(net: Network) -> bool:
    return (net.attrs.get("Labels") or {}).get(LABEL_MANAGED) == "true"


def _remove_quietly(net: Network) -> None:
    try:
        net.remove()
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as err:
        LOG.warning("Could not remove duplicate network %s: %s", net.id, err)


def _create_or_adopt(
    client: docker.DockerClient,
    name: str,
    labels: dict[str, str],
    ipam: docker.types.IPAMConfig | None = None,
) -> Network:
    """Create the managed network ``name`` unless one exists; the oldest duplicate wins."""
    existing = _networks_named(client, name)
    if any(not _managed(n) for n in existing):
        raise exception.NetworkAlreadyExists(field="name", value=name)
    if existing:
        return min(existing, key=_created_key)
    try:
        mine = client.networks.create(
            name,
            driver="bridge",
            check_duplicate=True,
            labels=labels,
            options=dict(_BRIDGE_OPTIONS),
            ipam=ipam,
        )
    except docker.errors.APIError as err:
        # Another process won the (non-atomic) duplicate check in the meantime.
        existing = [n for n in _networks_named(client, name) if _managed(n)]
        if existing:
            return min(existing, key=_created_key)
        raise _docker_error(err) from err
    mine.reload()
    same = [n for n in _networks_named(client, name) if _managed(n)] or [mine]
    winner = min(same, key=_created_key)
    if winner.id != mine.id:
        LOG.info("Network %s was created concurrently elsewhere; using %s", name, winner.id)
        _remove_quietly(mine)
    return winner


def ensure_project_network_locked(client: docker.DockerClient, project_id: str) -> Network:
    """:func:`ensure_project_network` for a caller already holding :func:`project_network_lock`."""
    if not project_id:
        raise exception.Invalid(message="A project network needs a project ID.")
    labels = {LABEL_MANAGED: "true", LABEL_PROJECT: str(project_id)}
    return _create_or_adopt(client, project_network_name(project_id), labels)


def ensure_project_network(client: docker.DockerClient, project_id: str) -> Network:
    """The project's bridge network ``zun-<project_id>``, created if missing (idempotent).

    Raises ``NetworkAlreadyExists`` when a network of that name exists but was not made by Zun.
    """
    with project_network_lock(client, project_id):
        return ensure_project_network_locked(client, project_id)


def _network_in_use(client: docker.DockerClient, net: Network) -> bool:
    if network_removal.has_containers(net):
        return True
    # Created-but-never-started containers have no endpoint yet, so the network's own list
    # misses them, and they know the network by name only (empty NetworkID) until started;
    # removing the network would make their start fail.
    return any(
        network_removal.container_stays(client, entry["Id"])
        for ident in (net.name, net.id)
        for entry in client.api.containers(all=True, filters={"network": ident})
    )


def remove_project_network_if_unused_locked(client: docker.DockerClient, project_id: str) -> bool:
    """:func:`remove_project_network_if_unused` for a holder of :func:`project_network_lock`."""
    removed = False
    for net in _networks_named(client, project_network_name(project_id)):
        if not _managed(net):
            continue
        try:
            if _network_in_use(client, net):
                continue
            net.remove()
            removed = True
        except docker.errors.NotFound:
            continue
        except docker.errors.APIError as err:
            # A container joined between the check and the removal: it is in use after all.
            LOG.info("Network %s not removed: %s", net.name, err)
    return removed


def remove_project_network_if_unused(client: docker.DockerClient, project_id: str) -> bool:
    """Remove the project's network when no container (in any state) uses it.

    Returns ``True`` when this call removed a network; ``False`` when it is in use or absent.
    Never raises for a network that is already gone.
    """
    with project_network_lock(client, project_id):
        return remove_project_network_if_unused_locked(client, project_id)


def _get_container(client: docker.DockerClient, container_id: str) -> Any:
    try:
        return client.containers.get(container_id)
    except docker.errors.NotFound as err:
        raise exception.ContainerNotFound(container=container_id) from err
    except docker.errors.APIError as err:
        raise _docker_error(err) from err


def _get_network(client: docker.DockerClient, network: str) -> Network:
    try:
        return client.networks.get(network)
    except docker.errors.NotFound as err:
        raise exception.NetworkNotFound(network=network) from err
    except docker.errors.APIError as err:
        raise _docker_error(err) from err


def network_name(client: docker.DockerClient, network: str) -> str:
    """The engine name of a network given by name or id (``NetworkNotFound`` if none)."""
    return _get_network(client, network).name


def _attached(container: Any, net: Network) -> bool:
    networks = container.attrs.get("NetworkSettings", {}).get("Networks") or {}
    return any(
        name == net.name or (info or {}).get("NetworkID") == net.id
        for name, info in networks.items()
    )


def connect(
    client: docker.DockerClient,
    container_id: str,
    network_name: str,
    ip: str | None = None,
    aliases: list[str] | None = None,
) -> None:
    """Attach a container (running or only created) to a network; no-op if already attached.

    ``ip`` asks for a fixed IPv4 address, which Docker allows only on networks created with an
    explicit subnet (``Invalid`` otherwise). Raises ``ContainerNotFound``/``NetworkNotFound``.
    """
    container = _get_container(client, container_id)
    net = _get_network(client, network_name)
    if _attached(container, net):
        return
    try:
        net.connect(container.id, ipv4_address=ip, aliases=aliases)
    except docker.errors.NotFound as err:
        raise exception.NetworkNotFound(network=network_name) from err
    except docker.errors.APIError as err:
        raise _docker_error(err) from err


def disconnect(
    client: docker.DockerClient, container_id: str, network_name: str, force: bool = False
) -> None:
    """Detach a container from a network. Idempotent: a container or network that is gone, or
    a container that is not attached, is not an error."""
    try:
        container = client.containers.get(container_id)
        net = client.networks.get(network_name)
    except docker.errors.NotFound:
        return
    if not _attached(container, net):
        return
    try:
        net.disconnect(container.id, force=force)
    except docker.errors.NotFound:
        return
    except docker.errors.APIError as err:
        container.reload()
        if _attached(container, net):
            raise _docker_error(err) from err


def list_container_networks(client: docker.DockerClient, container_id: str) -> list[str]:
    """Sorted names of the networks a container is attached to."""
    container = _get_container(client, container_id)
    return sorted((container.attrs.get("NetworkSettings", {}).get("Networks") or {}).keys())


def addresses_for(
    client: docker.DockerClient, container_id: str, key_by: str = "name"
) -> dict[str, list[dict[str, Any]]]:
    """The container's Zun ``addresses`` (see :mod:`zun.network.addresses` for the mapping).

    Read it after the container has started: Docker assigns endpoints and IPs at start.
    """
    container = _get_container(client, container_id)
    return addresses_from_inspect(container.attrs, key_by=key_by)


def _network_view(net: Network) -> dict[str, Any]:
    labels = net.attrs.get("Labels") or {}
    return {
        "name": net.name,
        "network_id": net.id,
        "neutron_net_id": labels.get(LABEL_NEUTRON_NET) or net.id,
        "project_id": labels.get(LABEL_PROJECT),
        "user_id": labels.get(LABEL_USER),
        "subnets": [
            c.get("Subnet")
            for c in (net.attrs.get("IPAM") or {}).get("Config") or []
            if c.get("Subnet")
        ],
    }


def _managed_with_neutron_id(client: docker.DockerClient, neutron_net_id: str) -> list[Network]:
    nets = client.networks.list(filters={"label": f"{LABEL_NEUTRON_NET}={neutron_net_id}"})
    return [n for n in nets if _managed(n)]


def create_network(
    client: docker.DockerClient,
    name: str,
    neutron_net_id: str | None = None,
    project_id: str | None = None,
    user_id: str | None = None,
    cidr: str | None = None,
    gateway: str | None = None,
) -> dict[str, Any]:
    """Embedded equivalent of ``POST /v1/networks``: a Zun-managed Docker bridge network.

    ``neutron_net_id`` is kept as a label and is the network's public identifier (what
    ``DELETE /v1/networks/{id}`` takes); without one, the Docker network ID stands in for it.
    Idempotent per ``neutron_net_id``. ``cidr`` (and optionally ``gateway``) give the network
    an explicit subnet, which also makes fixed IPs possible.

    Returns the columns of the ``network`` table the node fills: ``name``, ``network_id``
    (Docker ID), ``neutron_net_id``, ``project_id``, ``user_id``, plus ``subnets`` (CIDRs).
    The caller adds ``uuid`` and ``host``. Raises ``NetworkAlreadyExists`` when the name is
    taken by another network, ``Invalid`` for a bad subnet.
    """
    name = name or neutron_net_id or ""
    if not name:
        raise exception.Invalid(message="A network needs a name or a neutron_net_id.")
    labels = {LABEL_MANAGED: "true"}
    for key, value in (
        (LABEL_PROJECT, project_id),
        (LABEL_USER, user_id),
        (LABEL_NEUTRON_NET, neutron_net_id),
    ):
        if value:
            labels[key] = str(value)
    ipam = None
    if cidr:
        ipam = docker.types.IPAMConfig(
            pool_configs=[docker.types.IPAMPool(subnet=cidr, gateway=gateway)]
        )
    with _lock_for(client, name):
        if neutron_net_id:
            existing = _managed_with_neutron_id(client, neutron_net_id)
            if existing:
                return _network_view(min(existing, key=_created_key))
        net = _create_or_adopt(client, name, labels, ipam=ipam)
        net.reload()
        if (
            neutron_net_id
            and (net.attrs.get("Labels") or {}).get(LABEL_NEUTRON_NET) != neutron_net_id
        ):
            raise exception.NetworkAlreadyExists(field="name", value=name)
        return _network_view(net)


def delete_network(client: docker.DockerClient, network_ident: str) -> bool:
    """Embedded equivalent of the node side of ``DELETE /v1/networks/{id}``.

    ``network_ident`` is the ``neutron_net_id`` given at creation, or a Docker network ID or
    name. Only Zun-managed networks are touched. Returns ``False`` when there is nothing to
    delete; raises ``Conflict`` while a container uses the network (the engine's endpoints
    being released are waited for, see :mod:`zun.network.network_removal`).
    """
    nets = _managed_with_neutron_id(client, network_ident)
    if not nets:
        try:
            net = client.networks.get(network_ident)
        except docker.errors.NotFound:
            return False
        if not _managed(net):
            return False
        nets = [net]
    removed = False
    for net in nets:
        with _lock_for(client, net.name):
            try:
                network_removal.remove(net, network_ident, lambda n=net: _network_in_use(client, n))
                removed = True
            except docker.errors.NotFound:
                continue
            except docker.errors.APIError as err:
                raise _docker_error(err) from err
    return removed
