"""kuryr-libnetwork as scripts/openstack-services.sh runs it for this machine's dockerd: the
plugin answers, a Docker network of driver and IPAM ``kuryr`` wraps an existing Neutron network
the way Zun names and configures it, containers started on Neutron ports get them ACTIVE and
talk over ICMP and TCP (the binding hook turned checksum offload off), and removing everything
leaves Neutron as it was. Run with ``scripts/run-tests.sh -m neutron`` (starts the services)."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import Iterator
from typing import Any

import neutron_support
import openstack_env
import pytest

pytestmark = pytest.mark.neutron

PLUGIN_URL = "http://127.0.0.1:23750"


@pytest.fixture
def neutron(openstack_cloud: openstack_env.OpenStackCloud) -> Iterator[neutron_support.Neutron]:
    client = neutron_support.Neutron(openstack_cloud)
    yield client
    client.cleanup()


def test_status_lists_kuryr() -> None:
    out = openstack_env.script("status", timeout=60).stdout
    assert any(line.split()[:2] == ["kuryr", "running"] for line in out.splitlines()), out


def test_plugin_activates_as_network_and_ipam_driver() -> None:
    req = urllib.request.Request(f"{PLUGIN_URL}/Plugin.Activate", data=b"{}", method="POST")
    with urllib.request.urlopen(req, timeout=10) as resp:
        answer = json.load(resp)
    assert sorted(answer["Implements"]) == ["IpamDriver", "NetworkDriver"]
    with open("/etc/docker/plugins/kuryr.spec") as spec:
        assert spec.read().strip() == PLUGIN_URL


def _run_on_port(
    docker_client: Any, image: str, network: str, port: dict[str, Any], name: str
) -> Any:
    api = docker_client.api
    created = api.create_container(
        image,
        ["sleep", "600"],
        name=name,
        mac_address=port["mac_address"],
        host_config=api.create_host_config(network_mode=network),
        networking_config=api.create_networking_config(
            {network: api.create_endpoint_config(ipv4_address=port["fixed_ips"][0]["ip_address"])}
        ),
        labels={"zun-test": "kuryr-service"},
    )
    api.start(created["Id"])
    return docker_client.containers.get(created["Id"])


def _tx_checksumming(container: Any) -> str:
    pid = str(container.attrs["State"]["Pid"])
    out = subprocess.run(
        ["nsenter", "-t", pid, "-n", "ethtool", "-k", "eth0"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return next(
        line.split(":", 1)[1].strip()
        for line in out.splitlines()
        if line.startswith("tx-checksumming")
    )


def test_docker_network_on_neutron_ports(
    neutron: neutron_support.Neutron, docker_client: Any, busybox_image: str
) -> None:
    made = neutron.create_network("10.250.31.0/24")
    net, subnet = made["network"], made["subnet"]
    docker_net = None
    containers: list[Any] = []
    try:
        # Zun's naming and options: the Docker network is named after the Neutron network.
        docker_net = docker_client.networks.create(
            net["id"],
            driver="kuryr",
            options={
                "neutron.net.uuid": net["id"],
                "neutron.net.shared": "False",
                "neutron.subnet.uuid": subnet["id"],
            },
            ipam={
                "Driver": "kuryr",
                "Options": {"neutron.net.shared": "False", "neutron.subnet.uuid": subnet["id"]},
                "Config": [{"Subnet": subnet["cidr"], "Gateway": subnet["gateway_ip"]}],
            },
        )
        ports = [
            neutron.create_port(
                net["id"],
                device_owner="compute:kuryr",
                device_id=neutron_support.unique_name("device"),
            )
            for _ in range(2)
        ]
        for i, port in enumerate(ports):
            containers.append(
                _run_on_port(
                    docker_client,
                    busybox_image,
                    net["id"],
                    port,
                    neutron_support.unique_name(f"c{i}"),
                )
            )
        for port in ports:
            # kuryr waited for ACTIVE before Docker started the container (vif_plugging_is_fatal)
            assert neutron.port(port["id"])["status"] == "ACTIVE"
        assert _tx_checksumming(containers[0]) == "off"
        peer = ports[1]["fixed_ips"][0]["ip_address"]
        ping = containers[0].exec_run(["ping", "-c", "2", "-W", "3", peer])
        assert ping.exit_code == 0, ping.output
        containers[1].exec_run(["sh", "-c", "echo kuryr-tcp | nc -l -p 8080"], detach=True)
        tcp = containers[0].exec_run(["sh", "-c", f"sleep 1; nc -w 5 {peer} 8080"])
        assert tcp.output.strip() == b"kuryr-tcp", tcp.output
    finally:
        for container in containers:
            container.remove(force=True)
        if docker_net is not None:
            docker_net.remove()
    # kuryr let go of the existing network and of the ports it did not make
    shown = neutron.network(net["id"])
    assert shown is not None and not shown["tags"], shown
    for port in neutron.ports(network_id=net["id"]):
        assert port["status"] == "DOWN", port
    # and removed the subnet pool it made for the subnet's CIDR
    pools = neutron.session.get(f"{neutron.url}/subnetpools", params={"tags": subnet["id"]}).json()[
        "subnetpools"
    ]
    assert not pools, pools
