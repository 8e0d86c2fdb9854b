"""The API with ``image_driver = glance``: image search and the container create's lookup, with
the user's token against the real Glance and Keystone (``-m glance``).

The API app runs with noauth here and gets the user's real Keystone token in X-Auth-Token, as
keystonemiddleware hands it on in the keystone mode."""

from __future__ import annotations

import socket
import uuid
from typing import Any

import openstack_env
import pytest
from unit.api.apptesting import ApiClient

from zun.conf import CONF

pytestmark = pytest.mark.glance


def _as(api: ApiClient, cloud: openstack_env.OpenStackCloud,
        account: openstack_env.Account) -> tuple[ApiClient, dict[str, str]]:
    token = cloud.session(account.username, account.password, account.project_name).get_token()
    return (api.as_member(account.project_id, user=account.user_id),
            {"X-Auth-Token": token})


def test_search_with_glance_driver(api: ApiClient, glance_conf: None, accounts: Any,
                                   images: Any,
                                   openstack_cloud: openstack_env.OpenStackCloud) -> None:
    member, headers = _as(api, openstack_cloud, accounts.a)
    r = member.get("/v1/images/zun-test-/search?image_driver=glance", headers=headers)
    assert r.status == 200, r
    ids = {hit["id"] for hit in r.json}
    assert images.docker["id"] in ids
    # Not a Docker image, or another project's private image: not in the results.
    assert images.bare["id"] not in ids and images.other_project["id"] not in ids
    hit = next(h for h in r.json if h["id"] == images.docker["id"])
    assert hit["container_format"] == "docker" and hit["name"] == images.docker["name"]
    r = member.get(f"/v1/images/{images.docker['name']}/search?image_driver=glance"
                   "&exact_match=true", headers=headers)
    assert [h["id"] for h in r.json] == [images.docker["id"]]


def test_search_without_a_token_is_a_clear_400(api: ApiClient, glance_conf: None) -> None:
    r = api.as_member("project-a").get("/v1/images/busybox/search?image_driver=glance")
    assert r.status == 400 and "Keystone token" in r.error["detail"], r


def _create(member: ApiClient, headers: dict[str, str], image: str) -> Any:
    return member.at("1.40").post("/v1/containers", headers=headers, json={
        "image": image, "image_driver": "glance", "name": f"zun-test-{uuid.uuid4().hex[:8]}"})


def test_create_refuses_bad_glance_images_before_anything_is_made(
    api: ApiClient, glance_conf: None, accounts: Any, images: Any,
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


def test_glance_unreachable_is_503(api: ApiClient, glance_conf: None, accounts: Any,
                                   openstack_cloud: openstack_env.OpenStackCloud) -> None:
    member, headers = _as(api, openstack_cloud, accounts.a)
    # A region with no image endpoint in the catalog, then Keystone itself unreachable.
    CONF.set_override("region_name", "NoSuchRegion", group="glance_client")
    try:
        r = _create(member, headers, "busybox")
        assert r.status == 503 and r.error["code"] == "container.glance-unavailable", r
    finally:
        CONF.clear_override("region_name", group="glance_client")
    CONF.set_override("auth_url", f"http://127.0.0.1:{_closed_port()}/v3",
                      group="keystone_auth")
    r = member.get("/v1/images/busybox/search?image_driver=glance", headers=headers)
    assert r.status == 503 and r.error["code"] == "container.glance-unavailable", r
    assert "Glance" in r.error["detail"]


def test_container_runs_from_a_glance_image(
    api: ApiClient, service_credentials: None, agent: Any, accounts: Any, images: Any,
    saved_busybox: tuple[str, bytes], docker_client: Any, tmp_path: Any,
    openstack_cloud: openstack_env.OpenStackCloud,
) -> None:
    from functional.api.resources_support import wait_for

    CONF.set_override("images_directory", str(tmp_path / "glance-images"), group="glance")
    member, headers = _as(api, openstack_cloud, accounts.a)
    created = []
    try:
        for ident in (images.docker["name"], images.docker["id"]):
            r = member.at("1.40").post("/v1/containers", headers=headers, json={
                "image": ident, "image_driver": "glance", "run": True,
                "command": ["sleep", "600"], "name": f"zun-test-{uuid.uuid4().hex[:8]}"})
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
    finally:
        for uuid_ in created:
            member.delete(f"/v1/containers/{uuid_}?force=true&stop=true")
        CONF.clear_override("images_directory", group="glance")
