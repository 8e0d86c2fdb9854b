"""scripts/openstack-services.sh against its real services: Keystone, Neutron with the OVS agent,
Placement and Glance. Run with ``scripts/run-tests.sh -m openstack`` (starts them first)."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import uuid
from typing import Any

import openstack_env
import pytest

pytestmark = pytest.mark.openstack

PLACEMENT_VERSION = {"OpenStack-API-Version": "placement 1.20"}


def _endpoint(cloud: openstack_env.OpenStackCloud, service_type: str) -> str:
    return cloud.session().get_endpoint(service_type=service_type, interface="public")


def _name(kind: str) -> str:
    return f"zun-test-{kind}-{uuid.uuid4().hex[:8]}"


def test_keystone_token_and_catalog(openstack_cloud: openstack_env.OpenStackCloud) -> None:
    sess = openstack_cloud.session()
    assert sess.get_token()
    for service_type in ("identity", "network", "placement", "image"):
        url = _endpoint(openstack_cloud, service_type)
        assert url.startswith("http://127.0.0.1:"), (service_type, url)


def test_service_users_can_authenticate(openstack_cloud: openstack_env.OpenStackCloud) -> None:
    # zun-api's [keystone_authtoken] and zun-compute's [keystone_auth] use the `zun` user.
    password = openstack_cloud.env["ZUN_OS_SERVICE_PASSWORD"]
    for user in ("zun", "neutron", "placement", "glance"):
        assert openstack_cloud.session(user, password, "service").get_token()


def test_neutron_network_and_port(openstack_cloud: openstack_env.OpenStackCloud) -> None:
    sess = openstack_cloud.session()
    url = _endpoint(openstack_cloud, "network").rstrip("/") + "/v2.0"
    net = sess.post(f"{url}/networks", json={"network": {"name": _name("net")}}).json()["network"]
    try:
        assert net["provider:network_type"] == "vxlan"
        subnet = sess.post(
            f"{url}/subnets",
            json={"subnet": {"network_id": net["id"], "ip_version": 4, "cidr": "10.251.0.0/24"}},
        ).json()["subnet"]
        port = sess.post(
            f"{url}/ports", json={"port": {"network_id": net["id"], "name": _name("port")}}
        ).json()["port"]
        assert port["fixed_ips"][0]["subnet_id"] == subnet["id"]
        assert port["fixed_ips"][0]["ip_address"].startswith("10.251.0.")
        sess.delete(f"{url}/ports/{port['id']}")
        assert sess.get(f"{url}/ports/{port['id']}", raise_exc=False).status_code == 404
    finally:
        sess.delete(f"{url}/networks/{net['id']}", raise_exc=False)
    assert sess.get(f"{url}/networks/{net['id']}", raise_exc=False).status_code == 404


def test_ovs_agent_alive(openstack_cloud: openstack_env.OpenStackCloud) -> None:
    sess = openstack_cloud.session()
    url = _endpoint(openstack_cloud, "network").rstrip("/") + "/v2.0"
    agents = sess.get(f"{url}/agents", params={"agent_type": "Open vSwitch agent"}).json()
    assert [a for a in agents["agents"] if a["alive"] and a["admin_state_up"]], agents
    bridges = subprocess.run(
        ["ovs-vsctl", "list-br"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "br-int" in bridges
    datapath = subprocess.run(
        ["ovs-vsctl", "get", "bridge", "br-int", "datapath_type"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert datapath == "netdev"


def test_placement_resource_providers(openstack_cloud: openstack_env.OpenStackCloud) -> None:
    sess = openstack_cloud.session()
    url = _endpoint(openstack_cloud, "placement").rstrip("/")
    name = _name("rp")
    rp_uuid = str(uuid.uuid4())
    resp = sess.post(
        f"{url}/resource_providers",
        json={"name": name, "uuid": rp_uuid},
        headers=PLACEMENT_VERSION,
    )
    assert resp.status_code == 200, resp.text
    try:
        listed = sess.get(f"{url}/resource_providers", headers=PLACEMENT_VERSION).json()
        assert rp_uuid in {rp["uuid"] for rp in listed["resource_providers"]}
    finally:
        sess.delete(f"{url}/resource_providers/{rp_uuid}", headers=PLACEMENT_VERSION)
    gone = sess.get(
        f"{url}/resource_providers/{rp_uuid}", headers=PLACEMENT_VERSION, raise_exc=False
    )
    assert gone.status_code == 404


def _glance_roundtrip(sess: Any, url: str, data: bytes) -> None:
    image = sess.post(
        f"{url}/v2/images",
        json={"name": _name("image"), "container_format": "docker", "disk_format": "raw"},
    ).json()
    try:
        sess.put(
            f"{url}/v2/images/{image['id']}/file",
            data=data,
            headers={"Content-Type": "application/octet-stream"},
        )
        shown = sess.get(f"{url}/v2/images/{image['id']}").json()
        assert shown["status"] == "active"
        assert shown["size"] == len(data)
        body = sess.get(f"{url}/v2/images/{image['id']}/file").content
        assert hashlib.sha256(body).digest() == hashlib.sha256(data).digest()
    finally:
        sess.delete(f"{url}/v2/images/{image['id']}", raise_exc=False)
    assert sess.get(f"{url}/v2/images/{image['id']}", raise_exc=False).status_code == 404


def test_glance_upload_download_delete(openstack_cloud: openstack_env.OpenStackCloud) -> None:
    # 3 MiB: several chunks through uwsgi's chunked input and Glance's file store.
    _glance_roundtrip(
        openstack_cloud.session(),
        _endpoint(openstack_cloud, "image").rstrip("/"),
        os.urandom(3 * 1024 * 1024 + 17),
    )


def _group_pids(pgid: int) -> set[int]:
    out = subprocess.run(
        ["ps", "-e", "-o", "pid=,pgid="], capture_output=True, text=True, check=True
    ).stdout
    return {int(p) for p, g in (line.split() for line in out.splitlines()) if int(g) == pgid}


def test_every_service_listens_on_loopback_only(
    openstack_cloud: openstack_env.OpenStackCloud,
) -> None:
    status = openstack_env.script("status", timeout=60).stdout
    pids: set[int] = set()
    for pid in re.findall(r"\(pid (\d+)\)", status):
        pids |= _group_pids(int(pid))
    for name in ("ovsdb-server", "ovs-vswitchd"):
        found = subprocess.run(["pidof", name], capture_output=True, text=True).stdout.split()
        pids |= {int(p) for p in found}
    assert len(pids) >= 8, status
    listeners = subprocess.run(
        ["ss", "-H", "-l", "-n", "-t", "-u", "-p"], capture_output=True, text=True, check=True
    ).stdout
    ours = []
    for line in listeners.splitlines():
        owners = {int(p) for p in re.findall(r"pid=(\d+)", line)}
        if owners & pids:
            local = line.split()[4]
            ours.append(local)
            assert local.rsplit(":", 1)[0] in {"127.0.0.1", "[::1]"}, line
    assert len(ours) >= 4, listeners


def test_start_again_is_idempotent(openstack_cloud: openstack_env.OpenStackCloud) -> None:
    before = openstack_env.script("status", timeout=60).stdout
    again = openstack_env.script("start")
    assert again.returncode == 0, again.stderr[-3000:]
    assert (
        openstack_env.parse_env(again.stdout)["OS_PASSWORD"] == openstack_cloud.env["OS_PASSWORD"]
    )
    assert "[neutron_client]" in again.stdout and "[glance_client]" in again.stdout
    # Nothing was restarted: the same pids.
    assert openstack_env.script("status", timeout=60).stdout == before
