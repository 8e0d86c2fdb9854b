"""The e2e fixtures' guard (``support.require_nothing_left``) on the session's zun-all: a
container a test left running fails the run, named, and is deleted through the API and from
the engine; a member's forced delete is the 403 that used to leave such containers."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from e2e.support import (
    ZunAll,
    delete_container,
    engine_uuids,
    http,
    require_nothing_left,
    wait_for,
)

pytestmark = pytest.mark.e2e

RUN = uuid.uuid4().hex[:8]
MEMBER = {"X-User-Id": f"user-{RUN}", "X-Project-Id": f"guard-{RUN}", "X-Roles": "member"}


def _member_sleeper(zun_all: ZunAll, image: str) -> str:
    # A member may not choose a pull policy: the registry's image, pulled.
    status, body = http(
        zun_all,
        "POST",
        "/v1/containers?run=true",
        {"image": image, "command": ["sleep", "3600"], "cpu": 0.1, "memory": 32},
        MEMBER,
    )
    assert status == 202, body
    member = zun_all.client()
    member.http_client.session.session.headers.update(MEMBER)
    wait_for(member, body["uuid"], "Running", timeout=120)
    return body["uuid"]


def test_a_container_left_running_fails_the_guard_and_is_deleted(
    zun_all: ZunAll, docker_client: Any, registry: dict[str, str]
) -> None:
    left = _member_sleeper(zun_all, registry["image"])
    # What test_commit_e2e and test_hardening_e2e used to send, unread, at teardown.
    status, body = http(zun_all, "DELETE", f"/v1/containers/{left}?force=true", headers=MEMBER)
    assert (status, body["errors"][0]["code"]) == (403, "container.policy-not-authorized")
    assert left in engine_uuids(docker_client, zun_all.host)

    with pytest.raises(pytest.fail.Exception) as failed:
        require_nothing_left(zun_all, docker_client)
    assert f"engine containers of zun-all host {zun_all.host} were left" in str(failed.value)
    assert f"zun-{left} (running, image {registry['image']}, uuid {left})" in str(failed.value)
    # Gone from the engine and, through the API, from the member's project.
    assert left not in engine_uuids(docker_client, zun_all.host)
    assert http(zun_all, "GET", f"/v1/containers/{left}", headers=MEMBER)[0] == 404
    require_nothing_left(zun_all, docker_client)


def test_delete_container_removes_a_members_container_as_its_projects_admin(
    zun_all: ZunAll, docker_client: Any, registry: dict[str, str]
) -> None:
    uuid_ = _member_sleeper(zun_all, registry["image"])
    delete_container(zun_all, docker_client, uuid_, MEMBER)
    assert uuid_ not in engine_uuids(docker_client, zun_all.host)
    assert http(zun_all, "GET", f"/v1/containers/{uuid_}", headers=MEMBER)[0] == 404
    # Gone already: a clean-up accepts the 404.
    delete_container(zun_all, docker_client, uuid_, MEMBER)
