"""/v1/capsules in-process: template rules, views, policies, scheduling, claims and the casts.

The node is a recording RPC endpoint served by a real oslo.messaging server on the in-process
bus (``zun-compute.node1``), so ``capsule_create``/``capsule_delete`` really cross the bus; what
the node then does is tested against the engine in tests/functional/compute.
"""

from __future__ import annotations

import copy
import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from unit.api.handlers import containers_support as support
from unit.api.handlers.containers_support import node_usage, set_rules

from zun.common import consts
from zun.common.rpc_service import RPCService
from zun.db import engine, models

bus = support.bus
policy_reset = support.policy_reset

TEMPLATE: dict[str, Any] = {
    "kind": "capsule",
    "metadata": {"name": "demo", "labels": {"app": "web"}},
    "spec": {
        "containers": [
            {
                "image": "busybox",
                "command": ["sleep"],
                "args": ["100"],
                "resources": {"requests": {"cpu": 0.5, "memory": 256}},
            }
        ]
    },
}


class CapsuleRecorder:
    """A node's capsule endpoint that only records what it receives."""

    target = None

    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        self._arrived = threading.Condition()

    def _record(self, method: str, ctxt: Any, kwargs: dict[str, Any]) -> None:
        with self._arrived:
            self.messages.append((method, kwargs, ctxt.to_dict()))
            self._arrived.notify_all()

    def capsule_create(self, ctxt: Any, **kwargs: Any) -> None:
        self._record("capsule_create", ctxt, kwargs)

    def capsule_delete(self, ctxt: Any, **kwargs: Any) -> None:
        self._record("capsule_delete", ctxt, kwargs)

    def wait_for(self, method: str, timeout: float = 10.0) -> tuple[dict[str, Any], dict[str, Any]]:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                found = [(k, c) for m, k, c in self.messages if m == method]
                if found:
                    return found[-1]
                left = deadline - time.monotonic()
                assert left > 0, f"{method} not received; got {self.messages}"
                self._arrived.wait(left)


@pytest.fixture
def node1(bus: None, seed: Any) -> Iterator[CapsuleRecorder]:
    seed.service("node1")
    seed.compute_node("node1", cpus=4, cpu_used=0.0, mem_total=8192, mem_used=0, disk_used=0)
    recorder = CapsuleRecorder()
    service = RPCService("node1", [recorder])
    service.start()
    yield recorder
    service.stop()
    service.wait()


def template(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(TEMPLATE)
    for dotted, value in changes.items():
        node = data
        *path, last = dotted.split(".")
        for step in path:
            node = node[step]
        node[last] = value
    return data


def create(api: Any, body: Any, version: str = "1.40") -> Any:
    return api.at(version).post("/v1/capsules", json={"template": body})


def rows_of(capsule_uuid: str) -> tuple[models.Container, list[models.Container]]:
    C = models.Container
    with engine.transaction(readonly=True) as session:
        capsule = session.scalars(sa.select(C).where(C.uuid == capsule_uuid)).one()
        members = list(
            session.scalars(sa.select(C).where(C.capsule_id == capsule.id).order_by(C.id))
        )
    return capsule, members


# --- create ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.1", "1.31", "1.32", "1.40"])
def test_create_202_location_rows_claim_and_cast(
    api: Any, node1: CapsuleRecorder, version: str
) -> None:
    r = create(api, TEMPLATE, version)
    assert r.status == 202, r
    body = r.json
    uuid = body["uuid"]
    assert r.headers["Location"] == f"http://zun.test:9517/v1/capsules/{uuid}"
    assert body["status"] == "Creating"
    legacy = version in ("1.1", "1.31")
    assert body["meta_name" if legacy else "name"] == "demo"
    assert "name" not in body if legacy else "meta_name" not in body
    assert body["restart_policy"] == (
        "always" if legacy else {"MaximumRetryCount": "0", "Name": "always"}
    )
    [member] = body["containers"]
    assert member["command"] == ["sleep", "100"]
    assert re.fullmatch(r"capsule-demo-[a-z]+-\d+", member["name"])
    assert "links" not in member

    kwargs, ctx = node1.wait_for("capsule_create")
    assert kwargs == {"capsule_uuid": uuid, "volumes": []}
    assert ctx["request_id"] == r.headers["x-openstack-request-id"]
    capsule, members = rows_of(uuid)
    assert capsule.container_type == consts.TYPE_CAPSULE
    assert (capsule.host, capsule.task_state) == ("node1", consts.CONTAINER_CREATING)
    assert capsule.image == "kubernetes/pause" and capsule.image_driver == "docker"
    assert [m.container_type for m in members] == [consts.TYPE_CAPSULE_CONTAINER]
    assert members[0].host == "node1"
    assert node_usage() == (0.5, 256, 0)
    with engine.transaction(readonly=True) as session:
        actions = session.scalars(
            sa.select(models.ContainerAction.action).where(
                models.ContainerAction.container_uuid == uuid
            )
        ).all()
    assert actions == ["create"]


def test_template_as_a_json_string(api: Any, node1: CapsuleRecorder) -> None:
    r = create(api, json.dumps(TEMPLATE))
    assert r.status == 202, r
    assert r.json["name"] == "demo"


def test_init_containers_resources_restart_policies_and_volumes(
    api: Any, node1: CapsuleRecorder
) -> None:
    body = template(
        **{
            "spec.initContainers": [
                {
                    "image": "busybox",
                    "command": ["true"],
                    "unknown": 1,
                    "resources": {"requests": {"cpu": 0.8, "memory": 128}},
                    "volumeMounts": [{"name": "data", "mountPath": "/w"}],
                }
            ],
            "spec.volumes": [
                {"name": "data", "cinder": {"size": 1, "autoRemove": True}},
                {"name": "old", "cinder": {"volumeID": "v" * 36}},
            ],
            "spec.containers": [
                {
                    "image": "busybox",
                    "stdin": "true",
                    "tty": True,
                    "ports": [{"containerPort": 80}, {"containerPort": "53", "protocol": "UDP"}],
                    "resources": {"requests": {"cpu": "0.25", "memory": "64"}},
                    "volumeMounts": [
                        {"name": "data", "mountPath": "/d", "readOnly": True},
                        {"name": "old", "mountPath": "/o"},
                        {"name": "undeclared", "mountPath": "/x"},
                    ],
                }
            ],
        }
    )
    r = create(api, body)
    assert r.status == 202, r
    capsule = r.json
    # cpu: max(sum of containers, each init container); memory likewise.
    assert (capsule["cpu"], capsule["memory"]) == (0.8, "128")
    [init] = capsule["init_containers"]
    [main] = capsule["containers"]
    assert init["restart_policy"] == {"MaximumRetryCount": "10", "Name": "on-failure"}
    # Zun leaked on-failure/10 into the containers; they keep the capsule's policy here.
    assert main["restart_policy"] == {"MaximumRetryCount": "0", "Name": "always"}
    assert (main["interactive"], main["tty"], main["cpu"]) == (True, True, 0.25)
    _, members = rows_of(capsule["uuid"])
    assert members[1].exposed_ports == {"80/tcp": {}, "53/udp": {}}
    kwargs, _ = node1.wait_for("capsule_create")
    assert kwargs["volumes"] == [
        {
            "name": "data",
            "size": 1,
            "volume_id": None,
            "auto_remove": True,
            "mounts": [
                {"container_uuid": init["uuid"], "mount_path": "/w", "read_only": False},
                {"container_uuid": main["uuid"], "mount_path": "/d", "read_only": True},
            ],
        },
        {
            "name": "old",
            "size": None,
            "volume_id": "v" * 36,
            "auto_remove": False,
            "mounts": [{"container_uuid": main["uuid"], "mount_path": "/o", "read_only": False}],
        },
    ]
    # The claim is what the node's inventory counts: every member's resources.
    assert node_usage() == (pytest.approx(1.05), 192, 0)


@pytest.mark.parametrize(
    ("spec_policy", "top_policy", "expected"),
    [
        (None, None, "always"),
        ("Never", None, "no"),
        ("OnFailure", "Never", "on-failure"),
        (None, "Never", "no"),  # Zun ignored the deprecated top-level form
    ],
)
def test_restart_policy(
    api: Any, node1: CapsuleRecorder, spec_policy: str | None, top_policy: str | None, expected: str
) -> None:
    body = template()
    if spec_policy:
        body["spec"]["restartPolicy"] = spec_policy
    if top_policy:
        body["restartPolicy"] = top_policy
    r = create(api, body)
    assert r.status == 202, r
    assert r.json["restart_policy"]["Name"] == expected
    assert r.json["containers"][0]["restart_policy"]["Name"] == expected


def test_image_pull_policy_needs_its_rule(api: Any, node1: CapsuleRecorder) -> None:
    body = template(**{"spec.containers": [{"image": "busybox", "imagePullPolicy": "Never"}]})
    admin = create(api.as_admin(), body).json
    member = create(api.as_member("project-a"), body).json
    assert rows_of(admin["uuid"])[1][0].image_pull_policy == "never"
    assert rows_of(member["uuid"])[1][0].image_pull_policy is None  # dropped silently, as Zun


BAD_TEMPLATES = [
    # (template, status, code, detail fragment)
    (template(kind="pod"), 400, "container.schema-validation-error", "kind"),
    (template(nets=[]), 400, "container.schema-validation-error", "nets"),
    (
        template(**{"spec.containers": [{"command": ["x"]}]}),
        400,
        "container.schema-validation-error",
        "'image' is a required property",
    ),
    (
        template(**{"spec.containers": [{"image": "busybox", "bogus": 1}]}),
        400,
        "container.schema-validation-error",
        "bogus",
    ),
    (
        template(
            **{"spec.containers": [{"image": "busybox", "resources": {"requests": {"cpu": 99}}}]}
        ),
        400,
        "container.schema-validation-error",
        "maximum",
    ),
    (
        template(**{"spec.containers": []}),
        400,
        "container.invalid-capsule-template",
        "at least one container",
    ),
    (
        template(**{"spec.initContainers": [{"command": ["true"]}]}),
        400,
        "container.invalid-capsule-template",
        "initContainers[0] has no image",
    ),
    (
        template(**{"spec.initContainers": {"image": "busybox"}}),
        400,
        "container.invalid-capsule-template",
        "not a list",
    ),
    (
        template(**{"spec.initContainers": [{"image": "busybox", "command": "true"}]}),
        400,
        "container.schema-validation-error",
        "initContainers[0].command",
    ),
    (
        template(
            **{
                "spec.initContainers": [
                    {"image": "busybox", "resources": {"requests": {"cpu": "x"}}}
                ]
            }
        ),
        400,
        "container.schema-validation-error",
        "initContainers[0].resources.requests.cpu",
    ),
    (
        template(
            **{
                "spec.volumes": [{"name": "v1", "cinder": {"size": 1, "volumeID": "v" * 36}}],
                "spec.containers": [
                    {"image": "busybox", "volumeMounts": [{"name": "v1", "mountPath": "/v"}]}
                ],
            }
        ),
        400,
        "container.invalid-capsule-template",
        "exactly one of cinder.size and cinder.volumeID",
    ),
    (
        template(
            **{
                "spec.volumes": [{"name": "v1", "cinder": {}}],
                "spec.containers": [
                    {"image": "busybox", "volumeMounts": [{"name": "v1", "mountPath": "/v"}]}
                ],
            }
        ),
        400,
        "container.invalid-capsule-template",
        "exactly one",
    ),
    (
        template(
            **{
                "spec.volumes": [
                    {"name": "v1", "cinder": {"size": 1}},
                    {"name": "v1", "cinder": {"size": 2}},
                ],
                "spec.containers": [
                    {"image": "busybox", "volumeMounts": [{"name": "v1", "mountPath": "/v"}]}
                ],
            }
        ),
        400,
        "container.invalid-capsule-template",
        "declared twice",
    ),
    (
        template(**{"spec.volumes": [{"name": "v1", "cinder": {"size": 1}}]}),
        400,
        "container.invalid",
        "volume mount parameters is invalid.",
    ),
    ("[1, 2]", 400, "container.failed-parse-string-to-json", "not a JSON object"),
    (json.dumps(template(kind="pod")), 400, "container.schema-validation-error", "kind"),
]


@pytest.mark.parametrize(("body", "status", "code", "fragment"), BAD_TEMPLATES)
def test_template_errors_are_400s_that_say_why(
    api: Any, node1: CapsuleRecorder, body: Any, status: int, code: str, fragment: str
) -> None:
    r = create(api.as_member("project-a"), body)
    assert r.status == status, r
    assert r.error["code"] == code
    assert fragment in r.error["detail"]
    with engine.transaction(readonly=True) as session:
        assert session.scalar(sa.select(sa.func.count()).select_from(models.Container)) == 0


def test_envelope_errors(api: Any, node1: CapsuleRecorder) -> None:
    member = api.as_member("project-a").at("1.40")
    for body in ({}, {"template": TEMPLATE, "other": 1}, {"template": None}, {"template": []}):
        r = member.post("/v1/capsules", json=body)
        assert r.status == 400 and r.error["code"] == "container.schema-validation-error", r
    r = member.post("/v1/capsules?x=1", json={"template": TEMPLATE})
    assert r.status == 400, r  # query parameters are merged into the body, as in Zun
    r = member.post("/v1/capsules", body=b"{}", content_type="text/plain")
    assert r.status == 415


def test_no_valid_host_is_202_with_error(api: Any, seed: Any) -> None:
    r = create(api, TEMPLATE)
    assert r.status == 202, r
    assert r.json["status"] == "Error"
    assert r.json["status_reason"] == "There are not enough hosts available."
    assert r.json["containers"][0]["status"] == "Error"


def test_capsules_are_not_counted_in_the_quota(api: Any, node1: CapsuleRecorder, seed: Any) -> None:
    seed.quota("project-a", "containers", 0)
    seed.quota("project-a", "cpu", 0)
    r = create(api.as_member("project-a"), TEMPLATE)
    assert r.status == 202, r
    usages = api.as_admin().at("1.40").get("/v1/quotas/project-a?usages=True").json
    assert usages["containers"]["in_use"] == 0


# --- views and policies -----------------------------------------------------------------------


def test_field_rules(api: Any, node1: CapsuleRecorder, policy_reset: None) -> None:
    body = template(**{"spec.containers": [{"image": "busybox", "imagePullPolicy": "Never"}]})
    uuid = create(api.as_member("project-a"), body).json["uuid"]
    admin = api.as_admin().at("1.40").get(f"/v1/capsules/{uuid}").json
    member = api.as_member("project-a").at("1.40").get(f"/v1/capsules/{uuid}").json
    assert admin["host"] == "node1" and "host" not in member
    assert "host" in admin["containers"][0] and "host" not in member["containers"][0]
    set_rules(
        {
            "capsule:get:labels": "role:admin",
            "capsule:get:host": "@",
            "container:get_one:image": "!",
        }
    )
    member = api.as_member("project-a").at("1.40").get(f"/v1/capsules/{uuid}").json
    assert "labels" not in member and member["host"] == "node1"
    assert "image" not in member["containers"][0]
    set_rules({"capsule:get": "role:admin"})
    assert api.as_member("project-a").get(f"/v1/capsules/{uuid}").status == 403


def test_lookup_by_name_is_scoped_and_ambiguity_is_409(api: Any, node1: CapsuleRecorder) -> None:
    create(api.as_member("project-a"), TEMPLATE)
    create(api.as_member("project-b"), TEMPLATE)
    assert api.as_member("project-a").get("/v1/capsules/demo").status == 200
    r = api.as_admin().get("/v1/capsules/demo")  # admins see every project
    assert r.status == 409 and r.error["code"] == "container.conflict"
    listed = api.as_member("project-b").at("1.40").get("/v1/capsules").json["capsules"]
    assert [c["project_id"] for c in listed] == ["project-b"]
    # A capsule member is not reachable as a container, nor listed with containers.
    member_uuid = listed[0]["containers"][0]["uuid"]
    assert api.as_member("project-b").get(f"/v1/containers/{member_uuid}").status == 404
    assert api.as_member("project-b").get("/v1/containers").json["containers"] == []


def test_list_is_two_queries_whatever_its_size(api: Any, node1: CapsuleRecorder) -> None:
    member = api.as_member("project-a")
    for _ in range(5):
        assert create(member, TEMPLATE).status == 202
    statements: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            statements.append(statement)

    sa.event.listen(engine.get_engine(), "before_cursor_execute", count)
    try:
        r = member.at("1.40").get("/v1/capsules")
    finally:
        sa.event.remove(engine.get_engine(), "before_cursor_execute", count)
    assert r.status == 200 and len(r.json["capsules"]) == 5
    assert all(len(c["containers"]) == 1 for c in r.json["capsules"])
    # The capsules, then the members of all of them: never one query per capsule.
    assert 2 <= len(statements) <= 3, statements


# --- delete ---------------------------------------------------------------------------------


def test_delete_casts_and_marks_deleting(api: Any, node1: CapsuleRecorder) -> None:
    uuid = create(api.as_member("project-a"), TEMPLATE).json["uuid"]
    r = api.as_member("project-a").delete(f"/v1/capsules/{uuid}")
    assert r.status == 204 and r.body == b""
    kwargs, ctx = node1.wait_for("capsule_delete")
    assert kwargs == {"capsule_uuid": uuid}
    assert ctx["request_id"] == r.headers["x-openstack-request-id"]
    capsule, _ = rows_of(uuid)
    assert (capsule.status, capsule.task_state) == ("Deleting", consts.CONTAINER_DELETING)
    assert api.as_member("project-b").delete(f"/v1/capsules/{uuid}").status == 404
    # An admin reaches any project's capsule.
    assert api.as_admin().delete(f"/v1/capsules/{uuid}?all_projects=1").status == 204


def test_delete_without_host_removes_rows_at_once(api: Any, seed: Any) -> None:
    uuid = create(api.as_member("project-a"), TEMPLATE).json["uuid"]  # no host: Error
    assert api.as_member("project-a").delete(f"/v1/capsules/{uuid}").status == 204
    with engine.transaction(readonly=True) as session:
        assert session.scalar(sa.select(sa.func.count()).select_from(models.Container)) == 0
    assert api.as_member("project-a").get(f"/v1/capsules/{uuid}").status == 404


# --- fuzzing the template ---------------------------------------------------------------------

_FUZZ_BASE: dict[str, Any] = {
    "kind": "capsule",
    "metadata": {"name": "fz", "labels": {"a": "b"}},
    "spec": {
        "initContainers": [
            {
                "image": "busybox",
                "command": ["true"],
                "resources": {"requests": {"cpu": 0.1, "memory": 16}},
                "volumeMounts": [{"name": "vol", "mountPath": "/v"}],
            }
        ],
        "containers": [
            {
                "image": "busybox",
                "command": ["sleep"],
                "args": ["1"],
                "env": {"A": "1"},
                "ports": [{"containerPort": 80}],
                "resources": {"requests": {"cpu": 0.5, "memory": 64}},
                "volumeMounts": [{"name": "vol", "mountPath": "/d"}],
            }
        ],
        "volumes": [{"name": "vol", "cinder": {"size": 1}}],
    },
}
_FUZZ_PATHS = [
    "kind",
    "capsuleVersion",
    "restartPolicy",
    "availabilityZone",
    "metadata",
    "metadata.name",
    "metadata.labels",
    "metadata.annotations",
    "spec",
    "spec.restartPolicy",
    "spec.containers",
    "spec.containers.0",
    "spec.containers.0.image",
    "spec.containers.0.command",
    "spec.containers.0.args",
    "spec.containers.0.env",
    "spec.containers.0.stdin",
    "spec.containers.0.resources",
    "spec.containers.0.resources.requests",
    "spec.containers.0.resources.requests.cpu",
    "spec.containers.0.resources.requests.memory",
    "spec.containers.0.ports",
    "spec.containers.0.ports.0",
    "spec.containers.0.ports.0.containerPort",
    "spec.containers.0.ports.0.protocol",
    "spec.containers.0.volumeMounts",
    "spec.containers.0.volumeMounts.0",
    "spec.containers.0.volumeMounts.0.readOnly",
    "spec.initContainers",
    "spec.initContainers.0",
    "spec.initContainers.0.image",
    "spec.initContainers.0.command",
    "spec.initContainers.0.args",
    "spec.initContainers.0.env",
    "spec.initContainers.0.tty",
    "spec.initContainers.0.resources.requests",
    "spec.initContainers.0.resources.requests.cpu",
    "spec.initContainers.0.ports",
    "spec.initContainers.0.volumeMounts",
    "spec.initContainers.0.volumeMounts.0",
    "spec.initContainers.0.volumeMounts.0.name",
    "spec.volumes",
    "spec.volumes.0",
    "spec.volumes.0.name",
    "spec.volumes.0.cinder",
    "spec.volumes.0.cinder.size",
    "spec.volumes.0.cinder.volumeID",
    "spec.volumes.0.cinder.autoRemove",
]


def _mutate(base: dict[str, Any], mutations: list[tuple[str, Any]]) -> dict[str, Any]:
    data = copy.deepcopy(base)
    for dotted, value in mutations:
        node: Any = data
        *path, last = dotted.split(".")
        for step in path:
            key: Any = int(step) if step.isdigit() else step
            if (
                isinstance(node, dict)
                and key in node
                or isinstance(node, list)
                and isinstance(key, int)
                and key < len(node)
            ):
                node = node[key]
            else:
                node = None
                break
        if isinstance(node, dict):
            node[last] = value
        elif isinstance(node, list) and last.isdigit() and int(last) < len(node):
            node[int(last)] = value
    return data


def test_no_template_gives_a_server_error(api: Any, seed: Any) -> None:
    """Whatever a template holds, the answer is a 202 (no host here) or a 4xx, never a 5xx."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    values = st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-3, 10**6)
        | st.text(max_size=6)
        | st.floats(allow_nan=False, allow_infinity=False, width=32)
        | st.sampled_from(["0.5", "64", "TCP", "Never", "true", "v" * 36, "busybox"]),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(["image", "name", "size", "x", "cinder", "requests"]),
                inner,
                max_size=3,
            )
        ),
        max_leaves=6,
    )
    mutations = st.lists(st.tuples(st.sampled_from(_FUZZ_PATHS), values), min_size=1, max_size=3)
    client = api.as_member("project-a").at("1.40")
    statuses: set[int] = set()

    @settings(
        max_examples=300,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(changes=mutations, as_string=st.booleans())
    def search(changes: list[tuple[str, Any]], as_string: bool) -> None:
        body = _mutate(_FUZZ_BASE, changes)
        r = client.post("/v1/capsules", json={"template": json.dumps(body) if as_string else body})
        statuses.add(r.status)
        assert r.status < 500, (changes, r)

    search()
    assert {202, 400} <= statuses  # both valid and invalid templates were tried


# --- a down host ----------------------------------------------------------------------------


def test_a_capsule_of_a_down_host_reads_unknown_as_its_containers(
    api: Any, node1: CapsuleRecorder
) -> None:
    uuid = create(api, TEMPLATE).json["uuid"]
    node1.wait_for("capsule_create")
    C = models.Container
    with engine.transaction() as session:  # what the node writes once the capsule runs
        session.execute(
            sa.update(C)
            .where(sa.or_(C.uuid == uuid, C.host == "node1"))
            .values(status=consts.RUNNING, task_state=None)
        )
        session.execute(
            sa.update(models.ZunService)
            .where(models.ZunService.host == "node1")
            .values(forced_down=True)
        )
    for version in ("1.31", "1.40"):
        shown = api.at(version).get(f"/v1/capsules/{uuid}").json
        [listed] = [
            c for c in api.at(version).get("/v1/capsules").json["capsules"] if c["uuid"] == uuid
        ]
        for view in (shown, listed):
            assert view["status"] == "Unknown", view
            assert "node1" in view["status_reason"]
            assert [m["status"] for m in view["containers"]] == ["Unknown"]
    # Derived, never stored: the host back, the real status shows again.
    with engine.transaction() as session:
        session.execute(
            sa.update(models.ZunService)
            .where(models.ZunService.host == "node1")
            .values(forced_down=False, last_seen_up=sa.func.current_timestamp())
        )
    shown = api.at("1.40").get(f"/v1/capsules/{uuid}").json
    assert shown["status"] == "Running"
    assert [m["status"] for m in shown["containers"]] == ["Running"]
