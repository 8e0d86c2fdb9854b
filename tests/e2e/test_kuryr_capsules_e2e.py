"""Capsules with the kuryr driver, end to end: a real zun-all (keystone auth, the user's token)
driven by python-zunclient, the real Neutron, OVS agent and kuryr-libnetwork. The sandbox
takes the Neutron port on the project's network; the members share it.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from e2e.kuryr_support import KuryrEnv, env_fixture, tcp_answer, wait

pytestmark = [pytest.mark.neutron, pytest.mark.e2e]


env = env_fixture("zun-e2e-kuryr-cap")


def _template(env: KuryrEnv, command: list[str]) -> dict[str, Any]:
    return {
        "kind": "capsule",
        "metadata": {"name": f"zun-e2e-pod-{uuid.uuid4().hex[:6]}"},
        "spec": {
            "containers": [
                {
                    "image": env.image,
                    "imagePullPolicy": "IfNotPresent",
                    "command": command,
                    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                }
            ]
        },
    }


def _settled(env: KuryrEnv, uuid_: str) -> Any:
    def done() -> Any:
        shown = env.zun.capsules.get(uuid_)
        return shown if shown.status != "Creating" else None

    return wait(done, f"capsule {uuid_} settled", 120)


def _delete(env: KuryrEnv, uuid_: str) -> None:
    from zunclient import exceptions

    env.zun.capsules.delete(uuid_)

    def gone() -> bool:
        try:
            env.zun.capsules.get(uuid_)
        except exceptions.NotFound:
            return True
        return False

    wait(gone, f"capsule {uuid_} deleted", 60)


def test_the_sandbox_has_the_port_and_the_members_share_it(
    env: KuryrEnv, docker_client: Any
) -> None:
    created = env.zun.capsules.create(
        template=_template(env, ["sh", "-c", "while true; do echo pod | nc -l -p 8080; done"])
    )
    capsule = _settled(env, created.uuid)
    assert capsule.status == "Running", (capsule.status, capsule.status_reason)
    # no nets in a template: the project's network, chosen as the original chose it
    [addr] = capsule.addresses[env.net["id"]]
    port = env.neutron.port(addr["port"])
    assert port["device_id"] == capsule.uuid and port["status"] == "ACTIVE", port
    assert port["project_id"] == env.account.project_id
    assert capsule.containers[0]["addresses"] == capsule.addresses
    # the members' ports are the group zun-<capsule uuid>, the port's only one
    [group] = env.neutron.security_groups(name=f"zun-{capsule.uuid}")
    assert port["security_groups"] == [group["id"]]
    client = env.running()
    wait(
        lambda: tcp_answer(docker_client, client.uuid, addr["addr"], 8080) == b"pod",
        "the member answering on the sandbox's address",
        timeout=60,
        interval=1,
    )
    _delete(env, capsule.uuid)
    assert env.neutron.port(addr["port"]) is None
    assert not env.neutron.security_groups(name=f"zun-{capsule.uuid}")
    env.delete(client.uuid)
    env.assert_no_port_leaked()


def test_a_failed_capsule_gives_back_its_port_and_group(env: KuryrEnv) -> None:
    created = env.zun.capsules.create(template=_template(env, ["/no/such/program"]))
    created_uuid = created.uuid
    capsule = _settled(env, created_uuid)
    assert capsule.status == "Error", (capsule.status, capsule.status_reason)
    env.assert_no_port_leaked()
    assert not env.neutron.security_groups(name=f"zun-{created_uuid}")
    _delete(env, created_uuid)
    env.assert_no_port_leaked()
