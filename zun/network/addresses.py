"""Container addresses in the shape Zun clients read, built from Docker's inspect data.

Zun stores a container's ``addresses`` as ``{<network>: [{addr, version, port, subnet_id,
preserve_on_delete}]}`` and derives ``GET .../network_list`` from it. In the embedded (Docker
bridge) mode there is no Neutron, so the identifiers are mapped as follows:

* network key: the Docker network **name** (``zun-<project_id>`` for project networks), or its
  Docker ID when asked (``key_by="id"``);
* ``port``: the Docker **endpoint ID** of the container on that network (one per attachment);
* ``subnet_id``: :func:`subnet_id` of the Docker network ID and the subnet CIDR, a UUID5, so it
  looks like a Neutron subnet ID and is stable for as long as the Docker network exists;
* ``preserve_on_delete``: always ``False`` (the endpoint goes away with the container).

These functions are pure: they work on dicts, so the API can use :func:`network_list_entries`
without talking to Docker.
"""

from __future__ import annotations

import ipaddress
import uuid
from collections.abc import Mapping
from typing import Any

# Fixed namespace: the same (network, cidr) always yields the same subnet_id on every node.
_SUBNET_NAMESPACE = uuid.UUID("5f1d3c62-58a6-4d0e-9a57-2f0e2a6d3b41")


def subnet_id(network_id: str, cidr: str) -> str:
    """Stable subnet identifier of a Docker subnet: ``uuid5(network_id + "/" + cidr)``."""
    return str(uuid.uuid5(_SUBNET_NAMESPACE, f"{network_id}/{cidr}"))


def _entry(network_id: str, endpoint_id: str, addr: str, prefix_len: int) -> dict[str, Any]:
    iface = ipaddress.ip_interface(f"{addr}/{prefix_len}")
    return {
        "addr": str(iface.ip),
        "version": iface.version,
        "port": endpoint_id,
        "subnet_id": subnet_id(network_id, str(iface.network)),
        "preserve_on_delete": False,
    }


def addresses_from_inspect(
    container_attrs: Mapping[str, Any], key_by: str = "name"
) -> dict[str, list[dict[str, Any]]]:
    """Build Zun ``addresses`` from ``docker inspect`` output of a container.

    A network the container is attached to but that has no address yet (a container that was
    created and never started has no endpoint) appears with an empty list.
    """
    if key_by not in ("name", "id"):
        raise ValueError(f"key_by must be 'name' or 'id', not {key_by!r}")
    networks = (container_attrs.get("NetworkSettings") or {}).get("Networks") or {}
    result: dict[str, list[dict[str, Any]]] = {}
    for name, info in networks.items():
        info = info or {}
        network_id = info.get("NetworkID") or ""
        key = name if key_by == "name" else (network_id or name)
        endpoint_id = info.get("EndpointID") or ""
        entries: list[dict[str, Any]] = []
        if info.get("IPAddress") and endpoint_id:
            entries.append(
                _entry(network_id, endpoint_id, info["IPAddress"], info.get("IPPrefixLen") or 32)
            )
        if info.get("GlobalIPv6Address") and endpoint_id:
            entries.append(
                _entry(
                    network_id,
                    endpoint_id,
                    info["GlobalIPv6Address"],
                    info.get("GlobalIPv6PrefixLen") or 128,
                )
            )
        result[key] = entries
    return result


def network_list_entries(
    addresses: Mapping[str, Any] | None, legacy: bool = False
) -> list[dict[str, Any]]:
    """``GET .../network_list`` entries from stored ``addresses``.

    ``legacy=True`` gives the 1.13-1.17 shape (one entry per address); otherwise the 1.18+ shape
    (one entry per port, its addresses in a ``fixed_ips`` list).
    """
    entries: list[dict[str, Any]] = []
    by_port: dict[tuple[str, str], dict[str, Any]] = {}
    for net_id, addrs in (addresses or {}).items():
        for addr in addrs or []:
            fixed_ip = {
                "ip_address": addr.get("addr"),
                "version": addr.get("version"),
                "subnet_id": addr.get("subnet_id"),
            }
            if legacy:
                entries.append({"net_id": net_id, "port_id": addr.get("port"), **fixed_ip})
                continue
            port_key = (net_id, addr.get("port"))
            if port_key not in by_port:
                by_port[port_key] = {"net_id": net_id, "port_id": addr.get("port"), "fixed_ips": []}
                entries.append(by_port[port_key])
            by_port[port_key]["fixed_ips"].append(fixed_ip)
    return entries
