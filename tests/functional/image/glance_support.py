"""Fixtures shared by the Glance tests: two Keystone accounts, a `docker save` of the local
busybox under a unique tag, and Glance images made from it (module scope, deleted after)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import docker.errors
import openstack_env
import pytest
from oslo_config import cfg

import zun.conf
from zun.image import glance_client
from zun.image.glance_client import GlanceClient


@pytest.fixture(scope="module")
def accounts(openstack_cloud: openstack_env.OpenStackCloud) -> Iterator[Any]:
    """Two ordinary users, each in a project of its own."""
    made = [openstack_env.make_account(openstack_cloud, "zun-test-glance") for _ in range(2)]
    yield SimpleNamespace(a=made[0], b=made[1])
    for account in made:
        openstack_env.delete_account(openstack_cloud, account)


def make_conf(cloud: openstack_env.OpenStackCloud, tmp: Path, **service: str) -> cfg.ConfigOpts:
    text = f"[keystone_auth]\nauth_url = {cloud.auth_url}\n"
    if service:
        text += "".join(f"{k} = {v}\n" for k, v in service.items())
    text += "[glance_client]\nregion_name = RegionOne\n"
    path = tmp / "zun.conf"
    path.write_text(text)
    conf = cfg.ConfigOpts()
    zun.conf.register_opts(conf)
    conf(["--config-file", str(path)], project="zun", default_config_files=[])
    return conf


def user_client(cloud: openstack_env.OpenStackCloud, account: openstack_env.Account,
                 tmp: Path) -> GlanceClient:
    """A client as zun-api builds it from a request: the user's token and project only."""
    token = cloud.session(account.username, account.password, account.project_name).get_token()
    ctx = SimpleNamespace(auth_token=token, project_id=account.project_id)
    conf = make_conf(cloud, tmp)
    return GlanceClient(glance_client.user_session(conf, ctx), conf)


@pytest.fixture(scope="module")
def saved_busybox(docker_client: Any, busybox_image: str) -> Iterator[tuple[str, bytes]]:
    """(unique repository:tag, `docker save` archive of it); the tag is removed locally."""
    ref = f"zun-test-glance-{uuid.uuid4().hex[:8]}:v1"
    docker_client.api.tag(busybox_image, *ref.split(":"))
    try:
        archive = b"".join(docker_client.api.get_image(ref))
    finally:
        docker_client.api.remove_image(ref)
    yield ref, archive
    try:
        docker_client.api.remove_image(ref)
    except docker.errors.NotFound:
        pass


def upload(cloud: openstack_env.OpenStackCloud, account: openstack_env.Account, data: bytes,
            container_format: str = "docker", name: str = "") -> dict[str, Any]:
    sess = cloud.session(account.username, account.password, account.project_name)
    url = sess.get_endpoint(service_type="image", interface="public").rstrip("/")
    image = sess.post(f"{url}/v2/images", json={
        "name": name or f"zun-test-{uuid.uuid4().hex[:8]}",
        "container_format": container_format, "disk_format": "raw",
        "visibility": "private"}).json()
    sess.put(f"{url}/v2/images/{image['id']}/file", data=data,
             headers={"Content-Type": "application/octet-stream"})
    return image


@pytest.fixture(scope="module")
def images(openstack_cloud: openstack_env.OpenStackCloud, accounts: Any,
           saved_busybox: tuple[str, bytes]) -> Iterator[Any]:
    _, archive = saved_busybox
    made = SimpleNamespace(
        docker=upload(openstack_cloud, accounts.a, archive),
        bare=upload(openstack_cloud, accounts.a, b"not a container image", "bare"),
        not_an_archive=upload(openstack_cloud, accounts.a, b"plain bytes, no tar"),
        other_project=upload(openstack_cloud, accounts.b, archive),
    )
    yield made
    sess = openstack_cloud.session()
    url = sess.get_endpoint(service_type="image", interface="public").rstrip("/")
    for image in vars(made).values():
        sess.delete(f"{url}/v2/images/{image['id']}", raise_exc=False)
