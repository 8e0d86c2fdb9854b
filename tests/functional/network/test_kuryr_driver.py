"""The ``kuryr`` network driver against the real Keystone, Neutron, OVS agent and kuryr-libnetwork
of scripts/openstack-services.sh and the machine's dockerd (``scripts/run-tests.sh -m neutron``).

The API app (noauth, the user's real Keystone token in X-Auth-Token as keystonemiddleware hands
it on) and a real zun-compute agent run in this process on the fake bus (as zun-all does), with
``[network]/driver = kuryr`` and the ``zun`` service user in ``[keystone_auth]``. Every test
uses its own Keystone project and Neutron networks (unique names) and removes them; the port
ledger (``neutron_support.assert_no_port_leaked``) proves that nothing is left in Neutron.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import neutron_support
import openstack_env
import pytest
from functional.api.resources_support import wait_for
from keystoneauth1 import loading as ks_loading
from unit.api.apptesting import ApiClient

from zun.conf import CONF

pytestmark = pytest.mark.neutron

CIDR = "10.250.{}.0/24"


@pytest.fixture
def kuryr_conf(openstack_cloud: openstack_env.OpenStackCloud) -> Iterator[None]:
    """zun.conf as a kuryr deployment has it (the agent's [keystone_auth] is the zun user)."""
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
    CONF.set_override("region_name", "RegionOne", group="neutron_client")
    yield
    for name in values:
        CONF.clear_override(name, group="keystone_auth")
    CONF.clear_override("driver", group="network")
    CONF.clear_override("region_name", group="neutron_client")


@pytest.fixture(scope="module")
def test_image(docker_client: Any, busybox_image: str, registry: dict[str, str]) -> Iterator[str]:
    ref = neutron_support.own_image(docker_client, busybox_image, registry, "zun-kuryr-test")
    yield ref
    docker_client.api.remove_image(ref)


@pytest.fixture
def cloud(
    openstack_cloud: openstack_env.OpenStackCloud,
    kuryr_conf: None,
    api: ApiClient,
    agent: Any,
    docker_client: Any,
    test_image: str,
) -> Iterator[Any]:
    """A Keystone account, its member API client and token, and a network of its project."""
    account = openstack_env.make_account(openstack_cloud, "zun-kuryr")
    neutron = neutron_support.Neutron(openstack_cloud)
    token = openstack_cloud.session(
        account.username, account.password, account.project_name
    ).get_token()
    octet = 100 + uuid.uuid4().int % 150
    net = neutron.create_network(CIDR.format(octet), project_id=account.project_id)
    member = api.as_member(account.project_id, user=account.user_id).at("1.40")
    env = SimpleNamespace(
        account=account,
        neutron=neutron,
        member=member,
        headers={"X-Auth-Token": token},
        net=net["network"],
        subnet=net["subnet"],
        octet=octet,
        containers=[],
        image=test_image,
        host=agent.host,
        networks=[net["network"]["id"]],
    )
    env.before = neutron.port_ids(env.networks)
    try:
        yield env
    finally:
        try:
            for uuid_ in env.containers:
                member.delete(f"/v1/containers/{uuid_}?stop=true", headers=env.headers)
            for uuid_ in env.containers:
                wait_for(
                    lambda u=uuid_: member.get(f"/v1/containers/{u}").status == 404,
                    60,
                    f"container {uuid_} deleted",
                )
        finally:
            _remove_everything(env, docker_client, neutron, openstack_cloud)


def _remove_everything(
    env: Any,
    docker_client: Any,
    neutron: neutron_support.Neutron,
    cloud: openstack_env.OpenStackCloud,
) -> None:
    """Whatever a test left: the engine containers of its node, kuryr's Docker networks, the Neutron
    resources and the Keystone account (runs even when the deletes above failed)."""
    try:
        for container in docker_client.containers.list(
            ignore_removed=True, all=True, filters={"label": f"zun.host={env.host}"}
        ):
            container.remove(force=True)
        for net_id in env.networks:  # kuryr's Docker networks first: they tag the networks
            for docker_net in docker_client.networks.list(names=[net_id]):
                if docker_net.name == net_id:
                    docker_net.remove()
        neutron.cleanup(env.networks)
    finally:
        openstack_env.delete_account(cloud, env.account)


def _create(env: Any, **body: Any) -> Any:
    body.setdefault("image", env.image)
    body.setdefault("command", ["sleep", "600"])
    body.setdefault("name", neutron_support.unique_name("c"))
    r = env.member.post("/v1/containers", headers=env.headers, json={"run": True, **body})
    if r.status == 202:
        env.containers.append(r.json["uuid"])
    return r


def _settled(env: Any, uuid_: str, timeout: float = 90) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        shown = env.member.get(f"/v1/containers/{uuid_}", headers=env.headers).json
        return shown if shown["status"] not in ("Creating",) and not shown["task_state"] else None

    return wait_for(done, timeout, f"container {uuid_} settled")


def _running(env: Any, **body: Any) -> dict[str, Any]:
    r = _create(env, **body)
    assert r.status == 202, r
    shown = _settled(env, r.json["uuid"])
    assert shown["status"] == "Running", shown
    return shown


def _delete(env: Any, uuid_: str) -> None:
    r = env.member.delete(f"/v1/containers/{uuid_}?stop=true", headers=env.headers)
    assert r.status == 204, r
    wait_for(lambda: env.member.get(f"/v1/containers/{uuid_}").status == 404, 60, "deleted")
    env.containers.remove(uuid_)


def _exec(docker_client: Any, uuid_: str, cmd: list[str]) -> Any:
    return docker_client.containers.get(f"zun-{uuid_}").exec_run(cmd)


def test_create_on_a_network_gets_a_neutron_port(cloud: Any, docker_client: Any) -> None:
    env = cloud
    net_id = env.net["id"]
    shown = _running(env, nets=[{"network": env.net["name"]}])
    addrs = shown["addresses"][net_id]
    assert len(addrs) == 1 and addrs[0]["version"] == 4
    assert addrs[0]["subnet_id"] == env.subnet["id"]
    assert addrs[0]["preserve_on_delete"] is False
    port = env.neutron.port(addrs[0]["port"])
    assert port is not None and port["status"] == "ACTIVE", port
    assert port["device_id"] == shown["uuid"]
    assert port["project_id"] == env.account.project_id
    assert port["fixed_ips"][0]["ip_address"] == addrs[0]["addr"]
    # The original's Docker network: named after the Neutron network, kuryr's driver and IPAM.
    net = docker_client.networks.get(net_id)
    assert net.name == net_id and net.attrs["Driver"] == "kuryr"
    assert net.attrs["IPAM"]["Driver"] == "kuryr"
    assert net.attrs["Options"]["neutron.net.uuid"] == net_id
    assert net.attrs["Options"]["neutron.subnet.uuid"] == env.subnet["id"]
    listed = env.member.get(
        f"/v1/containers/{shown['uuid']}/network_list", headers=env.headers
    ).json["networks"]
    assert listed == [
        {
            "net_id": net_id,
            "port_id": addrs[0]["port"],
            "fixed_ips": [
                {"ip_address": addrs[0]["addr"], "version": 4, "subnet_id": env.subnet["id"]}
            ],
        }
    ]
    _delete(env, shown["uuid"])
    neutron_support.assert_no_port_leaked(env.neutron, env.networks, env.before)


def test_fixed_ips_and_traffic_between_containers(cloud: Any, docker_client: Any) -> None:
    env = cloud
    fixed = f"10.250.{env.octet}.77"
    a = _running(
        env,
        nets=[{"network": env.net["id"], "v4-fixed-ip": fixed}],
        command=["sh", "-c", "while true; do echo kuryr | nc -l -p 7000; done"],
    )
    assert a["addresses"][env.net["id"]][0]["addr"] == fixed
    b = _running(env, nets=[{"network": env.net["id"]}])
    # TCP between the two (the project's default group lets its members in; containers have
    # no NET_RAW, so no ping)
    got = _exec(docker_client, b["uuid"], ["nc", "-w", "5", fixed, "7000"])
    assert got.output.strip() == b"kuryr", got
    # the same address again: Neutron has it, the API answers at once and makes nothing
    r = _create(env, nets=[{"network": env.net["id"], "v4-fixed-ip": fixed}])
    assert (r.status, r.error["code"]) == (409, "container.conflict"), r
    r = _create(env, nets=[{"network": env.net["id"], "v4-fixed-ip": "192.0.2.9"}])
    assert (r.status, r.error["code"]) == (400, "container.invalid"), r
    for shown in (a, b):
        _delete(env, shown["uuid"])
    neutron_support.assert_no_port_leaked(env.neutron, env.networks, env.before)


def test_a_port_the_user_brings_is_kept(cloud: Any) -> None:
    env = cloud
    port = env.neutron.create_port(env.net["id"], project_id=env.account.project_id)
    shown = _running(env, nets=[{"port": port["id"]}])
    addrs = shown["addresses"][env.net["id"]]
    assert [a["port"] for a in addrs] == [port["id"]] and addrs[0]["preserve_on_delete"]
    assert env.neutron.port(port["id"])["status"] == "ACTIVE"
    # in use now: a second container cannot take it
    r = _create(env, nets=[{"port": port["id"]}])
    assert (r.status, r.error["code"]) == (400, "container.port-in-use"), r
    _delete(env, shown["uuid"])
    kept = env.neutron.port(port["id"])
    assert kept is not None and kept["device_id"] == "" and kept["device_owner"] == "", kept
    neutron_support.assert_no_port_leaked(env.neutron, env.networks, env.before | {port["id"]})


def test_security_groups_and_exposed_ports(cloud: Any, docker_client: Any) -> None:
    env = cloud
    project = env.account.project_id
    open_icmp = env.neutron.create_security_group(
        project_id=project, rules=[{"protocol": "icmp", "remote_ip_prefix": "0.0.0.0/0"}]
    )
    extra = env.neutron.create_security_group(project_id=project)
    shown = _running(env, nets=[{"network": env.net["id"]}], security_groups=[open_icmp["name"]])
    assert shown["security_groups"] == [open_icmp["id"]]
    port_id = shown["addresses"][env.net["id"]][0]["port"]
    assert env.neutron.port(port_id)["security_groups"] == [open_icmp["id"]]
    uuid_ = shown["uuid"]
    r = env.member.at("1.14").post(
        f"/v1/containers/{uuid_}/add_security_group",
        headers=env.headers,
        json={"name": extra["name"]},
    )
    assert r.status == 202, r
    _settled(env, uuid_)
    assert set(env.neutron.port(port_id)["security_groups"]) == {open_icmp["id"], extra["id"]}
    r = env.member.at("1.14").post(
        f"/v1/containers/{uuid_}/remove_security_group",
        headers=env.headers,
        json={"name": extra["id"]},
    )
    assert r.status == 202, r
    shown = _settled(env, uuid_)
    assert env.neutron.port(port_id)["security_groups"] == [open_icmp["id"]]
    assert shown["security_groups"] == [open_icmp["id"]]
    r = env.member.at("1.14").post(
        f"/v1/containers/{uuid_}/add_security_group",
        headers=env.headers,
        json={"name": "no-such-group"},
    )
    assert (r.status, r.error["code"]) == (400, "container.invalid-value"), r
    r = _create(env, nets=[{"network": env.net["id"]}], security_groups=["no-such-group"])
    assert (r.status, r.error["code"]) == (400, "container.invalid-value"), r

    # exposed_ports: a group zun-<uuid> opening 8080/tcp, removed with the container
    web = _running(
        env,
        nets=[{"network": env.net["id"]}],
        exposed_ports={"8080/tcp": {}},
        command=["sh", "-c", "while true; do echo hi | nc -l -p 8080; done"],
    )
    groups = env.neutron.security_groups(name=f"zun-{web['uuid']}")
    assert len(groups) == 1 and groups[0]["id"] in web["security_groups"]
    rules = [r for r in groups[0]["security_group_rules"] if r["direction"] == "ingress"]
    assert {(r["protocol"], r["port_range_min"]) for r in rules} == {("tcp", 8080)}
    web_ip = web["addresses"][env.net["id"]][0]["addr"]
    got = _exec(docker_client, uuid_, ["nc", "-w", "5", web_ip, "8080"])
    assert got.output.strip() == b"hi", got
    _delete(env, web["uuid"])
    assert not env.neutron.security_groups(name=f"zun-{web['uuid']}")
    _delete(env, uuid_)
    neutron_support.assert_no_port_leaked(env.neutron, env.networks, env.before)


def test_attach_and_detach(cloud: Any) -> None:
    env = cloud
    other = env.neutron.create_network(
        CIDR.format((env.octet + 1) % 250), project_id=env.account.project_id
    )["network"]
    env.networks.append(other["id"])
    before = env.neutron.port_ids(env.networks)
    shown = _running(env, nets=[{"network": env.net["id"]}])
    uuid_ = shown["uuid"]
    r = env.member.post(
        f"/v1/containers/{uuid_}/network_attach?network={other['name']}", headers=env.headers
    )
    assert r.status == 200, r
    shown = _settled(env, uuid_)
    assert set(shown["addresses"]) == {env.net["id"], other["id"]}
    port_id = shown["addresses"][other["id"]][0]["port"]
    assert env.neutron.wait_port(port_id)["device_id"] == uuid_
    r = env.member.post(
        f"/v1/containers/{uuid_}/network_attach?network={other['id']}", headers=env.headers
    )
    assert (r.status, r.error["code"]) == (400, "container.invalid"), r
    r = env.member.post(
        f"/v1/containers/{uuid_}/network_detach?port={port_id}", headers=env.headers
    )
    assert r.status == 202, r
    shown = _settled(env, uuid_)
    assert set(shown["addresses"]) == {env.net["id"]}
    assert env.neutron.port(port_id) is None
    r = env.member.post(
        f"/v1/containers/{uuid_}/network_detach?network={other['id']}", headers=env.headers
    )
    assert (r.status, r.error["code"]) == (400, "container.invalid"), r
    _delete(env, uuid_)
    neutron_support.assert_no_port_leaked(env.neutron, env.networks, before)


def test_refusals_and_failures_leave_no_port(cloud: Any) -> None:
    env = cloud
    r = _create(env, nets=[{"network": neutron_support.unique_name("missing")}])
    assert (r.status, r.error["code"]) == (404, "container.network-not-found"), r
    r = _create(env, nets=[{"port": str(uuid.uuid4())}])
    assert (r.status, r.error["code"]) == (404, "container.port-not-found"), r
    # a create that fails on the node after its port was made: the start fails
    r = _create(env, nets=[{"network": env.net["id"]}], command=["/no/such/program"])
    assert r.status == 202, r
    shown = _settled(env, r.json["uuid"])
    assert shown["status"] == "Error", shown
    neutron_support.assert_no_port_leaked(env.neutron, env.networks, env.before)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_neutron_unreachable_is_503(cloud: Any) -> None:
    env = cloud
    CONF.set_override("region_name", "NoSuchRegion", group="neutron_client")
    try:
        r = _create(env, nets=[{"network": env.net["id"]}])
        assert (r.status, r.error["code"]) == (503, "container.neutron-unavailable"), r
        assert "Neutron" in r.error["detail"]
    finally:
        CONF.set_override("region_name", "RegionOne", group="neutron_client")
    CONF.set_override("auth_url", f"http://127.0.0.1:{_closed_port()}/v3", group="keystone_auth")
    r = _create(env, nets=[{"network": env.net["id"]}])
    assert (r.status, r.error["code"]) == (503, "container.neutron-unavailable"), r
    assert env.member.get("/v1/containers", headers=env.headers).json["containers"] == []


def test_networks_resource_wraps_a_neutron_network(
    cloud: Any, api: ApiClient, docker_client: Any
) -> None:
    env = cloud
    sess = openstack_env.running_cloud().session()  # type: ignore[union-attr]
    admin = api.as_admin(sess.get_project_id()).at("1.40")
    token = {"X-Auth-Token": sess.get_token()}
    r = admin.post(
        "/v1/networks", headers=token, json={"name": "kuryr-net", "neutron_net_id": env.net["id"]}
    )
    assert r.status == 200, r
    net = docker_client.networks.get(env.net["id"])
    assert net.attrs["Driver"] == "kuryr" and r.json["network_id"] == net.id
    r = admin.post(
        "/v1/networks",
        headers=token,
        json={"name": "kuryr-net", "neutron_net_id": str(uuid.uuid4())},
    )
    assert (r.status, r.error["code"]) == (404, "container.network-not-found"), r
    r = admin.delete(f"/v1/networks/{env.net['id']}", headers=token)
    assert r.status == 204, r
    assert not [
        n for n in docker_client.networks.list(names=[env.net["id"]]) if n.name == env.net["id"]
    ]


def _network_rows(net_id: str) -> list[Any]:
    from zun.db import engine as db_engine
    from zun.db.queries import networks as network_q

    with db_engine.transaction(readonly=True) as session:
        rows = network_q.by_neutron_id(session, net_id)
        session.expunge_all()
    return rows


def _admin(api: ApiClient) -> tuple[Any, dict[str, str]]:
    sess = openstack_env.running_cloud().session()  # type: ignore[union-attr]
    return api.as_admin(sess.get_project_id()).at("1.40"), {"X-Auth-Token": sess.get_token()}


def test_containers_record_the_docker_network_as_the_original(
    cloud: Any, api: ApiClient, docker_client: Any
) -> None:
    """The Docker network a create makes gets the original's row (one per network and host,
    even for two creates at once), with an IPAM pool of this host's; DELETE /v1/networks
    removes it: 409 while a container uses it, then network, row and pool go."""
    env = cloud
    net_id = env.net["id"]
    created = [_create(env, nets=[{"network": net_id}]) for _ in range(2)]
    shown = [_settled(env, r.json["uuid"]) for r in created]
    assert [s["status"] for s in shown] == ["Running", "Running"], shown
    (row,) = _network_rows(net_id)
    docker_net = docker_client.networks.get(net_id)
    assert (row.name, row.neutron_net_id, row.host, row.network_id) == (
        net_id,
        net_id,
        env.host,
        docker_net.id,
    )
    assert (row.project_id, row.user_id) == (env.account.project_id, env.account.user_id)
    (pool,) = env.neutron.zun_pools([net_id])
    assert pool["name"] == f"zun-pool-{env.subnet['id']}-{env.host}"
    assert pool["prefixes"] == [env.subnet["cidr"]]
    for options in (docker_net.attrs["Options"], docker_net.attrs["IPAM"]["Options"]):
        assert options["neutron.pool.uuid"] == pool["id"]

    admin, token = _admin(api)
    r = admin.post("/v1/networks", headers=token, json={"name": "again", "neutron_net_id": net_id})
    assert (r.status, r.error["code"]) == (409, "container.network-already-exists"), r
    r = admin.delete(f"/v1/networks/{net_id}", headers=token)
    assert r.status == 409, r
    assert [n.uuid for n in _network_rows(net_id)] == [row.uuid]
    for s in shown:
        _delete(env, s["uuid"])
    # As the original: the row outlives the containers, until the network is deleted.
    assert [n.uuid for n in _network_rows(net_id)] == [row.uuid]
    r = admin.delete(f"/v1/networks/{net_id}", headers=token)
    assert r.status == 204, r
    assert _network_rows(net_id) == []
    assert not [n for n in docker_client.networks.list(names=[net_id]) if n.name == net_id]
    assert env.neutron.zun_pools([net_id]) == []
    neutron_support.assert_no_port_leaked(env.neutron, env.networks, env.before)


def test_a_docker_network_that_cannot_be_made_leaves_no_row_and_no_pool(cloud: Any) -> None:
    env = cloud
    CONF.set_override("driver_name", "zun-test-no-such-plugin", group="network")
    try:
        r = _create(env, nets=[{"network": env.net["id"]}])
        assert r.status == 202, r
        shown = _settled(env, r.json["uuid"], timeout=120)
    finally:
        CONF.clear_override("driver_name", group="network")
    assert shown["status"] == "Error", shown
    assert _network_rows(env.net["id"]) == []
    assert env.neutron.zun_pools([env.net["id"]]) == []
    neutron_support.assert_no_port_leaked(env.neutron, env.networks, env.before)


def test_capsule_sandbox_gets_the_port_and_members_share_it(cloud: Any, docker_client: Any) -> None:
    env = cloud
    CONF.set_override("sandbox_image_pull_policy", "never")
    try:
        template = {
            "kind": "capsule",
            "metadata": {"name": neutron_support.unique_name("pod")},
            "spec": {
                "containers": [
                    {
                        "image": env.image,
                        "imagePullPolicy": "IfNotPresent",
                        "command": ["sh", "-c", "while true; do echo pod | nc -l -p 8080; done"],
                        "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                    }
                ]
            },
        }
        r = env.member.at("1.40").post(
            "/v1/capsules", headers=env.headers, json={"template": template}
        )
        assert r.status == 202, r
        uuid_ = r.json["uuid"]

        def settled() -> Any:
            shown = env.member.get(f"/v1/capsules/{uuid_}", headers=env.headers).json
            return shown if shown["status"] not in ("Creating",) else None

        capsule = wait_for(settled, 120, "capsule settled")
        assert capsule["status"] == "Running", capsule
        # the project's (only) network, chosen as the original chose it
        addrs = capsule["addresses"][env.net["id"]]
        port = env.neutron.port(addrs[0]["port"])
        assert port["device_id"] == uuid_ and port["status"] == "ACTIVE", port
        assert capsule["containers"][0]["addresses"] == capsule["addresses"]
        group = env.neutron.security_groups(name=f"zun-{uuid_}")
        assert len(group) == 1 and port["security_groups"] == [group[0]["id"]]
        # a container of the project reaches the member through the sandbox's port
        client = _running(env, nets=[{"network": env.net["id"]}])
        got = _exec(docker_client, client["uuid"], ["nc", "-w", "5", addrs[0]["addr"], "8080"])
        assert got.output.strip() == b"pod", got
        r = env.member.delete(f"/v1/capsules/{uuid_}", headers=env.headers)
        assert r.status == 204, r
        wait_for(
            lambda: env.member.get(f"/v1/capsules/{uuid_}", headers=env.headers).status == 404,
            60,
            "gone",
        )
        assert env.neutron.port(addrs[0]["port"]) is None
        assert not env.neutron.security_groups(name=f"zun-{uuid_}")
        _delete(env, client["uuid"])
    finally:
        CONF.clear_override("sandbox_image_pull_policy")
    neutron_support.assert_no_port_leaked(env.neutron, env.networks, env.before)


def test_a_refused_token_is_401(cloud: Any) -> None:
    env = cloud
    bad = {"X-Auth-Token": "gAAAAA-not-a-token"}
    r = env.member.post(
        "/v1/containers",
        headers=bad,
        json={"image": env.image, "nets": [{"network": env.net["id"]}], "run": True},
    )
    assert (r.status, r.error["code"]) == (401, "container.token-refused"), r
    assert env.member.get("/v1/containers", headers=env.headers).json["containers"] == []


def test_dual_stack_fixed_ips_and_attach_by_port_and_fixed_ip(cloud: Any) -> None:
    env = cloud
    project = env.account.project_id
    v6 = env.neutron.add_subnet(env.net["id"], f"fd00:{env.octet:x}::/64", project_id=project)
    fixed6 = f"fd00:{env.octet:x}::66"
    shown = _running(env, nets=[{"network": env.net["id"], "v6-fixed-ip": fixed6}])
    addrs = shown["addresses"][env.net["id"]]
    assert {(a["version"], a["subnet_id"]) for a in addrs} >= {(6, v6["id"])}, addrs
    assert fixed6 in {a["addr"] for a in addrs}
    uuid_ = shown["uuid"]
    # attach a second network by a port the user made, then a third by a fixed IP
    second = env.neutron.create_network(CIDR.format((env.octet + 2) % 250), project_id=project)
    third = env.neutron.create_network(CIDR.format((env.octet + 3) % 250), project_id=project)
    env.networks += [second["network"]["id"], third["network"]["id"]]
    before = env.neutron.port_ids(env.networks)
    port = env.neutron.create_port(second["network"]["id"], project_id=project)
    r = env.member.post(
        f"/v1/containers/{uuid_}/network_attach?port={port['id']}", headers=env.headers
    )
    assert r.status == 200, r
    shown = _settled(env, uuid_)
    assert shown["addresses"][second["network"]["id"]][0]["preserve_on_delete"] is True
    fixed = f"10.250.{(env.octet + 3) % 250}.55"
    r = env.member.post(
        f"/v1/containers/{uuid_}/network_attach?network={third['network']['id']}&fixed_ip={fixed}",
        headers=env.headers,
    )
    assert r.status == 200, r
    shown = _settled(env, uuid_)
    assert shown["addresses"][third["network"]["id"]][0]["addr"] == fixed
    _delete(env, uuid_)
    kept = env.neutron.port(port["id"])
    assert kept is not None and kept["device_id"] == "", kept
    neutron_support.assert_no_port_leaked(env.neutron, env.networks, before | {port["id"]})


def test_a_create_done_again_replaces_the_ports_of_the_earlier_attempt(
    cloud: Any, docker_client: Any, tmp_path: Any
) -> None:
    """A create replayed after a node restart, or on another host after node loss, finds a
    port the dead attempt made (device = the container): it is deleted, not leaked, and its
    fixed IP is free for the new port."""
    from zun.compute.container_resources import NodeResources, Taken

    env = cloud
    uuid_ = str(uuid.uuid4())
    fixed = f"10.250.{env.octet}.88"
    old = env.neutron.create_port(
        env.net["id"],
        project_id=env.account.project_id,
        device_id=uuid_,
        device_owner="compute:kuryr",
        fixed_ips=[{"ip_address": fixed}],
    )
    row = SimpleNamespace(
        uuid=uuid_,
        project_id=env.account.project_id,
        user_id=env.account.user_id,
        security_groups=None,
        exposed_ports=None,
        addresses=None,
    )
    resources = NodeResources("replay-host", lambda: docker_client, lambda: tmp_path)
    taken = Taken()
    networking = resources._kuryr_networking(
        row,
        [{"network": env.net["id"], "port": "", "fixed_ip": fixed, "preserve_on_delete": False}],
        taken,
    )
    assert env.neutron.port(old["id"]) is None
    [new] = row.addresses[env.net["id"]]
    assert new["addr"] == fixed and new["port"] != old["id"]
    assert networking["endpoints"] == {env.net["id"]: {"ipv4_address": fixed}}
    resources.release_neutron(row, taken)
    neutron_support.assert_no_port_leaked(env.neutron, env.networks, env.before)


def test_delete_while_neutron_is_unreachable_keeps_the_row_and_the_port(cloud: Any) -> None:
    env = cloud
    shown = _running(env, nets=[{"network": env.net["id"]}])
    uuid_ = shown["uuid"]
    port_id = shown["addresses"][env.net["id"]][0]["port"]
    CONF.set_override("region_name", "NoSuchRegion", group="neutron_client")
    try:
        r = env.member.delete(f"/v1/containers/{uuid_}?stop=true", headers=env.headers)
        assert r.status == 204, r
        failed = _settled(env, uuid_)
    finally:
        CONF.set_override("region_name", "RegionOne", group="neutron_client")
    assert failed["status"] == "Error" and "Neutron" in failed["status_reason"], failed
    assert env.neutron.port(port_id) is not None
    _delete(env, uuid_)  # Neutron back: the delete finishes, the port goes
    neutron_support.assert_no_port_leaked(env.neutron, env.networks, env.before)


def test_a_row_of_a_host_without_compute_service_goes_with_its_pool(
    cloud: Any, api: ApiClient
) -> None:
    """A host whose zun-compute service is gone keeps no row and no pool after DELETE
    /v1/networks (the API removes its pool: no node will); the live host's go as usual."""
    from zun.db import engine as db_engine
    from zun.db.queries import networks as network_q

    env = cloud
    net_id = env.net["id"]
    _delete(env, _running(env, nets=[{"network": net_id}])["uuid"])
    ghost = f"zt-gone-{uuid.uuid4().hex[:8]}"
    env.neutron._post(
        "subnetpools",
        {
            "subnetpool": {
                "name": f"{neutron_support.ZUN_POOL_PREFIX}{env.subnet['id']}-{ghost}",
                "prefixes": [env.subnet["cidr"]],
            }
        },
    )
    with db_engine.transaction() as session:
        network_q.create(session, {"name": net_id, "neutron_net_id": net_id, "host": ghost})
    assert len(env.neutron.zun_pools([net_id])) == 2
    admin, token = _admin(api)
    r = admin.delete(f"/v1/networks/{net_id}", headers=token)
    assert r.status == 204, r
    assert _network_rows(net_id) == []
    assert env.neutron.zun_pools([net_id]) == []
