"""What scripts/test-images.sh promises: a runnable busybox image and two loopback registries."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from typing import Any

import docker
import pytest

pytestmark = pytest.mark.docker


def _get(url: str, auth: tuple[str, str] | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(url)
    if auth:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as exc:
        return exc.code, None


def _drop_local(client: docker.DockerClient, ref: str) -> None:
    # A local copy would let a "pull" succeed without asking the registry anything.
    try:
        client.images.remove(ref)
    except docker.errors.ImageNotFound:
        pass


def test_busybox_image_runs(docker_client: docker.DockerClient, busybox_image: str) -> None:
    out = docker_client.containers.run(busybox_image, ["echo", "hi"], remove=True)
    assert out == b"hi\n"


def test_busybox_image_defaults_and_tools(
    docker_client: docker.DockerClient, busybox_image: str
) -> None:
    image = docker_client.images.get(busybox_image)
    assert image.attrs["Config"]["Cmd"] == ["/bin/sh"]
    assert "zun-test/busybox:latest" in image.tags
    tools = "sh sleep echo cat ls ps top env true false id hostname ip wget nc"
    out = docker_client.containers.run(
        busybox_image,
        ["sh", "-c", f"for t in {tools}; do command -v $t || exit 1; done"],
        remove=True,
    )
    assert len(out.decode().split()) == len(tools.split())


def test_open_registry_serves_catalogue(registry: dict[str, str]) -> None:
    status, body = _get(f"http://{registry['url']}/v2/_catalog")
    assert status == 200
    assert "busybox" in body["repositories"]


def test_pull_from_open_registry(
    docker_client: docker.DockerClient, registry: dict[str, str]
) -> None:
    _drop_local(docker_client, registry["image"])
    try:
        image = docker_client.images.pull(registry["image"])
        assert registry["image"] in image.tags
    finally:
        _drop_local(docker_client, registry["image"])


def test_private_registry_wants_credentials(private_registry: dict[str, str]) -> None:
    url = f"http://{private_registry['url']}/v2/_catalog"
    assert _get(url)[0] == 401
    assert _get(url, (private_registry["username"], "wrong"))[0] == 401
    status, body = _get(url, (private_registry["username"], private_registry["password"]))
    assert status == 200
    assert "private/busybox" in body["repositories"]


def test_authenticated_pull_from_private_registry(
    docker_client: docker.DockerClient, private_registry: dict[str, str]
) -> None:
    ref = private_registry["image"]
    repo, tag = ref.rsplit(":", 1)
    _drop_local(docker_client, ref)
    try:
        with pytest.raises(docker.errors.APIError):
            docker_client.images.pull(repo, tag=tag)
        with pytest.raises(docker.errors.APIError):
            docker_client.images.pull(
                repo,
                tag=tag,
                auth_config={"username": private_registry["username"], "password": "wrong"},
            )
        image = docker_client.images.pull(
            repo,
            tag=tag,
            auth_config={
                "username": private_registry["username"],
                "password": private_registry["password"],
            },
        )
        assert ref in image.tags
    finally:
        _drop_local(docker_client, ref)
