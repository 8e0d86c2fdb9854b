"""One Neutron network across two nodes, through kuryr-libnetwork and Open vSwitch.

The plumbing of issue 13 point 5, proven on the nodes' engines directly (Docker networks with
kuryr's driver and IPAM, as zun's kuryr driver makes them): a container on node 1 reaches a
container on node 2 by its fixed IP (ICMP and TCP, over VXLAN between the nodes' userspace
Open vSwitches), and a security group without the rule blocks it until the rule is added.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from multinode.cluster import TEST_IMAGES, Cluster, Node

pytestmark = pytest.mark.neutron

LISTEN = "while true; do echo pong-$(hostname) | nc -l -p 8080; done"


@dataclass
class Net:
    """A Neutron network, its subnet and subnet pool, and the Docker network on each node."""

    name: str
    network_id: str
    subnet_id: str
    pool_id: str
    cidr: str


class NeutronApi:
    def __init__(self, cloud: Any) -> None:
        self.sess = cloud.session()
        self.url = (
            self.sess.get_endpoint(service_type="network", interface="public").rstrip("/") + "/v2.0"
        )

    def get(self, path: str, **params: Any) -> Any:
        return self.sess.get(self.url + path, params=params).json()

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self.sess.post(self.url + path, json=body).json()

    def put(self, path: str, body: dict[str, Any]) -> Any:
        return self.sess.put(self.url + path, json=body).json()

    def delete(self, path: str) -> None:
        self.sess.delete(self.url + path, raise_exc=False)


@pytest.fixture(scope="module")
def neutron(openstack_cloud: Any) -> NeutronApi:
    return NeutronApi(openstack_cloud)


@pytest.fixture(scope="module")
def shared_net(neutron_cluster: Cluster, neutron: NeutronApi) -> Iterator[Net]:
    """One Neutron network with a Docker network of kuryr's driver on every node."""
    from docker.types import IPAMConfig, IPAMPool

    assert neutron_cluster.fabric is not None
    name = f"zmn-{neutron_cluster.tag}-net"
    cidr = f"10.251.{neutron_cluster.fabric.octet}.0/24"  # 10.250.x: the kuryr tests
    gateway = cidr.replace(".0/24", ".1")
    # Our own subnet pool, named by kuryr's option: each node's kuryr then finds the same
    # pool instead of making one per node (and leaves it alone when the network goes).
    pool = neutron.post(
        "/subnetpools", {"subnetpool": {"name": name, "prefixes": [cidr], "default_prefixlen": 24}}
    )["subnetpool"]
    net = neutron.post("/networks", {"network": {"name": name}})["network"]
    subnet = neutron.post(
        "/subnets",
        {
            "subnet": {
                "name": name,
                "network_id": net["id"],
                "ip_version": 4,
                "cidr": cidr,
                "gateway_ip": gateway,
                "subnetpool_id": pool["id"],
                "enable_dhcp": False,
            }
        },
    )["subnet"]
    shared = Net(name, net["id"], subnet["id"], pool["id"], cidr)
    try:
        for node in neutron_cluster.nodes:
            client = node.engine()
            try:
                client.networks.create(
                    name,
                    driver="kuryr",
                    options={"neutron.net.uuid": net["id"], "neutron.pool.uuid": pool["id"]},
                    ipam=IPAMConfig(
                        driver="kuryr",
                        pool_configs=[IPAMPool(subnet=cidr, gateway=gateway)],
                        options={"neutron.pool.uuid": pool["id"]},
                    ),
                )
            finally:
                client.close()
        yield shared
    finally:
        for node in neutron_cluster.nodes:
            node.remove_engine_containers()
        for node in neutron_cluster.nodes:
            node.remove_engine_networks()
        for port in neutron.get("/ports", network_id=net["id"])["ports"]:
            neutron.delete(f"/ports/{port['id']}")
        neutron.delete(f"/networks/{net['id']}")
        neutron.delete(f"/subnetpools/{pool['id']}")


@pytest.fixture
def closed_group(neutron: NeutronApi, neutron_cluster: Cluster) -> Iterator[dict[str, Any]]:
    """A security group with no ingress rule (Neutron adds only the egress ones)."""
    group = neutron.post(
        "/security-groups",
        {"security_group": {"name": f"zmn-{neutron_cluster.tag}-closed-{uuid.uuid4().hex[:6]}"}},
    )["security_group"]
    yield group
    # A group in use cannot go: first the containers, then the ports still in the group
    # (kuryr keeps a port it did not make when its container goes).
    for node in neutron_cluster.nodes:
        node.remove_engine_containers()
    for port in neutron.get("/ports", security_groups=group["id"])["ports"]:
        neutron.delete(f"/ports/{port['id']}")
    neutron.delete(f"/security-groups/{group['id']}")


@pytest.fixture(autouse=True)
def no_containers(neutron_cluster: Cluster) -> Iterator[None]:
    yield
    for node in neutron_cluster.nodes:
        node.remove_engine_containers()


def run(node: Node, net: Net, command: str, ip: str | None = None) -> str:
    """Start a busybox container on ``node`` in ``net``; returns its id."""
    client = node.engine()
    try:
        api = client.api
        endpoint = api.create_endpoint_config(ipv4_address=ip or None)
        created = api.create_container(
            TEST_IMAGES[0],
            ["sh", "-c", command],
            name=f"{net.name}-{uuid.uuid4().hex[:6]}",
            host_config=api.create_host_config(network_mode=net.name),
            networking_config=api.create_networking_config({net.name: endpoint}),
        )
        api.start(created["Id"])
        return created["Id"]
    finally:
        client.close()


def fixed_ip(node: Node, container: str, net: Net) -> str:
    client = node.engine()
    try:
        info = client.api.inspect_container(container)
        return info["NetworkSettings"]["Networks"][net.name]["IPAddress"]
    finally:
        client.close()


def execute(node: Node, container: str, command: str) -> tuple[int, str]:
    client = node.engine()
    try:
        result = client.containers.get(container).exec_run(["sh", "-c", command])
        return result.exit_code, result.output.decode(errors="replace")
    finally:
        client.close()


def pings(node: Node, container: str, ip: str, attempts: int) -> bool:
    """Whether ``ip`` answers a ping from ``container`` within ``attempts`` tries (retried:
    the first packets of a new flow may meet the learning of the remote bridge)."""
    for _ in range(attempts):
        if execute(node, container, f"ping -c 1 -W 1 {ip}")[0] == 0:
            return True
    return False


def connects(node: Node, container: str, ip: str, attempts: int) -> bool:
    """Whether TCP 8080 of ``ip`` answers ``container`` within ``attempts`` tries."""
    for _ in range(attempts):
        if "pong" in execute(node, container, f"nc -w 1 {ip} 8080 </dev/null")[1]:
            return True
        time.sleep(0.5)
    return False


def port_of(neutron: NeutronApi, net: Net, ip: str) -> dict[str, Any]:
    ports = neutron.get("/ports", network_id=net.network_id, fixed_ips=f"ip_address={ip}")["ports"]
    assert len(ports) == 1, ports
    return ports[0]


def new_port(neutron: NeutronApi, net: Net) -> dict[str, Any]:
    """A port of ``net`` in the project's default group (whose ingress rule admits members
    of the group), to hand to kuryr by its fixed IP."""
    return neutron.post(
        "/ports",
        {"port": {"network_id": net.network_id, "fixed_ips": [{"subnet_id": net.subnet_id}]}},
    )["port"]


def wait_active(neutron: NeutronApi, port_id: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while neutron.get(f"/ports/{port_id}")["port"]["status"] != "ACTIVE":
        assert time.monotonic() < deadline, f"port {port_id} not ACTIVE within {timeout}s"
        time.sleep(0.1)


def test_container_reaches_container_on_other_node_by_fixed_ip(
    neutron_cluster: Cluster, shared_net: Net, neutron: NeutronApi
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    node1, node2 = neutron_cluster.nodes
    server_port = new_port(neutron, shared_net)
    server_ip = server_port["fixed_ips"][0]["ip_address"]
    # The client's port joins the group the moment the server's goes ACTIVE: on a fresh
    # fabric that is when the server node's agent lost the new member's firewall flows to
    # its stale-flow cleanup (multinode/neutron.py, plant_cleanup_probe).
    with ThreadPoolExecutor(1) as pool:
        starting = pool.submit(run, node2, shared_net, LISTEN, server_ip)
        wait_active(neutron, server_port["id"])
        client_port = new_port(neutron, shared_net)
        starting.result()
    client_ip = client_port["fixed_ips"][0]["ip_address"]
    client = run(node1, shared_net, "sleep 600", ip=client_ip)

    # Each container has its Neutron port, bound to its own node's agent.
    for made, node in ((server_port, node2), (client_port, node1)):
        port = neutron.get(f"/ports/{made['id']}")["port"]
        assert port["binding:host_id"] == node.name
        assert port["status"] == "ACTIVE"
        assert port["security_groups"] == server_port["security_groups"]

    # Each agent's stale-flow cleanup ran before it set up the firewall of any workload port
    # (multinode/neutron.py, plant_cleanup_probe).
    for node in neutron_cluster.nodes:
        assert node.network is not None and node.network.filtered_before_cleanup() == []

    assert pings(node1, client, server_ip, attempts=10)
    assert connects(node1, client, server_ip, attempts=10)
    # ... and deleted no flow of the agent's own.
    for node in neutron_cluster.nodes:
        assert node.network is not None and node.network.cleaned_cookies() == set()


def test_security_group_without_the_rule_blocks(
    neutron_cluster: Cluster, shared_net: Net, neutron: NeutronApi, closed_group: dict[str, Any]
) -> None:
    node1, node2 = neutron_cluster.nodes
    # The server's port is made first, in the closed group, and handed to kuryr by its
    # fixed IP (as zun does with the ports it makes). Neutron picks the address: a fixed one
    # (it was .200) could already be an earlier test's container's, picked at random (409).
    port = neutron.post(
        "/ports",
        {
            "port": {
                "network_id": shared_net.network_id,
                "security_groups": [closed_group["id"]],
                "fixed_ips": [{"subnet_id": shared_net.subnet_id}],
            }
        },
    )["port"]
    ip = port["fixed_ips"][0]["ip_address"]
    server = run(node2, shared_net, LISTEN, ip=ip)
    client = run(node1, shared_net, "sleep 600")
    assert fixed_ip(node2, server, shared_net) == ip
    bound = port_of(neutron, shared_net, ip)
    assert bound["id"] == port["id"]
    assert bound["binding:host_id"] == node2.name
    assert bound["security_groups"] == [closed_group["id"]]

    started = time.monotonic()
    assert not pings(node1, client, ip, attempts=3)
    assert not connects(node1, client, ip, attempts=3)
    print(f"blocked check: {time.monotonic() - started:.1f}s")
    started = time.monotonic()

    # The rule opens TCP 8080 from the network's CIDR only: the group, not the network, was
    # what blocked, and an explicit CIDR rule (no remote group) lets the client in.
    neutron.post(
        "/security-group-rules",
        {
            "security_group_rule": {
                "security_group_id": closed_group["id"],
                "direction": "ingress",
                "ethertype": "IPv4",
                "protocol": "tcp",
                "port_range_min": 8080,
                "port_range_max": 8080,
                "remote_ip_prefix": shared_net.cidr,
            }
        },
    )
    assert connects(node1, client, ip, attempts=40)
    applied = time.monotonic() - started
    assert not pings(node1, client, ip, attempts=2)
    print(f"rule applied: {applied:.1f}s")


# The child builds a Neutron cluster and waits to be killed, as a test run that died.
_KILLED_RUN = """
import sys, time
sys.path.insert(0, sys.argv[1])
import openstack_env
from multinode.cluster import Cluster
from docker.types import IPAMConfig, IPAMPool
cloud = openstack_env.running_cloud()
cluster = Cluster(nodes=2, openstack=cloud)
cluster.start()
# What a test leaves when its run dies: a network with a container on kuryr's Docker network
# (kuryr made a subnet pool for it), a security group.
sess = cloud.session()
url = sess.get_endpoint(service_type="network", interface="public").rstrip("/") + "/v2.0"
name = f"zmn-{cluster.tag}-net"
cidr = f"10.253.{cluster.fabric.octet}.0/24"
net = sess.post(url + "/networks", json={"network": {"name": name}}).json()["network"]
sess.post(url + "/subnets", json={"subnet": {"network_id": net["id"], "ip_version": 4,
                                             "cidr": cidr, "enable_dhcp": False}})
sess.post(url + "/security-groups", json={"security_group": {"name": name}})
engine = cluster.nodes[0].engine()
engine.networks.create(name, driver="kuryr", options={"neutron.net.uuid": net["id"]},
                       ipam=IPAMConfig(driver="kuryr", pool_configs=[IPAMPool(subnet=cidr)]))
engine.containers.run("busybox", ["sleep", "600"], network=name, detach=True)
print(cluster.tag, flush=True)
time.sleep(600)
"""


def _octet(tag: str) -> int:
    from multinode.neutron import Fabric

    return Fabric.octet_of(tag)


def test_sweep_removes_what_a_killed_run_left(
    neutron_cluster: Cluster, neutron: NeutronApi
) -> None:
    import json
    import subprocess
    import sys
    from pathlib import Path

    from multinode.cluster import STATE_ROOT, sweep_stale

    tests_dir = str(Path(__file__).resolve().parents[1])
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_RUN, tests_dir],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        tag = child.stdout.readline().strip()
        assert tag, child.stderr.read() if child.stderr else ""
        owner = json.loads((STATE_ROOT / tag / "owner.json").read_text())
        hosts = owner["neutron_hosts"]
        assert len(hosts) == 2 and f"zmn-{tag}-ul" in owner["netns"]
        assert {a["host"] for a in neutron.get("/agents")["agents"]} >= set(hosts)
        assert neutron.get("/networks", name=f"zmn-{tag}-net")["networks"]
        pools = neutron.get("/subnetpools")["subnetpools"]
        assert f"kuryrPool-10.253.{_octet(tag)}.0/24" in {p["name"] for p in pools}
    finally:
        child.kill()
        child.wait()

    swept = sweep_stale()
    assert tag in swept
    assert neutron_cluster.tag not in swept  # its owner (this process) is alive
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"zmn-{tag}-" not in namespaces
    assert not (STATE_ROOT / tag).exists()
    leftovers = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and tag.encode() in (proc / "cmdline").read_bytes():
                leftovers.append((proc / "cmdline").read_bytes())
        except OSError:
            continue
    assert leftovers == []
    assert not {a["host"] for a in neutron.get("/agents")["agents"]} & set(hosts)
    assert not neutron.get("/networks", name=f"zmn-{tag}-net")["networks"]
    assert not neutron.get("/security-groups", name=f"zmn-{tag}-net")["security_groups"]
    assert not [p for p in neutron.get("/ports")["ports"] if p["binding:host_id"] in hosts]
    cidr = f"10.253.{_octet(tag)}.0/24"
    assert not neutron.get("/subnetpools", name=f"kuryrPool-{cidr}")["subnetpools"]
    # The live cluster is untouched.
    assert all(
        node.network is not None and node.network.kuryr_answers() for node in neutron_cluster.nodes
    )
