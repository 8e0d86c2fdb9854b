"""The Glance image driver against the real Glance and Keystone of scripts/openstack-services.sh
and the real Docker engine. Images are made by the tests from the local busybox (docker save).
Run with ``scripts/run-tests.sh -m glance``."""

from __future__ import annotations

import socket
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import docker.errors
import openstack_env
import pytest
from functional.image.glance_support import make_conf, upload, user_client

from zun.common import exception
from zun.image import glance_client, glance_driver
from zun.image.glance_client import GlanceClient

pytestmark = pytest.mark.glance


def test_find_by_name_and_by_id_with_the_users_token(
    openstack_cloud: openstack_env.OpenStackCloud,
    accounts: Any,
    images: Any,
    tmp_path: Path,
) -> None:
    client = user_client(openstack_cloud, accounts.a, tmp_path)
    by_name = client.find(images.docker["name"])
    by_id = client.find(images.docker["id"])
    assert by_name == by_id
    assert by_name.id == images.docker["id"] and by_name.is_docker


def test_pull_downloads_and_loads_into_docker(
    openstack_cloud: openstack_env.OpenStackCloud,
    accounts: Any,
    images: Any,
    saved_busybox: tuple[str, bytes],
    docker_client: Any,
    tmp_path: Path,
) -> None:
    ref, archive = saved_busybox
    client = user_client(openstack_cloud, accounts.a, tmp_path)
    with pytest.raises(docker.errors.ImageNotFound):
        docker_client.images.get(ref)
    directory = str(tmp_path / "images")
    pulled = glance_driver.pull_image(docker_client.api, client, images.docker["name"], directory)
    assert pulled["ref"] == ref and pulled["downloaded"]
    assert Path(pulled["path"]).read_bytes() == archive
    loaded = docker_client.images.get(ref)
    assert loaded.id == docker_client.images.get("busybox:latest").id
    # It runs: the engine has a usable image under that reference.
    out = docker_client.containers.run(ref, ["echo", "from-glance"], remove=True)
    assert out.strip() == b"from-glance"
    # ifnotpresent with an archive whose checksum matches: loaded again, not downloaded.
    docker_client.api.remove_image(ref)
    again = glance_driver.pull_image(
        docker_client.api, client, images.docker["id"], directory, policy="ifnotpresent"
    )
    assert again["ref"] == ref and not again["downloaded"]


def test_private_image_of_another_project_is_not_found(
    openstack_cloud: openstack_env.OpenStackCloud,
    accounts: Any,
    images: Any,
    tmp_path: Path,
) -> None:
    client = user_client(openstack_cloud, accounts.a, tmp_path)
    for ident in (images.other_project["name"], images.other_project["id"]):
        with pytest.raises(exception.ImageNotFound):
            client.find(ident)
    assert images.other_project["id"] not in {i.id for i in client.search("zun-test-")}
    # Its owner finds it.
    owner = user_client(openstack_cloud, accounts.b, tmp_path)
    assert owner.find(images.other_project["id"]).id == images.other_project["id"]


def test_search_covers_docker_images_only(
    openstack_cloud: openstack_env.OpenStackCloud,
    accounts: Any,
    images: Any,
    tmp_path: Path,
) -> None:
    client = user_client(openstack_cloud, accounts.a, tmp_path)
    found = {i.id for i in client.search("zun-test-")}
    assert images.docker["id"] in found
    assert images.bare["id"] not in found
    exact = client.search(images.docker["name"], exact=True)
    assert [i.id for i in exact] == [images.docker["id"]]


def test_non_docker_image_is_a_clear_400(
    openstack_cloud: openstack_env.OpenStackCloud,
    accounts: Any,
    images: Any,
    docker_client: Any,
    tmp_path: Path,
) -> None:
    client = user_client(openstack_cloud, accounts.a, tmp_path)
    for ident in (images.bare["name"], images.bare["id"]):
        with pytest.raises(exception.ImageFormatNotSupported) as err:
            client.find(ident)
        assert err.value.code == 400 and "container_format is bare" in str(err.value)
    assert err.value.error_code == "image-format-not-supported"
    # container_format docker but the data is no `docker save` archive: 400 too, and no
    # half-written file is left behind as a valid archive.
    with pytest.raises(exception.ImageFormatNotSupported) as err:
        glance_driver.pull_image(
            docker_client.api, client, images.not_an_archive["id"], str(tmp_path / "images")
        )
    assert err.value.code == 400


def test_unknown_image_is_not_found(
    openstack_cloud: openstack_env.OpenStackCloud,
    accounts: Any,
    images: Any,
    tmp_path: Path,
) -> None:
    client = user_client(openstack_cloud, accounts.a, tmp_path)
    for ident in (f"zun-test-missing-{uuid.uuid4().hex[:8]}", str(uuid.uuid4())):
        with pytest.raises(exception.ImageNotFound):
            client.find(ident)


def test_same_name_twice_is_a_conflict(
    openstack_cloud: openstack_env.OpenStackCloud,
    accounts: Any,
    images: Any,
    saved_busybox: tuple[str, bytes],
    tmp_path: Path,
) -> None:
    twin = upload(openstack_cloud, accounts.a, saved_busybox[1], name=images.docker["name"])
    try:
        client = user_client(openstack_cloud, accounts.a, tmp_path)
        with pytest.raises(exception.Conflict):
            client.find(images.docker["name"])
        assert client.find(twin["id"]).id == twin["id"]
    finally:
        sess = openstack_cloud.session()
        url = sess.get_endpoint(service_type="image", interface="public").rstrip("/")
        sess.delete(f"{url}/v2/images/{twin['id']}", raise_exc=False)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_glance_unreachable_is_503(
    openstack_cloud: openstack_env.OpenStackCloud,
    accounts: Any,
    tmp_path: Path,
) -> None:
    token = openstack_cloud.session(
        accounts.a.username, accounts.a.password, accounts.a.project_name
    ).get_token()
    ctx = SimpleNamespace(auth_token=token, project_id=accounts.a.project_id)
    conf = make_conf(openstack_cloud, tmp_path)
    session = glance_client.user_session(conf, ctx)
    client = GlanceClient(session, conf, endpoint=f"http://127.0.0.1:{_closed_port()}")
    with pytest.raises(exception.GlanceUnavailable) as err:
        client.find("busybox")
    assert err.value.code == 503 and err.value.error_code == "glance-unavailable"


def test_service_credentials_see_the_image(
    openstack_cloud: openstack_env.OpenStackCloud,
    images: Any,
    tmp_path: Path,
) -> None:
    # zun-compute's own credentials ([keystone_auth], user zun with the admin role).
    conf = make_conf(
        openstack_cloud,
        tmp_path,
        auth_type="password",
        username="zun",
        password=openstack_cloud.env["ZUN_OS_SERVICE_PASSWORD"],
        project_name="service",
        user_domain_name="Default",
        project_domain_name="Default",
    )
    client = GlanceClient(glance_client.service_session(conf), conf)
    assert client.find(images.docker["id"]).name == images.docker["name"]


def test_service_credentials_keep_the_projects_visibility(
    openstack_cloud: openstack_env.OpenStackCloud,
    accounts: Any,
    images: Any,
    tmp_path: Path,
) -> None:
    """The node sees every image (admin), but finds for a container only what the container's
    project may see: another project's private image is not found, by id or by name."""
    conf = make_conf(
        openstack_cloud,
        tmp_path,
        auth_type="password",
        username="zun",
        password=openstack_cloud.env["ZUN_OS_SERVICE_PASSWORD"],
        project_name="service",
        user_domain_name="Default",
        project_domain_name="Default",
    )
    client = glance_client.for_service(conf)
    assert client.find(images.other_project["id"]).id == images.other_project["id"]
    for ident in (images.other_project["id"], images.other_project["name"]):
        with pytest.raises(exception.ImageNotFound):
            client.find(ident, for_project=accounts.a.project_id)
    assert (
        client.find(images.other_project["id"], for_project=accounts.b.project_id).id
        == images.other_project["id"]
    )
    assert (
        client.find(images.docker["name"], for_project=accounts.a.project_id).id
        == images.docker["id"]
    )


def test_refused_service_credentials_are_503(
    openstack_cloud: openstack_env.OpenStackCloud,
    images: Any,
    tmp_path: Path,
) -> None:
    conf = make_conf(
        openstack_cloud,
        tmp_path,
        auth_type="password",
        username="zun",
        password="not-the-password",
        project_name="service",
        user_domain_name="Default",
        project_domain_name="Default",
    )
    with pytest.raises(exception.GlanceUnavailable) as err:
        glance_client.for_service(conf).find(images.docker["id"])
    assert err.value.code == 503
    assert "Keystone refused zun's service credentials" in str(err.value)


def test_a_shared_image_as_glance_shows_it_to_the_member(
    openstack_cloud: openstack_env.OpenStackCloud,
    accounts: Any,
    saved_busybox: tuple[str, bytes],
    tmp_path: Path,
) -> None:
    """Glance's membership rule, and the node (service credentials, for A's project) agrees
    with A's own token: B shares an image with A; by id A sees it whatever the membership
    status, by name (a listing) only once accepted; a project that is no member never."""
    owner = openstack_cloud.session(
        accounts.b.username, accounts.b.password, accounts.b.project_name
    )
    member = openstack_cloud.session(
        accounts.a.username, accounts.a.password, accounts.a.project_name
    )
    url = owner.get_endpoint(service_type="image", interface="public").rstrip("/")
    image = upload(openstack_cloud, accounts.b, saved_busybox[1])
    conf = make_conf(
        openstack_cloud,
        tmp_path,
        auth_type="password",
        username="zun",
        password=openstack_cloud.env["ZUN_OS_SERVICE_PASSWORD"],
        project_name="service",
        user_domain_name="Default",
        project_domain_name="Default",
    )
    service = glance_client.for_service(conf)
    user = user_client(openstack_cloud, accounts.a, tmp_path)
    stranger = openstack_env.make_account(openstack_cloud, "zun-test-glance")
    membership = f"{url}/v2/images/{image['id']}/members/{accounts.a.project_id}"

    def seen(ident: str) -> tuple[bool, bool]:
        found = []
        for find in (user.find, lambda i: service.find(i, for_project=accounts.a.project_id)):
            try:
                found.append(find(ident).id == image["id"])
            except exception.ImageNotFound:
                found.append(False)
        return found[0], found[1]

    try:
        owner.patch(
            f"{url}/v2/images/{image['id']}",
            json=[{"op": "replace", "path": "/visibility", "value": "shared"}],
            headers={"Content-Type": "application/openstack-images-v2.1-json-patch"},
        )
        assert seen(image["id"]) == (False, False)  # not a member yet
        owner.post(f"{url}/v2/images/{image['id']}/members", json={"member": accounts.a.project_id})
        for status in ("pending", "rejected", "accepted"):
            if status != "pending":
                member.put(membership, json={"status": status})
            listed = status == "accepted"
            assert seen(image["id"]) == (True, True), status
            assert seen(image["name"]) == (listed, listed), status
        with pytest.raises(exception.ImageNotFound):
            service.find(image["id"], for_project=stranger.project_id)
    finally:
        openstack_cloud.session().delete(f"{url}/v2/images/{image['id']}", raise_exc=False)
        openstack_env.delete_account(openstack_cloud, stranger)
