"""The API with ``image_driver = glance``: image search and the container create's lookup, with
the user's token against the real Glance and Keystone (``-m glance``).

The API app runs with noauth here and gets the user's real Keystone token in X-Auth-Token, as
keystonemiddleware hands it on in the keystone mode."""

from __future__ import annotations

import socket
import uuid
from typing import Any

import docker.errors
import openstack_env
import pytest
import sqlalchemy as sa
from unit.api.apptesting import ApiClient

from zun.compute import quota
from zun.conf import CONF
from zun.db import engine, models

pytestmark = pytest.mark.glance


def _as(
    api: ApiClient, cloud: openstack_env.OpenStackCloud, account: openstack_env.Account
) -> tuple[ApiClient, dict[str, str]]:
    token = cloud.session(account.username, account.password, account.project_name).get_token()
    return (api.as_member(account.project_id, user=account.user_id), {"X-Auth-Token": token})


def test_search_with_glance_driver(
    api: ApiClient,
    glance_conf: None,
    accounts: Any,
    images: Any,
    openstack_cloud: openstack_env.OpenStackCloud,
) -> None:
    member, headers = _as(api, openstack_cloud, accounts.a)
    r = member.get("/v1/images/zun-test-/search?image_driver=glance", headers=headers)
    assert r.status == 200, r
    ids = {hit["id"] for hit in r.json}
    assert images.docker["id"] in ids
    # Not a Docker image, or another project's private image: not in the results.
    assert images.bare["id"] not in ids and images.other_project["id"] not in ids
    hit = next(h for h in r.json if h["id"] == images.docker["id"])
    assert hit["container_format"] == "docker" and hit["name"] == images.docker["name"]
    r = member.get(
        f"/v1/images/{images.docker['name']}/search?image_driver=glance&exact_match=true",
        headers=headers,
    )
    assert [h["id"] for h in r.json] == [images.docker["id"]]


def test_search_without_a_token_is_a_clear_400(api: ApiClient, glance_conf: None) -> None:
    r = api.as_member("project-a").get("/v1/images/busybox/search?image_driver=glance")
    assert r.status == 400 and "Keystone token" in r.error["detail"], r


def test_a_token_keystone_refuses_is_a_401(
    api: ApiClient, glance_conf: None, agent: Any, accounts: Any, images: Any
) -> None:
    """A token that passed the middleware but that Keystone refuses when zun-api uses it
    toward Glance (revoked, expired, or here never issued): 401, nothing made."""
    headers = {"X-Auth-Token": "gAAAAAB-not-a-token-Keystone-issued"}
    member = api.as_member(accounts.a.project_id, user=accounts.a.user_id)
    admin = api.as_member(accounts.a.project_id, user=accounts.a.user_id, roles="admin")
    for r in (
        member.get("/v1/images/zun-test-/search?image_driver=glance", headers=headers),
        _create(member, headers, images.docker["name"]),
        admin.post(
            "/v1/images", headers=headers, json={"repo": images.docker["id"], "host": agent.host}
        ),
    ):
        assert r.status == 401 and r.error["code"] == "container.token-refused", r
        assert "Keystone refused the request's token" in r.error["detail"], r
    _nothing_left(accounts.a.project_id)


def _create(member: ApiClient, headers: dict[str, str], image: str) -> Any:
    return member.at("1.40").post(
        "/v1/containers",
        headers=headers,
        json={"image": image, "image_driver": "glance", "name": f"zun-test-{uuid.uuid4().hex[:8]}"},
    )


def test_create_refuses_bad_glance_images_before_anything_is_made(
    api: ApiClient,
    glance_conf: None,
    accounts: Any,
    images: Any,
    openstack_cloud: openstack_env.OpenStackCloud,
) -> None:
    member, headers = _as(api, openstack_cloud, accounts.a)
    cases = [
        (images.other_project["id"], 400, "container.image-not-found"),
        (images.other_project["name"], 400, "container.image-not-found"),
        (f"zun-test-missing-{uuid.uuid4().hex[:8]}", 400, "container.image-not-found"),
        (images.bare["name"], 400, "container.image-format-not-supported"),
    ]
    for image, status, code in cases:
        r = _create(member, headers, image)
        assert (r.status, r.error["code"]) == (status, code), (image, r)
    assert member.get("/v1/containers").json["containers"] == []


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _nothing_left(project_id: str) -> None:
    """No container, image row or quota use of the project (claims come after the rows)."""
    with engine.transaction(readonly=True) as session:
        for model in (models.Container, models.Image):
            rows = session.scalars(sa.select(model).where(model.project_id == project_id))
            assert rows.all() == []
        usages = quota.get_project_usages(session, project_id)
    assert all(u["in_use"] in (0, quota.UNLIMITED) for u in usages.values()), usages


def test_glance_unreachable_is_503(
    api: ApiClient,
    glance_conf: None,
    agent: Any,
    accounts: Any,
    images: Any,
    catalog_region: Any,
    glance_options: Any,
    openstack_cloud: openstack_env.OpenStackCloud,
) -> None:
    member, headers = _as(api, openstack_cloud, accounts.a)
    admin = api.as_member(accounts.a.project_id, user=accounts.a.user_id, roles="admin")
    # The catalog's image endpoint (a region of the test's own) is a closed port: create,
    # image pull and search are 503 in Zun's format, and nothing is left behind.
    glance_options(
        region_name=catalog_region(f"http://127.0.0.1:{_closed_port()}"),
        endpoint_type="internalURL",
    )
    for r in (
        _create(member, headers, images.docker["name"]),
        admin.post(
            "/v1/images", headers=headers, json={"repo": images.docker["id"], "host": agent.host}
        ),
        member.get("/v1/images/zun-test-/search?image_driver=glance", headers=headers),
    ):
        assert r.status == 503 and r.error["code"] == "container.glance-unavailable", r
        assert "Glance cannot be reached" in r.error["detail"], r
    _nothing_left(accounts.a.project_id)
    # A region with no image endpoint in the catalog, then Keystone itself unreachable.
    CONF.set_override("region_name", "NoSuchRegion", group="glance_client")
    try:
        r = _create(member, headers, "busybox")
        assert r.status == 503 and r.error["code"] == "container.glance-unavailable", r
    finally:
        CONF.clear_override("region_name", group="glance_client")
    CONF.set_override("auth_url", f"http://127.0.0.1:{_closed_port()}/v3", group="keystone_auth")
    r = member.get("/v1/images/busybox/search?image_driver=glance", headers=headers)
    assert r.status == 503 and r.error["code"] == "container.glance-unavailable", r
    assert "Glance" in r.error["detail"]


def test_container_runs_from_a_glance_image(
    api: ApiClient,
    service_credentials: None,
    agent: Any,
    accounts: Any,
    images: Any,
    saved_busybox: tuple[str, bytes],
    docker_client: Any,
    tmp_path: Any,
    openstack_cloud: openstack_env.OpenStackCloud,
) -> None:
    from functional.api.resources_support import delete_container, wait_for

    CONF.set_override("images_directory", str(tmp_path / "glance-images"), group="glance")
    member, headers = _as(api, openstack_cloud, accounts.a)
    admin = api.as_member(accounts.a.project_id, user=accounts.a.user_id, roles="admin")
    created = []
    try:
        for ident in (images.docker["name"], images.docker["id"]):
            r = member.at("1.40").post(
                "/v1/containers",
                headers=headers,
                json={
                    "image": ident,
                    "image_driver": "glance",
                    "run": True,
                    "command": ["sleep", "600"],
                    "name": f"zun-test-{uuid.uuid4().hex[:8]}",
                },
            )
            assert r.status == 202, r
            created.append(r.json["uuid"])

            def running(uuid_: str = r.json["uuid"]) -> bool:
                shown = member.get(f"/v1/containers/{uuid_}").json
                assert shown["status"] != "Error", shown["status_reason"]
                return shown["status"] == "Running"

            wait_for(running, timeout=120, what="the container from Glance to run")
            shown = member.get(f"/v1/containers/{r.json['uuid']}").json
            assert shown["image"] == ident and shown["image_driver"] == "glance"
        # The engine runs the image that the archive from Glance carried.
        assert docker_client.images.get(saved_busybox[0])
        # A rebuild to a Glance image the project may not use is refused at once, like a
        # create, and the container keeps running.
        for image, code in (
            (images.other_project["id"], "container.image-not-found"),
            (images.bare["name"], "container.image-format-not-supported"),
        ):
            r = member.at("1.40").post(
                f"/v1/containers/{created[0]}/rebuild", headers=headers, json={"image": image}
            )
            assert (r.status, r.error["code"]) == (400, code), r
        assert member.get(f"/v1/containers/{created[0]}").json["status"] == "Running"
        # The node stops and removes a container whose image came from Glance like any other.
        for uuid_ in list(created):
            delete_container(admin, docker_client, uuid_, headers=headers)
            created.remove(uuid_)
        _nothing_left(accounts.a.project_id)
        assert not docker_client.networks.list(names=[f"zun-{accounts.a.project_id}"])
    finally:
        try:
            for uuid_ in created:
                delete_container(admin, docker_client, uuid_, headers=headers)
        finally:
            CONF.clear_override("images_directory", group="glance")


def _pulled(member: ApiClient, image_uuid: str) -> dict[str, Any]:
    from functional.api.resources_support import wait_for

    def done() -> Any:
        shown = member.get(f"/v1/images/{image_uuid}")
        assert shown.status == 200, f"the pull failed: the row is gone ({shown})"
        return shown.json["image_id"] and shown.json

    return wait_for(done, timeout=120, what="the pull from Glance")


def test_image_pull_from_glance(
    api: ApiClient,
    service_credentials: None,
    agent: Any,
    accounts: Any,
    images: Any,
    saved_busybox: tuple[str, bytes],
    docker_client: Any,
    tmp_path: Any,
    glance_options: Any,
    openstack_cloud: openstack_env.OpenStackCloud,
) -> None:
    """POST /v1/images from Glance: by image id (a UUID goes to Glance, as in Zun) and, with
    [DEFAULT]/default_image_driver = glance, by name. The node downloads the archive with the
    service credentials and loads it; the row takes the archive's repo:tag, the engine's id
    and size (as Zun records them)."""
    from functional.api.resources_support import wait_for

    ref, _ = saved_busybox
    repo, tag = ref.split(":")
    glance_options(images_directory=str(tmp_path / "glance-images"))
    _, headers = _as(api, openstack_cloud, accounts.a)
    admin = api.as_member(accounts.a.project_id, user=accounts.a.user_id, roles="admin")
    r = admin.post(
        "/v1/images", headers=headers, json={"repo": images.docker["id"], "host": agent.host}
    )
    assert r.status == 202, r
    assert (r.json["repo"], r.json["tag"], r.json["host"]) == (images.docker["id"], "", agent.host)
    first = _pulled(admin, r.json["uuid"])
    engine_image = docker_client.images.get(ref)
    assert (first["repo"], first["tag"]) == (repo, tag)
    assert first["image_id"] == engine_image.id
    assert first["size"] == str(engine_image.attrs["Size"])
    assert (tmp_path / "glance-images" / f"{images.docker['id']}.tar").is_file()

    # By name with the glance default driver. That repo:tag already has a row on this host,
    # so this one keeps the Glance name, with the engine's id and size.
    CONF.set_override("default_image_driver", "glance")
    try:
        r = admin.post(
            "/v1/images", headers=headers, json={"repo": images.docker["name"], "host": agent.host}
        )
    finally:
        CONF.clear_override("default_image_driver")
    assert r.status == 202, r
    second = _pulled(admin, r.json["uuid"])
    assert (second["repo"], second["tag"], second["image_id"]) == (
        images.docker["name"],
        "",
        engine_image.id,
    )

    # Both rows can be deleted: the tagless one leaves the engine image (others use it), the
    # other removes its tag from the engine.
    for row in (second, first):
        assert admin.delete(f"/v1/images/{row['uuid']}").status == 200
        wait_for(
            lambda u=row["uuid"]: admin.get(f"/v1/images/{u}").status == 400,
            what="the image row to go",
        )
    with pytest.raises(docker.errors.ImageNotFound):
        docker_client.images.get(ref)
    assert docker_client.images.get(engine_image.id)  # still there as busybox


def test_image_pull_refuses_bad_glance_images_before_a_row(
    api: ApiClient,
    glance_conf: None,
    agent: Any,
    accounts: Any,
    images: Any,
    openstack_cloud: openstack_env.OpenStackCloud,
) -> None:
    _, headers = _as(api, openstack_cloud, accounts.a)
    admin = api.as_member(accounts.a.project_id, user=accounts.a.user_id, roles="admin")
    cases = [
        (images.other_project["id"], 400, "container.image-not-found"),
        (images.bare["id"], 400, "container.image-format-not-supported"),
        (str(uuid.uuid4()), 400, "container.image-not-found"),
    ]
    for repo, status, code in cases:
        r = admin.post("/v1/images", headers=headers, json={"repo": repo, "host": agent.host})
        assert (r.status, r.error["code"]) == (status, code), (repo, r)
    CONF.set_override("default_image_driver", "glance")
    try:
        r = admin.post(
            "/v1/images",
            headers=headers,
            json={"repo": images.other_project["name"], "host": agent.host},
        )
        assert (r.status, r.error["code"]) == (400, "container.image-not-found"), r
        # No token: a clear 400, as for a create.
        r = admin.post("/v1/images", json={"repo": images.docker["name"], "host": agent.host})
        assert r.status == 400 and "Keystone token" in r.error["detail"], r
    finally:
        CONF.clear_override("default_image_driver")
    _nothing_left(accounts.a.project_id)


def test_image_pull_failing_on_the_node_removes_its_row(
    api: ApiClient,
    glance_conf: None,
    agent: Any,
    accounts: Any,
    images: Any,
    openstack_cloud: openstack_env.OpenStackCloud,
) -> None:
    """The API finds the image with the user's token, but the node has no usable service
    credentials ([keystone_auth] has only auth_url here): the row made at 202 is removed."""
    from functional.api.resources_support import wait_for

    _, headers = _as(api, openstack_cloud, accounts.a)
    admin = api.as_member(accounts.a.project_id, user=accounts.a.user_id, roles="admin")
    r = admin.post(
        "/v1/images", headers=headers, json={"repo": images.docker["id"], "host": agent.host}
    )
    assert r.status == 202, r
    wait_for(
        lambda: admin.get(f"/v1/images/{r.json['uuid']}").status == 400,
        what="the failed pull's row to go",
    )
    _nothing_left(accounts.a.project_id)


def _node_usage(host: str) -> tuple[float, int]:
    with engine.transaction(readonly=True) as session:
        row = session.execute(
            sa.select(models.ComputeNode.cpu_used, models.ComputeNode.mem_used).where(
                models.ComputeNode.hostname == host
            )
        ).one()
    return float(row[0]), int(row[1])


def test_container_failing_on_the_node_releases_its_claim(
    api: ApiClient,
    service_credentials: None,
    agent: Any,
    accounts: Any,
    images: Any,
    glance_options: Any,
    tmp_path: Any,
    docker_client: Any,
    openstack_cloud: openstack_env.OpenStackCloud,
) -> None:
    """Found by the API (container_format docker), but its data is no `docker save` archive:
    the node fails the create with that reason, and the host's claim is given back."""
    from functional.api.resources_support import delete_container, wait_for

    glance_options(images_directory=str(tmp_path / "glance-images"))
    member, headers = _as(api, openstack_cloud, accounts.a)
    admin = api.as_member(accounts.a.project_id, user=accounts.a.user_id, roles="admin")
    before = _node_usage(agent.host)
    r = member.at("1.40").post(
        "/v1/containers",
        headers=headers,
        json={
            "image": images.not_an_archive["id"],
            "image_driver": "glance",
            "run": True,
            "memory": 64,
            "name": f"zun-test-{uuid.uuid4().hex[:8]}",
        },
    )
    assert r.status == 202, r
    try:
        shown = wait_for(
            lambda: (
                (c := member.get(f"/v1/containers/{r.json['uuid']}").json)["status"] == "Error"
                and c
            ),
            timeout=120,
            what="the create to fail",
        )
        assert "not a Docker image archive" in shown["status_reason"], shown
        assert _node_usage(agent.host) == before
    finally:
        delete_container(admin, docker_client, r.json["uuid"], headers=headers)
