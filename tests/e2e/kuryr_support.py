"""Shared parts of the kuryr end-to-end tests (``tests/e2e/test_kuryr_*_e2e.py``, marker
``neutron``): a real zun-all process against the real Keystone, Neutron, OVS agent and
kuryr-libnetwork of scripts/openstack-services.sh.

  KeystoneZunAll  zun-all with ``[api]/auth_strategy = keystone`` (keystonemiddleware checks
                  every token with the real Keystone) and the script's ``[keystone_auth]``,
                  ``[neutron_client]`` and ``[network]/driver = kuryr``
  kuryr_env       one module's world: a Keystone account and its network, a Keystone region
                  whose network endpoint is a proxy of the module's own in front of the shared
                  Neutron (zun's ``[neutron_client]/region_name``; stopping the proxy makes
                  Neutron unreachable for zun, see neutron_support.NeutronProxy), the
                  zun-all, python-zunclient on the user's Keystone session, a private image
  env_fixture     a module's ``env`` fixture: ``env = env_fixture("zun-e2e-kuryr-xyz")``
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import neutron_support
import openstack_env
import pytest
from e2e.support import ZunAll, http, sweep


def wait(
    predicate: Callable[[], Any], what: str, timeout: float = 90, interval: float = 0.3
) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")


class KeystoneZunAll(ZunAll):
    """zun-all behind keystonemiddleware: its clients are python-zunclient on Keystone sessions
    (the readiness check lists the hosts as the cloud's admin)."""

    def __init__(self, base: Path, admin_session: Any) -> None:
        super().__init__(base)
        self.admin_session = admin_session

    def client(self, version: str = "1.40", session: Any = None) -> Any:
        from zunclient import client

        zun = client.Client(
            version, session=session or self.admin_session, endpoint_override=self.url + "/v1"
        )
        self._clients.append(zun)
        return zun


def zun_conf_text(region: str) -> str:
    """The script's zun.conf sections for keystone auth and kuryr, Neutron through ``region``."""
    sections = openstack_env.zun_conf_sections(
        "api", "keystone_authtoken", "keystone_auth", "neutron_client", "network"
    )
    assert sections["network"]["driver"] == "kuryr", sections
    assert sections["api"]["auth_strategy"] == "keystone", sections
    sections["neutron_client"].update(region_name=region, endpoint_type="internalURL")
    return "".join(
        f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in values.items())
        for name, values in sections.items()
    )


@dataclass
class KuryrEnv:
    """What a kuryr e2e module works with (see :func:`kuryr_env`)."""

    server: KeystoneZunAll
    zun: Any  # python-zunclient at 1.40 on the user's session
    session: Any  # the user's keystoneauth session
    token: str
    account: openstack_env.Account
    neutron: neutron_support.Neutron  # the test's own view, straight to the shared Neutron
    proxy: neutron_support.NeutronProxy
    net: dict[str, Any]
    subnet: dict[str, Any]
    octet: int
    image: str
    networks: list[str] = field(default_factory=list)
    before: set[str] = field(default_factory=set)

    def zun_at(self, version: str) -> Any:
        """python-zunclient at another microversion (security groups are 1.1 to 1.14)."""
        return self.server.client(version, session=self.session)

    def call(
        self, method: str, path: str, body: Any = None, version: str = "1.40"
    ) -> tuple[int, Any]:
        """A raw request with the user's token (to read Zun's error codes, which
        python-zunclient's exceptions drop)."""
        return http(
            self.server,
            method,
            path,
            body,
            {"X-Auth-Token": self.token, "OpenStack-API-Version": f"container {version}"},
        )

    def run(self, **body: Any) -> str:
        """``openstack appcontainer run`` on the env's network; the new container's uuid."""
        body.setdefault("image", self.image)
        body.setdefault("command", ["sleep", "600"])
        body.setdefault("nets", [{"network": self.net["id"]}])
        return str(self.zun.containers.run(**body).uuid)

    def settled(self, uuid_: str, timeout: float = 90) -> Any:
        def done() -> Any:
            shown = self.zun.containers.get(uuid_)
            return shown if shown.status != "Creating" and shown.task_state is None else None

        return wait(done, f"container {uuid_} settled", timeout)

    def running(self, **body: Any) -> Any:
        shown = self.settled(self.run(**body))
        assert shown.status == "Running", (shown.status, shown.status_reason)
        return shown

    def delete(self, uuid_: str) -> None:
        from zunclient import exceptions

        self.zun.containers.delete(uuid_, stop=True)

        def gone() -> bool:
            try:
                self.zun.containers.get(uuid_)
            except exceptions.NotFound:
                return True
            return False

        wait(gone, f"container {uuid_} deleted", 60)

    def port_of(self, shown: Any, net_id: str | None = None) -> str:
        return str(shown.addresses[net_id or self.net["id"]][0]["port"])

    def assert_no_port_leaked(self, before: set[str] | None = None) -> None:
        neutron_support.assert_no_port_leaked(
            self.neutron, self.networks, self.before if before is None else before
        )


def tcp_answer(docker_client: Any, uuid_: str, addr: str, port: int, wait_s: int = 3) -> bytes:
    """What a TCP connection from the container ``uuid_`` to addr:port reads, or nc's words
    (stdout and stderr) when it cannot connect."""
    got = docker_client.containers.get(f"zun-{uuid_}").exec_run(
        ["nc", "-w", str(wait_s), addr, str(port)]
    )
    return bytes(got.output).strip()


@contextlib.contextmanager
def kuryr_env(
    tmp_path_factory: Any,
    docker_client: Any,
    busybox_image: str,
    registry: dict[str, str],
    cloud: openstack_env.OpenStackCloud,
    name: str,
) -> Iterator[KuryrEnv]:
    """The world of one module; everything it made is removed afterwards, even after a
    failure half-way (containers of its host, kuryr's Docker networks, the Neutron
    resources, the Keystone account and region, the image)."""
    proxy = neutron_support.NeutronProxy(neutron_support.neutron_target(cloud))
    proxy.start()
    account = openstack_env.make_account(cloud, name)
    neutron = neutron_support.Neutron(cloud)
    server: KeystoneZunAll | None = None
    image = ""
    networks: list[str] = []
    try:
        with neutron_support.network_region(cloud, proxy.url, name) as region:
            octet = 100 + uuid.uuid4().int % 150
            made = neutron.create_network(f"10.251.{octet}.0/24", project_id=account.project_id)
            networks.append(made["network"]["id"])
            user = cloud.session(account.username, account.password, account.project_name)
            image = neutron_support.own_image(docker_client, busybox_image, registry, name)
            server = KeystoneZunAll(tmp_path_factory.mktemp(name), cloud.session())
            server.config.write_text(server.config.read_text() + zun_conf_text(region))
            server.start()
            env = KuryrEnv(
                server=server,
                zun=server.client(session=user),
                session=user,
                token=user.get_token(),
                account=account,
                neutron=neutron,
                proxy=proxy,
                net=made["network"],
                subnet=made["subnet"],
                octet=octet,
                image=image,
                networks=networks,
            )
            env.before = neutron.port_ids(networks)
            yield env
    finally:
        try:
            if server is not None:
                server.stop()
                sweep(docker_client, server.host)
            for net_id in networks:  # kuryr's Docker networks first: they tag the networks
                for docker_net in docker_client.networks.list(names=[net_id]):
                    if docker_net.name == net_id:
                        docker_net.remove()
            neutron.cleanup(networks)
        finally:
            proxy.stop()
            openstack_env.delete_account(cloud, account)
            if image:
                docker_client.api.remove_image(image)


def env_fixture(name: str) -> Any:
    """A module-scoped ``env`` fixture: the :func:`kuryr_env` of the module, named ``name``
    (each module has a world of its own: account, network, proxy, zun-all)."""

    @pytest.fixture(scope="module")
    def env(
        tmp_path_factory: pytest.TempPathFactory,
        docker_client: Any,
        busybox_image: str,
        registry: dict[str, str],
        openstack_cloud: openstack_env.OpenStackCloud,
    ) -> Iterator[KuryrEnv]:
        with kuryr_env(
            tmp_path_factory, docker_client, busybox_image, registry, openstack_cloud, name=name
        ) as made:
            yield made

    return env
