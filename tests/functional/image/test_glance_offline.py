"""The parts of the Glance driver that need no Glance, in the default run: ``docker load`` of an
archive into the real engine, and an unreachable Glance. The rest runs against the real Glance
under ``-m openstack`` (test_glance.py)."""

from __future__ import annotations

import socket
import uuid
from pathlib import Path
from typing import Any

import docker.errors
import pytest
from keystoneauth1 import session as ks_session

from zun.common import exception
from zun.image import glance_driver
from zun.image.glance_client import GlanceClient, GlanceImage


def _image(image_id: str = "") -> GlanceImage:
    return GlanceImage.from_api(
        {
            "id": image_id or str(uuid.uuid4()),
            "name": "zun-test-offline",
            "container_format": "docker",
            "status": "active",
        }
    )


def test_load_archive_gives_the_reference_it_carried(
    docker_client: Any, busybox_image: str, tmp_path: Path
) -> None:
    ref = f"zun-test-offline-{uuid.uuid4().hex[:8]}:v1"
    docker_client.api.tag(busybox_image, *ref.split(":"))
    archive = tmp_path / "image.tar"
    try:
        archive.write_bytes(b"".join(docker_client.api.get_image(ref)))
        docker_client.api.remove_image(ref)
        assert glance_driver.load_archive(docker_client.api, str(archive), _image()) == ref
        assert docker_client.images.get(ref).id == docker_client.images.get(busybox_image).id
    finally:
        try:
            docker_client.api.remove_image(ref)
        except docker.errors.NotFound:
            pass


def test_data_that_is_no_docker_archive_is_a_400(docker_client: Any, tmp_path: Path) -> None:
    archive = tmp_path / "not-an-image.tar"
    archive.write_bytes(b"plain bytes, no tar at all")
    with pytest.raises(exception.ImageFormatNotSupported) as err:
        glance_driver.load_archive(docker_client.api, str(archive), _image())
    assert err.value.code == 400 and "not a Docker image archive" in str(err.value)


def test_unreachable_glance_is_503() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = GlanceClient(ks_session.Session(), endpoint=f"http://127.0.0.1:{port}")
    for call in (
        lambda: client.find("busybox"),
        lambda: client.find(str(uuid.uuid4())),
        lambda: client.search("busy"),
    ):
        with pytest.raises(exception.GlanceUnavailable) as err:
            call()
        assert err.value.code == 503 and err.value.error_code == "glance-unavailable"
