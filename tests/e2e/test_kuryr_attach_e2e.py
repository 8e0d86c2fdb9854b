"""network_attach / network_detach / network_list and the ports users bring, end to end: a real
zun-all (keystone auth, the user's token) driven by python-zunclient, the real Neutron, OVS
agent and kuryr-libnetwork. An attached network is proved by traffic over it.
"""

from __future__ import annotations

from typing import Any

import pytest
from e2e.kuryr_support import KuryrEnv, env_fixture, tcp_answer, wait

pytestmark = [pytest.mark.neutron, pytest.mark.e2e]


env = env_fixture("zun-e2e-kuryr-att")


def _network(env: KuryrEnv, offset: int) -> dict[str, Any]:
    made = env.neutron.create_network(
        f"10.251.{(env.octet + offset) % 250}.0/24", project_id=env.account.project_id
    )
    env.networks.append(made["network"]["id"])
    return made


def _listed(env: KuryrEnv, uuid_: str) -> dict[str, dict[str, Any]]:
    return {n.net_id: n._info for n in env.zun.containers.network_list(uuid_)}


def test_attach_by_network_port_and_fixed_ip_then_detach(env: KuryrEnv, docker_client: Any) -> None:
    second, third, fourth = (_network(env, i) for i in (1, 2, 3))
    before = env.neutron.port_ids(env.networks)
    shown = env.running(command=["sh", "-c", "while true; do echo att | nc -l -p 7000; done"])
    uuid_ = shown.uuid

    # by network name
    env.zun.containers.network_attach(uuid_, network=second["network"]["name"])
    shown = env.settled(uuid_)
    made_port = env.port_of(shown, second["network"]["id"])
    assert env.neutron.wait_port(made_port)["device_id"] == uuid_
    assert shown.addresses[second["network"]["id"]][0]["preserve_on_delete"] is False
    # a container on that network alone reaches the attached interface
    peer = env.running(nets=[{"network": second["network"]["id"]}])
    addr = shown.addresses[second["network"]["id"]][0]["addr"]
    wait(
        lambda: tcp_answer(docker_client, peer.uuid, addr, 7000) == b"att",
        f"{addr}:7000 over the attached network",
        timeout=60,
        interval=1,
    )

    # by a port the user made (kept at detach and delete), by network + fixed IP
    user_port = env.neutron.create_port(third["network"]["id"], project_id=env.account.project_id)
    env.zun.containers.network_attach(uuid_, port=user_port["id"])
    env.settled(uuid_)
    fixed = f"10.251.{(env.octet + 3) % 250}.55"
    env.zun.containers.network_attach(uuid_, network=fourth["network"]["id"], fixed_ip=fixed)
    shown = env.settled(uuid_)
    assert shown.addresses[third["network"]["id"]][0]["port"] == user_port["id"]
    assert shown.addresses[third["network"]["id"]][0]["preserve_on_delete"] is True
    assert shown.addresses[fourth["network"]["id"]][0]["addr"] == fixed
    listed = _listed(env, uuid_)
    assert set(listed) == {
        env.net["id"],
        second["network"]["id"],
        third["network"]["id"],
        fourth["network"]["id"],
    }
    assert listed[fourth["network"]["id"]]["fixed_ips"][0]["ip_address"] == fixed
    assert listed[third["network"]["id"]]["port_id"] == user_port["id"]

    # attaching a network it is on again: 400, nothing made
    status, body = env.call(
        "POST", f"/v1/containers/{uuid_}/network_attach?network={second['network']['id']}"
    )
    assert (status, body["errors"][0]["code"]) == (400, "container.invalid"), body

    # detach by port (Zun's port: deleted), by network (the user's port: kept, unbound)
    env.zun.containers.network_detach(uuid_, port=made_port)
    env.settled(uuid_)
    assert env.neutron.port(made_port) is None
    env.zun.containers.network_detach(uuid_, network=third["network"]["id"])
    shown = env.settled(uuid_)
    assert set(shown.addresses) == {env.net["id"], fourth["network"]["id"]}
    assert set(_listed(env, uuid_)) == set(shown.addresses)
    kept = env.neutron.port(user_port["id"])
    assert kept is not None and kept["device_id"] == "", kept
    status, body = env.call(
        "POST", f"/v1/containers/{uuid_}/network_detach?network={second['network']['id']}"
    )
    assert (status, body["errors"][0]["code"]) == (400, "container.invalid"), body

    for container in (uuid_, peer.uuid):
        env.delete(container)
    env.assert_no_port_leaked(before | {user_port["id"]})


def test_a_port_the_user_brings_is_kept(env: KuryrEnv) -> None:
    before = env.neutron.port_ids(env.networks)
    port = env.neutron.create_port(env.net["id"], project_id=env.account.project_id)
    shown = env.running(nets=[{"port": port["id"]}])
    [addr] = shown.addresses[env.net["id"]]
    assert addr["port"] == port["id"] and addr["preserve_on_delete"] is True
    assert addr["addr"] == port["fixed_ips"][0]["ip_address"]
    bound = env.neutron.port(port["id"])
    assert bound["status"] == "ACTIVE" and bound["device_id"] == shown.uuid, bound
    # in use: a second container cannot take it
    status, body = env.call(
        "POST", "/v1/containers?run=true", {"image": env.image, "nets": [{"port": port["id"]}]}
    )
    assert (status, body["errors"][0]["code"]) == (400, "container.port-in-use"), body
    env.delete(shown.uuid)
    kept = env.neutron.port(port["id"])
    assert kept is not None and kept["device_id"] == "" and kept["device_owner"] == "", kept
    env.assert_no_port_leaked(before | {port["id"]})
