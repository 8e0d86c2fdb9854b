"""Commits through the real API on the real engine: no member can replace an image the node or
another project uses, a repeated name is a 409, a refused commit leaves no image behind."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from e2e.support import ZunAll, delete_container, http, wait_for

pytestmark = pytest.mark.e2e

RUN = uuid.uuid4().hex[:8]
PROJECT = f"commit-{RUN}"
MEMBER = {"X-User-Id": f"user-{RUN}", "X-Project-Id": PROJECT, "X-Roles": "member"}


@pytest.fixture(scope="module")
def member_container(
    zun_all: ZunAll, registry: dict[str, str], docker_client: Any
) -> Iterator[str]:
    status, body = http(
        zun_all,
        "POST",
        "/v1/containers?run=true",
        {"image": registry["image"], "command": ["sleep", "3600"]},
        MEMBER,
    )
    assert status == 202, body
    member = zun_all.client()
    member.http_client.session.session.headers.update(MEMBER)
    wait_for(member, body["uuid"], "Running", timeout=120)
    yield body["uuid"]
    delete_container(zun_all, docker_client, body["uuid"], MEMBER)


@pytest.fixture
def made_images(docker_client: Any) -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        try:
            docker_client.images.remove(name, force=True)
        except Exception:
            pass


def _commit(
    server: ZunAll, container: str, repository: str, tag: str | None = None
) -> tuple[int, Any]:
    query = f"repository={repository}" + (f"&tag={tag}" if tag else "")
    return http(server, "POST", f"/v1/containers/{container}/commit?{query}", headers=MEMBER)


def _settled(zun_all: ZunAll, container: str) -> None:
    member = zun_all.client()
    member.http_client.session.session.headers.update(MEMBER)
    wait_for(member, container, timeout=120)


def _last_commit_event(zun_all: ZunAll, container: str) -> dict[str, Any]:
    status, body = http(
        zun_all, "GET", f"/v1/containers/{container}/container_actions", headers=MEMBER
    )
    assert status == 200, body
    commits = [a for a in body["containerActions"] if a["action"] == "commit"]
    request_id = commits[0]["request_id"]
    # As an admin: the event's traceback is shown to admins only.
    status, body = http(
        zun_all, "GET", f"/v1/containers/{container}/container_actions/{request_id}"
    )
    assert status == 200, body
    return body["events"][0]


def test_a_member_cannot_replace_the_nodes_busybox(
    zun_all: ZunAll, member_container: str, docker_client: Any, busybox_image: str
) -> None:
    before = docker_client.images.get(busybox_image).id
    for repository, tag in (
        ("busybox", "latest"),
        ("busybox", None),
        ("docker.io/library/busybox", "latest"),
        (f"other-{RUN}/snap", None),
    ):
        status, body = _commit(zun_all, member_container, repository, tag)
        assert status == 403, body
        assert body["errors"][0]["code"] == "container.commit-repository-not-allowed"
    assert docker_client.images.get(busybox_image).id == before


def test_commit_into_the_namespace_then_the_same_name_is_409(
    zun_all: ZunAll, member_container: str, docker_client: Any, made_images: list[str]
) -> None:
    name = f"{PROJECT}/snap"
    made_images.append(f"{name}:v1")
    status, body = _commit(zun_all, member_container, name, "v1")
    assert status == 202, body
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            image = docker_client.images.get(f"{name}:v1")
            break
        except Exception:
            time.sleep(0.3)
    else:
        raise AssertionError("the committed image never appeared")
    _settled(zun_all, member_container)
    status, body = _commit(zun_all, member_container, name, "v1")
    assert status == 409, body
    assert body["errors"][0]["code"] == "container.image-already-exists"
    assert docker_client.images.get(f"{name}:v1").id == image.id


def test_the_node_refuses_a_name_its_engine_has_and_leaves_nothing(
    zun_all: ZunAll,
    member_container: str,
    docker_client: Any,
    busybox_image: str,
    made_images: list[str],
) -> None:
    """A name in the project's namespace that the engine already has without any image row
    (built or pulled outside Zun): the node refuses it instead of moving the name."""
    name = f"{PROJECT}/prebuilt"
    made_images.append(f"{name}:latest")
    source = docker_client.images.get(busybox_image)
    source.tag(name, "latest")
    images_before = {i.id for i in docker_client.images.list(all=True)}
    _settled(zun_all, member_container)
    status, body = _commit(zun_all, member_container, name)
    assert status == 202, body
    _settled(zun_all, member_container)
    event = _last_commit_event(zun_all, member_container)
    assert event["result"] == "Error" and "already exists" in (event["traceback"] or "")
    assert docker_client.images.get(f"{name}:latest").id == source.id
    # No image was made, and the image row of the refused commit is gone.
    assert {i.id for i in docker_client.images.list(all=True)} == images_before
    status, body = http(zun_all, "GET", "/v1/images")
    assert not [i for i in body["images"] if i["repo"] == name], body
