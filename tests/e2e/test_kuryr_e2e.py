"""The kuryr network driver in a real zun-all process, with the real Keystone, Neutron, OVS agent
and kuryr-libnetwork of scripts/openstack-services.sh (``scripts/run-tests.sh -m neutron``).

zun-all runs with the zun.conf sections the script prints (``[api]/auth_strategy = keystone``,
``[keystone_authtoken]``, ``[keystone_auth]``, ``[neutron_client]``, ``[network]/driver =
kuryr``) and is driven by python-zunclient on the user's Keystone session. zun reaches Neutron
through a proxy of the test's own (e2e/kuryr_support.py), which the Neutron-down test stops.
The other features have modules of their own: test_kuryr_security_groups_e2e.py,
test_kuryr_attach_e2e.py, test_kuryr_capsules_e2e.py.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from e2e.kuryr_support import KuryrEnv, env_fixture, tcp_answer, wait
from e2e.support import http

pytestmark = [pytest.mark.neutron, pytest.mark.e2e]


env = env_fixture("zun-e2e-kuryr")


def test_containers_on_a_neutron_network(env: KuryrEnv, docker_client: Any) -> None:
    server = env.running(command=["sh", "-c", "while true; do echo e2e | nc -l -p 7000; done"])
    [addr] = server.addresses[env.net["id"]]
    port = env.neutron.port(addr["port"])
    assert port["status"] == "ACTIVE" and port["device_id"] == server.uuid, port
    assert port["project_id"] == env.account.project_id
    assert server.project_id == env.account.project_id  # the token's project
    client = env.running()
    wait(
        lambda: tcp_answer(docker_client, client.uuid, addr["addr"], 7000) == b"e2e",
        "the server answering",
        timeout=60,
        interval=1,
    )
    for uuid_ in (server.uuid, client.uuid):
        env.delete(uuid_)
    env.assert_no_port_leaked()


def test_a_failed_create_leaves_no_port(env: KuryrEnv) -> None:
    uuid_ = env.run(command=["/no/such/program"])
    shown = env.settled(uuid_)
    assert shown.status == "Error", shown
    env.assert_no_port_leaked()
    env.delete(uuid_)
    status, body = env.call(
        "POST", "/v1/containers", {"image": env.image, "nets": [{"network": str(uuid.uuid4())}]}
    )
    assert (status, body["errors"][0]["code"]) == (404, "container.network-not-found"), body
    # keystonemiddleware refuses a token Keystone does not know
    status, body = http(
        env.server,
        "POST",
        "/v1/containers",
        {"image": env.image, "nets": [{"network": env.net["id"]}]},
        {"X-Auth-Token": "gAAAAA-not-a-token"},
    )
    assert status == 401, body
    assert [c.uuid for c in env.zun.containers.list()] == []


def test_neutron_unreachable(env: KuryrEnv) -> None:
    """Neutron down (the proxy zun goes through is stopped): a create is 503
    neutron-unavailable and makes nothing; a delete fails with the reason and keeps the row
    and the port, and a delete once Neutron is back removes both."""
    shown = env.running()
    port_id = env.port_of(shown)
    env.proxy.stop()
    try:
        status, body = env.call(
            "POST",
            "/v1/containers?run=true",
            {"image": env.image, "nets": [{"network": env.net["id"]}]},
        )
        assert (status, body["errors"][0]["code"]) == (503, "container.neutron-unavailable"), body
        assert "Neutron" in body["errors"][0]["detail"], body
        status, body = env.call(
            "POST", f"/v1/containers/{shown.uuid}/network_attach?network={env.net['id']}"
        )
        assert (status, body["errors"][0]["code"]) == (503, "container.neutron-unavailable"), body
        env.zun.containers.delete(shown.uuid, stop=True)
        failed = env.settled(shown.uuid)
        assert failed.status == "Error" and "Neutron" in failed.status_reason, (
            failed.status,
            failed.status_reason,
        )
        assert env.neutron.port(port_id) is not None
        assert [c.uuid for c in env.zun.containers.list()] == [shown.uuid]
    finally:
        env.proxy.start()
    env.delete(shown.uuid)
    assert env.neutron.port(port_id) is None
    env.assert_no_port_leaked()


def test_neutron_going_away_during_a_create(env: KuryrEnv) -> None:
    """Neutron stops answering right after the API accepted a create (the API resolved the
    network; the node pulls the image before it makes the port): the node's create ends in
    Error naming Neutron, or Running if it raced ahead; either way nothing is left behind once
    Neutron is back and the container is deleted."""
    uuid_ = env.run()
    env.proxy.stop()
    try:
        shown = env.settled(uuid_)
        assert shown.status in ("Error", "Running"), (shown.status, shown.status_reason)
        if shown.status == "Error":
            assert "Neutron" in shown.status_reason, shown.status_reason
    finally:
        env.proxy.start()
    env.delete(uuid_)
    env.assert_no_port_leaked()
