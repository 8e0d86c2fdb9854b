"""zun.compute.image_endpoint on the real engine and the local registries, called directly."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
import sqlalchemy as sa

from zun.common import exception
from zun.common.context import RequestContext
from zun.compute.image_endpoint import ImageEndpoint
from zun.conf import CONF
from zun.db import engine as db_engine
from zun.db import migration, models
from zun.runtime.docker.driver import DockerDriver


@pytest.fixture
def db(tmp_path: Path) -> Iterator[None]:
    url = f"sqlite:///{tmp_path / 'zun.sqlite'}"
    migration.upgrade(url=url)
    db_engine.set_engine(db_engine.create_engine(url))
    yield
    db_engine.dispose()


@pytest.fixture
def endpoint(db: None, docker_client: docker.DockerClient) -> ImageEndpoint:
    return ImageEndpoint("node-x", driver=DockerDriver(client=docker_client.api))


def _ctx(project: str = "p1") -> RequestContext:
    return RequestContext(project_id=project, user_id="u1", overwrite=False)


def _image_row(repo: str, tag: str = "latest", project: str = "p1") -> str:
    image_uuid = str(uuid.uuid4())
    with db_engine.transaction() as session:
        session.add(
            models.Image(uuid=image_uuid, repo=repo, tag=tag, host="node-x", project_id=project)
        )
    return image_uuid


def _row(image_uuid: str) -> models.Image | None:
    with db_engine.transaction(readonly=True) as session:
        return session.scalars(
            sa.select(models.Image).where(models.Image.uuid == image_uuid)
        ).first()


def _untag(client: docker.DockerClient, ref: str) -> None:
    try:
        client.images.remove(ref)
    except docker.errors.ImageNotFound:
        pass


def test_pull_with_configured_credentials_then_delete(
    endpoint: ImageEndpoint, private_registry: dict[str, str], docker_client: docker.DockerClient
) -> None:
    ref = private_registry["image"]
    repo = ref.rsplit(":", 1)[0]
    _untag(docker_client, ref)
    image_uuid = _image_row(repo)
    CONF.set_override("default_registry", private_registry["url"], group="docker")
    CONF.set_override("default_registry_username", private_registry["username"], group="docker")
    CONF.set_override("default_registry_password", private_registry["password"], group="docker")
    try:
        endpoint.image_pull(_ctx(), image_uuid)
    finally:
        for name in ("default_registry", "default_registry_username", "default_registry_password"):
            CONF.clear_override(name, group="docker")
    try:
        row = _row(image_uuid)
        assert row is not None and row.image_id == docker_client.images.get(ref).id
        endpoint.image_delete(_ctx(), image_uuid)
        assert _row(image_uuid) is None
        with pytest.raises(docker.errors.ImageNotFound):
            docker_client.images.get(ref)
    finally:
        _untag(docker_client, ref)


def test_delete_of_an_image_in_use_keeps_row_and_image(
    endpoint: ImageEndpoint, busybox_image: str, docker_client: docker.DockerClient
) -> None:
    tag = f"zt-{uuid.uuid4().hex[:8]}"
    # An image of its own (one tag only), which a container then uses.
    source = docker_client.containers.create(busybox_image, ["true"])
    source.commit(repository="zun-test/inuse", tag=tag)
    source.remove(force=True)
    container = docker_client.containers.create(f"zun-test/inuse:{tag}", ["true"])
    image_uuid = _image_row("zun-test/inuse", tag)
    try:
        # Removing the only tag of an image a container uses is refused by the engine...
        endpoint.image_delete(_ctx(), image_uuid)
        assert _row(image_uuid) is not None
        assert docker_client.images.get(f"zun-test/inuse:{tag}")
    finally:
        container.remove(force=True)
    # ...and goes through once nothing uses it.
    endpoint.image_delete(_ctx(), image_uuid)
    assert _row(image_uuid) is None


def test_search_needs_a_registry_and_no_glance(
    endpoint: ImageEndpoint, registry: dict[str, str]
) -> None:
    with pytest.raises(exception.Invalid):
        endpoint.image_search(_ctx(), "busybox")
    with pytest.raises(exception.Invalid):
        endpoint.image_search(_ctx(), "busybox", "glance")
    hits = endpoint.image_search(_ctx(), f"{registry['url']}/busybox", "None", True)
    assert [h["name"] for h in hits] == [f"{registry['url']}/busybox"]
