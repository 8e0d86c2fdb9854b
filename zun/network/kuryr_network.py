"""Node side of the ``kuryr`` network driver: Neutron ports on Docker networks of kuryr-libnetwork.

Compatible with the original's networks on a node, so that Docker networks an original Zun made
keep working:

* a Neutron network is used through the Docker network **named after its id**, made with
  driver and IPAM ``[network]/driver_name`` (``kuryr``); driver options ``neutron.net.uuid``,
  ``neutron.net.shared``, ``neutron.subnet.uuid`` (and ``neutron.subnet.v6.uuid``), IPAM
  options ``neutron.net.shared`` and the subnet uuids, and one IPAM pool per subnet (its CIDR
  and gateway). kuryr then wraps the existing network and subnets instead of making new ones.
  :mod:`zun.network.kuryr_networks` makes, records and removes them (and adds the node's own
  Neutron subnet pool to the options);
* Zun makes the Neutron **port** itself (owner ``compute:kuryr``, device = the container's
  UUID, the container's project, its security groups, the requested fixed IP) and hands its
  addresses to Docker (and, on the first network, its MAC address); kuryr's IPAM finds the port
  by that address and binds it, its binding hook plugs the veth into the integration bridge.
  A port the user brought (``nets: [{"port": ...}]``) is used as it is and kept at delete
  (``preserve_on_delete``); the ports Zun made are deleted;
* ``exposed_ports`` become a security group ``zun-<container uuid>`` of the container's
  project with one ingress rule per port (from anywhere), added to the container's groups;
  nothing is published on the node.

A container's ``addresses`` are Neutron's: ``{<network id>: [{addr, version, port (the Neutron
port id), subnet_id, preserve_on_delete}]}``.

Neutron calls use zun's service credentials (:func:`zun.network.neutron.for_service`); the
API resolved what the user named with the user's token before anything reached the node.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import docker
import docker.errors

from zun.common import exception
from zun.network import mode
from zun.network.neutron import NeutronClient

LOG = logging.getLogger(__name__)

DEVICE_OWNER = "compute:kuryr"
EXPOSED_GROUP_PREFIX = "zun-"
SUBNET_OPTIONS = {4: "neutron.subnet.uuid", 6: "neutron.subnet.v6.uuid"}


@dataclass
class PortsTaken:
    """Ports and the exposed-ports group a create (or attach) made or took, to give back."""

    ports: list[tuple[str, bool]] = field(default_factory=list)  # (port id, preserve)
    exposed_group: str | None = None


# --- Docker networks --------------------------------------------------------------------------


def _subnet_of(subnets: list[dict[str, Any]], version: int) -> dict[str, Any] | None:
    mine = [s for s in subnets if s.get("ip_version") == version]
    if len(mine) > 1:
        raise exception.ZunException(
            message=f"Multiple Neutron subnets exist with ip version {version}"
        )
    return mine[0] if mine else None


def docker_network_spec(
    network: Mapping[str, Any], subnets: list[dict[str, Any]]
) -> dict[str, Any]:
    """The arguments of ``docker network create`` for a Neutron network, as the original
    made them (name = the Neutron id; kuryr's options; one IPAM pool per subnet)."""
    plugin = mode.plugin_name()
    net_id = str(network["id"])
    shared = str(bool(network.get("shared")))
    v4, v6 = _subnet_of(subnets, 4), _subnet_of(subnets, 6)
    if v4 is None and v6 is None:
        raise exception.Invalid(message=f"The Neutron network {net_id} has no subnet")
    options = {"neutron.net.uuid": net_id, "neutron.net.shared": shared}
    ipam_options = {"neutron.net.shared": shared}
    pools = []
    for subnet, key in ((v4, SUBNET_OPTIONS[4]), (v6, SUBNET_OPTIONS[6])):
        if subnet is None:
            continue
        options[key] = subnet["id"]
        ipam_options[key] = subnet["id"]
        pool = {"Subnet": subnet["cidr"]}
        if subnet.get("gateway_ip"):
            pool["Gateway"] = subnet["gateway_ip"]
        pools.append(pool)
    return {
        "name": net_id,
        "driver": plugin,
        "options": options,
        "enable_ipv6": v6 is not None,
        "ipam": {"Driver": plugin, "Options": ipam_options, "Config": pools},
    }


def docker_networks_named(client: docker.DockerClient, name: str) -> list[Any]:
    # The engine's name filter matches substrings: keep exact matches only.
    return [n for n in client.networks.list(names=[name]) if n.name == name]


def engine_error(err: docker.errors.APIError) -> exception.ZunException:
    words = str(err.explanation or err)
    if err.status_code in (400, 403, 409):
        return exception.Invalid(message=words)
    return exception.DockerError(error_msg=words)


# --- ports ------------------------------------------------------------------------------------


def addresses_of(port: Mapping[str, Any], preserve: bool) -> list[dict[str, Any]]:
    """Zun's address entries of a Neutron port."""
    return [
        {
            "addr": ip["ip_address"],
            "version": ipaddress.ip_address(ip["ip_address"]).version,
            "port": port["id"],
            "subnet_id": ip["subnet_id"],
            "preserve_on_delete": preserve,
        }
        for ip in port.get("fixed_ips") or []
    ]


def endpoint_of(addresses: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Docker endpoint settings (fixed addresses) of a port's address entries."""
    endpoint: dict[str, str] = {}
    for addr in addresses:
        key = "ipv4_address" if addr["version"] == 4 else "ipv6_address"
        endpoint.setdefault(key, addr["addr"])
    return endpoint


def take_port(
    neutron: NeutronClient,
    container_uuid: str,
    project_id: str | None,
    request: Mapping[str, Any],
    security_groups: list[str] | None,
    taken: PortsTaken,
) -> dict[str, Any]:
    """The Neutron port of one requested network: the user's (``port``), marked as the
    container's, or a new one. Recorded in ``taken`` before anything else can fail."""
    preserve = bool(request.get("preserve_on_delete"))
    if request.get("port"):
        body: dict[str, Any] = {"device_id": container_uuid, "device_owner": DEVICE_OWNER}
        port = neutron.update_port(str(request["port"]), body)
        taken.ports.append((port["id"], preserve))
        return port
    body = {
        "network_id": request["network"],
        "device_id": container_uuid,
        "device_owner": DEVICE_OWNER,
        "admin_state_up": True,
    }
    if project_id:
        body["project_id"] = project_id
    fixed_ip = request.get("fixed_ip")
    if fixed_ip:
        body["fixed_ips"] = [{"ip_address": fixed_ip}]
    if security_groups is not None:
        body["security_groups"] = list(security_groups)
    port = neutron.create_port(body)
    taken.ports.append((port["id"], preserve))
    return port


def release_ports(
    neutron: NeutronClient, ports: Iterable[tuple[str, bool]], strict: bool = False
) -> None:
    """Delete the ports Zun made; hand back (unbind) the ones the user brought. Never raises
    for a port that is gone; other failures are logged and the next port is tried, or
    raised when ``strict`` (a delete that must not forget a port)."""
    for port_id, preserve in ports:
        try:
            if preserve:
                neutron.update_port(
                    port_id, {"device_id": "", "device_owner": "", "binding:host_id": ""}
                )
            else:
                neutron.delete_port(port_id)
        except exception.PortNotFound:
            continue
        except Exception:
            if strict:
                raise
            LOG.warning("Could not release Neutron port %s", port_id, exc_info=True)


def ports_of(
    addresses: Mapping[str, Any] | None, network: str | None = None
) -> list[tuple[str, bool]]:
    """(port id, preserve) of stored addresses, of one network or of all."""
    seen: dict[str, bool] = {}
    for net, entries in (addresses or {}).items():
        if network is not None and net != network:
            continue
        for entry in entries or []:
            if entry.get("port"):
                seen.setdefault(entry["port"], bool(entry.get("preserve_on_delete")))
    return list(seen.items())


# --- exposed ports ----------------------------------------------------------------------------


def exposed_group_name(container_uuid: str) -> str:
    return f"{EXPOSED_GROUP_PREFIX}{container_uuid}"


def expose_ports(
    neutron: NeutronClient,
    container_uuid: str,
    project_id: str | None,
    exposed_ports: Mapping[str, Any],
    taken: PortsTaken,
) -> str:
    """The security group opening ``exposed_ports`` (``{"80/tcp": {}}``) to everybody."""
    group = neutron.create_security_group(
        exposed_group_name(container_uuid),
        project_id,
        description=f"Exposed ports of Zun container {container_uuid}",
    )
    taken.exposed_group = group["id"]
    for key in exposed_ports:
        port_text, _, proto = str(key).partition("/")
        for prefix, ethertype in (("0.0.0.0/0", "IPv4"), ("::/0", "IPv6")):
            neutron.create_security_group_rule(
                {
                    "security_group_id": group["id"],
                    "direction": "ingress",
                    "ethertype": ethertype,
                    "protocol": proto or "tcp",
                    "port_range_min": int(port_text),
                    "port_range_max": int(port_text),
                    "remote_ip_prefix": prefix,
                }
            )
    return str(group["id"])


def remove_exposed_group(
    neutron: NeutronClient, container_uuid: str, project_id: str | None, group_id: str | None = None
) -> None:
    """Delete the exposed-ports group of a container (by id, else by its name); never raises."""
    try:
        ids = (
            [group_id]
            if group_id
            else [
                g["id"]
                for g in neutron.security_groups(
                    name=exposed_group_name(container_uuid), project_id=project_id
                )
            ]
        )
        for ident in ids:
            neutron.delete_security_group(ident)
    except Exception:
        LOG.warning("Could not delete the exposed-ports group of %s", container_uuid, exc_info=True)


def release(
    neutron: NeutronClient, container_uuid: str, project_id: str | None, taken: PortsTaken
) -> None:
    """Give back what a failed create took (never raises)."""
    release_ports(neutron, taken.ports)
    if taken.exposed_group:
        remove_exposed_group(neutron, container_uuid, project_id, taken.exposed_group)
