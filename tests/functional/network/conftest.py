"""Fixtures for the embedded networking tests: unique projects and a sweep of what they made.

Everything a test creates is labelled ``zun.test.run=<id of this session>`` (containers) or is
a network of a project named ``zt<session><n>``, and is removed after the test even when it
fails half-way.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import docker
import pytest

RUN_ID = uuid.uuid4().hex[:8]
TEST_LABEL = "zun.test.run"
_counter = itertools.count()


def _sweep(client: docker.DockerClient, project_ids: list[str], network_names: list[str]) -> None:
    for container in client.containers.list(
        ignore_removed=True, all=True, filters={"label": f"{TEST_LABEL}={RUN_ID}"}
    ):
        container.remove(force=True)
    names = {f"zun-{p}" for p in project_ids} | set(network_names)
    for net in client.networks.list():
        if net.name in names:
            try:
                net.remove()
            except docker.errors.NotFound:
                pass


@pytest.fixture
def new_project(docker_client: docker.DockerClient) -> Iterator[Callable[[], str]]:
    """Factory of project IDs unique to this test; their networks are removed afterwards."""
    made: list[str] = []

    def make() -> str:
        made.append(f"zt{RUN_ID}{next(_counter)}")
        return made[-1]

    yield make
    _sweep(docker_client, made, [])


@pytest.fixture
def network_names(docker_client: docker.DockerClient) -> Iterator[list[str]]:
    """Append the name of any other network a test creates: it is removed afterwards."""
    names: list[str] = []
    yield names
    _sweep(docker_client, [], names)


@pytest.fixture
def run_container(
    docker_client: docker.DockerClient, busybox_image: str
) -> Iterator[Callable[..., Any]]:
    """``run_container(command, **kwargs)``: a detached busybox container, removed afterwards."""
    made: list[Any] = []

    def run(command: str, start: bool = True, **kwargs: Any) -> Any:
        labels = {TEST_LABEL: RUN_ID, **kwargs.pop("labels", {})}
        container = docker_client.containers.create(
            busybox_image, ["sh", "-c", command], labels=labels, **kwargs
        )
        made.append(container)
        if start:
            container.start()
            container.reload()
        return container

    yield run
    for container in made:
        try:
            container.remove(force=True)
        except docker.errors.NotFound:
            pass


# The API app and a real in-process zun-compute agent, for the kuryr driver's tests.
from functional.api.resources_support import agent, bus  # noqa: E402, F401
from unit.api.appfixtures import api, api_app, api_db, api_db_template  # noqa: E402, F401
