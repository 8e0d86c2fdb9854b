"""Security groups with the kuryr driver, end to end: a real zun-all (keystone auth, the user's
token) driven by python-zunclient, the real Neutron, OVS agent (openvswitch firewall) and
kuryr-libnetwork. The groups are proved by traffic between containers, not only by the
ports' ``security_groups`` in Neutron.
"""

from __future__ import annotations

from typing import Any

import pytest
from e2e.kuryr_support import KuryrEnv, env_fixture, tcp_answer, wait

pytestmark = [pytest.mark.neutron, pytest.mark.e2e]

LISTEN = "while true; do echo {word} | nc -l -p {port}; done"
# What busybox nc says when the firewall drops the connection (no listener: "refused").
BLOCKED = b"nc: timed out"


env = env_fixture("zun-e2e-kuryr-sg")


def _reach(docker_client: Any, client: str, addr: str, port: int, want: bytes) -> None:
    """Wait until a TCP connection from ``client`` reads ``want`` (BLOCKED when the firewall
    drops it). The agent applies a group change to the firewall some time after Neutron took
    it."""
    seen: list[bytes] = []

    def check() -> bool:
        seen.append(tcp_answer(docker_client, client, addr, port))
        return seen[-1] == want

    try:
        wait(check, f"{addr}:{port} answering {want!r}", timeout=60, interval=1)
    except AssertionError as err:
        raise AssertionError(f"{err}; last answers {seen[-3:]}") from None


def test_groups_at_create_added_and_removed(env: KuryrEnv, docker_client: Any) -> None:
    project = env.account.project_id
    opens = env.neutron.create_security_group(
        project_id=project,
        rules=[
            {
                "protocol": "tcp",
                "port_range_min": 7000,
                "port_range_max": 7000,
                "remote_ip_prefix": "0.0.0.0/0",
            }
        ],
    )
    closed = env.neutron.create_security_group(project_id=project)
    server = env.running(
        security_groups=[closed["name"]], command=["sh", "-c", LISTEN.format(word="sg", port=7000)]
    )
    assert server.security_groups == [closed["id"]]
    port_id = env.port_of(server)
    assert env.neutron.port(port_id)["security_groups"] == [closed["id"]]
    addr = server.addresses[env.net["id"]][0]["addr"]
    client = env.running()  # in the project's default group
    _reach(docker_client, client.uuid, addr, 7000, BLOCKED)

    # python-zunclient sends the group as ?name=... (by name here, by id below)
    env.zun_at("1.14").containers.add_security_group(server.uuid, opens["name"])
    shown = env.settled(server.uuid)
    assert set(shown.security_groups) == {closed["id"], opens["id"]}
    assert set(env.neutron.port(port_id)["security_groups"]) == {closed["id"], opens["id"]}
    _reach(docker_client, client.uuid, addr, 7000, b"sg")

    env.zun_at("1.14").containers.remove_security_group(server.uuid, opens["id"])
    shown = env.settled(server.uuid)
    assert shown.security_groups == [closed["id"]]
    assert env.neutron.port(port_id)["security_groups"] == [closed["id"]]
    _reach(docker_client, client.uuid, addr, 7000, BLOCKED)

    # Refusals in Zun's error format, nothing made
    status, body = env.call(
        "POST",
        f"/v1/containers/{server.uuid}/add_security_group?name=no-such-group",
        version="1.14",
    )
    assert (status, body["errors"][0]["code"]) == (400, "container.invalid-value"), body
    status, body = env.call(
        "POST",
        f"/v1/containers/{server.uuid}/remove_security_group?name={opens['id']}",
        version="1.14",
    )
    assert (status, body["errors"][0]["code"]) == (400, "container.invalid-value"), body
    status, body = env.call(
        "POST",
        "/v1/containers?run=true",
        {
            "image": env.image,
            "nets": [{"network": env.net["id"]}],
            "security_groups": ["no-such-group"],
        },
    )
    assert (status, body["errors"][0]["code"]) == (400, "container.invalid-value"), body
    for uuid_ in (server.uuid, client.uuid):
        env.delete(uuid_)
    env.assert_no_port_leaked()


def test_exposed_ports_are_a_group_of_the_container(env: KuryrEnv, docker_client: Any) -> None:
    both = f"({LISTEN.format(word='open', port=8080)}) & {LISTEN.format(word='shut', port=8081)}"
    web = env.running(exposed_ports={"8080/tcp": {}}, command=["sh", "-c", both])
    groups = env.neutron.security_groups(name=f"zun-{web.uuid}")
    assert len(groups) == 1 and groups[0]["project_id"] == env.account.project_id, groups
    # as in the original: the exposed-ports group is the container's only group
    assert web.security_groups == [groups[0]["id"]]
    assert env.neutron.port(env.port_of(web))["security_groups"] == [groups[0]["id"]]
    rules = [r for r in groups[0]["security_group_rules"] if r["direction"] == "ingress"]
    assert sorted(
        (r["ethertype"], r["protocol"], r["port_range_min"], r["port_range_max"]) for r in rules
    ) == [("IPv4", "tcp", 8080, 8080), ("IPv6", "tcp", 8080, 8080)]
    addr = web.addresses[env.net["id"]][0]["addr"]
    client = env.running()
    _reach(docker_client, client.uuid, addr, 8080, b"open")
    assert tcp_answer(docker_client, client.uuid, addr, 8081) == BLOCKED
    env.delete(web.uuid)
    assert not env.neutron.security_groups(name=f"zun-{web.uuid}")
    env.delete(client.uuid)
    env.assert_no_port_leaked()
