"""Capsules end to end in one process: the API app, a real zun-compute agent on the in-process
bus (every endpoint, the capsule one included), the real Docker engine and a real database.

The sandbox image (kubernetes/pause) is not on this offline machine and its pull policy is set
to ``never``, so every capsule here runs its sandbox from the busybox fallback.
"""

from __future__ import annotations

import contextlib
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import docker
import pytest
import sqlalchemy as sa
from functional.api.conftest import api, api_app, api_db, api_db_template, seed  # noqa: F401
from functional.api.resources_support import agent, bus, wait_for  # noqa: F401
from unit.api.apptesting import ApiClient

from zun.common import consts
from zun.common.context import get_admin_context
from zun.compute import periodic_tasks
from zun.compute.capsule_endpoint import DEFAULT_FALLBACK_COMMAND, CapsuleEndpoint
from zun.compute.container_endpoint import ContainerEndpoint
from zun.conf import CONF
from zun.db import engine, models

pytestmark = pytest.mark.docker

LABEL_CAPSULE = "zun.capsule.uuid"
PULL = "IfNotPresent"


@pytest.fixture
def sandbox_never_pulled(bus: None) -> Iterator[None]:
    CONF.set_override("sandbox_image_pull_policy", "never")
    yield
    CONF.clear_override("sandbox_image_pull_policy")


@pytest.fixture
def node(
    agent: Any,
    sandbox_never_pulled: None,
    busybox_image: str,
    docker_client: docker.DockerClient,
) -> Iterator[Any]:
    projects: list[str] = []
    agent.projects = projects
    yield agent
    for container in docker_client.containers.list(
        ignore_removed=True, all=True, filters={"label": f"zun.host={agent.host}"}
    ):
        container.remove(force=True, v=True)
    for volume in docker_client.volumes.list(filters={"label": "zun.project_id"}):
        if volume.attrs.get("Labels", {}).get("zun.project_id") in projects:
            with contextlib.suppress(docker.errors.APIError):
                volume.remove(force=True)
    for project in projects:
        for net in docker_client.networks.list(names=[f"zun-{project}"]):
            with contextlib.suppress(docker.errors.APIError):
                net.remove()


def as_project(api: ApiClient, node: Any, admin: bool = True) -> ApiClient:
    project = f"cz-{uuidlib.uuid4().hex[:10]}"
    node.projects.append(project)
    client = api.as_admin(project) if admin else api.as_member(project)
    return client.at("1.40")


def settled(client: ApiClient, ident: str) -> dict[str, Any]:
    def check() -> Any:
        r = client.get(f"/v1/capsules/{ident}")
        assert r.status == 200, r
        return r.json if r.json["status"] not in (consts.CREATING, consts.DELETING) else None

    return wait_for(check, timeout=90, what=f"capsule {ident} to settle")


def wait_gone(client: ApiClient, ident: str) -> None:
    wait_for(
        lambda: client.get(f"/v1/capsules/{ident}").status == 404,
        timeout=60,
        what=f"capsule {ident} to go",
    )


def engine_of(docker_client: docker.DockerClient, capsule_uuid: str) -> list[Any]:
    return docker_client.containers.list(
        ignore_removed=True, all=True, filters={"label": f"{LABEL_CAPSULE}={capsule_uuid}"}
    )


def volumes_of(docker_client: docker.DockerClient, capsule_uuid: str) -> list[Any]:
    return docker_client.volumes.list(filters={"label": f"{LABEL_CAPSULE}={capsule_uuid}"})


def usage(host: str) -> tuple[float, int]:
    with engine.transaction(readonly=True) as session:
        row = session.execute(
            sa.select(models.ComputeNode.cpu_used, models.ComputeNode.mem_used).where(
                models.ComputeNode.hostname == host
            )
        ).one()
    return round(float(row[0]), 6), int(row[1])


def container(image: str = "busybox", command: list[str] | None = None, **extra: Any) -> dict:
    return {
        "image": image,
        "imagePullPolicy": PULL,
        "command": command or ["sleep", "300"],
        **extra,
    }


def capsule_template(name: str | None, containers: list[dict], **spec: Any) -> dict[str, Any]:
    return {
        "kind": "capsule",
        "metadata": {"name": name} if name else {},
        "spec": {"containers": containers, **spec},
    }


def manager_of(node: Any) -> ContainerEndpoint:
    return next(e for e in node.endpoints if isinstance(e, ContainerEndpoint))


# --- the full life of a capsule ---------------------------------------------------------------


def test_init_then_containers_share_the_sandbox_and_a_volume(
    api: ApiClient, node: Any, docker_client: docker.DockerClient
) -> None:
    client = as_project(api, node)
    template = {
        "kind": "capsule",
        "metadata": {"name": "web-init", "labels": {"app": "web"}, "annotations": {"team": "blue"}},
        "spec": {
            "restartPolicy": "OnFailure",
            "initContainers": [
                container(
                    command=["sh", "-c", "echo hello-from-init > /work-dir/index.html"],
                    resources={"requests": {"cpu": 0.1, "memory": 32}},
                    volumeMounts=[{"name": "workdir", "mountPath": "/work-dir"}],
                )
            ],
            "containers": [
                container(
                    command=["sh", "-c"],
                    args=["cat /data/index.html; sleep 300"],
                    env={"ENV2": "v2"},
                    tty=True,
                    stdin=True,
                    ports=[{"name": "http", "containerPort": 80, "protocol": "TCP"}],
                    resources={"requests": {"cpu": 0.2, "memory": 64}},
                    volumeMounts=[{"name": "workdir", "mountPath": "/data", "readOnly": True}],
                )
            ],
            "volumes": [{"name": "workdir", "cinder": {"size": 1, "autoRemove": True}}],
        },
    }
    r = client.post("/v1/capsules", json={"template": template})
    assert r.status == 202, r
    uuid = r.json["uuid"]
    assert r.headers["Location"].endswith(f"/v1/capsules/{uuid}")

    capsule = settled(client, "web-init")
    assert capsule["status"] == "Running", capsule["status_reason"]
    assert capsule["host"] == node.host
    [init] = capsule["init_containers"]
    [main] = capsule["containers"]
    assert init["status"] == "Stopped" and init["status_detail"].startswith("Exited(0)")
    assert main["status"] == "Running"

    # The sandbox: the fallback image and command, on the project network, shareable IPC,
    # the members' ports; the members join its namespaces.
    sandbox = docker_client.containers.get(f"zun-{uuid}")
    assert sandbox.status == "running"
    assert sandbox.labels["zun.container.uuid"] == uuid
    assert sandbox.labels["app"] == "web"
    assert sandbox.attrs["Config"]["Image"] == "busybox:latest"
    assert sandbox.attrs["Config"]["Cmd"] == DEFAULT_FALLBACK_COMMAND
    assert sandbox.attrs["HostConfig"]["IpcMode"] == "shareable"
    assert "80/tcp" in sandbox.attrs["Config"]["ExposedPorts"]
    assert sandbox.attrs["Config"]["Hostname"] == "web-init"
    member = docker_client.containers.get(f"zun-{main['uuid']}")
    assert member.attrs["HostConfig"]["NetworkMode"] == f"container:{sandbox.id}"
    assert member.attrs["HostConfig"]["IpcMode"] == f"container:{sandbox.id}"
    assert member.attrs["Config"]["Env"].count("ENV2=v2") == 1
    assert member.attrs["Config"]["Tty"] is True

    # Addresses: the sandbox's, on the capsule and its members.
    network = next(iter(capsule["addresses"]))
    address = capsule["addresses"][network][0]["addr"]
    assert sandbox.attrs["NetworkSettings"]["Networks"][network]["IPAddress"] == address
    assert main["addresses"] == capsule["addresses"]
    code, out = member.exec_run(["ip", "-4", "addr"])
    assert code == 0 and address in out.decode()
    # The init container wrote into the volume the container reads (read-only).
    wait_for(lambda: b"hello-from-init" in member.logs(), what="the container's output")
    code, out = member.exec_run(["sh", "-c", "echo x > /data/y"])
    assert code != 0 and b"Read-only" in out
    [volume] = volumes_of(docker_client, uuid)
    assert usage(node.host) == (0.3, 96)

    # The container endpoint's periodic work leaves the capsule alone.
    manager = manager_of(node)
    periodic_tasks.sync_container_state(manager, get_admin_context())
    assert periodic_tasks.reap_orphans(manager, get_admin_context(), grace_period=0) == []
    again = client.get(f"/v1/capsules/{uuid}").json
    assert again["status"] == "Running"
    assert [m["status"] for m in again["init_containers"] + again["containers"]] == [
        "Stopped",
        "Running",
    ]

    # Both shapes, list and show.
    legacy = client.at("1.31").get(f"/v1/capsules/{uuid}").json
    assert (legacy["meta_name"], legacy["restart_policy"]) == ("web-init", "on-failure")
    listed = client.get("/v1/capsules").json["capsules"]
    assert [c["uuid"] for c in listed] == [uuid]

    assert client.delete(f"/v1/capsules/{uuid}").status == 204
    wait_gone(client, uuid)
    assert engine_of(docker_client, uuid) == []
    with pytest.raises(docker.errors.NotFound):
        volume.reload()
    assert docker_client.networks.list(names=[network]) == []
    assert usage(node.host) == (0.0, 0)
    with engine.transaction(readonly=True) as session:
        assert session.scalar(sa.select(sa.func.count()).select_from(models.Volume)) == 0
        assert session.scalar(sa.select(sa.func.count()).select_from(models.Container)) == 0


def test_legacy_form_at_1_31(api: ApiClient, node: Any) -> None:
    client = as_project(api, node).at("1.31")
    template = {
        "kind": "capsule",
        "capsuleVersion": "beta",
        "restartPolicy": "Never",
        "metadata": {"name": "old-client", "labels": {"a": "b"}},
        "spec": {"containers": [container()]},
    }
    r = client.post("/v1/capsules", json={"template": template})
    assert r.status == 202, r
    assert r.json["meta_name"] == "old-client" and r.json["restart_policy"] == "no"
    assert r.json["containers_uuids"] == [] and r.json["capsule_version"] == ""
    capsule = settled(client, "old-client")
    assert capsule["status"] == "Running" and capsule["meta_labels"] == {"a": "b"}
    assert client.delete("/v1/capsules/old-client").status == 204
    wait_gone(client, "old-client")


# --- failures leave an Error and nothing on the node -----------------------------------------


def _assert_failed_clean(
    client: ApiClient, docker_client: docker.DockerClient, node: Any, uuid: str, reason: str
) -> dict[str, Any]:
    capsule = settled(client, uuid)
    assert capsule["status"] == "Error"
    assert reason in capsule["status_reason"], capsule["status_reason"]
    assert capsule["host"] is None
    assert engine_of(docker_client, uuid) == []
    assert volumes_of(docker_client, uuid) == []
    assert usage(node.host) == (0.0, 0)
    mapping = models.VolumeMapping
    with engine.transaction(readonly=True) as session:
        assert (
            session.scalar(
                sa.select(sa.func.count())
                .select_from(mapping)
                .where(mapping.container_uuid == uuid)
            )
            == 0
        )
    return capsule


def test_failing_init_container(
    api: ApiClient,
    node: Any,
    docker_client: docker.DockerClient,
) -> None:
    client = as_project(api, node)
    template = capsule_template(
        "init-fails",
        [
            container(
                resources={"requests": {"cpu": 0.2, "memory": 16}},
                volumeMounts=[{"name": "vol", "mountPath": "/v"}],
            )
        ],
        restartPolicy="Never",
        initContainers=[container(command=["true"]), container(command=["sh", "-c", "exit 3"])],
        volumes=[{"name": "vol", "cinder": {"size": 1}}],
    )
    uuid = client.post("/v1/capsules", json={"template": template}).json["uuid"]
    capsule = _assert_failed_clean(client, docker_client, node, uuid, "exited with code 3")
    first, second = capsule["init_containers"]
    assert first["status"] == "Stopped"  # it had finished
    assert second["status"] == "Error" and "exited with code 3" in second["status_reason"]
    assert capsule["containers"][0]["status"] == "Error"
    # Without a host the delete is immediate.
    assert client.delete(f"/v1/capsules/{uuid}").status == 204
    assert client.get(f"/v1/capsules/{uuid}").status == 404


def test_init_container_retried_by_its_restart_policy(
    api: ApiClient,
    node: Any,
    docker_client: docker.DockerClient,
) -> None:
    client = as_project(api, node)
    # Fails on its first run only (a marker file in a volume survives the restart).
    flaky = container(
        command=["sh", "-c", "test -e /m/seen || { touch /m/seen; exit 1; }"],
        volumeMounts=[{"name": "marker", "mountPath": "/m"}],
    )
    template = capsule_template(
        "flaky",
        [container()],
        initContainers=[flaky],
        volumes=[{"name": "marker", "cinder": {"size": 1, "autoRemove": True}}],
    )
    uuid = client.post("/v1/capsules", json={"template": template}).json["uuid"]
    capsule = settled(client, uuid)  # always -> init containers get on-failure/10
    assert capsule["status"] == "Running", capsule["status_reason"]
    assert client.delete(f"/v1/capsules/{uuid}").status == 204
    wait_gone(client, uuid)
    assert volumes_of(docker_client, uuid) == []


def test_missing_member_image(
    api: ApiClient,
    node: Any,
    docker_client: docker.DockerClient,
) -> None:
    client = as_project(api, node)
    template = capsule_template(
        "no-image", [container(), container(image="zun-missing/nothing:1", imagePullPolicy="Never")]
    )
    uuid = client.post("/v1/capsules", json={"template": template}).json["uuid"]
    capsule = _assert_failed_clean(client, docker_client, node, uuid, "zun-missing/nothing:1")
    assert {m["status"] for m in capsule["containers"]} == {"Error"}


def test_volume_kept_reused_by_id_and_refused_elsewhere(
    api: ApiClient, node: Any, docker_client: docker.DockerClient
) -> None:
    client = as_project(api, node)
    writer = capsule_template(
        "writer",
        [
            container(
                command=["sh", "-c", "echo kept > /v/f; sleep 300"],
                volumeMounts=[{"name": "vol", "mountPath": "/v"}],
            )
        ],
        volumes=[{"name": "vol", "cinder": {"size": 1, "autoRemove": False}}],
    )
    uuid = client.post("/v1/capsules", json={"template": writer}).json["uuid"]
    assert settled(client, uuid)["status"] == "Running"
    [volume] = volumes_of(docker_client, uuid)
    assert len(volume.name) == 36  # a UUID: usable as a volumeID later
    wait_for(
        lambda: (
            docker_client.containers.get(f"zun-{settled(client, uuid)['containers'][0]['uuid']}")
            .exec_run(["cat", "/v/f"])
            .output
            == b"kept\n"
        ),
        what="the write",
    )
    assert client.delete(f"/v1/capsules/{uuid}").status == 204
    wait_gone(client, uuid)
    volume.reload()  # still there: autoRemove false

    reader = capsule_template(
        "reader",
        [
            container(
                command=["sh", "-c", "cat /v/f; sleep 300"],
                volumeMounts=[{"name": "vol", "mountPath": "/v"}],
            )
        ],
        volumes=[{"name": "vol", "cinder": {"volumeID": volume.name}}],
    )
    uuid2 = client.post("/v1/capsules", json={"template": reader}).json["uuid"]
    capsule = settled(client, uuid2)
    assert capsule["status"] == "Running", capsule["status_reason"]
    engine_member = docker_client.containers.get(f"zun-{capsule['containers'][0]['uuid']}")
    wait_for(lambda: b"kept" in engine_member.logs(), what="the reader's output")

    other = as_project(api, node)
    uuid3 = other.post("/v1/capsules", json={"template": reader}).json["uuid"]
    _assert_failed_clean(other, docker_client, node, uuid3, "could not be found")
    missing = capsule_template(
        "missing",
        [container(volumeMounts=[{"name": "vol", "mountPath": "/v"}])],
        volumes=[{"name": "vol", "cinder": {"volumeID": str(uuidlib.uuid4())}}],
    )
    uuid4 = other.post("/v1/capsules", json={"template": missing}).json["uuid"]
    _assert_failed_clean(other, docker_client, node, uuid4, "could not be found")

    assert client.delete(f"/v1/capsules/{uuid2}").status == 204
    wait_gone(client, uuid2)
    volume.reload()  # an existing volume is never removed with a capsule
    volume.remove()


def test_delete_right_after_create(
    api: ApiClient,
    node: Any,
    docker_client: docker.DockerClient,
) -> None:
    client = as_project(api, node)
    template = capsule_template(
        "short", [container()], initContainers=[container(command=["sleep", "1"])]
    )
    uuid = client.post("/v1/capsules", json={"template": template}).json["uuid"]
    assert client.delete(f"/v1/capsules/{uuid}").status == 204
    wait_gone(client, uuid)
    wait_for(lambda: engine_of(docker_client, uuid) == [], what="the engine cleanup")
    assert usage(node.host) == (0.0, 0)


def test_recovery_undoes_an_interrupted_create_and_finishes_a_delete(
    api: ApiClient, node: Any, docker_client: docker.DockerClient
) -> None:
    client = as_project(api, node)
    first = client.post(
        "/v1/capsules", json={"template": capsule_template("one", [container()])}
    ).json["uuid"]
    second = client.post(
        "/v1/capsules", json={"template": capsule_template("two", [container()])}
    ).json["uuid"]
    settled(client, first)
    settled(client, second)
    C = models.Container
    E, A = models.ContainerActionEvent, models.ContainerAction
    with engine.transaction() as session:  # as a crash would leave them
        session.execute(
            sa.update(C)
            .where(C.uuid == first)
            .values(status=consts.CREATING, task_state=consts.CONTAINER_CREATING)
        )
        # A capsule made before create requests were stored: it cannot be created again.
        session.execute(
            sa.delete(E).where(
                E.event == "schedule_attempt",
                E.action_id.in_(sa.select(A.id).where(A.container_uuid == first)),
            )
        )
        session.execute(
            sa.update(C)
            .where(C.uuid == second)
            .values(status=consts.DELETING, task_state=consts.CONTAINER_DELETING)
        )
    endpoint = CapsuleEndpoint(node.host)
    try:
        endpoint.init_host(get_admin_context())
    finally:
        endpoint.cleanup_host()
    capsule = client.get(f"/v1/capsules/{first}").json
    assert capsule["status"] == "Error" and capsule["host"] is None
    assert capsule["status_reason"] == "Capsule failed to create correctly"
    assert engine_of(docker_client, first) == []
    assert client.get(f"/v1/capsules/{second}").status == 404
    assert engine_of(docker_client, second) == []
    assert usage(node.host) == (0.0, 0)


def test_a_create_sent_while_the_agent_restarts_is_done_not_failed(
    api: ApiClient, node: Any, docker_client: docker.DockerClient
) -> None:
    """The cast waits in the queue while the agent is down; the agent's start-up recovery
    then finds the capsule Creating on its host. It was never started: recovery must create
    it (from the request stored with the attempt), not fail it as interrupted; the queued
    cast then finds it done."""
    client = as_project(api, node)
    node.rpc.stop()  # the agent stops taking messages: a restart
    node.rpc.wait()
    uuid = client.post(
        "/v1/capsules", json={"template": capsule_template("restart", [container()])}
    ).json["uuid"]
    assert client.get(f"/v1/capsules/{uuid}").json["status"] == "Creating"
    admin = get_admin_context()
    for endpoint in node.endpoints:  # the start-up of the agent, in its order
        init_host = getattr(endpoint, "init_host", None)
        if init_host is not None:
            init_host(admin)
    node.rpc.start()  # the queued cast arrives now
    capsule = settled(client, uuid)
    assert capsule["status"] == "Running", capsule["status_reason"]
    assert [m["status"] for m in capsule["containers"]] == ["Running"]
    for endpoint in node.endpoints:
        if hasattr(endpoint, "workers"):
            endpoint.workers.wait_idle(60)
    assert client.get(f"/v1/capsules/{uuid}").json["status"] == "Running"
    # One sandbox and one member: the queued cast made nothing more.
    assert len(engine_of(docker_client, uuid)) == 2


def test_member_sees_only_its_project(api: ApiClient, node: Any) -> None:
    mine = as_project(api, node, admin=False)
    r = mine.post(
        "/v1/capsules",
        json={
            "template": capsule_template("m1", [{"image": "busybox", "command": ["sleep", "300"]}])
        },
    )
    # A member's imagePullPolicy would be dropped; busybox:latest defaults to "always",
    # which cannot pull offline: the capsule fails cleanly with the engine's reason.
    assert r.status == 202, r
    capsule = settled(mine, r.json["uuid"])
    assert capsule["status"] == "Error" and "host" not in capsule
    other = as_project(api, node, admin=False)
    assert other.get(f"/v1/capsules/{r.json['uuid']}").status == 404
    assert other.get("/v1/capsules").json["capsules"] == []


def capsule_endpoint_of(node: Any) -> CapsuleEndpoint:
    return next(e for e in node.endpoints if isinstance(e, CapsuleEndpoint))


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (["true"], "Succeeded"),
        (["sh", "-c", "exit 2"], "Failed: container capsule-ends-"),
    ],
)
def test_a_capsule_that_ends_is_stopped_with_its_phase(
    api: ApiClient,
    node: Any,
    docker_client: docker.DockerClient,
    command: list[str],
    reason: str,
) -> None:
    client = as_project(api, node)
    template = capsule_template("ends", [container(command=command)], restartPolicy="Never")
    uuid = client.post("/v1/capsules", json={"template": template}).json["uuid"]
    assert settled(client, uuid)["status"] == "Running"
    endpoint = capsule_endpoint_of(node)
    member = docker_client.containers.get(f"zun-{settled(client, uuid)['containers'][0]['uuid']}")
    wait_for(lambda: (member.reload(), member.status)[1] == "exited", what="the member's end")
    phases = endpoint.update_phases(get_admin_context())
    expected = consts.CAPSULE_SUCCEEDED if reason == "Succeeded" else consts.CAPSULE_FAILED
    assert phases == {uuid: expected}
    capsule = client.get(f"/v1/capsules/{uuid}").json
    assert capsule["status"] == "Stopped"
    assert capsule["status_reason"].startswith(reason)
    if expected == consts.CAPSULE_FAILED:
        assert capsule["status_reason"].endswith("exited with code 2")
    assert docker_client.containers.get(f"zun-{uuid}").status == "exited"
    # The container endpoint's sync agrees (the sandbox is stopped): nothing flips back.
    periodic_tasks.sync_container_state(manager_of(node), get_admin_context())
    again = client.get(f"/v1/capsules/{uuid}").json
    assert (again["status"], again["status_reason"]) == ("Stopped", capsule["status_reason"])
    assert again["containers"][0]["status"] == "Stopped"
    assert endpoint.update_phases(get_admin_context()) == {}  # only Running capsules
    assert client.delete(f"/v1/capsules/{uuid}").status == 204
    wait_gone(client, uuid)


def test_a_running_capsule_keeps_running(api: ApiClient, node: Any) -> None:
    client = as_project(api, node)
    uuid = client.post(
        "/v1/capsules",
        json={"template": capsule_template("keeps", [container()], restartPolicy="Never")},
    ).json["uuid"]
    settled(client, uuid)
    assert capsule_endpoint_of(node).update_phases(get_admin_context()) == {
        uuid: consts.CAPSULE_RUNNING
    }
    assert client.get(f"/v1/capsules/{uuid}").json["status"] == "Running"
