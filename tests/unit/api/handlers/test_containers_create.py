"""POST /v1/containers: every version window, schemas, field checks, policies, scheduling."""

from __future__ import annotations

from typing import Any

import pytest
from unit.api.handlers import containers_support as support
from unit.api.handlers.containers_support import (
    PROJECT_A,
    container_row,
    db_row,
    node_usage,
    set_rules,
)

from zun.api.microversion import Version
from zun.common import rpc
from zun.conf import CONF

# Fixtures shared by the container API tests.
bus = support.bus
node1 = support.node1
nodes = support.nodes
policy_reset = support.policy_reset


def _create(api: Any, body: dict[str, Any], version: str = "1.40", query: str = "") -> Any:
    return api.at(version).post("/v1/containers" + query, json=body)


@pytest.mark.parametrize("version", ["1.1", "1.19", "1.20", "1.35", "1.36", "1.38", "1.39", "1.40"])
def test_create_every_window_202_location_and_cast(api, node1, version):
    legacy = Version.parse(version) < Version.parse("1.20")
    command: Any = "sh -c 'echo hi; sleep 5'" if legacy else ["sh", "-c", "echo hi; sleep 5"]
    r = _create(api, {"image": "busybox", "command": command}, version, "?run=True")
    assert r.status == 202, r
    body = r.json
    assert r.headers["Location"] == f"http://zun.test:9517/v1/containers/{body['uuid']}"
    assert body["status"] == "Creating"
    assert body["command"] == ["sh", "-c", "echo hi; sleep 5"]
    assert body["memory"] == "512" and body["cpu"] == 1.0
    assert body["links"][0]["href"].endswith(body["uuid"])
    assert r.headers["OpenStack-API-Version"] == f"container {version}"
    msg = node1.wait_for("container_create")[0]
    assert msg.kwargs == {
        "container_uuid": body["uuid"],
        "run": True,
        "requested_networks": [],
        "requested_volumes": [],
    }
    assert msg.context["request_id"] == r.headers["x-openstack-request-id"]


def test_create_records_action_with_request_id(api, node1):
    r = _create(api, {"image": "busybox"})
    uuid, req_id = r.json["uuid"], r.headers["x-openstack-request-id"]
    actions = api.at("1.40").get(f"/v1/containers/{uuid}/container_actions").json
    assert [a["action"] for a in actions["containerActions"]] == ["create"]
    assert actions["containerActions"][0]["request_id"] == req_id
    one = api.at("1.40").get(f"/v1/containers/{uuid}/container_actions/{req_id}")
    # One event per host the create is tried on (the node adds its own when it is done).
    assert one.status == 200 and one.json["finish_time"] is None
    assert [(e["event"], e["result"]) for e in one.json["events"]] == [
        ("schedule_attempt", "Success")
    ]


def test_create_claims_resources_on_the_node(api, node1):
    _create(api, {"image": "busybox", "cpu": 0.5, "memory": 256, "disk": 3})
    assert node_usage() == (0.5, 256, 3)


def test_command_string_list_rules(api, node1):
    # Before 1.20 a list is refused by the schema; from 1.20 a string is.
    r = _create(api, {"image": "busybox", "command": ["ls"]}, "1.19")
    assert r.status == 400 and r.error["code"] == "container.schema-validation-error"
    r = _create(api, {"image": "busybox", "command": "ls -l"}, "1.20")
    assert r.status == 400 and r.error["code"] == "container.schema-validation-error"


@pytest.mark.parametrize(
    "version,body,tty",
    [
        ("1.19", {"interactive": True}, False),
        ("1.20", {"interactive": True}, True),
        ("1.35", {"interactive": "true", "tty": False}, True),
        ("1.36", {"interactive": True}, False),
        ("1.40", {"interactive": True, "tty": "True"}, True),
    ],
)
def test_tty_follows_interactive_between_120_and_135(api, node1, version, body, tty):
    r = _create(api, {"image": "busybox", **body}, version)
    assert r.status == 202, r
    assert r.json["interactive"] is True and r.json["tty"] is tty


@pytest.mark.parametrize(
    "field,value,min_version",
    [
        ("auto_remove", True, "1.3"),
        ("runtime", "runc", "1.5"),
        ("hostname", "h1", "1.9"),
        ("mounts", [{"source": "v", "destination": "/d"}], "1.11"),
        ("privileged", False, "1.21"),
        ("healthcheck", {"cmd": "true"}, "1.22"),
        ("exposed_ports", {"80": {}}, "1.24"),
        ("registry", "myreg", "1.31"),
    ],
)
def test_field_before_its_version_is_invalid_param_in_version(
    api, node1, field, value, min_version
):
    minor = int(min_version.split(".")[1]) - 1
    r = _create(api, {"image": "busybox", field: value}, f"1.{minor}")
    assert r.status == 400, r
    assert r.error["code"] == "container.invalid-param-in-version"
    assert r.error["title"] == (
        f"Invalid param {field} because current request version is "
        f"1.{minor}. {field} is only supported from version "
        f"{min_version}"
    )


def test_host_only_in_139_schema(api, node1):
    r = _create(api, {"image": "busybox", "host": "node1"}, "1.38")
    assert r.status == 400 and "'host' was unexpected" in r.error["title"]
    r = _create(api, {"image": "busybox", "entrypoint": ["sh"]}, "1.39")
    assert r.status == 400 and "'entrypoint' was unexpected" in r.error["title"]


def test_requested_host_admin_only_and_must_exist(api, node1):
    member = api.as_member(PROJECT_A).at("1.39")
    r = member.post("/v1/containers", json={"image": "busybox", "host": "node1"})
    assert r.status == 403 and r.error["code"] == "container.policy-not-authorized"
    assert "container:create:requested_destination" in r.error["title"]
    r = _create(api, {"image": "busybox", "host": "nope"}, "1.39")
    assert r.status == 404 and r.error["code"] == "container.requested-host-not-found"
    assert api.at("1.40").get("/v1/containers").json["containers"] == []
    r = _create(api, {"image": "busybox", "host": "node1"}, "1.39")
    assert r.status == 202 and r.json["host"] == "node1"


@pytest.mark.parametrize(
    "field,value,rule",
    [
        ("privileged", False, "container:create:privileged"),
        ("runtime", "runc", "container:create:runtime"),
        ("image_pull_policy", "always", "container:create:image_pull_policy"),
    ],
)
def test_field_policies(api, node1, field, value, rule):
    r = (
        api.as_member(PROJECT_A)
        .at("1.40")
        .post("/v1/containers", json={"image": "busybox", field: value})
    )
    assert r.status == 403 and r.error["title"] == f"Policy doesn't allow {rule} to be performed."


def test_privileged_denied_even_to_admins(api, node1):
    r = _create(api, {"image": "busybox", "privileged": True})
    assert r.status == 403


def test_admin_may_set_runtime_and_sees_admin_fields(api, node1):
    r = _create(api, {"image": "busybox", "runtime": "runc", "image_pull_policy": "ifnotpresent"})
    assert r.status == 202
    assert r.json["runtime"] == "runc" and r.json["image_pull_policy"] == "ifnotpresent"
    member_view = (
        api.as_member(PROJECT_A).at("1.40").post("/v1/containers", json={"image": "busybox"}).json
    )
    for hidden in ("host", "runtime", "privileged", "image_pull_policy"):
        assert hidden not in member_view


def test_defaults_and_normalisation(api, node1):
    body = {
        "image": "busybox",
        "labels": {"a": 1},
        "restart_policy": {"Name": "on-failure", "MaximumRetryCount": 3},
        "exposed_ports": {"80": {}, "53/udp": {}},
        "healthcheck": {"cmd": "true"},
        "memory": "64",
        "cpu": "0.25",
        "image_driver": "None",
    }
    r = _create(api, body)
    assert r.status == 202, r
    view = r.json
    assert view["labels"] == {"a": "1"}
    assert view["restart_policy"] == {"Name": "on-failure", "MaximumRetryCount": "3"}
    assert view["healthcheck"] == {"test": "true"}
    assert view["memory"] == "64" and view["cpu"] == 0.25 and view["image_driver"] == "docker"
    assert view["name"].endswith("-container")
    assert db_row(view["uuid"]).exposed_ports == {"80/tcp": {}, "53/udp": {}}


def test_security_groups_deduplicated_and_exclusive_with_exposed_ports(api, node1):
    r = _create(api, {"image": "busybox", "security_groups": ["x", "x", "y"]})
    assert r.status == 202 and r.json["security_groups"] == ["x", "y"]
    r = _create(api, {"image": "busybox", "security_groups": ["x"], "exposed_ports": {"80": {}}})
    assert r.status == 400 and r.error["code"] == "container.schema-validation-error"


def test_restart_policy_always_with_count_is_invalid_value(api, node1):
    r = _create(
        api, {"image": "busybox", "restart_policy": {"Name": "always", "MaximumRetryCount": 2}}
    )
    assert r.status == 400 and r.error["code"] == "container.invalid-value"


def test_run_param_body_or_query_and_bad_value(api, node1):
    r = _create(api, {"image": "busybox", "run": True})
    assert r.status == 202
    assert node1.wait_for("container_create")[0].kwargs["run"] is True
    r = _create(api, {"image": "busybox"}, query="?run=maybe")
    assert r.status == 400 and r.error["code"] == "container.schema-validation-error"
    r = _create(api, {"image": "busybox"}, query="?foo=1")
    assert r.status == 400 and "'foo' was unexpected" in r.error["title"]


def test_schema_errors(api, node1):
    r = _create(api, {"cpu": 1})
    assert r.status == 400 and r.error["title"] == "'image' is a required property"
    r = _create(api, {"image": "busybox", "cpu": 1000})
    assert r.status == 400 and r.error["title"].startswith("Invalid input for field 'cpu'")
    r = _create(api, {"image": "busybox", "bogus": 1})
    assert r.status == 400 and "'bogus' was unexpected" in r.error["title"]


def test_wrong_content_type_is_415(api, node1):
    r = api.at("1.40").post(
        "/v1/containers", body=b'{"image": "busybox"}', content_type="text/plain"
    )
    assert r.status == 415


def test_create_outside_window_of_schema_is_not_406(api, node1):
    # Every version has a create handler; an out-of-range version is refused globally.
    r = api.at("1.42").post("/v1/containers", json={"image": "busybox"})
    assert r.status == 406


def test_no_valid_host_202_with_error(api, nodes, seed):
    r = _create(api, {"image": "busybox"})
    assert r.status == 202
    assert r.json["status"] == "Error"
    assert r.json["status_reason"] == "There are not enough hosts available."
    assert r.json["task_state"] is None


def test_no_room_on_node_is_no_valid_host(api, node1):
    r = _create(api, {"image": "busybox", "memory": 8192, "cpu": 4})
    assert r.status == 202 and r.json["status"] == "Creating"
    # 8192 MiB minus the 512 MiB host reserve, times 1.5: 11520 MiB in all.
    r = _create(api, {"image": "busybox", "memory": 4096})
    assert r.status == 202 and r.json["status"] == "Error"
    assert node_usage()[1] == 8192


def test_more_than_the_nodes_physical_cpus_or_memory_is_no_valid_host(api, nodes, seed):
    # The node's ratios would let both through ((2 - 0) x 16 CPUs, (2048 - 512) x 4 MiB);
    # the engine could never honour either, so the API refuses them instead of the node.
    seed.service("small")
    seed.compute_node(
        "small",
        cpus=2,
        cpu_used=0.0,
        mem_total=2048,
        mem_used=0,
        disk_used=0,
        ram_allocation_ratio=4.0,
    )
    nodes.start("small")
    r = _create(api, {"image": "busybox", "cpu": 3})
    assert r.status == 202 and r.json["status"] == "Error"
    assert r.json["status_reason"] == "There are not enough hosts available."
    r = _create(api, {"image": "busybox", "memory": 2049})
    assert r.json["status"] == "Error"
    r = _create(api, {"image": "busybox", "cpu": 2, "memory": 2048})
    assert r.json["status"] == "Creating" and r.json["host"] == "small"
    assert node_usage("small") == (2.0, 2048, 0)


def test_spread_puts_a_projects_containers_apart_then_balances(api, nodes, seed):
    for host in ("a", "b"):
        seed.service(host)
        seed.compute_node(host, cpus=4, cpu_used=0.0, mem_total=8192, mem_used=0, disk_used=0)
        nodes.start(host)
    for _ in range(3):
        seed.row(container_row(host="a", project_id="project-other", cpu=None, memory=None))
    seed.row(container_row(host="b", project_id=PROJECT_A, cpu=None, memory=None))
    member = api.as_member(PROJECT_A).at("1.40")
    hosts = [
        db_row(member.post("/v1/containers", json={"image": "busybox"}).json["uuid"]).host
        for _ in range(4)
    ]
    # a holds none of project-a's containers (anti-affinity beats a's larger count), then the
    # project has one on each and b holds fewer in all, and so on.
    assert hosts == ["a", "b", "a", "b"]


def test_dead_or_disabled_or_other_zone_node_is_not_chosen(api, nodes, seed):
    import datetime

    old = datetime.datetime(2020, 1, 1)
    seed.service("dead", seen=old)
    seed.compute_node("dead", cpus=4, cpu_used=0, mem_total=8192, mem_used=0, disk_used=0)
    seed.service("off", disabled=True)
    seed.compute_node("off", cpus=4, cpu_used=0, mem_total=8192, mem_used=0, disk_used=0)
    seed.service("zoned", availability_zone="az2")
    seed.compute_node("zoned", cpus=4, cpu_used=0, mem_total=8192, mem_used=0, disk_used=0)
    r = _create(api, {"image": "busybox", "availability_zone": "nova"})
    assert r.json["status"] == "Error"
    r = _create(api, {"image": "busybox", "availability_zone": "az2"})
    assert r.json["status"] == "Creating" and r.json["host"] == "zoned"


def test_runtime_filter(api, nodes, seed):
    seed.service("n2")
    seed.compute_node("n2", cpus=4, cpu_used=0, mem_total=8192, mem_used=0, runtimes=["runc"])
    r = _create(api, {"image": "busybox", "runtime": "kata"})
    assert r.json["status"] == "Error"
    r = _create(api, {"image": "busybox", "runtime": "runc"})
    assert r.json["status"] == "Creating"


@pytest.fixture
def name_scope() -> Any:
    CONF.set_override("unique_container_name_scope", "project", group="compute")
    yield
    CONF.clear_override("unique_container_name_scope", group="compute")


def test_unique_name_scope_project(api, node1, name_scope):
    assert _create(api, {"image": "busybox", "name": "Web"}).status == 202
    r = _create(api, {"image": "busybox", "name": "web"})
    assert r.status == 409 and r.error["code"] == "container.container-already-exists"
    assert r.error["title"] == "A container with name web already exists."
    other = (
        api.as_member(PROJECT_A)
        .at("1.40")
        .post("/v1/containers", json={"image": "busybox", "name": "web"})
    )
    assert other.status == 202


def test_over_quota_is_403_and_leaves_no_row(api, node1):
    CONF.set_override("containers", 1, group="quota")
    try:
        member = api.as_member(PROJECT_A).at("1.40")
        assert member.post("/v1/containers", json={"image": "busybox"}).status == 202
        r = member.post("/v1/containers", json={"image": "busybox"})
    finally:
        CONF.clear_override("containers", group="quota")
    assert r.status == 403 and r.error["code"] == "container.over-quota"
    assert r.error["title"] == "Quota exceeded for resources: ['containers']"
    assert len(member.get("/v1/containers").json["containers"]) == 1
    assert node_usage()[0] == 1.0


def test_duplicate_names_allowed_without_scope(api, node1):
    assert _create(api, {"image": "busybox", "name": "web"}).status == 202
    assert _create(api, {"image": "busybox", "name": "web"}).status == 202


def test_cast_failure_leaves_error_and_releases_claim(api, bus, seed):
    seed.service("node1")
    seed.compute_node("node1", cpus=4, cpu_used=0.0, mem_total=8192, mem_used=0, disk_used=0)
    # The message bus is gone under the API: the cast cannot be sent.
    rpc.cleanup()
    try:
        r = _create(api, {"image": "busybox", "cpu": 2, "memory": 1024})
        assert r.status == 503 and r.error["code"] == "container.host-unreachable"
        rows = api.at("1.40").get("/v1/containers").json["containers"]
        assert len(rows) == 1 and rows[0]["status"] == "Error"
        assert rows[0]["status_reason"].startswith(
            "The create request could not be sent to host node1"
        )
        assert rows[0]["task_state"] is None
        assert node_usage() == (0.0, 0, 0)
    finally:
        rpc.init(CONF, "fake://")


def test_scheduler_failure_leaves_row_in_error(api, node1):
    CONF.set_override("enabled_filters", ["NoSuchFilter"], group="scheduler")
    try:
        r = _create(api, {"image": "busybox"})
    finally:
        CONF.clear_override("enabled_filters", group="scheduler")
    assert r.status == 404 and r.error["code"] == "container.scheduler-host-filter-not-found"
    rows = api.at("1.40").get("/v1/containers").json["containers"]
    assert rows[0]["status"] == "Error"
    assert rows[0]["status_reason"] == "Unexpected exception occurred."


def test_create_policy_denied(api, node1, policy_reset):
    set_rules({"container:create": "!"})
    r = _create(api, {"image": "busybox"})
    assert r.status == 403 and "container:create" in r.error["title"]


def test_nets_and_mounts_go_to_the_node(api, node1):
    r = _create(
        api,
        {
            "image": "busybox",
            "nets": [{"network": "n1"}],
            "mounts": [{"source": "vol", "destination": "/data"}],
        },
    )
    assert r.status == 202
    msg = node1.wait_for("container_create")[0]
    assert msg.kwargs["requested_networks"] == [{"network": "n1"}]
    assert msg.kwargs["requested_volumes"] == [
        {"type": "volume", "source": "vol", "destination": "/data"}
    ]
