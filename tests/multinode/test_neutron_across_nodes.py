"""Issue 13 point 5 through zun's API: one Neutron network, containers on two nodes.

The cluster runs as a deployment on the local OpenStack does (``neutron_cluster``: Keystone
auth, ``[network]/driver = kuryr``, every node with its own Open vSwitch, OVS agent and
kuryr-libnetwork, VXLAN between the nodes). The containers are created through the API with
``nets`` and ``security_groups``, placed with ``host`` (admin, 1.39+), and probed with the
API's ``execute``: a container on node 1 reaches a container on node 2 by its fixed IP, and a
security group without the rule blocks it until the rule is added. Nothing is left in Neutron.

The probe is TCP (busybox ``nc``): containers made by zun have no NET_RAW capability (the
hardening drops it), so ``ping`` answers "permission denied" there. ICMP across nodes is
covered on the engines directly (test_neutron_fabric.py).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import neutron_support
import pytest
from multinode.cluster import Cluster

pytestmark = pytest.mark.neutron

LISTEN = "while true; do echo pong-$(hostname) | nc -l -p 8080; done"


@pytest.fixture
def env(neutron_cluster: Cluster, openstack_cloud: Any) -> Iterator[SimpleNamespace]:
    """A Neutron network of the admin's project (10.252.x/24) and a port ledger."""
    assert neutron_cluster.fabric is not None
    neutron = neutron_support.Neutron(openstack_cloud)
    cidr = f"10.252.{neutron_cluster.fabric.octet}.0/24"
    net = neutron.create_network(cidr, name=f"zmn-{neutron_cluster.tag}-api-net")
    zun = neutron_cluster.client("1.40")
    env = SimpleNamespace(
        neutron=neutron, zun=zun, net=net["network"], subnet=net["subnet"], cidr=cidr, containers=[]
    )
    before = neutron.port_ids([env.net["id"]])
    try:
        yield env
    finally:
        try:
            neutron_cluster.delete_containers(zun, env.containers, stop=True)
            neutron_support.assert_no_port_leaked(neutron, [env.net["id"]], before)
        finally:
            # The Docker networks of kuryr on each node, then what the test made in Neutron.
            for node in neutron_cluster.nodes:
                node.remove_engine_networks()
            neutron.cleanup([env.net["id"]])


def run_on(env: SimpleNamespace, host: str, command: str, **kwargs: Any) -> Any:
    """Create and start a busybox container on ``host``; wait until it runs."""
    created = env.zun.containers.run(
        name=f"zmn-{uuid.uuid4().hex[:8]}",
        image="busybox",
        command=["sh", "-c", command],
        image_pull_policy="ifnotpresent",
        host=host,
        **kwargs,
    )
    env.containers.append(created.uuid)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ct = env.zun.containers.get(created.uuid)
        if ct.status == "Running":
            return ct
        assert ct.status not in ("Error", "Stopped"), (ct.status, ct.status_reason)
        time.sleep(0.5)
    raise AssertionError(f"container {created.uuid} not Running: {ct.status}")


def fixed_ips(ct: Any, network_id: str) -> list[str]:
    return [a["addr"] for a in ct.addresses.get(network_id, []) if a.get("version") == 4]


def execute(env: SimpleNamespace, ct: Any, command: str) -> tuple[int, str]:
    out = env.zun.containers.execute(ct.uuid, command=f"sh -c '{command}'", run=True)
    return out["exit_code"], out["output"]


def connects(env: SimpleNamespace, ct: Any, ip: str, attempts: int) -> bool:
    for _ in range(attempts):
        if "pong" in execute(env, ct, f"nc -w 1 {ip} 8080 </dev/null")[1]:
            return True
        time.sleep(0.5)
    return False


def test_container_on_node1_reaches_container_on_node2_by_fixed_ip(
    neutron_cluster: Cluster, env: SimpleNamespace
) -> None:
    node1, node2 = neutron_cluster.nodes
    nets = [{"network": env.net["id"]}]
    # Both in the project's default group, whose ingress rule admits members of the group:
    # the server's node lets the client in only once it knows the client as a member.
    server = run_on(env, node2.name, LISTEN, nets=nets)
    client = run_on(env, node1.name, "sleep 600", nets=nets)
    assert server.host == node2.name and client.host == node1.name
    (server_ip,) = fixed_ips(server, env.net["id"])
    (client_ip,) = fixed_ips(client, env.net["id"])

    # Each address is a Neutron port bound to its own node's agent, and ACTIVE.
    groups = []
    for ct, ip, node in ((server, server_ip, node2), (client, client_ip, node1)):
        (port,) = env.neutron.ports(network_id=env.net["id"], fixed_ips=f"ip_address={ip}")
        assert port["binding:host_id"] == node.name
        assert port["device_id"] == ct.uuid
        assert port["status"] == "ACTIVE"
        groups.append(port["security_groups"])
    assert groups[0] == groups[1] and len(groups[0]) == 1

    # Each agent's stale-flow cleanup ran before it set up the firewall of any workload port
    # (multinode/neutron.py, plant_cleanup_probe).
    for node in neutron_cluster.nodes:
        assert node.network is not None and node.network.filtered_before_cleanup() == []

    assert connects(env, client, server_ip, attempts=20)
    # ... and deleted no flow of the agent's own.
    for node in neutron_cluster.nodes:
        assert node.network is not None and node.network.cleaned_cookies() == set()


def test_a_security_group_without_the_rule_blocks_across_nodes(
    neutron_cluster: Cluster, env: SimpleNamespace
) -> None:
    node1, node2 = neutron_cluster.nodes
    closed = env.neutron.create_security_group(name=f"zmn-{neutron_cluster.tag}-closed")
    nets = [{"network": env.net["id"]}]
    server = run_on(env, node2.name, LISTEN, nets=nets, security_groups=[closed["id"]])
    client = run_on(env, node1.name, "sleep 600", nets=nets)
    (server_ip,) = fixed_ips(server, env.net["id"])
    (port,) = env.neutron.ports(network_id=env.net["id"], fixed_ips=f"ip_address={server_ip}")
    assert port["security_groups"] == [closed["id"]]

    assert not connects(env, client, server_ip, attempts=3)

    # With a rule for the network's CIDR (no remote group) the same connection works: the
    # group, not the network, was what blocked.
    env.neutron._post(
        "security-group-rules",
        {
            "security_group_rule": {
                "security_group_id": closed["id"],
                "direction": "ingress",
                "ethertype": "IPv4",
                "protocol": "tcp",
                "port_range_min": 8080,
                "port_range_max": 8080,
                "remote_ip_prefix": env.cidr,
            }
        },
    )
    assert connects(env, client, server_ip, attempts=40)
