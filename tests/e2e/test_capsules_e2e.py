"""Capsules through the real clients: python-zunclient's library (``zun.capsules``) at 1.40 and
1.31, and ``openstack capsule ...`` (OSC with the zunclient plugin, which registers the capsule
commands outside ``appcontainer``), against a zun-all process, the local engine and its SQLite
database.

The sandbox image (kubernetes/pause) is not on this offline machine: this zun-all sets
``sandbox_image_pull_policy = never``, so the sandbox runs from the busybox fallback. Members
name ``imagePullPolicy: IfNotPresent`` (noauth callers are admins, so it is kept).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e.support import ZunAll, sweep

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

OPENSTACK = Path(sys.executable).parent / "openstack"

TEMPLATE: dict[str, Any] = {
    "kind": "capsule",
    "metadata": {"name": "e2e-pod", "labels": {"app": "e2e"}},
    "spec": {
        "restartPolicy": "Always",
        "initContainers": [
            {
                "image": "busybox",
                "imagePullPolicy": "IfNotPresent",
                "command": ["sh", "-c", "echo ready > /shared/state"],
                "volumeMounts": [{"name": "shared", "mountPath": "/shared"}],
            }
        ],
        "containers": [
            {
                "image": "busybox",
                "imagePullPolicy": "IfNotPresent",
                "command": ["sh", "-c", "cat /shared/state; sleep 600"],
                "resources": {"requests": {"cpu": 0.1, "memory": 32}},
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "volumeMounts": [{"name": "shared", "mountPath": "/shared"}],
            }
        ],
        "volumes": [{"name": "shared", "cinder": {"size": 1, "autoRemove": True}}],
    },
}


@pytest.fixture(scope="module")
def capsule_server(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, busybox_image: str
) -> Iterator[ZunAll]:
    server = ZunAll(tmp_path_factory.mktemp("zun-all-capsules"))
    # oslo.config merges a repeated section.
    server.config.write_text(
        server.config.read_text() + "[DEFAULT]\nsandbox_image_pull_policy = never\n"
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()
        sweep(docker_client, server.host)
        for volume in docker_client.volumes.list(filters={"label": "zun.capsule.uuid"}):
            if volume.attrs.get("Labels", {}).get("zun.project_id") == "default":
                volume.remove(force=True)


def wait_status(zun: Any, ident: str, timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        capsule = zun.capsules.get(ident)
        if capsule.status not in ("Creating", "Deleting"):
            return capsule
        time.sleep(0.2)
    raise AssertionError(f"capsule {ident} is still {capsule.status}")


def wait_gone(zun: Any, ident: str, timeout: float = 60) -> None:
    from zunclient import exceptions

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            zun.capsules.get(ident)
        except exceptions.NotFound:
            return
        time.sleep(0.2)
    raise AssertionError(f"capsule {ident} is still there")


def engine_of(docker_client: Any, uuid: str) -> list[Any]:
    return docker_client.containers.list(
        ignore_removed=True, all=True, filters={"label": f"zun.capsule.uuid={uuid}"}
    )


def test_library_create_list_describe_delete(capsule_server: ZunAll, docker_client: Any) -> None:
    zun = capsule_server.client("1.40")
    created = zun.capsules.create(template=TEMPLATE)  # gophercloud and zunclient expect 202
    uuid = created.uuid
    assert created.name == "e2e-pod" and created.status == "Creating"
    capsule = wait_status(zun, uuid)
    assert capsule.status == "Running", capsule.status_reason
    assert capsule.host == capsule_server.host
    assert [c["status"] for c in capsule.init_containers] == ["Stopped"]
    assert [c["status"] for c in capsule.containers] == ["Running"]
    assert capsule.restart_policy == {"MaximumRetryCount": "0", "Name": "always"}
    # The two shapes: 1.31 clients read meta_name, meta_labels and a string policy.
    legacy = capsule_server.client("1.31").capsules.get("e2e-pod")
    assert (legacy.meta_name, legacy.meta_labels, legacy.restart_policy) == (
        "e2e-pod",
        {"app": "e2e"},
        "always",
    )
    assert [c.uuid for c in zun.capsules.list()] == [uuid]
    assert [c.uuid for c in zun.capsules.list(limit=1)] == [uuid]
    assert zun.capsules.describe("e2e-pod").uuid == uuid

    member = docker_client.containers.get(f"zun-{capsule.containers[0]['uuid']}")
    deadline = time.monotonic() + 30
    while b"ready" not in member.logs() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert b"ready" in member.logs()

    zun.capsules.delete(uuid)
    wait_gone(zun, uuid)
    assert engine_of(docker_client, uuid) == []


def _osc(server: ZunAll, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    return subprocess.run(
        [
            str(OPENSTACK),
            "--os-auth-type",
            "none",
            "--os-endpoint",
            server.url + "/v1",
            "--os-container-api-version",
            "1.40",
            "capsule",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_openstack_capsule_commands(
    capsule_server: ZunAll, tmp_path: Path, docker_client: Any
) -> None:
    template = json.loads(json.dumps(TEMPLATE))
    template["metadata"]["name"] = "osc-pod"
    path = tmp_path / "capsule.yaml"
    path.write_text(yaml.safe_dump(template))
    created = _osc(capsule_server, "create", "--file", str(path), "-f", "json")
    assert created.returncode == 0, created.stderr
    uuid = json.loads(created.stdout)["uuid"]
    capsule = wait_status(capsule_server.client("1.40"), uuid)
    assert capsule.status == "Running", capsule.status_reason

    listed = _osc(capsule_server, "list", "-f", "json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["uuid"]: row for row in json.loads(listed.stdout)}
    assert rows[uuid]["name"] == "osc-pod" and rows[uuid]["status"] == "Running"
    assert rows[uuid]["addresses"]  # the sandbox's address, formatted by the client

    shown = _osc(capsule_server, "show", "osc-pod", "-f", "json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["uuid"] == uuid

    deleted = _osc(capsule_server, "delete", "osc-pod")
    assert deleted.returncode == 0 and "accepted" in deleted.stdout, deleted
    wait_gone(capsule_server.client("1.40"), uuid)
    assert engine_of(docker_client, uuid) == []
    missing = _osc(capsule_server, "show", "osc-pod")
    assert missing.returncode != 0 and "404" in missing.stderr
