"""The pure parts of the kuryr driver: the original's Docker network arguments for a Neutron
network, address entries of a port, endpoints and the ports of stored addresses. The parts
that talk to Neutron, kuryr and Docker run against the real services in
tests/functional/network/test_kuryr_driver.py (-m neutron)."""

from __future__ import annotations

import pytest

from zun.common import exception
from zun.network import kuryr_network

NET = {"id": "5b1e0f4e-0c2a-4f57-9a43-3d6f1d2c9a10", "shared": False}
V4 = {"id": "sub-4", "ip_version": 4, "cidr": "10.1.0.0/24", "gateway_ip": "10.1.0.1"}
V6 = {"id": "sub-6", "ip_version": 6, "cidr": "fd00::/64", "gateway_ip": "fd00::1"}


def test_docker_network_spec_is_the_originals() -> None:
    spec = kuryr_network.docker_network_spec(NET, [V4])
    assert spec["name"] == NET["id"] and spec["driver"] == "kuryr"
    assert spec["options"] == {
        "neutron.net.uuid": NET["id"],
        "neutron.net.shared": "False",
        "neutron.subnet.uuid": "sub-4",
    }
    assert spec["ipam"] == {
        "Driver": "kuryr",
        "Options": {"neutron.net.shared": "False", "neutron.subnet.uuid": "sub-4"},
        "Config": [{"Subnet": "10.1.0.0/24", "Gateway": "10.1.0.1"}],
    }
    assert spec["enable_ipv6"] is False


def test_docker_network_spec_dual_stack_and_refusals() -> None:
    spec = kuryr_network.docker_network_spec({**NET, "shared": True}, [V4, V6])
    assert spec["options"]["neutron.subnet.v6.uuid"] == "sub-6"
    assert spec["ipam"]["Options"]["neutron.net.shared"] == "True"
    assert [c["Subnet"] for c in spec["ipam"]["Config"]] == ["10.1.0.0/24", "fd00::/64"]
    assert spec["enable_ipv6"] is True
    with pytest.raises(exception.Invalid, match="has no subnet"):
        kuryr_network.docker_network_spec(NET, [])
    with pytest.raises(exception.ZunException, match="Multiple Neutron subnets"):
        kuryr_network.docker_network_spec(NET, [V4, {**V4, "id": "other"}])


def test_addresses_endpoint_and_ports_of() -> None:
    port = {
        "id": "p1",
        "fixed_ips": [
            {"ip_address": "10.1.0.5", "subnet_id": "sub-4"},
            {"ip_address": "fd00::5", "subnet_id": "sub-6"},
        ],
    }
    addrs = kuryr_network.addresses_of(port, preserve=True)
    assert addrs == [
        {
            "addr": "10.1.0.5",
            "version": 4,
            "port": "p1",
            "subnet_id": "sub-4",
            "preserve_on_delete": True,
        },
        {
            "addr": "fd00::5",
            "version": 6,
            "port": "p1",
            "subnet_id": "sub-6",
            "preserve_on_delete": True,
        },
    ]
    assert kuryr_network.endpoint_of(addrs) == {
        "ipv4_address": "10.1.0.5",
        "ipv6_address": "fd00::5",
    }
    stored = {"net-a": addrs, "net-b": [{"port": "p2", "preserve_on_delete": False}]}
    assert kuryr_network.ports_of(stored) == [("p1", True), ("p2", False)]
    assert kuryr_network.ports_of(stored, "net-b") == [("p2", False)]
    assert kuryr_network.ports_of(None) == []
