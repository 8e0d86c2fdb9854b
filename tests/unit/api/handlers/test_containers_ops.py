"""Actions on one container: casts, calls, delete, update, rename, windows, policies, races."""

from __future__ import annotations

import base64
import threading
from typing import Any

import pytest
from unit.api.apptesting import container_values
from unit.api.handlers import containers_support as support
from unit.api.handlers.containers_support import (
    PROJECT_A,
    PROJECT_B,
    container_row,
    db_row,
    node_usage,
    set_rules,
)

from zun.common import exception

EXEC_ID = "a" * 64

# Fixtures shared by the container API tests.
bus = support.bus
node1 = support.node1
nodes = support.nodes
policy_reset = support.policy_reset


@pytest.fixture
def member(api):
    return api.as_member(PROJECT_A).at("1.40")


def _make(seed: Any, **values: Any) -> Any:
    return seed.row(container_row(**values))


# --- casts ----------------------------------------------------------------------------------

CASTS = [
    # (path, status allowing it, rpc method, expected kwargs besides container_uuid, task state)
    ("start", "Stopped", "container_start", {}, "container_starting"),
    ("stop?timeout=7", "Running", "container_stop", {"timeout": 7}, "container_stopping"),
    ("stop?timeout=", "Running", "container_stop", {"timeout": None}, "container_stopping"),
    ("reboot?timeout=3", "Running", "container_reboot", {"timeout": 3}, "container_rebooting"),
    ("pause", "Running", "container_pause", {}, "container_pausing"),
    ("unpause", "Paused", "container_unpause", {}, "container_unpausing"),
    ("kill?signal=None", "Running", "container_kill", {"signal": None}, "container_killing"),
    (
        "kill?signal=SIGTERM",
        "Running",
        "container_kill",
        {"signal": "SIGTERM"},
        "container_killing",
    ),
    (
        "rebuild",
        "Running",
        "container_rebuild",
        {"run": True, "image": "busybox", "image_driver": "docker"},
        "container_rebuilding",
    ),
    (
        "rebuild?image=alpine&image_driver=None",
        "Stopped",
        "container_rebuild",
        {"run": False, "image": "alpine", "image_driver": "docker"},
        "container_rebuilding",
    ),
]


@pytest.mark.parametrize("path,status,method,kwargs,task_state", CASTS)
def test_cast_actions(member, node1, seed, path, status, method, kwargs, task_state):
    row = _make(seed, status=status)
    r = member.post(f"/v1/containers/{row.uuid}/{path}")
    assert r.status == 202, r
    assert r.body == b"null"
    msg = node1.wait_for(method)[0]
    assert msg.kwargs == {"container_uuid": row.uuid, **kwargs}
    assert db_row(row.uuid).task_state == task_state
    actions = member.get(f"/v1/containers/{row.uuid}/container_actions").json
    assert actions["containerActions"][0]["request_id"] == r.headers["x-openstack-request-id"]


def test_reboot_and_rebuild_set_status(member, node1, seed):
    row = _make(seed, status="Running")
    assert member.post(f"/v1/containers/{row.uuid}/reboot").status == 202
    assert db_row(row.uuid).status == "Restarting"
    row2 = _make(seed, status="Created")
    assert member.post(f"/v1/containers/{row2.uuid}/rebuild?image=alpine").status == 202
    stored = db_row(row2.uuid)
    assert stored.status == "Rebuilding" and stored.image == "alpine"


@pytest.mark.parametrize(
    "path,status",
    [
        ("start", "Running"),
        ("stop", "Stopped"),
        ("pause", "Paused"),
        ("unpause", "Running"),
        ("kill", "Stopped"),
        ("reboot", "Paused"),
        ("rebuild", "Paused"),
    ],
)
def test_state_409(member, node1, seed, path, status):
    row = _make(seed, status=status)
    r = member.post(f"/v1/containers/{row.uuid}/{path}")
    assert r.status == 409 and r.error["code"] == "container.invalid-state-exception"
    assert r.error["title"] == f"Cannot {path} container {row.uuid} in {status} state"
    assert node1.messages == []


def test_action_under_way_is_409(member, node1, seed):
    row = _make(seed, status="Stopped", task_state="container_starting")
    r = member.post(f"/v1/containers/{row.uuid}/start")
    assert r.status == 409
    assert r.error["title"] == (
        f"Cannot start container {row.uuid} in Stopped state (another action is in progress)"
    )


def test_stop_query_schema_also_checks_body(member, node1, seed):
    row = _make(seed, status="Running")
    r = member.post(f"/v1/containers/{row.uuid}/stop", json={"timeout": "abc"})
    assert r.status == 400 and r.error["code"] == "container.schema-validation-error"
    r = member.post(f"/v1/containers/{row.uuid}/stop?bogus=1")
    assert r.status == 400


def test_kill_bad_signal(member, node1, seed):
    row = _make(seed, status="Running")
    r = member.post(f"/v1/containers/{row.uuid}/kill?signal=SIGNOPE")
    assert r.status == 400 and r.error["code"] == "container.schema-validation-error"


def test_rebuild_bad_driver(member, node1, seed):
    row = _make(seed, status="Running")
    r = member.post(f"/v1/containers/{row.uuid}/rebuild?image_driver=foo")
    assert r.status == 400 and r.error["code"] == "container.validation-error"


def test_host_down_is_a_clear_409(member, nodes, seed):
    import datetime

    seed.service("node1", seen=datetime.datetime(2020, 1, 1))
    row = _make(seed, status="Stopped")
    r = member.post(f"/v1/containers/{row.uuid}/start")
    assert r.status == 409 and r.error["code"] == "container.container-host-down"
    assert f"Container {row.uuid} host node1 is not up" in r.error["title"]
    assert db_row(row.uuid).task_state is None
    r = member.get(f"/v1/containers/{row.uuid}/logs")
    assert r.status == 409 and r.error["code"] == "container.container-host-down"


def test_concurrent_starts_one_wins(api, node1, seed):
    row = _make(seed, status="Stopped")
    client = api.as_member(PROJECT_A)
    barrier = threading.Barrier(2)
    results: list[int] = []

    def start() -> None:
        barrier.wait()
        results.append(client.post(f"/v1/containers/{row.uuid}/start").status)

    threads = [threading.Thread(target=start) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [202, 409]
    assert len(node1.wait_for("container_start")) == 1


# --- delete --------------------------------------------------------------------------------


def test_delete_without_host_destroys_row(member, node1, seed):
    row = _make(seed, status="Error", host=None)
    r = member.delete(f"/v1/containers/{row.uuid}")
    assert r.status == 204 and r.body == b""
    assert db_row(row.uuid) is None and node1.messages == []


def test_delete_with_host_casts(member, node1, seed):
    row = _make(seed, status="Stopped")
    assert member.delete(f"/v1/containers/{row.uuid}").status == 204
    msg = node1.wait_for("container_delete")[0]
    assert msg.kwargs == {"container_uuid": row.uuid, "force": False, "stop_first": False}
    stored = db_row(row.uuid)
    assert stored.status == "Deleting" and stored.task_state == "container_deleting"


def test_delete_running_409_stop_true_sends_stop_first(member, node1, seed):
    row = _make(seed, status="Running")
    r = member.delete(f"/v1/containers/{row.uuid}")
    assert r.status == 409 and r.error["code"] == "container.invalid-state-exception"
    assert member.delete(f"/v1/containers/{row.uuid}?stop=True").status == 204
    assert node1.wait_for("container_delete")[0].kwargs["stop_first"] is True


def test_delete_version_rules(api, node1, seed):
    row = _make(seed, status="Running", project_id="project-admin")
    r = api.at("1.6").delete(f"/v1/containers/{row.uuid}?force=True")
    assert r.status == 400 and r.error["code"] == "container.invalid-param-in-version"
    r = api.at("1.11").delete(f"/v1/containers/{row.uuid}?stop=True")
    assert r.status == 400 and r.error["code"] == "container.invalid-param-in-version"
    r = api.at("1.7").delete(f"/v1/containers/{row.uuid}?force=bogus")
    assert r.status == 400 and r.error["code"] == "container.schema-validation-error"
    assert api.at("1.7").delete(f"/v1/containers/{row.uuid}?force=True").status == 204


def test_delete_force_admin_only_even_with_stop(member, node1, seed):
    row = _make(seed, status="Running")
    r = member.delete(f"/v1/containers/{row.uuid}?force=True")
    assert r.status == 403 and "container:delete_force" in r.error["title"]
    r = member.delete(f"/v1/containers/{row.uuid}?force=True&stop=True")
    assert r.status == 403


def test_delete_paused_refused_even_forced(api, node1, seed):
    row = _make(seed, status="Paused")
    r = api.at("1.40").delete(f"/v1/containers/{row.uuid}?force=True")
    assert r.status == 409


def test_delete_all_projects_member_forbidden(member, node1, seed):
    row = _make(seed, status="Stopped")
    r = member.delete(f"/v1/containers/{row.uuid}?all_projects=1")
    assert r.status == 403 and "container:delete_all_projects" in r.error["title"]


def test_other_project_is_404(api, node1, seed):
    row = _make(seed, status="Stopped")
    other = api.as_member(PROJECT_B).at("1.40")
    assert other.post(f"/v1/containers/{row.uuid}/start").status == 404
    assert other.delete(f"/v1/containers/{row.uuid}").status == 404
    assert other.patch(f"/v1/containers/{row.uuid}", json={"name": "x1"}).status == 404


# --- update, rename, resize_container --------------------------------------------------------


def test_patch_name_and_auto_heal_without_rpc(member, node1, seed):
    row = _make(seed, status="Running")
    r = member.patch(f"/v1/containers/{row.uuid}", json={"name": "renamed", "auto_heal": "true"})
    assert r.status == 200, r
    assert r.json["name"] == "renamed" and r.json["auto_heal"] is True
    assert node1.messages == []


@pytest.mark.parametrize(
    ("version", "method", "suffix", "body"),
    [
        ("1.40", "PATCH", "", {"name": "renamed"}),
        ("1.1", "PATCH", "", {"name": "renamed"}),
        ("1.13", "POST", "/rename?name=renamed", None),
    ],
)
def test_a_rename_answers_its_updated_at(api, node1, seed, version, method, suffix, body):
    """The answer is the row as saved: updated_at is set, and is the stored one."""
    row = _make(seed, status="Running")
    assert container_values(row.uuid)["updated_at"] is None
    r = (
        api.as_member(PROJECT_A)
        .at(version)
        .request(method, f"/v1/containers/{row.uuid}{suffix}", json=body)
    )
    assert r.status == 200, r
    assert r.json["name"] == "renamed"
    stored = container_values(row.uuid)["updated_at"]
    assert stored is not None and r.json["updated_at"] == str(stored)


def test_patch_cpu_memory_calls_node_and_claims(member, node1, seed):
    row = _make(seed, status="Running", cpu=1.0, memory="512")
    node1.replies["container_update"] = {"cpu": 2.0, "memory": "1024"}
    r = member.patch(f"/v1/containers/{row.uuid}", json={"cpu": 2, "memory": "1024"})
    assert r.status == 200, r
    assert r.json["cpu"] == 2.0 and r.json["memory"] == "1024"
    assert node1.wait_for("container_update")[0].kwargs == {
        "container_uuid": row.uuid,
        "cpu": 2.0,
        "memory": "1024",
    }
    assert node_usage() == (1.0, 512, 0)


def test_patch_beyond_the_nodes_physical_cpus_is_refused(member, node1, seed):
    # node1 has 4 CPUs (x 16 sellable): growing from 3 to 5 is a claim of 2, yet the whole
    # container would need more CPUs than the node has.
    row = _make(seed, status="Running", cpu=3.0, memory="512")
    r = member.patch(f"/v1/containers/{row.uuid}", json={"cpu": 5})
    assert r.status == 409
    assert r.error["title"] == "Host node1 does not have enough resources for this update."
    assert db_row(row.uuid).cpu == 3.0 and node_usage() == (0.0, 0, 0)
    assert node1.messages == []


def test_patch_node_refusal_is_undone(member, node1, seed):
    row = _make(seed, status="Running", cpu=1.0, memory="512")
    node1.failures["container_update"] = exception.Conflict(message="cannot resize")
    r = member.patch(f"/v1/containers/{row.uuid}", json={"memory": 1024})
    assert r.status == 409 and r.error["code"] == "container.conflict-remote"
    assert r.error["title"] == "cannot resize"
    assert db_row(row.uuid).memory == "512" and node_usage() == (0.0, 0, 0)


def test_patch_state_and_schema(member, node1, seed):
    row = _make(seed, status="Error")
    assert member.patch(f"/v1/containers/{row.uuid}", json={"name": "ok1"}).status == 409
    row = _make(seed, status="Running")
    r = member.patch(f"/v1/containers/{row.uuid}", json={"image": "x"})
    assert r.status == 400 and r.error["code"] == "container.schema-validation-error"


def test_rename_window_and_rules(api, node1, seed):
    row = _make(seed, status="Running", name="old")
    client = api.as_member(PROJECT_A)
    r = client.at("1.13").post(f"/v1/containers/{row.uuid}/rename?name=new1")
    assert r.status == 200 and r.json["name"] == "new1"
    r = client.at("1.13").post(f"/v1/containers/{row.uuid}/rename?name=new1")
    assert r.status == 409 and r.error["title"] == (
        "The new name for the container is the same as the old name."
    )
    r = client.at("1.13").post(f"/v1/containers/{row.uuid}/rename")
    assert r.status == 400
    r = client.at("1.14").post(f"/v1/containers/{row.uuid}/rename?name=x2")
    assert r.status == 406


def test_resize_container(api, node1, seed):
    row = _make(seed, status="Running", memory="512")
    client = api.as_member(PROJECT_A)
    assert (
        client.at("1.18")
        .post(f"/v1/containers/{row.uuid}/resize_container", json={"memory": 256})
        .status
        == 406
    )
    r = client.at("1.19").post(f"/v1/containers/{row.uuid}/resize_container", json={"memory": 256})
    assert r.status == 202 and r.json["memory"] == "512"
    assert node1.wait_for("resize_container")[0].kwargs == {
        "container_uuid": row.uuid,
        "cpu": None,
        "memory": "256",
    }


# --- calls -----------------------------------------------------------------------------------


def test_logs(member, node1, seed):
    row = _make(seed, status="Stopped")
    node1.replies["container_logs"] = "hello\n"
    r = member.get(f"/v1/containers/{row.uuid}/logs?stdout=True&stderr=False&tail=None")
    assert r.status == 200 and r.json == "hello\n"
    assert node1.messages[0].kwargs == {
        "container_uuid": row.uuid,
        "stdout": True,
        "stderr": False,
        "timestamps": False,
        "tail": "all",
        "since": None,
    }


def test_execute_run_and_interactive(member, node1, seed):
    row = _make(seed, status="Running")
    node1.replies["container_exec"] = {
        "output": "3\n",
        "exit_code": 3,
        "exec_id": EXEC_ID,
        "token": "tok",
    }
    # python-zunclient's form: each argv element double-quoted, in one query parameter.
    r = member.post(
        f"/v1/containers/{row.uuid}/execute?command=%22sh%22+%22-c%22+%22exit+3%22&run=True"
    )
    assert r.status == 200
    assert r.json == {"output": "3\n", "exit_code": 3, "exec_id": None, "proxy_url": None}
    assert node1.messages[-1].kwargs["command"] == ["sh", "-c", "exit 3"]
    r = member.post(f"/v1/containers/{row.uuid}/execute?command=sh&run=False&interactive=True")
    assert r.json["output"] is None and r.json["exec_id"] == EXEC_ID
    assert r.json["proxy_url"].endswith(f"?token=tok&uuid={row.uuid}&exec_id={EXEC_ID}")
    r = member.post(f"/v1/containers/{row.uuid}/execute")
    assert r.status == 400 and r.error["title"] == "'command' is a required property"


def test_execute_remote_conflict_keeps_status(member, node1, seed):
    row = _make(seed, status="Running")
    node1.failures["container_exec"] = exception.Conflict(
        message="Timeout on executing command: sleep 10"
    )
    r = member.post(f"/v1/containers/{row.uuid}/execute?command=sleep+10")
    assert r.status == 409 and r.error["code"] == "container.conflict-remote"
    assert "Traceback" not in r.error["detail"]


def test_execute_resize_resize_top_stats(member, node1, seed):
    row = _make(seed, status="Running")
    r = member.post(f"/v1/containers/{row.uuid}/execute_resize?exec_id={EXEC_ID}&h=30&w=100")
    assert r.status == 200 and r.body == b"null"
    assert node1.messages[-1].kwargs == {
        "container_uuid": row.uuid,
        "exec_id": EXEC_ID,
        "height": 30,
        "width": 100,
    }
    assert member.post(f"/v1/containers/{row.uuid}/execute_resize").status == 400
    assert member.post(f"/v1/containers/{row.uuid}/resize?h=10&w=20").status == 200
    node1.replies["container_top"] = {"Titles": ["PID"], "Processes": [["1"]]}
    r = member.get(f"/v1/containers/{row.uuid}/top?ps_args=None")
    assert r.json == {"Titles": ["PID"], "Processes": [["1"]]}
    assert node1.messages[-1].kwargs["ps_args"] is None
    node1.replies["container_stats"] = {"CPU %": 0.1}
    assert member.get(f"/v1/containers/{row.uuid}/stats").json == {"CPU %": 0.1}


def test_attach(member, node1, seed):
    row = _make(seed, status="Running", interactive=False)
    r = member.get(f"/v1/containers/{row.uuid}/attach")
    assert r.status == 400 and r.error["code"] == "container.no-interactive-flag"
    row = _make(seed, status="Running", interactive=True)
    node1.replies["container_attach"] = {"token": "t1"}
    r = member.get(f"/v1/containers/{row.uuid}/attach")
    assert r.status == 200 and r.json.endswith(f"?token=t1&uuid={row.uuid}")


def _tar(files: dict[str, bytes]) -> bytes:
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_archives_by_version(api, node1, seed):
    row = _make(seed, status="Running")
    client = api.as_member(PROJECT_A)
    tar = _tar({"a.txt": b"\x00\xffdata"})
    node1.replies["container_get_archive"] = {
        "data": base64.b64encode(tar).decode(),
        "stat": {"name": "x"},
    }
    r = client.at("1.25").get(f"/v1/containers/{row.uuid}/get_archive?path=/x")
    assert r.json == {"data": base64.b64encode(tar).decode(), "stat": {"name": "x"}}
    r = client.at("1.24").get(f"/v1/containers/{row.uuid}/get_archive?path=/x")
    assert r.json["data"] == tar.decode("latin-1")
    assert client.at("1.25").get(f"/v1/containers/{row.uuid}/get_archive").status == 400
    r = client.at("1.25").post(
        f"/v1/containers/{row.uuid}/put_archive?path=/x",
        json={"data": base64.b64encode(tar).decode()},
    )
    assert r.status == 200
    assert node1.messages[-1].kwargs["data_b64"] == base64.b64encode(tar).decode()
    r = client.at("1.24").post(
        f"/v1/containers/{row.uuid}/put_archive", json={"path": "/x", "data": tar.decode("latin-1")}
    )
    assert r.status == 200
    assert base64.b64decode(node1.messages[-1].kwargs["data_b64"]) == tar
    r = client.at("1.25").post(
        f"/v1/containers/{row.uuid}/put_archive?path=/x", json={"data": "%%%not base64"}
    )
    assert r.status == 400 and r.error["code"] == "container.base-64-exception"


def test_commit(member, node1, seed):
    row = _make(seed, status="Running")
    r = member.post(f"/v1/containers/{row.uuid}/commit?repository=project-a/myrepo&tag=v1")
    assert r.status == 202 and len(r.json["uuid"]) == 36
    msg = node1.wait_for("container_commit")[0]
    assert msg.kwargs == {
        "container_uuid": row.uuid,
        "repository": "project-a/myrepo",
        "tag": "v1",
        "image_uuid": r.json["uuid"],
    }
    r = member.post(f"/v1/containers/{row.uuid}/commit")
    assert r.status == 400 and r.error["title"] == "'repository' is a required property"


# --- networks and security groups ------------------------------------------------------------

ADDRESSES = {
    "zun-project-a": [
        {
            "addr": "10.0.0.5",
            "version": 4,
            "port": "ep1",
            "subnet_id": "s1",
            "preserve_on_delete": False,
        }
    ]
}


def test_network_list_shapes(api, node1, seed):
    row = _make(seed, status="Running", addresses=ADDRESSES)
    client = api.as_member(PROJECT_A)
    assert client.at("1.12").get(f"/v1/containers/{row.uuid}/network_list").status == 406
    legacy = client.at("1.17").get(f"/v1/containers/{row.uuid}/network_list").json
    assert legacy == {
        "networks": [
            {
                "net_id": "zun-project-a",
                "port_id": "ep1",
                "ip_address": "10.0.0.5",
                "version": 4,
                "subnet_id": "s1",
            }
        ]
    }
    new = client.at("1.18").get(f"/v1/containers/{row.uuid}/network_list").json
    assert new["networks"][0]["fixed_ips"] == [
        {"ip_address": "10.0.0.5", "version": 4, "subnet_id": "s1"}
    ]


def test_network_detach_and_attach(api, node1, seed):
    row = _make(seed, status="Running", addresses=ADDRESSES)
    client = api.as_member(PROJECT_A)
    assert (
        client.at("1.5").post(f"/v1/containers/{row.uuid}/network_detach?network=x").status == 406
    )
    r = client.at("1.6").post(f"/v1/containers/{row.uuid}/network_detach?network=other")
    assert r.status == 400 and r.error["code"] == "container.invalid"
    r = client.at("1.17").post(f"/v1/containers/{row.uuid}/network_detach?port=ep1")
    assert r.status == 202
    assert node1.wait_for("network_detach")[0].kwargs["network"] == "zun-project-a"
    row2 = _make(seed, status="Running", addresses=ADDRESSES)
    assert (
        client.at("1.7").post(f"/v1/containers/{row2.uuid}/network_attach?network=n2").status == 406
    )
    r = client.at("1.8").post(f"/v1/containers/{row2.uuid}/network_attach?network=zun-project-a")
    assert r.status == 400
    # A member joins its project's network or one an operator registered, nothing else.
    r = client.at("1.8").post(f"/v1/containers/{row2.uuid}/network_attach?network=n2")
    assert r.status == 404 and r.error["code"] == "container.network-not-found"
    seed.network(neutron_net_id="n2")
    r = client.at("1.8").post(
        f"/v1/containers/{row2.uuid}/network_attach?network=n2&fixed_ip=10.1.0.9"
    )
    assert r.status == 200 and r.body == b"null"
    assert node1.wait_for("network_attach")[0].kwargs == {
        "container_uuid": row2.uuid,
        "network": "n2",
        "fixed_ip": "10.1.0.9",
    }
    r = client.at("1.8").post(f"/v1/containers/{row2.uuid}/network_attach?network=a&port=b")
    assert r.status == 400 and r.error["code"] == "container.schema-validation-error"


def test_security_groups_window_and_answers(api, node1, seed):
    row = _make(seed, status="Running", security_groups=["default"])
    client = api.as_member(PROJECT_A)
    assert (
        client.at("1.15").post(f"/v1/containers/{row.uuid}/add_security_group?name=x").status == 406
    )
    r = client.at("1.14").post(f"/v1/containers/{row.uuid}/add_security_group?name=default")
    assert r.status == 400 and r.error["title"] == (
        "Security group default has been added to container."
    )
    r = client.at("1.14").post(f"/v1/containers/{row.uuid}/add_security_group?name=web")
    assert r.status == 400 and r.error["code"] == "container.security-group-cannot-be-applied"
    r = client.at("1.14").post(f"/v1/containers/{row.uuid}/remove_security_group?name=web")
    assert r.status == 400 and r.error["code"] == "container.invalid-value"


# --- every action route checks its own policy with the container as target ---------------------

ROUTES = [
    ("POST", "start", "container:start", "Stopped"),
    ("POST", "stop", "container:stop", "Running"),
    ("POST", "reboot", "container:reboot", "Running"),
    ("POST", "rebuild", "container:rebuild", "Running"),
    ("POST", "pause", "container:pause", "Running"),
    ("POST", "unpause", "container:unpause", "Paused"),
    ("POST", "kill", "container:kill", "Running"),
    ("GET", "logs", "container:logs", "Running"),
    ("POST", "execute?command=ls", "container:execute", "Running"),
    ("POST", f"execute_resize?exec_id={EXEC_ID}", "container:execute_resize", "Running"),
    ("GET", "attach", "container:attach", "Running"),
    ("POST", "resize", "container:resize", "Running"),
    ("POST", "resize_container", "container:resize_container", "Running"),
    ("GET", "top", "container:top", "Running"),
    ("GET", "get_archive?path=/", "container:get_archive", "Running"),
    ("POST", "put_archive?path=/&data=eA==", "container:put_archive", "Running"),
    ("GET", "stats", "container:stats", "Running"),
    ("POST", "commit?repository=r", "container:commit", "Running"),
    ("POST", "network_detach?network=n", "container:network_detach", "Running"),
    ("POST", "network_attach?network=n", "container:network_attach", "Running"),
    ("PATCH", "", "container:update", "Running"),
    ("DELETE", "", "container:delete", "Stopped"),
    ("GET", "", "container:get_one", "Running"),
]


@pytest.mark.parametrize("method,path,rule,status", ROUTES)
def test_each_route_enforces_its_policy(api, node1, seed, policy_reset, method, path, rule, status):
    row = _make(seed, status=status)
    set_rules({rule: "!"})
    suffix = f"/{path}" if path else ""
    r = (
        api.as_member(PROJECT_A)
        .at("1.40")
        .request(
            method, f"/v1/containers/{row.uuid}{suffix}", json={} if method == "PATCH" else None
        )
    )
    assert r.status == 403, r
    assert r.error["title"] == f"Policy doesn't allow {rule} to be performed."
    assert node1.messages == []
