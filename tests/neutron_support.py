"""Neutron as the tests see it: networks, ports and security groups of the local OpenStack
(scripts/openstack-services.sh), through its REST API with keystoneauth sessions.

Every name a test makes is unique per run (:func:`unique_name`), and :class:`Neutron` remembers
what it made so that :meth:`Neutron.cleanup` removes it even when the test failed. The port
ledger (:meth:`Neutron.port_ids`, :func:`assert_no_port_leaked`) is how fault tests prove that a
failed create left no port behind. :class:`NeutronProxy` and :func:`network_region` put a proxy of
the test's own (plain, or TLS with the test's CA) between zun and the shared Neutron: stopping it
makes Neutron unreachable for zun alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

import openstack_env

ZUN_POOL_PREFIX = "zun-pool-"  # zun.network.kuryr_networks.POOL_PREFIX (tests keep their facts)


def unique_name(kind: str) -> str:
    return f"zun-kuryr-{kind}-{uuid.uuid4().hex[:8]}"


class Neutron:
    """A Neutron client on one Keystone session (the admin's unless another is given)."""

    def __init__(self, cloud: openstack_env.OpenStackCloud, session: Any = None) -> None:
        self.session = session or cloud.session()
        self.url = (
            self.session.get_endpoint(service_type="network", interface="public").rstrip("/")
            + "/v2.0"
        )
        self._made: list[tuple[str, str]] = []

    # --- plumbing --------------------------------------------------------------------------

    def _get(self, path: str, **params: Any) -> Any:
        return self.session.get(f"{self.url}/{path}", params=params or None).json()

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        return self.session.post(f"{self.url}/{path}", json=body).json()

    def delete(self, kind: str, ident: str) -> bool:
        """Delete one resource; False when it was gone already."""
        resp = self.session.delete(f"{self.url}/{kind}/{ident}", raise_exc=False)
        if resp.status_code not in (204, 404):
            resp.raise_for_status()
        return resp.status_code == 204

    # --- networks ---------------------------------------------------------------------------

    def create_network(
        self,
        cidr: str,
        name: str | None = None,
        project_id: str | None = None,
        shared: bool = False,
        gateway: str | None = None,
    ) -> dict[str, Any]:
        """A network with one IPv4 subnet: ``{"network": ..., "subnet": ...}``."""
        body: dict[str, Any] = {"name": name or unique_name("net"), "shared": shared}
        if project_id:
            body["project_id"] = project_id
        net = self._post("networks", {"network": body})["network"]
        self._made.append(("networks", net["id"]))
        sub_body: dict[str, Any] = {
            "network_id": net["id"],
            "ip_version": 4,
            "cidr": cidr,
            "name": f"{net['name']}-v4",
        }
        if project_id:
            sub_body["project_id"] = project_id
        if gateway:
            sub_body["gateway_ip"] = gateway
        subnet = self._post("subnets", {"subnet": sub_body})["subnet"]
        return {"network": net, "subnet": subnet}

    def add_subnet(
        self, network_id: str, cidr: str, version: int = 6, project_id: str | None = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"network_id": network_id, "ip_version": version, "cidr": cidr}
        if project_id:
            body["project_id"] = project_id
        return self._post("subnets", {"subnet": body})["subnet"]

    def network(self, ident: str) -> dict[str, Any] | None:
        resp = self.session.get(f"{self.url}/networks/{ident}", raise_exc=False)
        return resp.json()["network"] if resp.status_code == 200 else None

    # --- ports ------------------------------------------------------------------------------

    def create_port(
        self, network_id: str, project_id: str | None = None, **attrs: Any
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"network_id": network_id, "name": unique_name("port"), **attrs}
        if project_id:
            body["project_id"] = project_id
        port = self._post("ports", {"port": body})["port"]
        self._made.append(("ports", port["id"]))
        return port

    def port(self, ident: str) -> dict[str, Any] | None:
        resp = self.session.get(f"{self.url}/ports/{ident}", raise_exc=False)
        return resp.json()["port"] if resp.status_code == 200 else None

    def ports(self, **filters: Any) -> list[dict[str, Any]]:
        return list(self._get("ports", **filters)["ports"])

    def port_ids(self, network_ids: Iterable[str]) -> set[str]:
        """Ids of every port on these networks (the ledger fault tests compare)."""
        ids: set[str] = set()
        for net in network_ids:
            ids |= {p["id"] for p in self.ports(network_id=net)}
        return ids

    def wait_port(self, ident: str, status: str = "ACTIVE", timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        port = self.port(ident)
        while (port is None or port["status"] != status) and time.monotonic() < deadline:
            time.sleep(0.5)
            port = self.port(ident)
        assert port is not None and port["status"] == status, (ident, status, port)
        return port

    # --- security groups --------------------------------------------------------------------

    def create_security_group(
        self,
        name: str | None = None,
        project_id: str | None = None,
        rules: Iterable[dict[str, Any]] = (),
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"name": name or unique_name("sg")}
        if project_id:
            body["project_id"] = project_id
        group = self._post("security-groups", {"security_group": body})["security_group"]
        self._made.append(("security-groups", group["id"]))
        for rule in rules:
            self._post(
                "security-group-rules",
                {
                    "security_group_rule": {
                        "security_group_id": group["id"],
                        "direction": "ingress",
                        **rule,
                    }
                },
            )
        return group

    def security_groups(self, **filters: Any) -> list[dict[str, Any]]:
        return list(self._get("security-groups", **filters)["security_groups"])

    # --- cleanup ----------------------------------------------------------------------------

    def subnetpools(self, **filters: Any) -> list[dict[str, Any]]:
        return list(self._get("subnetpools", **filters)["subnetpools"])

    def zun_pools(self, network_ids: Iterable[str]) -> list[dict[str, Any]]:
        """Zun's per-node IPAM pools of the subnets of these networks (``zun-pool-<subnet
        id>-<host>``, zun/network/kuryr_networks.py)."""
        prefixes = tuple(
            f"{ZUN_POOL_PREFIX}{subnet['id']}-"
            for net in network_ids
            for subnet in self._get("subnets", network_id=net)["subnets"]
        )
        if not prefixes:
            return []
        return [p for p in self.subnetpools() if str(p.get("name", "")).startswith(prefixes)]

    def cleanup(self, network_ids: Iterable[str] = ()) -> None:
        """Remove what this client made, plus every port left on ``network_ids`` (a test that
        failed half-way may leave Zun's ports there) and Zun's IPAM pools of their subnets (a
        test that removed a Docker network itself leaves them), networks last."""
        network_ids = list(network_ids)
        made_nets = [ident for kind, ident in self._made if kind == "networks"]
        for pool in self.zun_pools(dict.fromkeys([*network_ids, *made_nets])):
            self.delete("subnetpools", pool["id"])
        for net in network_ids:
            for port in self.ports(network_id=net):
                self.delete("ports", port["id"])
        for kind, ident in sorted(self._made, key=lambda m: m[0] == "networks"):
            if kind == "networks":
                for port in self.ports(network_id=ident):
                    self.delete("ports", port["id"])
            self.delete(kind, ident)
        self._made.clear()


def assert_no_port_leaked(
    neutron: Neutron, network_ids: Iterable[str], before: set[str], settle: float = 10
) -> None:
    """The ports on ``network_ids`` are back to ``before`` (within ``settle`` seconds: a port
    is deleted right after the engine lets the container go)."""
    nets = list(network_ids)
    deadline = time.monotonic() + settle
    now = neutron.port_ids(nets)
    while now - before and time.monotonic() < deadline:
        time.sleep(0.5)
        now = neutron.port_ids(nets)
    leaked = [neutron.port(p) for p in now - before]
    assert not leaked, f"ports leaked: {leaked}"


def own_image(docker_client: Any, busybox_image: str, registry: dict[str, str], prefix: str) -> str:
    """busybox pushed to the test registry under a repository of its own: the default pull
    policy (always) pulls it, and no other test's clean-up of a shared tag can take it away
    between that pull and the create."""
    repo = f"{registry['url']}/{prefix}-{uuid.uuid4().hex[:8]}"
    docker_client.api.tag(busybox_image, repo, "v1")
    for _ in docker_client.api.push(repo, "v1", stream=True, decode=True):
        pass
    return f"{repo}:v1"


# --- Neutron behind a proxy of the test's own -------------------------------------------------


def neutron_target(cloud: openstack_env.OpenStackCloud) -> str:
    """host:port of the shared Neutron (the public endpoint of the catalog)."""
    url = cloud.session().get_endpoint(service_type="network", interface="public")
    return str(url).split("://", 1)[1].split("/", 1)[0]


# Ports of the proxies (the range of the helper that wrote these tests); each proxy takes the
# first free one, so that two runs of the tests on one machine do not meet.
PROXY_PORTS = range(20300, 20400)


def free_proxy_port() -> int:
    for port in PROXY_PORTS:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PROXY_PORTS}")


def _wait_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"socat exited {proc.returncode} (port {port} taken?)")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                # Whoever answered, socat must still be there: when another process had
                # the port, socat's bind failed and it exits at once.
                time.sleep(0.2)
                if proc.poll() is not None:
                    raise RuntimeError(f"socat exited {proc.returncode}: port {port} taken")
                return
        time.sleep(0.1)
    raise RuntimeError(f"socat did not listen on {port}")


class NeutronProxy:
    """socat on 127.0.0.1 (a free port of PROXY_PORTS) forwarding to ``target`` (host:port):
    plain TCP, or TLS with ``tls`` = socat's OPENSSL-LISTEN options (``cert=...,key=...,
    verify=0``). stop() ends socat and the connections it forwards, so that zun meets a
    Neutron that is down (the shared Neutron is never stopped); start() brings it back on the
    same port."""

    def __init__(self, target: str, tls: str = "") -> None:
        self.port = free_proxy_port()
        self.target = target
        self.tls = tls
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> NeutronProxy:
        listen = (
            f"OPENSSL-LISTEN:{self.port},{self.tls}," if self.tls else f"TCP-LISTEN:{self.port},"
        )
        self.proc = subprocess.Popen(
            ["socat", f"{listen}bind=127.0.0.1,reuseaddr,fork", f"TCP:{self.target}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        _wait_listening(self.port, self.proc)
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            # socat forks a child per connection, in socat's own process group: zun's
            # keep-alive connections must break too.
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=10)
        self.proc = None


@contextlib.contextmanager
def network_region(
    cloud: openstack_env.OpenStackCloud, url: str, prefix: str = "zun-test-neutron"
) -> Iterator[str]:
    """A Keystone region of the test's own whose one network endpoint is ``url``, for zun's
    ``[neutron_client]/region_name`` (with ``endpoint_type = internalURL``); its name.
    The endpoint's interface is ``internal`` so that nobody asking the catalog for the public
    network endpoint (kuryr, the tests' own Neutron client) meets it. Removed afterwards."""
    sess = cloud.session()
    ks = cloud.auth_url.rstrip("/")
    service = sess.get(f"{ks}/services", params={"type": "network"}).json()["services"][0]
    region = f"{prefix}-{uuid.uuid4().hex[:8]}"
    sess.post(f"{ks}/regions", json={"region": {"id": region}})
    endpoint = sess.post(
        f"{ks}/endpoints",
        json={
            "endpoint": {
                "service_id": service["id"],
                "interface": "internal",
                "region_id": region,
                "url": url,
            }
        },
    ).json()["endpoint"]
    try:
        yield region
    finally:
        sess.delete(f"{ks}/endpoints/{endpoint['id']}", raise_exc=False)
        sess.delete(f"{ks}/regions/{region}", raise_exc=False)
