"""The kuryr network driver in a real zun-all process, with the real Keystone, Neutron, OVS agent
and kuryr-libnetwork of scripts/openstack-services.sh (``scripts/run-tests.sh -m neutron``).

zun-all runs with the zun.conf sections the script prints (``[keystone_auth]``,
``[neutron_client]``, ``[network]/driver = kuryr``) and noauth: identity comes from the X-*
headers, and the user's real token from X-Auth-Token, as keystonemiddleware hands them on.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import neutron_support
import openstack_env
import pytest
from e2e.support import ZunAll, http, sweep

pytestmark = pytest.mark.neutron


def _wait(predicate: Any, what: str, timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, docker_client: Any, busybox_image: str,
        registry: dict[str, str],
        openstack_cloud: openstack_env.OpenStackCloud) -> Iterator[Any]:
    sections = openstack_env.zun_conf_sections("keystone_auth", "neutron_client", "network")
    assert sections["network"]["driver"] == "kuryr", sections
    server = ZunAll(tmp_path_factory.mktemp("zun-all-kuryr"))
    text = "".join(f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in values.items())
                   for name, values in sections.items())
    server.config.write_text(server.config.read_text() + text)
    account = openstack_env.make_account(openstack_cloud, "zun-kuryr-e2e")
    neutron = neutron_support.Neutron(openstack_cloud)
    net = neutron.create_network(f"10.250.{250 + uuid.uuid4().int % 5}.0/24",
                                 project_id=account.project_id)
    token = openstack_cloud.session(account.username, account.password,
                                    account.project_name).get_token()
    headers = {"X-Auth-Token": token, "X-Project-Id": account.project_id,
               "X-User-Id": account.user_id, "X-Roles": "member"}
    image = neutron_support.own_image(docker_client, busybox_image, registry, "zun-kuryr-e2e")
    server.start()
    try:
        yield type("Env", (), {"server": server, "neutron": neutron, "net": net["network"],
                               "headers": headers, "image": image,
                               "before": neutron.port_ids([net["network"]["id"]])})
    finally:
        server.stop()
        sweep(docker_client, server.host)
        for docker_net in docker_client.networks.list(names=[net["network"]["id"]]):
            if docker_net.name == net["network"]["id"]:
                docker_net.remove()
        neutron.cleanup([net["network"]["id"]])
        openstack_env.delete_account(openstack_cloud, account)
        docker_client.api.remove_image(image)


def _create(env: Any, **body: Any) -> str:
    body = {"image": env.image, "command": ["sleep", "600"],
            "nets": [{"network": env.net["id"]}], **body}
    status, created = http(env.server, "POST", "/v1/containers?run=true", body, env.headers)
    assert status == 202, created
    return str(created["uuid"])


def _settled(env: Any, uuid_: str) -> dict[str, Any]:
    def done() -> Any:
        status, body = http(env.server, "GET", f"/v1/containers/{uuid_}", None, env.headers)
        assert status == 200, body
        return body if body["status"] != "Creating" and body["task_state"] is None else None
    return dict(_wait(done, f"container {uuid_} settled"))


def _delete(env: Any, uuid_: str) -> None:
    status, body = http(env.server, "DELETE", f"/v1/containers/{uuid_}?stop=true", None,
                        env.headers)
    assert status == 204, body
    _wait(lambda: http(env.server, "GET", f"/v1/containers/{uuid_}", None,
                       env.headers)[0] == 404, "deleted")


def test_containers_on_a_neutron_network(env: Any, docker_client: Any) -> None:
    server_uuid = _create(env, command=["sh", "-c",
                                        "while true; do echo e2e | nc -l -p 7000; done"])
    server = _settled(env, server_uuid)
    assert server["status"] == "Running", server
    [addr] = server["addresses"][env.net["id"]]
    port = env.neutron.port(addr["port"])
    assert port["status"] == "ACTIVE" and port["device_id"] == server_uuid, port
    client_uuid = _create(env)
    assert _settled(env, client_uuid)["status"] == "Running"
    got = docker_client.containers.get(f"zun-{client_uuid}").exec_run(
        ["nc", "-w", "5", addr["addr"], "7000"])
    assert got.output.strip() == b"e2e", got
    for uuid_ in (server_uuid, client_uuid):
        _delete(env, uuid_)
    neutron_support.assert_no_port_leaked(env.neutron, [env.net["id"]], env.before)


def test_a_failed_create_leaves_no_port(env: Any) -> None:
    uuid_ = _create(env, command=["/no/such/program"])
    shown = _settled(env, uuid_)
    assert shown["status"] == "Error", shown
    neutron_support.assert_no_port_leaked(env.neutron, [env.net["id"]], env.before)
    _delete(env, uuid_)
    status, body = http(env.server, "POST", "/v1/containers", {
        "image": env.image, "nets": [{"network": str(uuid.uuid4())}]}, env.headers)
    assert (status, body["errors"][0]["code"]) == (404, "container.network-not-found"), body
