"""GET /v1/containers (list) and GET /v1/containers/{ident} (show), container_actions."""

from __future__ import annotations

import datetime

import pytest
from unit.api.handlers import containers_support as support
from unit.api.handlers.containers_support import (
    PROJECT_A,
    PROJECT_B,
    container_row,
    set_rules,
)

from zun.common import exception
from zun.db import engine, models
from zun.db.queries import actions as action_q

# Fixtures shared by the container API tests.
bus = support.bus
node1 = support.node1
nodes = support.nodes
policy_reset = support.policy_reset


@pytest.fixture
def rows(seed, bus):
    a1 = seed.row(
        container_row(
            name="a1", project_id=PROJECT_A, status="Running", memory="256", labels={"x": "y"}
        )
    )
    a2 = seed.row(container_row(name="a2", project_id=PROJECT_A, host="node2"))
    b1 = seed.row(container_row(name="b1", project_id=PROJECT_B, user_id="user-b"))
    return a1, a2, b1


def test_member_sees_own_project_only(api, rows):
    r = api.as_member(PROJECT_A).get("/v1/containers")
    assert r.status == 200
    assert sorted(c["name"] for c in r.json["containers"]) == ["a1", "a2"]
    assert r.json["next"] is None
    assert "links" not in r.json["containers"][0]


def test_admin_scoped_to_own_project_unless_all_projects(api, rows):
    assert api.as_admin().get("/v1/containers").json["containers"] == []
    r = api.as_admin().get("/v1/containers?all_projects=1")
    assert sorted(c["name"] for c in r.json["containers"]) == ["a1", "a2", "b1"]


def test_member_all_projects_forbidden_and_bad_value(api, rows):
    r = api.as_member(PROJECT_A).get("/v1/containers?all_projects=True")
    assert r.status == 403
    assert r.error["title"] == (
        "Policy doesn't allow container:get_all_all_projects to be performed."
    )
    r = api.as_admin().get("/v1/containers?all_projects=maybe")
    assert r.status == 400 and r.error["code"] == "container.invalid-value"


def test_view_shape_and_hidden_fields(api, rows):
    member = api.as_member(PROJECT_A).get("/v1/containers?name=a1").json["containers"][0]
    assert member["memory"] == "256" and member["labels"] == {"x": "y"}
    assert member["status"] == "Running" and member["disk"] == 0
    assert member["cpu_policy"] == "shared"
    for hidden in ("host", "runtime", "privileged", "image_pull_policy"):
        assert hidden not in member
    for never in ("id", "container_id", "websocket_token", "exposed_ports", "registry_uuid"):
        assert never not in member
    assert len(member["created_at"]) >= 19 and member["created_at"][10] == " "
    admin = api.as_admin().get("/v1/containers?all_projects=1&name=a1").json["containers"][0]
    assert admin["host"] == "node1" and admin["privileged"] is False


def test_filters_and_host_filter_policy(api, rows):
    r = api.as_member(PROJECT_A).get("/v1/containers?status=Running")
    assert [c["name"] for c in r.json["containers"]] == ["a1"]
    r = api.as_member(PROJECT_A).get("/v1/containers?host=node2")
    assert r.status == 403 and "container:get_one:host" in r.error["title"]
    r = api.as_admin().get("/v1/containers?all_projects=1&host=node2")
    assert [c["name"] for c in r.json["containers"]] == ["a2"]


def test_unknown_params(api, rows):
    r = api.as_member(PROJECT_A).get("/v1/containers?foo=1&bar=2")
    assert r.status == 400 and r.error["code"] == "container.invalid-value"
    assert r.error["title"] == "Unknown parameters: foo, bar"


def test_pagination_sorting_marker(api, seed, bus):
    made = [seed.row(container_row(name=f"n{i:02d}")) for i in range(5)]
    member = api.as_member(PROJECT_A)
    r = member.get("/v1/containers?limit=2")
    page = r.json
    assert [c["name"] for c in page["containers"]] == ["n00", "n01"]
    assert page["next"] == (
        f"http://zun.test:9517/v1/containers?sort_key=id&sort_dir=asc&limit=2&marker={made[1].uuid}"
    )
    r = member.get(f"/v1/containers?limit=2&marker={made[1].uuid}")
    assert [c["name"] for c in r.json["containers"]] == ["n02", "n03"]
    r = member.get("/v1/containers?sort_key=name&sort_dir=desc&limit=10")
    assert [c["name"] for c in r.json["containers"]][:2] == ["n04", "n03"]
    assert r.json["next"] is None
    r = member.get("/v1/containers?marker=7f1c9e1e-0000-4000-8000-000000000000")
    assert r.status == 404 and r.error["code"] == "container.container-not-found"
    r = member.get("/v1/containers?sort_key=nope")
    assert r.status == 400 and r.error["code"] == "container.invalid-parameter-value"
    r = member.get("/v1/containers?sort_dir=up")
    assert r.status == 400 and r.error["code"] == "container.invalid-value"
    r = member.get("/v1/containers?limit=0")
    assert r.status == 400 and r.error["title"] == "Limit must be positive integer"


def test_marker_of_a_json_sort_key(api, seed, bus):
    # The marker row's labels are compared with the column as text (JSONText compares as
    # Text): the stored text pages, where a decoded dict could not be bound (it was a 500).
    for i in (2, 0, 1):
        seed.row(container_row(name=f"j{i}", labels={"k": f"v{i}"}))
    member = api.as_member(PROJECT_A)
    names, url = [], "/v1/containers?sort_key=labels&limit=1"
    while url:
        page = member.get(url.removeprefix("http://zun.test:9517")).json
        names += [c["name"] for c in page["containers"]]
        url = page["next"]
    assert names == ["j0", "j1", "j2"]
    assert member.get("/v1/containers?name=j1").json["containers"][0]["labels"] == {"k": "v1"}


def test_capsules_and_members_not_listed(api, seed, bus):
    seed.row(container_row(name="cap", container_type=1))
    seed.row(container_row(name="member", container_type=2))
    seed.row(container_row(name="plain"))
    r = api.as_member(PROJECT_A).get("/v1/containers")
    assert [c["name"] for c in r.json["containers"]] == ["plain"]


def test_registry_id_is_the_registry_uuid(api, seed, bus):
    reg = seed.row(
        models.Registry(
            uuid="6d3a4e8e-5a7c-4d33-9a55-6a0f1c1b2c3d",
            name="r",
            domain="reg.example",
            project_id=PROJECT_A,
        )
    )
    seed.row(container_row(name="withreg", registry_id=reg.id))
    item = api.as_member(PROJECT_A).get("/v1/containers").json["containers"][0]
    assert item["registry_id"] == "6d3a4e8e-5a7c-4d33-9a55-6a0f1c1b2c3d"


def test_show_by_uuid_and_name_scoped(api, rows):
    a1, _, b1 = rows
    member = api.as_member(PROJECT_A)
    for ident in (a1.uuid, "a1"):
        r = member.get(f"/v1/containers/{ident}")
        assert r.status == 200 and r.json["uuid"] == a1.uuid
        assert r.json["links"][0] == {
            "href": f"http://zun.test:9517/v1/containers/{a1.uuid}",
            "rel": "self",
        }
    r = member.get(f"/v1/containers/{b1.uuid}")
    assert r.status == 404 and r.error["title"] == f"Container {b1.uuid} could not be found."
    assert api.as_admin().get(f"/v1/containers/{b1.uuid}").status == 200
    r = member.get("/v1/containers/a1?all_projects=1")
    assert r.status == 403 and "container:get_one_all_projects" in r.error["title"]


def test_show_ambiguous_name_409(api, seed, bus):
    seed.row(container_row(name="dup"))
    seed.row(container_row(name="dup"))
    r = api.as_member(PROJECT_A).get("/v1/containers/dup")
    assert r.status == 409 and r.error["code"] == "container.conflict"
    assert r.error["title"] == (
        "Multiple containers exist with same name. Please use the container uuid instead."
    )


def test_show_refreshes_from_an_up_node(api, node1, seed):
    row = seed.row(container_row(status="Created"))
    node1.replies["container_show"] = {
        "status": "Running",
        "status_detail": "Up 2 seconds",
        "uuid": "must-not-win",
        "container_id": "secret",
    }
    r = api.as_member(PROJECT_A).get(f"/v1/containers/{row.uuid}")
    assert r.status == 200
    assert r.json["status"] == "Running" and r.json["status_detail"] == "Up 2 seconds"
    assert r.json["uuid"] == row.uuid and "container_id" not in r.json
    assert node1.methods() == ["container_show"]


def test_show_falls_back_to_db_when_host_down_or_failing(api, node1, seed):
    row = seed.row(container_row(status="Created"))
    node1.failures["container_show"] = exception.DockerError(error_msg="boom")
    r = api.as_member(PROJECT_A).get(f"/v1/containers/{row.uuid}")
    assert r.status == 200 and r.json["status"] == "Created"
    down = seed.row(container_row(status="Stopped", host="ghost"))
    r = api.as_member(PROJECT_A).get(f"/v1/containers/{down.uuid}")
    assert r.status == 200 and r.json["status"] == "Stopped"


def test_show_policy_denied_403_after_lookup(api, rows, policy_reset):
    set_rules({"container:get_one": "!"})
    a1 = rows[0]
    assert api.as_member(PROJECT_A).get(f"/v1/containers/{a1.uuid}").status == 403
    # The lookup comes first: an invisible container is still a 404.
    assert api.as_member(PROJECT_A).get(f"/v1/containers/{rows[2].uuid}").status == 404


def test_list_policy_denied(api, rows, policy_reset):
    set_rules({"container:get_all": "!"})
    assert api.as_member(PROJECT_A).get("/v1/containers").status == 403


def test_field_rule_depending_on_project_is_applied_per_row(api, rows, policy_reset):
    set_rules({"container:get_one:host": "project_id:%(project_id)s"})
    items = api.as_admin(PROJECT_A).get("/v1/containers?all_projects=1").json["containers"]
    by_name = {c["name"]: c for c in items}
    assert "host" in by_name["a1"] and "host" not in by_name["b1"]


# --- container actions -------------------------------------------------------------------------


def _action_rows(uuid: str) -> str:
    from zun.common.context import RequestContext

    ctx = RequestContext(user_id="user-a", project_id=PROJECT_A, request_id="req-1")
    with engine.transaction() as session:
        action_q.start_action(session, ctx, uuid, "start")
        action_q.start_event(session, uuid, "req-1", "compute__do_container_start")
        action_q.finish_event(
            session,
            uuid,
            "req-1",
            "compute__do_container_start",
            result="Error",
            traceback="Traceback: boom",
        )
    return "req-1"


def test_container_actions_list_and_show(api, rows):
    a1 = rows[0]
    req_id = _action_rows(a1.uuid)
    member = api.as_member(PROJECT_A)
    r = member.get(f"/v1/containers/{a1.name}/container_actions")
    assert r.status == 200
    [action] = r.json["containerActions"]
    assert action["action"] == "start" and action["message"] == "Error"
    assert action["finish_time"] is not None and "T" in action["start_time"]
    r = member.get(f"/v1/containers/{a1.uuid}/container_actions/{req_id}")
    assert r.status == 200
    [event] = r.json["events"]
    assert event["event"] == "compute__do_container_start" and event["result"] == "Error"
    assert event["traceback"] is None
    admin = api.as_admin().get(f"/v1/containers/{a1.uuid}/container_actions/{req_id}")
    assert admin.json["events"][0]["traceback"] == "Traceback: boom"
    r = member.get(f"/v1/containers/{a1.uuid}/container_actions/req-nope")
    assert r.status == 404 and r.error["code"] == "container.resource-not-found"
    assert r.error["title"] == "The Action resource req-nope could not be found."
    assert member.get(f"/v1/containers/{rows[2].uuid}/container_actions").status == 404


def test_container_actions_policy_checked_before_lookup(api, rows, policy_reset):
    set_rules({"container:actions": "!"})
    r = api.as_member(PROJECT_A).get("/v1/containers/nonexistent/container_actions")
    assert r.status == 403


def test_action_datetimes_iso(api, rows):
    a1 = rows[0]
    _action_rows(a1.uuid)
    action = (
        api.as_member(PROJECT_A)
        .get(f"/v1/containers/{a1.uuid}/container_actions")
        .json["containerActions"][0]
    )
    datetime.datetime.strptime(action["start_time"], "%Y-%m-%dT%H:%M:%S.%f")


def test_list_is_one_query(api, seed, bus):
    import sqlalchemy as sa

    for i in range(30):
        seed.row(container_row(name=f"q{i}"))
    statements: list[str] = []

    def count(conn, cursor, statement, *args):  # noqa: ANN001
        statements.append(statement)

    db = engine.get_engine()
    sa.event.listen(db, "before_cursor_execute", count)
    try:
        r = api.as_member(PROJECT_A).get("/v1/containers")
    finally:
        sa.event.remove(db, "before_cursor_execute", count)
    assert len(r.json["containers"]) == 30
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    # One for the page of containers, one for the health of their hosts (Unknown at read
    # time): neither grows with the rows.
    assert len(selects) == 2, selects
    assert "FROM zun_service" in selects[1]


def test_show_is_one_statement(api, seed, bus):
    # A client polling its create asks this hundreds of times a second: the row and its
    # host's health in one SELECT run on the driver itself (no SQLAlchemy execution), and on
    # SQLite no BEGIN/ROLLBACK around it.
    import sqlalchemy as sa

    row = seed.row(container_row(status="Creating"))
    statements: list[str] = []
    through_sqlalchemy: list[str] = []

    def count(conn, cursor, statement, *args):  # noqa: ANN001
        through_sqlalchemy.append(statement)

    db = engine.get_engine()
    # Connections opened from here on report every statement the driver runs.
    db.dispose()
    sa.event.listen(
        db, "connect", lambda dbapi_con, _rec: dbapi_con.set_trace_callback(statements.append)
    )
    sa.event.listen(db, "before_cursor_execute", count)
    try:
        r = api.as_member(PROJECT_A).get(f"/v1/containers/{row.uuid}")
    finally:
        sa.event.remove(db, "before_cursor_execute", count)
    assert r.status == 200 and r.json["status"] == "Creating"
    statements = [s for s in statements if not s.startswith("PRAGMA")]
    assert len(statements) == 1, statements
    assert through_sqlalchemy == []
    assert "FROM container" in statements[0] and "zun_service" in statements[0]


def test_show_of_a_container_in_flight_does_not_ask_the_node(api, node1, seed):
    # The node would answer these from the row too; a client polling a create must not
    # load the node doing it.
    node1.replies["container_show"] = {"status": "Running"}
    for values in (
        {"status": "Creating"},
        {"status": "Deleting"},
        {"status": "Created", "task_state": "container_starting"},
    ):
        row = seed.row(container_row(**values))
        r = api.as_member(PROJECT_A).get(f"/v1/containers/{row.uuid}")
        assert r.status == 200 and r.json["status"] == values["status"]
    assert node1.methods() == []
