"""The agent fixture's teardown guard (``engine_support``, shared with tests/e2e): engine
containers a test left on its node fail the test and are removed, another node's containers are
not touched; a delete's wait is not over while an engine container of the UUID remains."""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

import docker.errors
import pytest
from engine_support import engine_containers, require_host_empty, wait_deleted

pytestmark = pytest.mark.docker


def _labelled(docker_client: Any, image: str, host: str) -> Any:
    return docker_client.containers.create(
        image,
        ["sleep", "60"],
        name=f"zun-test-guard-{uuid.uuid4().hex[:8]}",
        labels={"zun.host": host, "zun.container.uuid": str(uuid.uuid4())},
    )


def test_a_container_left_on_the_node_fails_and_is_removed(
    docker_client: Any, busybox_image: str
) -> None:
    host, other = (f"zt-guard-{uuid.uuid4().hex[:8]}" for _ in range(2))
    left = _labelled(docker_client, busybox_image, host)
    elsewhere = _labelled(docker_client, busybox_image, other)
    try:
        with pytest.raises(pytest.fail.Exception) as failed:
            require_host_empty(docker_client, host)
        assert f"engine containers of host {host} were left" in str(failed.value)
        assert left.name in str(failed.value)
        assert left.labels["zun.container.uuid"] in str(failed.value)
        assert engine_containers(docker_client, f"zun.host={host}") == []
        # The other node's container stays, and an empty node passes.
        assert [c.id for c in engine_containers(docker_client, f"zun.host={other}")] == [
            elsewhere.id
        ]
        require_host_empty(docker_client, host)
    finally:
        for container in (left, elsewhere):
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True)


def test_wait_deleted_fails_naming_the_engine_container_left(
    docker_client: Any, busybox_image: str
) -> None:
    """A 404 alone is not gone: the wait fails, in time, naming the engine container."""
    host = f"zt-guard-{uuid.uuid4().hex[:8]}"
    left = _labelled(docker_client, busybox_image, host)
    uuid_ = left.labels["zun.container.uuid"]
    try:
        with pytest.raises(AssertionError) as failed:
            wait_deleted(
                docker_client,
                f"zun.container.uuid={uuid_}",
                lambda: True,
                what=f"container {uuid_}",
                timeout=0.5,
            )
        assert str(failed.value) == (
            f"container {uuid_} not deleted within 0.5 s: API 404, engine containers: "
            f"{left.name} (created, image {busybox_image}, uuid {uuid_})"
        )
        left.remove(force=True)
        wait_deleted(
            docker_client,
            f"zun.container.uuid={uuid_}",
            lambda: True,
            what=f"container {uuid_}",
            timeout=0.5,
        )
    finally:
        with contextlib.suppress(docker.errors.NotFound):
            left.remove(force=True)
