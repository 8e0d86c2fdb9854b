"""Exposed ports of the embedded mode: publishing on the node instead of security groups.

With Neutron, Zun opens a container's ``exposed_ports`` through a security group on the
container's own port. A Docker bridge network is not reachable from outside the node, so the
embedded mode publishes each exposed port on the node instead, on an ephemeral host port chosen
by Docker (read it back with :func:`published_ports`). The host address to bind is the caller's
choice: ``0.0.0.0`` (every interface) by default, ``127.0.0.1`` to keep it on the node. A host
port requested in the values of ``exposed_ports`` is deliberately ignored: letting users pick
node ports would let them squat on the node's services.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zun.common import exception

PROTOCOLS = ("tcp", "udp")


def _parse_key(key: str) -> tuple[int, str]:
    port_text, slash, proto = str(key).partition("/")
    proto = proto if slash else "tcp"
    if proto not in PROTOCOLS:
        raise exception.InvalidValue(message=f"value {proto} is an invalid protocol")
    try:
        port = int(port_text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise exception.InvalidValue(
            message=f"value {key} is invalid as publish port: must be 1-65535[/tcp|/udp]."
        )
    return port, proto


def normalize_exposed_ports(exposed_ports: Mapping[str, Any] | None) -> list[str]:
    """Sorted unique ``"<port>/<proto>"`` keys; raises ``InvalidValue`` for a bad key."""
    keys = {"{}/{}".format(*_parse_key(key)) for key in (exposed_ports or {})}
    return sorted(keys, key=lambda k: (int(k.split("/")[0]), k))


def port_bindings(
    exposed_ports: Mapping[str, Any] | None, host_ip: str = "0.0.0.0"
) -> dict[str, tuple[str, None]]:
    """Docker port bindings publishing every exposed port on ``host_ip``, host port ephemeral.

    The result fits both ``client.containers.create(ports=...)`` and the low-level
    ``create_host_config(port_bindings=...)`` (with ``create_container(ports=list(result))``).
    """
    return {key: (host_ip, None) for key in normalize_exposed_ports(exposed_ports)}


def published_ports(container_attrs: Mapping[str, Any]) -> dict[str, list[tuple[str, int]]]:
    """``{"80/tcp": [("127.0.0.1", 49153)]}`` from a *running* container's inspect data."""
    ports = (container_attrs.get("NetworkSettings") or {}).get("Ports") or {}
    result: dict[str, list[tuple[str, int]]] = {}
    for key, bindings in ports.items():
        if bindings:
            result[key] = [
                (b.get("HostIp", ""), int(b["HostPort"])) for b in bindings if b.get("HostPort")
            ]
    return result
