"""Fixtures for the local volume tests: a unique container UUID, a state dir, and a sweep.

After each test, every Docker volume labelled with the test's container UUIDs, every volume
named in ``user_volumes`` and every container labelled ``zun.test.run=<session id>`` is removed.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import docker
import pytest

RUN_ID = uuid.uuid4().hex[:8]
TEST_LABEL = "zun.test.run"


@pytest.fixture
def new_uuid(docker_client: docker.DockerClient) -> Iterator[Callable[[], str]]:
    """Factory of container UUIDs; the volumes labelled with them are removed afterwards."""
    made: list[str] = []

    def make() -> str:
        made.append(str(uuid.uuid4()))
        return made[-1]

    yield make
    for container in docker_client.containers.list(
        ignore_removed=True, all=True, filters={"label": f"{TEST_LABEL}={RUN_ID}"}
    ):
        container.remove(force=True)
    for container_uuid in made:
        for vol in docker_client.volumes.list(
            filters={"label": f"zun.container.uuid={container_uuid}"}
        ):
            vol.remove(force=True)


@pytest.fixture
def user_volumes(docker_client: docker.DockerClient) -> Iterator[list[str]]:
    """Names of volumes a test makes itself (as a user would): removed afterwards."""
    names: list[str] = []
    yield names
    for container in docker_client.containers.list(
        ignore_removed=True, all=True, filters={"label": f"{TEST_LABEL}={RUN_ID}"}
    ):
        container.remove(force=True)
    for name in names:
        try:
            docker_client.volumes.get(name).remove(force=True)
        except docker.errors.NotFound:
            pass


@pytest.fixture
def run_busybox(
    docker_client: docker.DockerClient, busybox_image: str
) -> Callable[..., tuple[int, str, Any]]:
    """``run_busybox(command, mounts=...)`` -> (exit code, output, container); the container
    stays (so a test can check that its volume cannot go) and is swept after the test."""

    def run(command: str, **kwargs: Any) -> tuple[int, str, Any]:
        container = docker_client.containers.run(
            busybox_image, ["sh", "-c", command], detach=True, labels={TEST_LABEL: RUN_ID}, **kwargs
        )
        code = container.wait(timeout=60)["StatusCode"]
        return code, container.logs().decode(errors="replace"), container

    return run
