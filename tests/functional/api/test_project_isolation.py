"""Project isolation: a member of project A never sees nor touches what belongs to project B.

For every resource with project-owned rows (containers, capsules, their actions, registries,
quotas, images, networks), rows are seeded in project B (and a few in A), then a member of A:

* lists: none of B's rows, and nothing that counts them (a full page of A's rows is the only
  thing that yields a ``next`` link; following it never reaches B's rows);
* show / update / delete / every action on B's rows by UUID or name: 404, never 403
  (rest-api.md §4.1), with B's rows unchanged and nothing sent to a node;
* markers: B's UUIDs are unknown markers (404);
* names: a name used in both projects is not "ambiguous" for A (only visible rows count);
* quotas: B's limits, usages and defaults are refused (403, the path is the policy target);
  A's usage counts A's containers only;
* references: a container of A cannot use B's registry, nor join B's network.

The container routes are taken from the route table itself, so a route added later is audited
without editing this file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from unit.api.apptesting import ApiClient, RecordingBus, RecordingNode, Seed, container_values

from zun.api import app as api_app
from zun.api import routing
from zun.api.microversion import MAX_VERSION

A_UUIDS = [f"aaaa0000-0000-4000-8000-00000000000{i}" for i in (1, 2)]
B_UUIDS = [f"bbbb0000-0000-4000-8000-00000000000{i}" for i in range(1, 6)]
B_CONTAINER = B_UUIDS[0]
B_CAPSULE = "bbbbcafe-0000-4000-8000-000000000001"
B_CAPSULE_MEMBER = "bbbbcafe-0000-4000-8000-000000000002"
B_REGISTRY = "bbbb4e91-0000-4000-8000-000000000001"
A_REGISTRY = "aaaa4e91-0000-4000-8000-000000000001"
B_IMAGE = "bbbb1a9e-0000-4000-8000-000000000001"
A_IMAGE = "aaaa1a9e-0000-4000-8000-000000000001"
B_REQUEST = "req-bbbb0000-0000-4000-8000-000000000001"
B_ADDRESSES = {
    "zun-project-b": [
        {
            "addr": "172.30.0.2",
            "version": 4,
            "port": "ep-b",
            "subnet_id": "s-b",
            "preserve_on_delete": False,
        }
    ]
}


@pytest.fixture
def bus() -> Iterator[dict[str, RecordingNode]]:
    """A recording node1 on a real in-process bus: anything a request sends is seen."""
    recording = RecordingBus(["node1"])
    try:
        yield recording.nodes
    finally:
        recording.close()


@pytest.fixture
def world(seed: Seed, bus: dict[str, RecordingNode]) -> dict[str, RecordingNode]:
    seed.service("node1")
    seed.compute_node("node1", cpus=8, cpu_used=0.0, mem_total=16384, mem_used=0, disk_used=0)
    for i, uuid in enumerate(A_UUIDS):
        seed.container(uuid=uuid, name=f"a-{i}", status="Running")
    for i, uuid in enumerate(B_UUIDS):
        seed.container(
            uuid=uuid,
            name="shared-name" if i == 0 else f"b-{i}",
            status="Running",
            interactive=True,
            addresses=B_ADDRESSES,
            project_id="project-b",
            user_id="user-b",
            cpu=2.0,
            memory="1024",
        )
    seed.container(name="shared-name", status="Stopped")  # A's, same name as B's first
    seed.container(
        uuid=B_CAPSULE,
        name="b-capsule",
        container_type=1,
        status="Running",
        project_id="project-b",
        user_id="user-b",
        image="kubernetes/pause",
    )
    capsule_id = _container_id(B_CAPSULE)
    seed.container(
        uuid=B_CAPSULE_MEMBER,
        name="b-capsule-member",
        container_type=2,
        capsule_id=capsule_id,
        status="Running",
        project_id="project-b",
        user_id="user-b",
    )
    seed.container_action(
        container_uuid=B_CONTAINER,
        action="create",
        request_id=B_REQUEST,
        project_id="project-b",
        user_id="user-b",
        events=[{"traceback": "secret of b"}],
    )
    seed.registry(
        uuid=B_REGISTRY,
        name="b-reg",
        domain="127.0.0.1:5000",
        password="b-pass",
        project_id="project-b",
        user_id="user-b",
    )
    seed.registry(uuid=A_REGISTRY, name="a-reg", domain="127.0.0.1:5000")
    seed.image(
        uuid=B_IMAGE, repo="127.0.0.1:5000/b-image", project_id="project-b", user_id="user-b"
    )
    seed.image(uuid=A_IMAGE, repo="127.0.0.1:5000/a-image")
    seed.quota("project-b", "containers", 99)
    return bus


def _container_id(uuid: str) -> int:
    values = container_values(uuid)
    assert values is not None
    return int(values["id"])


@pytest.fixture
def member_a(api: ApiClient) -> ApiClient:
    return api.as_identity("member_a").at("latest")


def _quiet(nodes: dict[str, RecordingNode]) -> None:
    """Nothing reached the node (casts are delivered before the reply, so a short wait is
    enough to see one)."""
    import time

    time.sleep(0.1)
    assert [m.method for m in nodes["node1"].messages] == []


# --- containers -----------------------------------------------------------------------------------


def test_list_shows_only_own_containers(world: Any, member_a: ApiClient) -> None:
    body = member_a.get("/v1/containers").json
    assert sorted(c["project_id"] for c in body["containers"]) == ["project-a"] * 3
    assert body["next"] is None
    # Filters never widen the scope, whatever they name.
    for query in (
        "project_id=project-b",
        "user_id=user-b",
        "name=b-1",
        "name=b-capsule",
        "status=Running&name=b-2",
    ):
        reply = member_a.get(f"/v1/containers?{query}")
        assert reply.status == 200 and reply.json == {"containers": [], "next": None}, query


def test_pages_and_next_links_do_not_count_other_projects(world: Any, member_a: ApiClient) -> None:
    # A has 3 containers, B 5 (and a capsule): a page of 4 is not full, so no next link.
    assert member_a.get("/v1/containers?limit=4").json["next"] is None
    page = member_a.get("/v1/containers?limit=3").json
    assert len(page["containers"]) == 3 and page["next"] is not None
    following = member_a.get(page["next"].replace("http://zun.test:9517", "")).json
    assert following == {"containers": [], "next": None}
    # Sorting by another column does not pull B's rows in either.
    names = [
        c["name"] for c in member_a.get("/v1/containers?sort_key=project_id").json["containers"]
    ]
    assert sorted(names) == ["a-0", "a-1", "shared-name"]


@pytest.mark.parametrize("marker", [B_CONTAINER, B_CAPSULE, B_CAPSULE_MEMBER])
def test_other_projects_uuid_is_an_unknown_marker(
    world: Any, member_a: ApiClient, marker: str
) -> None:
    reply = member_a.get(f"/v1/containers?marker={marker}")
    assert reply.status == 404 and reply.error["code"] == "container.container-not-found"


def test_a_name_used_in_both_projects_is_not_ambiguous_for_a_member(
    world: Any, member_a: ApiClient, api: ApiClient
) -> None:
    reply = member_a.get("/v1/containers/shared-name")
    assert reply.status == 200 and reply.json["project_id"] == "project-a"
    # The admin sees both, hence the 409 (rest-api.md §4.1).
    assert api.as_identity("admin").get("/v1/containers/shared-name").status == 409


# Parameters that pass each route's own checks, so that only the lookup can refuse.
_ROUTE_PARAMS = {
    "stop": "timeout=1",
    "reboot": "timeout=1",
    "kill": "signal=SIGKILL",
    "execute": "command=ls",
    "execute_resize": f"exec_id={'a' * 64}&w=1&h=1",
    "rename": "name=stolen",
    "resize": "w=1&h=1",
    "get_archive": "path=/",
    "put_archive": "path=/tmp&data=YWJj",
    "commit": "repository=stolen",
    "add_security_group": "name=sg",
    "remove_security_group": "name=sg",
    "network_detach": "network=zun-project-b",
    "network_attach": "network=zun-project-a",
    "rebuild": "image=127.0.0.1:5000/x",
    "top": "ps_args=aux",
    "logs": "stdout=True",
}
_BODIES = {"PATCH": {"name": "stolen", "cpu": 1}, "resize_container": {"cpu": 1}}


def _container_routes() -> list[Any]:
    api_app.load_handlers()
    params = []
    for route in routing.registered_routes():
        if not route.path.startswith("/v1/containers/{container_ident}"):
            continue
        tail = route.path.removeprefix("/v1/containers/{container_ident}").strip("/")
        version = str(min(route.max_version, MAX_VERSION))
        params.append(
            pytest.param(route.method, tail, version, id=f"{route.method} {route.path} @{version}")
        )
    return params


def _url(ident: str, tail: str) -> str:
    tail = tail.replace("{request_ident}", B_REQUEST)
    name = tail.split("/")[0]
    query = _ROUTE_PARAMS.get(name)
    path = f"/v1/containers/{ident}" + (f"/{tail}" if tail else "")
    return path + (f"?{query}" if query else "")


@pytest.mark.parametrize(("method", "tail", "version"), _container_routes())
@pytest.mark.parametrize("ident", [B_CONTAINER, "b-1", B_CAPSULE, B_CAPSULE_MEMBER])
def test_every_container_route_is_a_404_on_another_projects_container(
    world: dict[str, RecordingNode],
    api: ApiClient,
    method: str,
    tail: str,
    version: str,
    ident: str,
) -> None:
    before = container_values(ident)
    member = api.as_identity("member_a").at(version)
    body = _BODIES.get(method) or _BODIES.get(tail)
    reply = member.request(method, _url(ident, tail), json=body, content_type="application/json")
    assert reply.status == 404, reply
    assert reply.error["code"] == "container.container-not-found", reply
    assert container_values(ident) == before
    _quiet(world)


def test_the_owner_reaches_those_routes(world: dict[str, RecordingNode], api: ApiClient) -> None:
    """The same requests as project B's member are not 404s: the audit above tests scoping,
    not a broken route."""
    member_b = api.as_identity("member_b").at("latest")
    assert member_b.get(f"/v1/containers/{B_CONTAINER}").status == 200
    assert member_b.get(f"/v1/containers/{B_CONTAINER}/container_actions").status == 200
    assert member_b.post(f"/v1/containers/{B_CONTAINER}/stop?timeout=1").status == 202
    world["node1"].wait_for("container_stop")


def test_container_actions_of_another_project(world: Any, member_a: ApiClient) -> None:
    for path in (
        f"/v1/containers/{B_CONTAINER}/container_actions",
        f"/v1/containers/{B_CONTAINER}/container_actions/{B_REQUEST}",
    ):
        reply = member_a.get(path)
        assert reply.status == 404 and reply.error["code"] == "container.container-not-found"
    # B's request id through A's own container is an unknown action, not B's.
    reply = member_a.get(f"/v1/containers/{A_UUIDS[0]}/container_actions/{B_REQUEST}")
    assert reply.status == 404 and reply.error["code"] == "container.resource-not-found"
    assert "secret of b" not in reply.body.decode()


def test_all_projects_is_refused_not_ignored(world: Any, member_a: ApiClient) -> None:
    for method, path in (
        ("GET", "/v1/containers?all_projects=1"),
        ("GET", f"/v1/containers/{B_CONTAINER}?all_projects=1"),
        ("DELETE", f"/v1/containers/{B_CONTAINER}?all_projects=1"),
        ("GET", "/v1/registries?all_projects=1"),
    ):
        reply = member_a.request(method, path)
        assert reply.status == 403, (path, reply)
    assert container_values(B_CONTAINER) is not None


def test_names_of_other_projects_are_free_under_project_scope(
    world: Any, member_a: ApiClient
) -> None:
    from unit.api.apptesting import config_overrides

    with config_overrides({"compute": {"unique_container_name_scope": "project"}}):
        created = member_a.post(
            "/v1/containers", json={"image": "127.0.0.1:5000/busybox", "name": "b-2"}
        )
        assert created.status == 202, created
        renamed = member_a.patch(f"/v1/containers/{A_UUIDS[0]}", json={"name": "b-3"})
        assert renamed.status == 200, renamed


# --- capsules ----------------------------------------------------------------------------------


def test_capsules_of_another_project(world: Any, member_a: ApiClient) -> None:
    assert member_a.get("/v1/capsules").json["capsules"] == []
    for ident in (B_CAPSULE, "b-capsule"):
        for method in ("GET", "DELETE"):
            reply = member_a.request(method, f"/v1/capsules/{ident}")
            assert reply.status == 404, (method, reply)
    reply = member_a.get(f"/v1/capsules?marker={B_CAPSULE}")
    assert reply.status == 404
    assert container_values(B_CAPSULE)["status"] == "Running"


# --- references from A's requests to B's rows ------------------------------------------------


def test_a_container_cannot_use_another_projects_registry(
    world: dict[str, RecordingNode], member_a: ApiClient
) -> None:
    for ident in (B_REGISTRY, "b-reg"):
        reply = member_a.post(
            "/v1/containers", json={"image": "127.0.0.1:5000/busybox", "registry": ident}
        )
        assert reply.status == 404 and reply.error["code"] == "container.registry-not-found"
    _quiet(world)
    reply = member_a.post(
        "/v1/containers", json={"image": "127.0.0.1:5000/busybox", "registry": "a-reg"}
    )
    assert reply.status == 202 and reply.json["registry_id"] == A_REGISTRY


@pytest.mark.parametrize("network", ["zun-project-b", "host", "bridge"])
def test_a_container_cannot_join_another_projects_network(
    world: dict[str, RecordingNode], member_a: ApiClient, network: str
) -> None:
    """Project networks are ``zun-<project>`` Docker bridges; Zun's Neutron lookup in the
    caller's project made another project's network a 404 ``network-not-found``. Joining it
    (or the host's own networks) would put A's container next to B's."""
    reply = member_a.post(f"/v1/containers/{A_UUIDS[0]}/network_attach?network={network}")
    assert reply.status == 404 and reply.error["code"] == "container.network-not-found", reply
    reply = member_a.post(
        "/v1/containers", json={"image": "127.0.0.1:5000/busybox", "nets": [{"network": network}]}
    )
    assert reply.status == 404 and reply.error["code"] == "container.network-not-found", reply
    _quiet(world)


def test_a_member_may_use_its_own_and_operator_networks(
    world: dict[str, RecordingNode], seed: Seed, member_a: ApiClient
) -> None:
    seed.network(neutron_net_id="shared-net", name="shared")
    for network in ("zun-project-a", "shared-net"):
        reply = member_a.post(
            "/v1/containers",
            json={"image": "127.0.0.1:5000/busybox", "nets": [{"network": network}]},
        )
        assert reply.status == 202, reply
    reply = member_a.post(f"/v1/containers/{A_UUIDS[0]}/network_attach?network=shared-net")
    assert reply.status == 200, reply


# --- registries ---------------------------------------------------------------------------------


def test_registries_of_another_project(world: Any, member_a: ApiClient) -> None:
    body = member_a.get("/v1/registries").json
    assert [r["uuid"] for r in body["registries"]] == [A_REGISTRY]
    for query in ("project_id=project-b", "name=b-reg", "user_id=user-b"):
        assert member_a.get(f"/v1/registries?{query}").json["registries"] == [], query
    assert member_a.get(f"/v1/registries?marker={B_REGISTRY}").status == 404
    assert member_a.get("/v1/registries?limit=2").json["next"] is None
    for ident in (B_REGISTRY, "b-reg"):
        assert member_a.get(f"/v1/registries/{ident}").status == 404
        reply = member_a.patch(f"/v1/registries/{ident}", json={"registry": {"password": "stolen"}})
        assert reply.status == 404 and reply.error["code"] == "container.registry-not-found"
        assert member_a.delete(f"/v1/registries/{ident}").status == 404
    owner = member_a.as_identity("member_b").get(f"/v1/registries/{B_REGISTRY}")
    assert owner.status == 200 and owner.json["registry"]["name"] == "b-reg"


# --- quotas -------------------------------------------------------------------------------------


def test_quotas_of_another_project(world: Any, member_a: ApiClient) -> None:
    for path in (
        "/v1/quotas/project-b",
        "/v1/quotas/project-b?usages=True",
        "/v1/quotas/project-b/defaults",
    ):
        reply = member_a.get(path)
        assert reply.status == 403 and reply.error["code"] == "container.policy-not-authorized"
        assert list(reply.json) == ["errors"]
    assert member_a.put("/v1/quotas/project-b", json={"containers": 1}).status == 403
    assert member_a.delete("/v1/quotas/project-b").status == 403


def test_usage_counts_own_containers_only(world: Any, member_a: ApiClient) -> None:
    usage = member_a.get("/v1/quotas/project-a?usages=True").json
    # A: three plain containers of 1 cpu / 512 MiB; B's five containers and its capsule are
    # not A's.
    assert usage["containers"]["in_use"] == 3
    assert usage["cpu"]["in_use"] == 3.0
    assert usage["memory"]["in_use"] == 1536
    assert usage["containers"]["limit"] == 40  # B's own limit (99) is B's


# --- images (admin-only by default; scoped to the caller's project when opened) -----------------


def test_images_are_admin_only_by_default(world: Any, member_a: ApiClient) -> None:
    for method, path in (
        ("GET", "/v1/images"),
        ("DELETE", f"/v1/images/{B_IMAGE}"),
        ("GET", f"/v1/images/{A_IMAGE}"),
    ):
        assert member_a.request(method, path).status == 403, path
    # Show looks the image up first (the policy targets it): B's is not found, as an unknown
    # one would be, rather than forbidden.
    reply = member_a.get(f"/v1/images/{B_IMAGE}")
    assert reply.status == 400 and reply.error["code"] == "container.image-not-found"


def test_images_opened_to_members_stay_in_their_project(
    world: dict[str, RecordingNode], member_a: ApiClient
) -> None:
    from unit.api.apptesting import policy_rules

    owner = "is_admin:True or project_id:%(project_id)s"
    with policy_rules({"image:get_all": owner, "image:get_one": owner, "image:delete": owner}):
        body = member_a.get("/v1/images").json
        assert [i["uuid"] for i in body["images"]] == [A_IMAGE]
        assert member_a.get(f"/v1/images?marker={B_IMAGE}").status == 400
        for method in ("GET", "DELETE"):
            reply = member_a.request(method, f"/v1/images/{B_IMAGE}")
            assert reply.status == 400 and reply.error["code"] == "container.image-not-found"
        _quiet(world)
        assert member_a.get(f"/v1/images/{A_IMAGE}").status == 200


def test_networks_are_admin_only(world: Any, member_a: ApiClient, seed: Seed) -> None:
    seed.network(neutron_net_id="admins-net", project_id="project-admin")
    reply = member_a.post("/v1/networks", json={"name": "net1", "neutron_net_id": "net-x"})
    assert reply.status == 403
    assert member_a.delete("/v1/networks/admins-net").status == 403


def test_no_route_answers_with_other_projects_data(world: Any, member_a: ApiClient) -> None:
    """A sweep of every list a member may call: none of B's identifiers appear anywhere."""
    secrets = [
        *B_UUIDS,
        B_CAPSULE,
        B_CAPSULE_MEMBER,
        B_REGISTRY,
        B_IMAGE,
        B_REQUEST,
        "project-b",
        "user-b",
        "b-reg",
    ]
    for path in (
        "/v1/containers",
        "/v1/capsules",
        "/v1/registries",
        "/v1/quotas/project-a?usages=1",
        "/v1/availability_zones",
        f"/v1/containers/{A_UUIDS[0]}",
        f"/v1/containers/{A_UUIDS[0]}/container_actions",
        f"/v1/containers/{A_UUIDS[0]}/network_list",
    ):
        text = member_a.get(path).body.decode()
        leaked = [s for s in secrets if re.search(re.escape(s), text)]
        assert not leaked, (path, leaked)
