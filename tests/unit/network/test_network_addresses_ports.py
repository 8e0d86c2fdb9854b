"""Pure parts of the embedded networking: address shapes, network_list, exposed ports."""

from __future__ import annotations

import uuid

import pytest

from zun.common import exception
from zun.network import docker_network as dn
from zun.network.addresses import addresses_from_inspect, network_list_entries, subnet_id
from zun.network.ports import normalize_exposed_ports, port_bindings, published_ports

NET_ID = "a" * 64
EP_ID = "e" * 64


def _inspect(**networks):
    return {"NetworkSettings": {"Networks": networks}}


def test_subnet_id_is_a_stable_uuid_per_network_and_cidr():
    first = subnet_id(NET_ID, "172.20.0.0/16")
    assert uuid.UUID(first).version == 5
    assert subnet_id(NET_ID, "172.20.0.0/16") == first
    assert subnet_id(NET_ID, "172.21.0.0/16") != first
    assert subnet_id("b" * 64, "172.20.0.0/16") != first


def test_addresses_from_inspect_ipv4_and_ipv6():
    attrs = _inspect(
        **{
            "zun-p1": {
                "NetworkID": NET_ID,
                "EndpointID": EP_ID,
                "IPAddress": "172.20.0.5",
                "IPPrefixLen": 16,
                "GlobalIPv6Address": "fd00::5",
                "GlobalIPv6PrefixLen": 64,
            }
        }
    )
    assert addresses_from_inspect(attrs) == {
        "zun-p1": [
            {
                "addr": "172.20.0.5",
                "version": 4,
                "port": EP_ID,
                "subnet_id": subnet_id(NET_ID, "172.20.0.0/16"),
                "preserve_on_delete": False,
            },
            {
                "addr": "fd00::5",
                "version": 6,
                "port": EP_ID,
                "subnet_id": subnet_id(NET_ID, "fd00::/64"),
                "preserve_on_delete": False,
            },
        ]
    }
    assert list(addresses_from_inspect(attrs, key_by="id")) == [NET_ID]


def test_addresses_from_inspect_without_endpoint_is_empty_list():
    attrs = _inspect(net={"NetworkID": "", "EndpointID": "", "IPAddress": ""})
    assert addresses_from_inspect(attrs) == {"net": []}
    assert addresses_from_inspect({}) == {}
    with pytest.raises(ValueError):
        addresses_from_inspect(attrs, key_by="port")


def test_network_list_entries_both_versions():
    addresses = {
        "n1": [
            {"addr": "10.0.0.2", "version": 4, "port": "p1", "subnet_id": "s4"},
            {"addr": "fd00::2", "version": 6, "port": "p1", "subnet_id": "s6"},
        ],
        "n2": [{"addr": "10.1.0.2", "version": 4, "port": "p2", "subnet_id": "s5"}],
    }
    assert network_list_entries(addresses) == [
        {
            "net_id": "n1",
            "port_id": "p1",
            "fixed_ips": [
                {"ip_address": "10.0.0.2", "version": 4, "subnet_id": "s4"},
                {"ip_address": "fd00::2", "version": 6, "subnet_id": "s6"},
            ],
        },
        {
            "net_id": "n2",
            "port_id": "p2",
            "fixed_ips": [{"ip_address": "10.1.0.2", "version": 4, "subnet_id": "s5"}],
        },
    ]
    assert network_list_entries(addresses, legacy=True) == [
        {
            "net_id": "n1",
            "port_id": "p1",
            "ip_address": "10.0.0.2",
            "version": 4,
            "subnet_id": "s4",
        },
        {"net_id": "n1", "port_id": "p1", "ip_address": "fd00::2", "version": 6, "subnet_id": "s6"},
        {
            "net_id": "n2",
            "port_id": "p2",
            "ip_address": "10.1.0.2",
            "version": 4,
            "subnet_id": "s5",
        },
    ]
    assert network_list_entries(None) == []


def test_port_bindings_publish_every_port_ephemerally():
    assert port_bindings({"80": {}, "53/udp": {}, "443/tcp": {"HostPort": "22"}}) == {
        "53/udp": ("0.0.0.0", None),
        "80/tcp": ("0.0.0.0", None),
        "443/tcp": ("0.0.0.0", None),
    }
    assert port_bindings({"8080/tcp": {}}, host_ip="127.0.0.1") == {"8080/tcp": ("127.0.0.1", None)}
    assert port_bindings(None) == {}
    assert normalize_exposed_ports({"80": {}, "80/tcp": {}, " 22": {}}) == ["22/tcp", "80/tcp"]


@pytest.mark.parametrize("key", ["80/sctp", "80/TCP", "abc", "0", "65536/udp", "-1", "", "80/"])
def test_port_bindings_reject_bad_keys(key):
    with pytest.raises(exception.InvalidValue):
        port_bindings({key: {}})


def test_published_ports_reads_inspect():
    attrs = {
        "NetworkSettings": {
            "Ports": {"80/tcp": [{"HostIp": "127.0.0.1", "HostPort": "49153"}], "81/tcp": None}
        }
    }
    assert published_ports(attrs) == {"80/tcp": [("127.0.0.1", 49153)]}


def test_security_groups_are_refused_clearly():
    dn.check_security_groups(None)
    dn.check_security_groups([])
    with pytest.raises(dn.SecurityGroupsNotSupported) as err:
        dn.check_security_groups(["default"])
    assert isinstance(err.value, exception.Invalid)
    assert err.value.code == 400
    assert "not supported" in str(err.value)
    assert err.value.error_code == "security-groups-not-supported"
