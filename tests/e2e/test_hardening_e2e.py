"""A member's default container, created through the real API, as the engine runs it.

Scores the container with CIS Docker Benchmark v1.6 section 5 (``e2e/cis_section5.py``) and
checks that the figure written in docs/operations.md is the measured one. Also: the dropped
capabilities and the published address, and that a member cannot add capabilities.
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from e2e import cis_section5
from e2e.support import ZunAll, delete_capsule, delete_container, http, wait_for

from zun.runtime.docker import spec

REPO = Path(__file__).resolve().parents[2]
RUN = uuid.uuid4().hex[:8]
PROJECT = f"hardening-{RUN}"
MEMBER = {"X-User-Id": f"user-{RUN}", "X-Project-Id": PROJECT, "X-Roles": "member"}

pytestmark = pytest.mark.e2e


def _engine_container(docker_client: Any, uuid_: str) -> Any:
    found = docker_client.containers.list(
        ignore_removed=True, all=True, filters={"label": f"zun.container.uuid={uuid_}"}
    )
    assert len(found) == 1
    return found[0]


@pytest.fixture
def default_container(zun_all: ZunAll, registry: dict[str, str], docker_client: Any) -> Any:
    """A member's container with nothing but an image, a command and an exposed port."""
    status, body = http(
        zun_all,
        "POST",
        "/v1/containers?run=true",
        {
            "name": f"cis-{RUN}",
            "image": registry["image"],
            "command": ["sleep", "3600"],
            "exposed_ports": {"80/tcp": {}},
        },
        MEMBER,
    )
    assert status == 202, body
    member = zun_all.client()
    member.http_client.session.session.headers.update(MEMBER)
    wait_for(member, body["uuid"], "Running", timeout=120)
    try:
        yield _engine_container(docker_client, body["uuid"])
    finally:
        delete_container(zun_all, docker_client, body["uuid"], MEMBER)


def _documented_score() -> tuple[str, set[str]] | None:
    text = (REPO / "docs" / "operations.md").read_text()
    match = re.search(
        r"CIS Docker Benchmark v1\.6\.0 section 5 score of a member's default "
        r"container: \*\*(\d+/\d+)\*\*; not met: ([^\n]*)",
        text,
    )
    if not match:
        return None
    return match.group(1), set(re.findall(r"5\.\d+", match.group(2)))


def test_cis_section5_score_is_the_documented_one(
    default_container: Any, docker_client: Any
) -> None:
    default_container.reload()
    processes = [" ".join(p) for p in default_container.top()["Processes"]]
    results = cis_section5.score(default_container.attrs, docker_client.info(), processes)
    measured = cis_section5.summary(results)
    failed = {r.item for r in results if not r.passed}
    report = "\n".join(
        f"{r.item} {'PASS' if r.passed else 'FAIL'} {r.title}: {r.detail}" for r in results
    )
    assert _documented_score() == (measured, failed), (
        f"docs/operations.md must state the measured score {measured}:\n{report}"
    )


def test_default_container_drops_capabilities_and_publishes_on_the_node_address(
    default_container: Any,
) -> None:
    host = default_container.attrs["HostConfig"]
    assert host["CapDrop"] == ["ALL"]
    assert set(host["CapAdd"]) == cis_section5.KEPT_CAPABILITIES
    bindings = default_container.attrs["NetworkSettings"]["Ports"]["80/tcp"]
    assert [b["HostIp"] for b in bindings] == [spec.publish_host_ip()] != ["0.0.0.0"]


def test_a_member_cannot_add_capabilities(zun_all: ZunAll, registry: dict[str, str]) -> None:
    status, body = http(
        zun_all,
        "POST",
        "/v1/containers",
        {"image": registry["image"], "labels": {"zun.cap_add": "SYS_ADMIN"}},
        MEMBER,
    )
    assert status == 403, body
    assert body["errors"][0]["code"] == "container.policy-not-authorized"


@pytest.fixture
def member_capsule(zun_all: ZunAll, registry: dict[str, str], docker_client: Any) -> Any:
    """A member's capsule whose containers ask for no resources at all."""
    template = {
        "kind": "capsule",
        "metadata": {"name": f"cis-{RUN}"},
        "spec": {
            "containers": [
                {
                    "image": registry["image"],
                    "command": ["sleep", "3600"],
                    "ports": [{"containerPort": 80}],
                },
                {"image": registry["image"], "command": ["sleep", "3600"]},
            ]
        },
    }
    status, body = http(zun_all, "POST", "/v1/capsules", {"template": template}, MEMBER)
    assert status == 202, body
    uuid_ = body["uuid"]
    deadline = time.monotonic() + 120
    while True:
        status, shown = http(zun_all, "GET", f"/v1/capsules/{uuid_}", headers=MEMBER)
        if shown["status"] in ("Running", "Error") or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    try:
        assert shown["status"] == "Running", shown.get("status_reason")
        members = [docker_client.containers.get(f"zun-{c['uuid']}") for c in shown["containers"]]
        yield members
    finally:
        delete_capsule(zun_all, docker_client, uuid_, MEMBER)


def test_capsule_members_get_the_default_limits_and_the_hardening(member_capsule: Any) -> None:
    for engine_container in member_capsule:
        host = engine_container.attrs["HostConfig"]
        assert host["Memory"] == 512 << 20  # [DEFAULT]/default_memory
        assert host["NanoCpus"] == 1_000_000_000  # [DEFAULT]/default_cpu
        assert host["CapDrop"] == ["ALL"]
        assert set(host["CapAdd"]) == cis_section5.KEPT_CAPABILITIES


def test_cis_section5_score_of_a_capsule_member_is_the_documented_one(
    member_capsule: Any, docker_client: Any
) -> None:
    member = member_capsule[0]
    member.reload()
    processes = [" ".join(p) for p in member.top()["Processes"]]
    results = cis_section5.score(member.attrs, docker_client.info(), processes)
    measured = cis_section5.summary(results)
    failed = {r.item for r in results if not r.passed}
    report = "\n".join(
        f"{r.item} {'PASS' if r.passed else 'FAIL'} {r.title}: {r.detail}" for r in results
    )
    text = (REPO / "docs" / "operations.md").read_text()
    match = re.search(
        r"CIS section 5 score of a member's capsule container: \*\*(\d+/\d+)\*\*; "
        r"not met: ([^\n]*)",
        text,
    )
    documented = (match.group(1), set(re.findall(r"5\.\d+", match.group(2)))) if match else None
    assert documented == (measured, failed), (
        f"docs/operations.md must state the measured score {measured}:\n{report}"
    )
