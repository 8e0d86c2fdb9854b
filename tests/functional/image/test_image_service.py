"""zun.image.service: the one credentials rule, the one inspection before a pull, the image
row, on a real database and the real engine."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import docker
import pytest
import sqlalchemy as sa

from zun.common import exception
from zun.conf import CONF
from zun.db import engine as db_engine
from zun.db import migration, models
from zun.db.queries import registries as registry_q
from zun.image import service
from zun.image.service import ImageService


@pytest.fixture
def db(tmp_path: Path) -> Iterator[None]:
    url = f"sqlite:///{tmp_path / 'zun.sqlite'}"
    migration.upgrade(url=url)
    db_engine.set_engine(db_engine.create_engine(url))
    yield
    db_engine.dispose()


@pytest.fixture
def default_registry() -> Iterator[None]:
    CONF.set_override("default_registry", "reg.example:5000", group="docker")
    CONF.set_override("default_registry_username", "bob", group="docker")
    CONF.set_override("default_registry_password", "pw-b", group="docker")
    yield
    for name in ("default_registry", "default_registry_username", "default_registry_password"):
        CONF.clear_override(name, group="docker")


def test_credentials_prefer_the_projects_registry_then_config(
    db: None, default_registry: None
) -> None:
    creds = ImageService.credentials
    assert creds("p1", "") is None
    assert creds("p1", "other.example") is None
    assert creds("p1", "reg.example:5000")["username"] == "bob"  # the configured default
    with db_engine.transaction() as session:
        registry_q.create(
            session,
            {
                "domain": "reg.example:5000",
                "username": "alice",
                "password": "pw-a",
                "project_id": "p1",
            },
        )
    assert creds("p1", "reg.example:5000") == {
        "username": "alice",
        "password": "pw-a",
        "serveraddress": "reg.example:5000",
    }
    assert creds("p2", "reg.example:5000")["username"] == "bob"  # not another project's


def test_a_named_registry_wins_and_an_anonymous_one_sends_nothing(
    db: None, default_registry: None
) -> None:
    with db_engine.transaction() as session:
        named = registry_q.create(
            session,
            {
                "domain": "named.example",
                "username": "carol",
                "password": "pw-c",
                "project_id": "p1",
            },
        )
        session.expunge(named)
    assert ImageService.credentials("p1", "named.example", named)["username"] == "carol"
    anonymous = SimpleNamespace(username=None, password=None, domain="reg.example:5000")
    assert ImageService.credentials("p1", "reg.example:5000", anonymous) is None


def test_the_default_registry_matches_by_domain_only(db: None, default_registry: None) -> None:
    # Containers and the image endpoint used to disagree (prefix vs domain): one rule now.
    assert service.domain_of("reg.example:5000/app:1") == "reg.example:5000"
    assert ImageService.credentials("p1", service.domain_of("reg.example:5001/app")) is None
    assert ImageService.credentials("p1", service.domain_of("reg.example/app")) is None
    assert service.domain_of("app") == ""
    assert service.domain_of("Not A Reference") == ""


class _CountingClient:
    """The real engine client, counting image inspections (not a stand-in for Docker)."""

    def __init__(self, api: docker.APIClient) -> None:
        self._api = api
        self.inspections = 0

    def inspect_image(self, ref: str) -> Any:
        self.inspections += 1
        return self._api.inspect_image(ref)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._api, name)


@pytest.mark.docker
def test_one_inspection_when_present_and_one_after_a_pull(
    docker_client: docker.DockerClient, busybox_image: str
) -> None:
    client = _CountingClient(docker_client.api)
    repo, tag = busybox_image.split(":")
    assert service.ensure_present(client, repo, tag, "ifnotpresent")["pulled"] is False
    assert client.inspections == 1
    client.inspections = 0
    known = docker_client.api.inspect_image(busybox_image)
    assert service.ensure_present(client, repo, tag, "never", present=known)["pulled"] is False
    assert client.inspections == 0
    with pytest.raises(exception.ImageNotFound):
        service.ensure_present(client, f"zun-test-absent-{uuid.uuid4().hex[:8]}", "x", "never")
    assert client.inspections == 1


@pytest.mark.docker
def test_pull_for_records_the_row_once(
    db: None, docker_client: docker.DockerClient, busybox_image: str
) -> None:
    host = f"img-{uuid.uuid4().hex[:8]}"
    images = ImageService(host, lambda: docker_client.api)
    ref = images.pull_for(
        busybox_image, policy="IfNotPresent", project_id="p1", user_id="u1", driver_name="docker"
    )
    assert ref == busybox_image
    images.pull_for(
        busybox_image, policy="never", project_id="p1", user_id="u1", driver_name="docker"
    )
    with db_engine.transaction(readonly=True) as session:
        rows = session.scalars(sa.select(models.Image).where(models.Image.host == host)).all()
    repo, tag = busybox_image.split(":")
    assert [(r.repo, r.tag, r.project_id) for r in rows] == [(repo, tag, "p1")]
    assert rows[0].image_id == docker_client.api.inspect_image(busybox_image)["Id"]
    # driver_name glance goes to Glance: test_glance_api.py (-m glance) runs a container from
    # a Glance image. Not here: loading [keystone_auth] registers keystoneauth's plugin
    # options (auth_url required) on the process's CONF, which later parses would trip on.
    with pytest.raises(exception.OperationNotSupported):
        images.pull_for(
            busybox_image, policy=None, project_id="p1", user_id="u1", driver_name="no-such-driver"
        )
