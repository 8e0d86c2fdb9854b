"""/v1/images end to end: the API app, a real zun-compute agent on the in-process bus, the real
Docker engine and the local registries (scripts/test-images.sh)."""

from __future__ import annotations

import uuid
from typing import Any

import docker
import pytest
import sqlalchemy as sa
from functional.api.resources_support import agent, bus, wait_for  # noqa: F401
from unit.api.apptesting import ApiClient, Seed

from zun.conf import CONF
from zun.db import engine, models

VIEW_KEYS = ["uuid", "links", "image_id", "repo", "tag", "size", "project_id", "host"]


def _row(image_uuid: str) -> models.Image | None:
    with engine.transaction(readonly=True) as session:
        return session.scalars(
            sa.select(models.Image).where(models.Image.uuid == image_uuid)
        ).first()


def _untag(client: docker.DockerClient, ref: str) -> None:
    try:
        client.images.remove(ref)
    except docker.errors.ImageNotFound:
        pass


@pytest.fixture
def open_image(registry: dict[str, str], docker_client: docker.DockerClient) -> Any:
    ref = f"{registry['url']}/busybox:latest"
    _untag(docker_client, ref)
    yield ref
    _untag(docker_client, ref)


# --- without an agent: checks made before any message ------------------------------------------


def test_policies_are_admin_only_except_search(api: ApiClient, seed: Seed) -> None:
    seed.row(
        models.Image(uuid=str(uuid.uuid4()), repo="r", tag="t", host="h", project_id="project-a")
    )
    member = api.as_member("project-a")
    for r in (
        member.get("/v1/images"),
        member.post("/v1/images", json={"repo": "busybox", "host": "node1"}),
        member.delete(f"/v1/images/{uuid.uuid4()}"),
    ):
        assert r.status == 403 and r.error["code"] == "container.policy-not-authorized", r


def test_lookup_errors_are_400_image_not_found(api: ApiClient, seed: Seed) -> None:
    admin = api.as_admin()
    for ident in (str(uuid.uuid4()), "not-a-uuid"):
        for r in (admin.get(f"/v1/images/{ident}"), admin.delete(f"/v1/images/{ident}")):
            assert r.status == 400 and r.error["code"] == "container.image-not-found", r
    # The lookup comes before image:get_one (as in Zun): a member learns "not found" too.
    assert api.as_member("project-a").get("/v1/images/nope").status == 400


def test_pull_validation(api: ApiClient, seed: Seed) -> None:
    admin = api.as_admin()
    seed.compute_node(hostname="node1")
    r = admin.post("/v1/images", json={"repo": "busybox"})
    assert r.status == 400 and "'host' is a required property" in r.error["detail"]
    r = admin.post("/v1/images", json={"repo": "busybox", "host": "node1", "x": 1})
    assert r.status == 400 and r.error["code"] == "container.schema-validation-error"
    r = admin.post("/v1/images", json={"repo": "busybox", "host": "nowhere"})
    assert r.status == 400 and r.error["code"] == "container.invalid-value"
    assert r.error["detail"] == "The host nowhere does not exist."
    r = admin.post("/v1/images", json={"repo": "Bad//Name", "host": "node1"})
    assert r.status == 400 and r.error["code"] == "container.reference-invalid-format"
    r = admin.post("/v1/images", body=b"{}", content_type="text/plain")
    assert r.status == 415


def test_search_without_any_compute_host_is_503(api: ApiClient, bus: None) -> None:
    r = api.as_member("project-a").get("/v1/images/busybox/search")
    assert r.status == 503
    r = api.get("/v1/images/busybox/search?exact_match=maybe")
    assert r.status == 400 and r.error["code"] == "container.schema-validation-error"
    r = api.get("/v1/images/busybox/search?image_driver=other")
    assert r.status == 400


def test_list_is_scoped_to_the_callers_project_even_for_admins(api: ApiClient, seed: Seed) -> None:
    mine = seed.row(
        models.Image(
            uuid=str(uuid.uuid4()), repo="a", tag="1", host="h", project_id="project-admin"
        )
    )
    other = seed.row(
        models.Image(uuid=str(uuid.uuid4()), repo="b", tag="1", host="h", project_id="project-b")
    )
    admin = api.as_admin()
    r = admin.get("/v1/images")
    assert [i["uuid"] for i in r.json["images"]] == [mine.uuid]
    assert sorted(r.json["images"][0]) == sorted(VIEW_KEYS)
    assert r.json["next"] is None
    assert admin.get("/v1/images?all_projects=1&foo=2").status == 200  # ignored
    # Admins reach any project's image by UUID.
    assert admin.get(f"/v1/images/{other.uuid}").json["project_id"] == "project-b"
    r = admin.get("/v1/images?limit=1")
    assert r.json["next"].endswith(f"limit=1&marker={mine.uuid}")


# --- with a real agent --------------------------------------------------------------------------


def test_pull_show_delete_on_the_engine(
    api: ApiClient,
    agent: Any,
    open_image: str,
    docker_client: docker.DockerClient,
) -> None:
    admin = api.as_admin()
    r = admin.post("/v1/images", json={"repo": open_image, "host": agent.host})
    assert r.status == 202, r
    image = r.json
    assert r.headers["Location"] == f"http://zun.test:9517/v1/images/{image['uuid']}"
    assert (image["repo"], image["tag"], image["host"]) == (
        open_image.rsplit(":", 1)[0],
        "latest",
        agent.host,
    )
    row = wait_for(
        lambda: (_row(image["uuid"]) or models.Image()).image_id and _row(image["uuid"]),
        what="the pull",
    )
    engine_image = docker_client.images.get(open_image)
    assert row.image_id == engine_image.id
    assert int(row.size) > 0

    shown = admin.get(f"/v1/images/{image['uuid']}").json
    assert shown["image_id"] == engine_image.id
    assert [i["uuid"] for i in admin.get("/v1/images").json["images"]] == [image["uuid"]]
    # Same repo, tag and host again: 409.
    r = admin.post("/v1/images", json={"repo": open_image, "host": agent.host})
    assert r.status == 409 and r.error["code"] == "container.image-already-exists"

    r = admin.delete(f"/v1/images/{image['uuid']}")
    assert r.status == 200 and r.body == b"null"
    wait_for(lambda: _row(image["uuid"]) is None, what="the image row to go")
    with pytest.raises(docker.errors.ImageNotFound):
        docker_client.images.get(open_image)


def test_failed_pull_removes_its_record(
    api: ApiClient,
    agent: Any,
    registry: dict[str, str],
) -> None:
    r = api.as_admin().post(
        "/v1/images", json={"repo": f"{registry['url']}/no-such-image", "host": agent.host}
    )
    assert r.status == 202
    wait_for(lambda: _row(r.json["uuid"]) is None, what="the failed pull's cleanup")


def test_private_registry_pull_uses_the_projects_registry(
    api: ApiClient,
    agent: Any,
    private_registry: dict[str, str],
    docker_client: docker.DockerClient,
) -> None:
    admin = api.as_admin()
    ref = private_registry["image"]
    _untag(docker_client, ref)
    try:
        # Without credentials the registry refuses: the record goes away.
        r = admin.post("/v1/images", json={"repo": ref, "host": agent.host})
        wait_for(lambda: _row(r.json["uuid"]) is None, what="the refused pull's cleanup")
        # With the project's registry (password stored encrypted), the pull succeeds.
        assert (
            admin.post(
                "/v1/registries",
                json={
                    "registry": {
                        "domain": private_registry["url"],
                        "username": private_registry["username"],
                        "password": private_registry["password"],
                    }
                },
            ).status
            == 201
        )
        r = admin.post("/v1/images", json={"repo": ref, "host": agent.host})
        assert r.status == 202
        wait_for(
            lambda: (_row(r.json["uuid"]) or models.Image()).image_id, what="the authenticated pull"
        )
        assert docker_client.images.get(ref)
    finally:
        _untag(docker_client, ref)


def test_search_the_configured_registry(
    api: ApiClient,
    agent: Any,
    registry: dict[str, str],
) -> None:
    member = api.as_member("project-a")
    r = member.get("/v1/images/busybox/search")
    assert r.status == 400 and "No registry to search" in r.error["detail"]
    CONF.set_override("default_registry", registry["url"], group="docker")
    try:
        r = member.get("/v1/images/busybox/search")
        assert r.status == 200, r
        names = [hit["name"] for hit in r.json]
        assert f"{registry['url']}/busybox" in names
        hit = next(h for h in r.json if h["name"] == f"{registry['url']}/busybox")
        assert "latest" in hit["tags"]
        r = member.get("/v1/images/busy/search?exact_match=true")
        assert r.status == 200 and r.json == []
        r = member.get("/v1/images/busybox/search?exact_match=True&image_driver=docker")
        assert [h["name"] for h in r.json] == [f"{registry['url']}/busybox"]
        # Glance is searched by the API itself with the user's token; here there is none.
        r = member.get("/v1/images/busybox/search?image_driver=glance")
        assert r.status == 400 and r.error["code"] == "container.invalid"
        assert "Keystone token" in r.error["detail"]
    finally:
        CONF.clear_override("default_registry", group="docker")


def test_search_a_registry_named_in_the_image(
    api: ApiClient,
    agent: Any,
    registry: dict[str, str],
) -> None:
    # Clients put the name in the path as it is: the registry's host:port/ adds segments.
    r = api.as_member("project-a").get(f"/v1/images/{registry['url']}/busybox/search")
    assert r.status == 200, r
    assert f"{registry['url']}/busybox" in [hit["name"] for hit in r.json]
