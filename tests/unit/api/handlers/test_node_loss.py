"""A node that is down or has lost its engine, seen from the API: Unknown at read time,
forced delete without the node, moved creates, evacuation and purge (1.41).

The nodes are recording RPC servers on the in-process bus (containers_support); a "down"
node is a zun_service row whose heartbeat is older than service_down_time.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa
from unit.api.apptesting import config_overrides
from unit.api.handlers import containers_support as support
from unit.api.handlers.containers_support import container_row, db_row, node_usage

from zun.compute import node_monitor
from zun.db import engine, models
from zun.db.queries import attempts as attempt_q

bus = support.bus
nodes = support.nodes
policy_reset = support.policy_reset

DOWN_FOR = 100  # seconds since the last heartbeat: well beyond service_down_time (25)


@pytest.fixture
def dead(seed: Any, nodes: Any) -> str:
    """node1: its service last reported 100 s ago; 2 CPUs and 1 GiB claimed."""
    seed.service("node1", seen=DOWN_FOR)
    seed.compute_node("node1", cpus=4, cpu_used=2.0, mem_total=8192, mem_used=1024, disk_used=0)
    return "node1"


@pytest.fixture
def node2(nodes: Any, seed: Any) -> Any:
    seed.service("node2")
    seed.compute_node("node2", cpus=8, cpu_used=0.0, mem_total=16384, mem_used=0, disk_used=0)
    return nodes.start("node2")


def _make(seed: Any, **values: Any) -> Any:
    return seed.row(container_row(**values))


def _actions(uuid: str) -> list[tuple[str, list[tuple[str | None, str | None]]]]:
    A, E = models.ContainerAction, models.ContainerActionEvent
    with engine.transaction(readonly=True) as session:
        actions = list(
            session.execute(
                sa.select(A.id, A.action).where(A.container_uuid == uuid).order_by(A.id)
            )
        )
        return [
            (
                name,
                [
                    (e.event, e.result)
                    for e in session.execute(
                        sa.select(E.event, E.result).where(E.action_id == aid).order_by(E.id)
                    )
                ],
            )
            for aid, name in actions
        ]


# --- Unknown at read time -------------------------------------------------------------------


def test_containers_of_a_down_host_read_unknown_then_their_real_status(api, seed, dead, nodes):
    running = _make(seed, status="Running", project_id="project-admin")
    failed = _make(seed, status="Error", status_reason="boom", project_id="project-admin")
    listed = {c["uuid"]: c for c in api.at("1.40").get("/v1/containers").json["containers"]}
    assert listed[running.uuid]["status"] == "Unknown"
    assert "node1" in listed[running.uuid]["status_reason"]
    assert "has not reported" in listed[running.uuid]["status_reason"]
    assert (listed[failed.uuid]["status"], listed[failed.uuid]["status_reason"]) == (
        "Error",
        "boom",
    )
    shown = api.at("1.40").get(f"/v1/containers/{running.uuid}").json
    assert shown["status"] == "Unknown" and "node1" in shown["status_reason"]
    # Derived, never stored: the row keeps Running and shows it once the host beats again.
    assert db_row(running.uuid).status == "Running"
    with engine.transaction() as session:
        session.execute(
            sa.update(models.ZunService).values(last_seen_up=sa.func.current_timestamp())
        )
    node = nodes.start("node1")
    node.replies["container_show"] = {"status": "Running"}
    assert api.at("1.40").get(f"/v1/containers/{running.uuid}").json["status"] == "Running"
    listed = {c["uuid"]: c for c in api.at("1.40").get("/v1/containers").json["containers"]}
    assert listed[running.uuid]["status"] == "Running"


def test_a_host_without_its_engine_reads_unknown_and_is_not_asked(api, seed, nodes):
    seed.service(
        "node1",
        disabled=True,
        disabled_reason="AUTO: the container engine at unix:///x does not answer",
    )
    seed.compute_node("node1")
    node = nodes.start("node1")
    row = _make(seed, status="Running", project_id="project-admin")
    shown = api.at("1.40").get(f"/v1/containers/{row.uuid}").json
    assert shown["status"] == "Unknown"
    assert "node1 cannot reach its container engine" in shown["status_reason"]
    assert "container_show" not in node.methods()


def test_an_operator_disabled_host_still_reads_its_real_status(api, seed, nodes):
    seed.service("node1", disabled=True, disabled_reason="maintenance")
    seed.compute_node("node1")
    nodes.start("node1").replies["container_show"] = {"status": "Running"}
    row = _make(seed, status="Running", project_id="project-admin")
    assert api.at("1.40").get(f"/v1/containers/{row.uuid}").json["status"] == "Running"


def test_status_filter_agrees_with_the_status_shown(api, seed, dead, nodes):
    seed.service("node2")
    seed.compute_node("node2")
    seed.service("node3", disabled=True, disabled_reason="AUTO: no engine")
    seed.compute_node("node3")
    on_dead = _make(seed, status="Running", project_id="project-admin")
    no_engine = _make(seed, status="Running", host="node3", project_id="project-admin")
    alive = _make(seed, status="Running", host="node2", project_id="project-admin")
    failed = _make(seed, status="Error", status_reason="boom", project_id="project-admin")
    stopped = _make(seed, status="Stopped", host="node2", project_id="project-admin")

    def listed(status: str) -> dict[str, str]:
        answer = api.at("1.40").get(f"/v1/containers?status={status}").json["containers"]
        return {c["uuid"]: c["status"] for c in answer}

    assert listed("Running") == {alive.uuid: "Running"}
    assert listed("Unknown") == {on_dead.uuid: "Unknown", no_engine.uuid: "Unknown"}
    assert listed("Error") == {failed.uuid: "Error"}
    assert listed("Stopped") == {stopped.uuid: "Stopped"}
    # Paging through the filtered list (a marker inside it) keeps to the filter.
    first = api.at("1.40").get("/v1/containers?status=Unknown&limit=1").json
    [uuid] = [c["uuid"] for c in first["containers"]]
    rest = api.at("1.40").get(f"/v1/containers?status=Unknown&marker={uuid}").json
    assert {c["uuid"] for c in rest["containers"]} == {on_dead.uuid, no_engine.uuid} - {uuid}


# --- forced delete ---------------------------------------------------------------------------


def test_forced_delete_on_a_down_host_removes_row_and_claim_now(api, seed, dead):
    row = _make(seed, status="Running", cpu=2.0, memory="1024", project_id="project-admin")
    plain = api.at("1.40").delete(f"/v1/containers/{row.uuid}")
    assert plain.status == 409
    stopped = api.at("1.40").delete(f"/v1/containers/{row.uuid}?stop=True")
    assert stopped.status == 409 and stopped.error["code"] == "container.container-host-down"
    assert api.at("1.40").delete(f"/v1/containers/{row.uuid}?force=True").status == 204
    assert db_row(row.uuid) is None
    assert node_usage("node1") == (0.0, 0, 0)


# --- creates stuck on a dead host -----------------------------------------------------------


def _stuck_create(
    seed: Any, host: str = "node1", request: dict[str, Any] | None = None, attempts: int = 1
) -> Any:
    row = _make(
        seed,
        status="Creating",
        task_state="container_creating",
        host=host,
        cpu=1.0,
        memory="512",
        project_id="project-admin",
    )
    with engine.transaction() as session:
        action = models.ContainerAction(
            action="create",
            container_uuid=row.uuid,
            request_id="req-original",
            project_id="project-admin",
            user_id="admin",
        )
        session.add(action)
        session.flush()
        for number in range(1, attempts + 1):
            attempt_q.record(
                session,
                action.id,
                host,
                number,
                request
                or {
                    "run": True,
                    "requested_networks": [{"network": "n1"}],
                    "requested_volumes": [],
                    "is_admin": True,
                },
            )
    return row


def test_create_stuck_on_a_dead_host_moves_with_its_request(api, seed, dead, node2):
    row = _stuck_create(seed)
    node_monitor.run_once()
    sent = node2.wait_for("container_create")[0]
    assert sent.kwargs == {
        "container_uuid": row.uuid,
        "run": True,
        "requested_networks": [{"network": "n1"}],
        "requested_volumes": [],
    }
    assert sent.context["request_id"] == "req-original"
    stored = db_row(row.uuid)
    assert (stored.host, stored.status, stored.task_state) == (
        "node2",
        "Creating",
        "container_creating",
    )
    assert node_usage("node2") == (1.0, 512, 0)
    assert node_usage("node1") == (1.0, 512, 0)  # its 1 CPU / 512 MiB given back
    assert _actions(row.uuid) == [
        (
            "create",
            [
                ("schedule_attempt", "Success"),
                ("compute__do_container_create", "Error"),
                ("schedule_attempt", "Success"),
            ],
        )
    ]
    node_monitor.run_once()  # node2 is up: nothing moves twice
    assert len(node2.messages) == 1


def test_one_monitor_at_a_time_holds_the_lease_and_moves(api, seed, dead, node2):
    first, second = node_monitor.NodeMonitor(interval=60), node_monitor.NodeMonitor(interval=60)
    first.holder, second.holder = "api-a:1:x", "api-b:2:y"  # two API processes
    row = _stuck_create(seed)
    assert first.run_if_leader() and first.leading
    assert not second.run_if_leader() and not second.leading
    assert db_row(row.uuid).host == "node2"
    node2.wait_for("container_create")
    assert len(node2.messages) == 1
    assert first.run_if_leader()  # the holder keeps it from pass to pass
    first.stop()  # gives the lease up: the other takes it at its next pass
    assert second.run_if_leader() and second.leading
    # A pass whose lease is lost (it outlived it; another process took over) stops before
    # the next container.
    more = [_stuck_create(seed) for _ in range(2)]
    node_monitor.run_once(keep=lambda: False)
    assert [db_row(r.uuid).host for r in more] == ["node1", "node1"]


def test_a_create_out_of_attempts_ends_in_error_without_claim(api, seed, dead, node2):
    with config_overrides({"compute": {"max_create_attempts": 2}}):
        row = _stuck_create(seed, attempts=2)
        node_monitor.run_once()
    stored = db_row(row.uuid)
    assert (stored.status, stored.host, stored.task_state) == ("Error", None, None)
    assert "Creating failed on 2 host(s)" in stored.status_reason
    assert "node1" in stored.status_reason
    assert node_usage("node1") == (1.0, 512, 0)
    assert node2.messages == []


def test_a_create_with_no_other_host_ends_in_error(api, seed, dead):
    row = _stuck_create(seed)
    node_monitor.run_once()
    stored = db_row(row.uuid)
    assert stored.status == "Error" and "no other host can take it" in stored.status_reason


def test_create_keeps_its_request_for_a_replay(api, seed, node2):
    r = api.at("1.40").post(
        "/v1/containers?run=true",
        json={"image": "busybox", "nets": [{"network": "zun-net-project-admin"}]},
    )
    assert r.status == 202, r
    with engine.transaction(readonly=True) as session:
        attempt = attempt_q.latest(session, r.json["uuid"])
    assert attempt is not None and attempt.count == 1 and attempt.hosts == ["node2"]
    assert attempt.request["run"] is True and attempt.request["is_admin"] is True
    assert attempt.request["requested_networks"][0]["network"] == "zun-net-project-admin"


# --- evacuate and purge (1.41) -------------------------------------------------------------


def test_evacuate_and_purge_need_1_41_and_an_admin(api, seed, dead):
    for action in ("evacuate", "purge"):
        assert api.at("1.40").post(f"/v1/hosts/node1/{action}").status == 406
        r = api.as_member("project-a").at("1.41").post(f"/v1/hosts/node1/{action}")
        assert r.status == 403


def test_evacuate_or_purge_an_up_host_is_409(api, seed, node2):
    for action in ("evacuate", "purge"):
        r = api.at("1.41").post(f"/v1/hosts/node2/{action}")
        assert r.status == 409 and r.error["code"] == "container.host-is-up"
        assert "node2 is up" in r.error["detail"]
    assert api.at("1.41").post("/v1/hosts/nowhere/evacuate").status == 404


def test_evacuate_bad_body_is_400(api, seed, dead):
    for body in ({"containers": "x"}, {"containers": ["not-a-uuid"]}, {"other": 1}):
        r = api.at("1.41").post("/v1/hosts/node1/evacuate", json=body)
        assert r.status == 400, body


def test_evacuate_recreates_elsewhere_and_leaves_local_volumes(api, seed, dead, node2):
    running = _make(seed, status="Running", cpu=1.0, memory="512")
    stopped = _make(
        seed,
        status="Stopped",
        cpu=1.0,
        memory="512",
        addresses={"custom-net": [{"addr": "10.0.0.5"}]},
    )
    with_volume = _make(seed, status="Running", cpu=0.5, memory="64")
    deleting = _make(seed, status="Deleting", cpu=0.1, memory="16")
    with engine.transaction() as session:
        volume = models.Volume(
            uuid="0c6e7c3e-7e57-4c1e-9d3b-1c0e2f4a5b6c",
            volume_provider="local",
            cinder_volume_id=None,
            project_id="project-a",
            user_id="user-a",
        )
        session.add(volume)
        session.flush()
        session.add(
            models.VolumeMapping(
                uuid="1c6e7c3e-7e57-4c1e-9d3b-1c0e2f4a5b6c",
                container_uuid=with_volume.uuid,
                container_path="/data",
                volume_id=volume.id,
                project_id="project-a",
                user_id="user-a",
            )
        )
    r = api.at("1.41").post("/v1/hosts/node1/evacuate")
    assert r.status == 202, r
    outcomes = {o["uuid"]: o for o in r.json["containers"]}
    assert r.json["host"] == "node1"
    assert outcomes[running.uuid]["result"] == "evacuated"
    assert outcomes[running.uuid]["host"] == "node2"
    assert outcomes[stopped.uuid]["result"] == "evacuated"
    assert outcomes[with_volume.uuid]["result"] == "skipped"
    assert "local volumes stay on host node1" in outcomes[with_volume.uuid]["reason"]
    assert outcomes[deleting.uuid]["result"] == "skipped"
    sent = {m.kwargs["container_uuid"]: m for m in node2.wait_for("container_create", 2)}
    assert sent[running.uuid].kwargs["run"] is True
    assert sent[stopped.uuid].kwargs["run"] is False
    assert sent[stopped.uuid].kwargs["requested_networks"] == [{"network": "custom-net"}]
    assert sent[running.uuid].context["request_id"] == r.headers["x-openstack-request-id"]
    for uuid in (running.uuid, stopped.uuid):
        stored = db_row(uuid)
        assert (stored.host, stored.status, stored.task_state, stored.addresses) == (
            "node2",
            "Creating",
            "container_creating",
            None,
        )
        assert _actions(uuid) == [
            (
                "evacuate",
                [("compute__do_container_create", "Error"), ("schedule_attempt", "Success")],
            )
        ]
    assert db_row(with_volume.uuid).host == "node1"
    assert node_usage("node2") == (2.0, 1024, 0)
    assert node_usage("node1") == (0.0, 0, 0)  # 2 CPUs / 1 GiB moved away


def test_evacuate_selected_containers_only(api, seed, dead, node2):
    first = _make(seed, status="Running")
    second = _make(seed, status="Running")
    r = api.at("1.41").post("/v1/hosts/node1/evacuate", json={"containers": [second.uuid]})
    assert [o["uuid"] for o in r.json["containers"]] == [second.uuid]
    assert db_row(first.uuid).host == "node1"


def test_evacuate_without_room_leaves_the_container(api, seed, dead):
    row = _make(seed, status="Running")
    r = api.at("1.41").post("/v1/hosts/node1/evacuate")
    assert r.json["containers"][0]["result"] == "failed"
    assert db_row(row.uuid).host == "node1" and db_row(row.uuid).status == "Running"
    assert node_usage("node1") == (2.0, 1024, 0)


def test_auto_evacuation_moves_auto_heal_containers_after_the_grace(api, seed, dead, node2):
    healing = _make(seed, status="Running", auto_heal=True)
    plain = _make(seed, status="Running", auto_heal=False)
    node_monitor.run_once()  # off by default
    assert db_row(healing.uuid).host == "node1"
    with config_overrides({"compute": {"evacuate_auto_heal_after": DOWN_FOR * 2}}):
        node_monitor.run_once()  # down for 100 s only
    assert db_row(healing.uuid).host == "node1"
    with config_overrides({"compute": {"evacuate_auto_heal_after": 60}}):
        node_monitor.run_once()
    assert db_row(healing.uuid).host == "node2"
    assert db_row(plain.uuid).host == "node1"
    assert node2.wait_for("container_create")[0].kwargs["run"] is True


def test_purge_removes_rows_and_claims(api, seed, dead, node2):
    rows = [_make(seed, status="Running"), _make(seed, status="Error")]
    elsewhere = _make(seed, status="Running", host="node2")
    r = api.at("1.41").post("/v1/hosts/node1/purge")
    assert r.status == 200, r
    assert sorted(r.json["purged"]) == sorted(row.uuid for row in rows)
    assert all(db_row(row.uuid) is None for row in rows)
    assert db_row(elsewhere.uuid) is not None
    assert node_usage("node1") == (0.0, 0, 0)
    assert json.loads(json.dumps(r.json))["host"] == "node1"


def test_calls_and_actions_on_a_host_without_its_engine_are_409_at_once(api, seed, nodes):
    seed.service(
        "node1",
        disabled=True,
        disabled_reason="AUTO: the container engine at unix:///x does not answer",
    )
    seed.compute_node("node1")
    node = nodes.start("node1")
    row = _make(seed, status="Running", project_id="project-admin")
    for method, path in (
        ("GET", "logs"),
        ("POST", "stop"),
        ("POST", "execute?command=ls"),
        ("GET", "top"),
    ):
        r = api.at("1.40").request(method, f"/v1/containers/{row.uuid}/{path}")
        assert r.status == 409, (path, r)
        assert r.error["code"] == "container.container-host-engine-down"
        assert "node1 cannot reach its container engine" in r.error["detail"]
    assert db_row(row.uuid).task_state is None
    # A forced delete still goes to the node, which removes the row even without its engine.
    assert api.at("1.40").delete(f"/v1/containers/{row.uuid}?force=True").status == 204
    assert node.wait_for("container_delete")[0].kwargs["force"] is True
    assert node.methods() == ["container_delete"]
