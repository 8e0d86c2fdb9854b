"""Embedded networking on the real Docker engine, with real busybox containers."""

from __future__ import annotations

import ipaddress
import subprocess
import sys
import threading
import time
import urllib.request

import docker
import pytest

from zun.common import exception
from zun.network import docker_network as dn
from zun.network.addresses import network_list_entries, subnet_id

pytestmark = pytest.mark.docker

HTTP_SERVER = "mkdir -p /tmp/www && echo pong > /tmp/www/index.html && httpd -f -p 8080 -h /tmp/www"


def _ip_on(container, network_name: str) -> str:
    container.reload()
    return container.attrs["NetworkSettings"]["Networks"][network_name]["IPAddress"]


def _http_get_from(run_container, network: str, ip: str) -> tuple[int, str]:
    """Exit code and output of an HTTP GET sent with nc from a container on ``network``."""
    client = run_container(
        f"printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 {ip} 8080", network=network
    )
    code = client.wait(timeout=30)["StatusCode"]
    return code, client.logs().decode(errors="replace")


def _wait_listening(container, port: int = 8080) -> None:
    for _ in range(50):
        code, out = container.exec_run(["sh", "-c", f"netstat -ltn | grep -q ':{port} '"])
        if code == 0:
            return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port} in {container.name}")


def test_project_network_is_a_labelled_bridge_created_once(docker_client, new_project):
    project = new_project()
    net = dn.ensure_project_network(docker_client, project)
    assert net.name == f"zun-{project}"
    net.reload()
    assert net.attrs["Driver"] == "bridge"
    assert net.attrs["Labels"] == {"zun.managed": "true", "zun.project_id": project}
    assert net.attrs["Options"]["com.docker.network.bridge.enable_icc"] == "true"
    again = dn.ensure_project_network(docker_client, project)
    assert again.id == net.id
    assert [n.id for n in docker_client.networks.list() if n.name == net.name] == [net.id]


def test_same_project_reaches_other_project_does_not(docker_client, new_project, run_container):
    project_a, project_b = new_project(), new_project()
    net_a = dn.ensure_project_network(docker_client, project_a).name
    net_b = dn.ensure_project_network(docker_client, project_b).name
    server = run_container(HTTP_SERVER, network=net_a)
    _wait_listening(server)
    ip = _ip_on(server, net_a)

    code, out = _http_get_from(run_container, net_a, ip)
    assert code == 0 and "pong" in out, out

    code, out = _http_get_from(run_container, net_b, ip)
    assert code != 0 and "pong" not in out, out


def test_addresses_have_the_shape_clients_read(docker_client, new_project, run_container):
    project = new_project()
    net = dn.ensure_project_network(docker_client, project)
    net.reload()
    cidr = net.attrs["IPAM"]["Config"][0]["Subnet"]
    container = run_container("sleep 300", network=net.name)

    addresses = dn.addresses_for(docker_client, container.id)
    assert list(addresses) == [net.name]
    [entry] = addresses[net.name]
    assert set(entry) == {"addr", "version", "port", "subnet_id", "preserve_on_delete"}
    settings = container.attrs["NetworkSettings"]["Networks"][net.name]
    assert entry["addr"] == settings["IPAddress"]
    assert ipaddress.ip_address(entry["addr"]) in ipaddress.ip_network(cidr)
    assert entry["version"] == 4
    assert entry["port"] == settings["EndpointID"] and len(entry["port"]) == 64
    assert entry["subnet_id"] == subnet_id(net.id, cidr)
    assert entry["preserve_on_delete"] is False

    assert list(dn.addresses_for(docker_client, container.id, key_by="id")) == [net.id]
    assert network_list_entries(addresses) == [
        {
            "net_id": net.name,
            "port_id": entry["port"],
            "fixed_ips": [
                {"ip_address": entry["addr"], "version": 4, "subnet_id": entry["subnet_id"]}
            ],
        }
    ]


def test_created_container_lists_network_without_address(docker_client, new_project, run_container):
    net = dn.ensure_project_network(docker_client, new_project())
    container = run_container("sleep 300", start=False, network=net.name)
    assert dn.addresses_for(docker_client, container.id) == {net.name: []}
    container.start()
    assert len(dn.addresses_for(docker_client, container.id)[net.name]) == 1


def test_connect_and_disconnect(docker_client, new_project, run_container):
    net_a = dn.ensure_project_network(docker_client, new_project()).name
    net_b = dn.ensure_project_network(docker_client, new_project()).name
    container = run_container("sleep 300", network=net_a)

    dn.connect(docker_client, container.id, net_b)
    dn.connect(docker_client, container.id, net_b)  # already attached: no error
    assert dn.list_container_networks(docker_client, container.id) == sorted([net_a, net_b])
    addresses = dn.addresses_for(docker_client, container.id)
    assert set(addresses) == {net_a, net_b}
    assert addresses[net_a][0]["port"] != addresses[net_b][0]["port"]

    dn.disconnect(docker_client, container.id, net_b)
    assert dn.list_container_networks(docker_client, container.id) == [net_a]
    dn.disconnect(docker_client, container.id, net_b)  # not attached: no error
    dn.disconnect(docker_client, container.id, "zun-no-such-network")
    dn.disconnect(docker_client, "no-such-container-zun", net_a)


def test_connect_errors(docker_client, new_project, run_container):
    net = dn.ensure_project_network(docker_client, new_project()).name
    container = run_container("sleep 300", network=net)
    with pytest.raises(exception.NetworkNotFound):
        dn.connect(docker_client, container.id, "zun-no-such-network")
    with pytest.raises(exception.ContainerNotFound):
        dn.connect(docker_client, "no-such-container-zun", net)
    with pytest.raises(exception.ContainerNotFound):
        dn.list_container_networks(docker_client, "no-such-container-zun")
    other = dn.ensure_project_network(docker_client, new_project()).name
    # Docker-allocated subnets do not take fixed IPs: a clear 400, not a 500.
    with pytest.raises(exception.Invalid):
        dn.connect(docker_client, container.id, other, ip="10.254.0.5")


def test_fixed_ip_on_network_with_explicit_subnet(docker_client, network_names, run_container):
    name = f"zt-fixed-{time.monotonic_ns()}"
    network_names.append(name)
    view = dn.create_network(docker_client, name, cidr="10.213.7.0/24")
    assert view["subnets"] == ["10.213.7.0/24"]
    overlapping = f"{name}-overlap"
    network_names.append(overlapping)
    with pytest.raises(exception.Invalid):
        dn.create_network(docker_client, overlapping, cidr="10.213.7.128/25")
    container = run_container("sleep 300")
    dn.connect(docker_client, container.id, name, ip="10.213.7.42")
    [entry] = dn.addresses_for(docker_client, container.id)[name]
    assert entry["addr"] == "10.213.7.42"
    assert entry["subnet_id"] == subnet_id(view["network_id"], "10.213.7.0/24")


def test_published_port_reachable_from_loopback(docker_client, run_container):
    bindings = dn.port_bindings({"8080": {}}, host_ip="127.0.0.1")
    assert bindings == {"8080/tcp": ("127.0.0.1", None)}
    server = run_container(HTTP_SERVER, ports=bindings)
    _wait_listening(server)
    server.reload()
    published = dn.published_ports(server.attrs)
    [(host_ip, host_port)] = published["8080/tcp"]
    assert host_ip == "127.0.0.1" and host_port > 0
    with urllib.request.urlopen(f"http://127.0.0.1:{host_port}/", timeout=10) as resp:
        assert resp.read().strip() == b"pong"


def test_concurrent_ensure_ends_with_one_network(docker_client, new_project):
    project = new_project()
    threads_count = 8
    barrier = threading.Barrier(threads_count)
    results: list[str] = []
    errors: list[BaseException] = []

    def worker() -> None:
        client = docker.from_env()  # each thread its own connection, as separate workers do
        try:
            barrier.wait()
            results.append(dn.ensure_project_network(client, project).id)
        except BaseException as err:
            errors.append(err)
        finally:
            client.close()

    threads = [threading.Thread(target=worker) for _ in range(threads_count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    assert len(results) == threads_count and len(set(results)) == 1
    existing = [n.id for n in docker_client.networks.list() if n.name == f"zun-{project}"]
    assert existing == results[:1]


_ENSURE_IN_PROCESS = """
import sys, time, docker
from zun.network import docker_network as dn
client = docker.from_env()
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
print(dn.ensure_project_network(client, sys.argv[1]).id)
"""


def test_concurrent_ensure_from_processes_ends_with_one_network(docker_client, new_project):
    # Processes share no lock: the oldest-wins reconciliation alone must converge.
    project = new_project()
    start_at = time.time() + 4
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _ENSURE_IN_PROCESS, project, str(start_at)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    ids = {out.strip() for out, _ in outputs}
    existing = [n.id for n in docker_client.networks.list() if n.name == f"zun-{project}"]
    assert len(ids) == 1 and existing == list(ids)


def test_duplicate_made_elsewhere_resolves_to_the_oldest(docker_client, new_project):
    project = new_project()
    name = dn.project_network_name(project)
    labels = {"zun.managed": "true", "zun.project_id": project}
    # Another process raced past Docker's non-atomic name check: two networks of one name.
    first = docker_client.networks.create(name, driver="bridge", labels=labels)
    docker_client.networks.create(name, driver="bridge", labels=labels)
    for _ in range(3):
        assert dn.ensure_project_network(docker_client, project).id == first.id


def test_unmanaged_network_of_the_same_name_is_not_adopted(docker_client, new_project):
    project = new_project()
    docker_client.networks.create(dn.project_network_name(project), driver="bridge")
    with pytest.raises(exception.NetworkAlreadyExists):
        dn.ensure_project_network(docker_client, project)
    assert dn.remove_project_network_if_unused(docker_client, project) is False


def test_remove_project_network_only_when_unused(docker_client, new_project, run_container):
    project = new_project()
    net = dn.ensure_project_network(docker_client, project)
    # Created, never started: no endpoint yet, but removing the network would break its start.
    container = run_container("sleep 300", start=False, network=net.name)
    assert dn.remove_project_network_if_unused(docker_client, project) is False
    container.start()
    assert dn.remove_project_network_if_unused(docker_client, project) is False
    container.remove(force=True)
    assert dn.remove_project_network_if_unused(docker_client, project) is True
    assert not [n for n in docker_client.networks.list() if n.name == net.name]
    assert dn.remove_project_network_if_unused(docker_client, project) is False


def test_network_resource_create_and_delete(docker_client, network_names, run_container):
    name = f"zt-res-{time.monotonic_ns()}"
    network_names.append(name)
    neutron_id = "4b1a1e36-7dc7-4b5e-9b1f-9ad1f0b0c001"
    view = dn.create_network(
        docker_client, name, neutron_net_id=neutron_id, project_id="p1", user_id="u1"
    )
    assert view["name"] == name and view["neutron_net_id"] == neutron_id
    assert view["project_id"] == "p1" and view["user_id"] == "u1"
    assert len(view["network_id"]) == 64
    assert dn.create_network(docker_client, name, neutron_net_id=neutron_id) == view
    with pytest.raises(exception.NetworkAlreadyExists):
        dn.create_network(docker_client, name, neutron_net_id="another-neutron-id")

    container = run_container("sleep 300", network=name)
    with pytest.raises(exception.Conflict):
        dn.delete_network(docker_client, neutron_id)
    container.remove(force=True)
    assert dn.delete_network(docker_client, neutron_id) is True
    assert dn.delete_network(docker_client, neutron_id) is False
    with pytest.raises(docker.errors.NotFound):
        docker_client.networks.get(view["network_id"])


def test_network_resource_without_neutron_id_uses_docker_id(docker_client, network_names):
    name = f"zt-res-{time.monotonic_ns()}"
    network_names.append(name)
    view = dn.create_network(docker_client, name)
    assert view["neutron_net_id"] == view["network_id"]
    assert dn.delete_network(docker_client, view["network_id"]) is True


def test_delete_network_leaves_unmanaged_networks(docker_client, network_names):
    name = f"zt-plain-{time.monotonic_ns()}"
    network_names.append(name)
    plain = docker_client.networks.create(name, driver="bridge")
    assert dn.delete_network(docker_client, name) is False
    docker_client.networks.get(plain.id)
