"""What the API makes of ``nets``, ``security_groups`` and ``network_attach`` with the kuryr
driver: everything the user names is looked up in Neutron **with the user's token** before
anything is stored or sent to a node, as the original did.

A requested network becomes ``{"network": <Neutron network id>, "port": <port id or "">,
"fixed_ip": <address or "">, "preserve_on_delete": bool, "router:external": bool, "shared":
bool}``: a port the user brings is checked (their project's, unbound, not in use) and kept at
delete; a network by name or id gets a new port; no ``nets`` at all picks the project's oldest
network, else the oldest shared one (409 when there is none). A fixed IP is checked against the
network's subnets (400) and the ports using it (409) so that the create answers at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from zun.common import exception, policy
from zun.network.neutron import NeutronClient


def _request(
    network: Mapping[str, Any], port: str = "", fixed_ip: str = "", preserve: bool = False
) -> dict[str, Any]:
    return {
        "network": network["id"],
        "port": port,
        "fixed_ip": fixed_ip,
        "preserve_on_delete": preserve,
        "router:external": bool(network.get("router:external")),
        "shared": bool(network.get("shared")),
    }


def build(
    context: Any, neutron: NeutronClient, nets: Iterable[Mapping[str, Any]] | None
) -> list[dict[str, Any]]:
    requests: list[dict[str, Any]] = []
    for net in nets or []:
        if net.get("port"):
            port = neutron.get_port(str(net["port"]))
            neutron.ensure_port_usable(port, context.project_id)
            network = neutron.get_network(port["network_id"])
            requests.append(_request(network, port=port["id"], preserve=True))
        elif net.get("network"):
            network = neutron.get_network(str(net["network"]))
            fixed_ip = str(
                net.get("fixed_ip") or net.get("v4-fixed-ip") or net.get("v6-fixed-ip") or ""
            )
            if fixed_ip:
                neutron.check_fixed_ip(network["id"], fixed_ip)
            requests.append(_request(network, fixed_ip=fixed_ip))
    if not requests:
        requests.append(_request(neutron.available_network(context.project_id)))
    check_external(context, requests)
    return requests


def check_external(context: Any, requests: Iterable[Mapping[str, Any]]) -> None:
    """403 for an external network that is not shared, unless policy allows attaching it."""
    for request in requests:
        if (
            request.get("router:external")
            and not request.get("shared")
            and not policy.authorize(context, "network:attach_external_network", fatal=False)
        ):
            raise exception.ExternalNetworkAttachForbidden(network_uuid=request["network"])


def security_group_ids(
    context: Any, neutron: NeutronClient, names: Iterable[str] | None
) -> list[str] | None:
    """Names or ids of the caller's security groups as ids (400 unknown, 409 ambiguous)."""
    if names is None:
        return None
    return list(
        dict.fromkeys(neutron.find_security_group(str(name), context.project_id) for name in names)
    )
