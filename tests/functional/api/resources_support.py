"""A real zun-compute agent for the image and network API tests.

``agent`` starts :class:`zun.compute.agent.ComputeAgent` in this process on the ``fake://``
bus (as zun-all does), with every endpoint (containers, images, networks) and the real Docker
engine, under a host name unique to the test; the API app of ``api`` talks to it over that bus
and shares its (SQLite) database.

A test that deletes a container waits until it is gone (:func:`delete_container`): a delete is a
cast, and the agent stops at teardown whether or not it has done the work. The fixture fails a
test whose node still has engine containers once the agent stopped, after removing them
(both from ``engine_support``, shared with tests/e2e).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from engine_support import require_host_empty, wait_deleted
from unit.api.apptesting import ApiClient

from zun.common import rpc


def wait_for(check: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def delete_container(
    client: ApiClient,
    docker_client: Any,
    uuid_: str,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 60.0,
) -> None:
    """Force-delete and wait until the API answers 404 and no engine container carries the
    UUID; fails the test when the node does not finish within ``timeout``. ``client`` must be
    an admin of the container's project: a forced delete is admin-only (a member's is a 403),
    and needs microversion 1.7 (without a version header, 400). No ``stop=true``: it would
    wait the engine's 10 s grace period for a process that ignores SIGTERM (``sleep``)."""
    r = client.at("1.40").delete(f"/v1/containers/{uuid_}?force=true", headers=headers)
    assert r.status in (204, 404), r

    def answers_404() -> bool:
        shown = client.get(f"/v1/containers/{uuid_}", headers=headers)
        assert shown.status in (200, 404), shown
        return shown.status == 404

    wait_deleted(
        docker_client,
        f"zun.container.uuid={uuid_}",
        answers_404,
        what=f"container {uuid_}",
        timeout=timeout,
    )


@pytest.fixture
def bus(api_db: str) -> Iterator[None]:
    from unit.api.apptesting import init_config

    from zun.conf import CONF

    init_config()
    rpc.init(CONF, "fake://")
    yield
    rpc.cleanup()


@pytest.fixture
def agent(bus: None, docker_client: Any) -> Iterator[Any]:
    from zun.compute.agent import ComputeAgent

    agent = ComputeAgent(f"zt-{uuid.uuid4().hex[:8]}")
    agent.start()
    try:
        yield agent
    finally:
        agent.stop()
        # A cast the test did not wait for dies with the agent: its containers would run on.
        require_host_empty(docker_client, agent.host)
