"""Neutron behind TLS: [neutron_client] ca_file, cert_file, key_file and insecure reach the TLS
handshakes of both sides of a create, the API (the user's token: the network lookup) and the
node (zun's service credentials: the port). A socat TLS proxy with a CA made by the test, which
wants a client certificate, stands in front of the real Neutron; zun finds it through a
Keystone region of the test's own (``[neutron_client]/region_name``).

The API app and a real zun-compute agent run in this process (as in test_kuryr_driver.py), with
``[network]/driver = kuryr`` and the real Keystone, OVS agent and kuryr-libnetwork.
Run with ``scripts/run-tests.sh -m neutron``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import neutron_support
import openstack_env
import pytest
from functional.api.resources_support import wait_for
from functional.image.glance_support import tls_files  # noqa: F401
from keystoneauth1 import loading as ks_loading
from unit.api.apptesting import ApiClient

from zun.conf import CONF

pytestmark = pytest.mark.neutron


@pytest.fixture(scope="module")
def tls_region(openstack_cloud: openstack_env.OpenStackCloud, tls_files: Any) -> Iterator[str]:
    """A region whose network endpoint is a TLS proxy in front of Neutron wanting a client
    certificate signed by the test's CA."""
    proxy = neutron_support.NeutronProxy(
        neutron_support.neutron_target(openstack_cloud),
        tls=f"cert={tls_files.server_crt},key={tls_files.server_key},verify=1,"
        f"cafile={tls_files.ca_crt}",
    ).start()
    try:
        with neutron_support.network_region(openstack_cloud, proxy.url) as region:
            yield region
    finally:
        proxy.stop()


@pytest.fixture
def tls_cloud(
    openstack_cloud: openstack_env.OpenStackCloud,
    tls_region: str,
    api: ApiClient,
    agent: Any,
    docker_client: Any,
    busybox_image: str,
    registry: dict[str, str],
) -> Iterator[Any]:
    """zun.conf of a kuryr deployment whose Neutron is the TLS region; a Keystone account, its
    member API client and token, a network of its project."""
    CONF.register_opts(ks_loading.get_auth_plugin_conf_options("password"), group="keystone_auth")
    values = {
        "auth_url": openstack_cloud.auth_url,
        "username": "zun",
        "password": openstack_cloud.env["ZUN_OS_SERVICE_PASSWORD"],
        "project_name": "service",
        "user_domain_name": "Default",
        "project_domain_name": "Default",
    }
    for name, value in values.items():
        CONF.set_override(name, value, group="keystone_auth")
    CONF.set_override("driver", "kuryr", group="network")
    CONF.set_override("region_name", tls_region, group="neutron_client")
    CONF.set_override("endpoint_type", "internalURL", group="neutron_client")
    account = openstack_env.make_account(openstack_cloud, "zun-tls")
    neutron = neutron_support.Neutron(openstack_cloud)
    net = neutron.create_network(
        f"10.252.{100 + uuid.uuid4().int % 150}.0/24", project_id=account.project_id
    )["network"]
    token = openstack_cloud.session(
        account.username, account.password, account.project_name
    ).get_token()
    image = neutron_support.own_image(docker_client, busybox_image, registry, "zun-tls")
    env = SimpleNamespace(
        neutron=neutron,
        net=net,
        image=image,
        headers={"X-Auth-Token": token},
        member=api.as_member(account.project_id, user=account.user_id).at("1.40"),
    )
    env.before = neutron.port_ids([net["id"]])
    try:
        yield env
    finally:
        try:
            for container in docker_client.containers.list(
                ignore_removed=True, all=True, filters={"label": f"zun.host={agent.host}"}
            ):
                container.remove(force=True)
            for docker_net in docker_client.networks.list(names=[net["id"]]):
                if docker_net.name == net["id"]:
                    docker_net.remove()
            neutron.cleanup([net["id"]])
            docker_client.api.remove_image(image)
        finally:
            openstack_env.delete_account(openstack_cloud, account)
            for name in values:
                CONF.clear_override(name, group="keystone_auth")
            for name in (
                "region_name",
                "endpoint_type",
                "ca_file",
                "cert_file",
                "key_file",
                "insecure",
            ):
                CONF.clear_override(name, group="neutron_client")
            CONF.clear_override("driver", group="network")


def _tls(**options: Any) -> None:
    for name in ("ca_file", "cert_file", "key_file", "insecure"):
        CONF.clear_override(name, group="neutron_client")
    for name, value in options.items():
        CONF.set_override(name, value, group="neutron_client")


def _create(env: Any) -> Any:
    return env.member.post(
        "/v1/containers",
        headers=env.headers,
        json={
            "run": True,
            "image": env.image,
            "command": ["sleep", "600"],
            "nets": [{"network": env.net["id"]}],
        },
    )


def _runs_and_goes(env: Any) -> None:
    """A create through the proxy runs with its Neutron port; its delete removes the port."""
    r = _create(env)
    assert r.status == 202, r
    uuid_ = r.json["uuid"]

    def settled() -> Any:
        shown = env.member.get(f"/v1/containers/{uuid_}", headers=env.headers).json
        return shown if shown["status"] != "Creating" and not shown["task_state"] else None

    shown = wait_for(settled, 90, f"container {uuid_} settled")
    assert shown["status"] == "Running", shown
    port = env.neutron.port(shown["addresses"][env.net["id"]][0]["port"])
    assert port["status"] == "ACTIVE" and port["device_id"] == uuid_, port
    r = env.member.delete(f"/v1/containers/{uuid_}?stop=true", headers=env.headers)
    assert r.status == 204, r
    wait_for(lambda: env.member.get(f"/v1/containers/{uuid_}").status == 404, 60, "deleted")
    neutron_support.assert_no_port_leaked(env.neutron, [env.net["id"]], env.before)


def _refused(env: Any) -> str:
    """A create refused at once with 503 neutron-unavailable, nothing made; the detail."""
    r = _create(env)
    assert (r.status, r.error["code"]) == (503, "container.neutron-unavailable"), r
    assert env.member.get("/v1/containers", headers=env.headers).json["containers"] == []
    neutron_support.assert_no_port_leaked(env.neutron, [env.net["id"]], env.before, settle=0)
    return str(r.error["detail"])


def test_ca_file_client_certificate_and_insecure(tls_cloud: Any, tls_files: Any) -> None:
    env = tls_cloud
    client = {"cert_file": tls_files.client_crt, "key_file": tls_files.client_key}
    _tls(ca_file=tls_files.ca_crt, **client)
    _runs_and_goes(env)
    # Neutron's certificate against the system's CAs, or another CA: refused, and said so
    for ca in ({}, {"ca_file": tls_files.other_ca_crt}):
        _tls(**ca, **client)
        detail = _refused(env)
        assert "TLS handshake with Neutron failed" in detail, detail
        assert "CERTIFICATE_VERIFY_FAILED" in detail, detail
    # the proxy wants a client certificate: without one the connection is refused
    _tls(ca_file=tls_files.ca_crt)
    _refused(env)
    # insecure skips the verification of Neutron's certificate, whatever ca_file says
    _tls(ca_file=tls_files.other_ca_crt, insecure=True, **client)
    _runs_and_goes(env)
