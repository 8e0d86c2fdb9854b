"""A real zun-compute agent for the image and network API tests.

``agent`` starts :class:`zun.compute.agent.ComputeAgent` in this process on the ``fake://``
bus (as zun-all does), with every endpoint (containers, images, networks) and the real Docker
engine, under a host name unique to the test; the API app of ``api`` talks to it over that bus
and shares its (SQLite) database.

A test that deletes a container waits until it is gone (:func:`delete_container`): a delete is a
cast, and the agent stops at teardown whether or not it has done the work. The fixture fails a
test whose node still has engine containers once the agent stopped, after removing them.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
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


def engine_containers(docker_client: Any, label: str) -> list[Any]:
    """The engine containers carrying ``label`` (``key=value``), stopped ones too."""
    return docker_client.containers.list(all=True, filters={"label": label})


def delete_container(client: ApiClient, docker_client: Any, uuid_: str, *,
                     headers: dict[str, str] | None = None, timeout: float = 60.0) -> None:
    """Force-delete and wait until the API answers 404 and no engine container carries the
    UUID; fails the test when the node does not finish within ``timeout``. ``client`` must be
    an admin of the container's project: a forced delete is admin-only (a member's is a 403),
    and needs microversion 1.7 (without a version header, 400). No ``stop=true``: it would
    wait the engine's 10 s grace period for a process that ignores SIGTERM (``sleep``)."""
    r = client.at("1.40").delete(f"/v1/containers/{uuid_}?force=true", headers=headers)
    assert r.status in (204, 404), r

    def gone() -> bool:
        shown = client.get(f"/v1/containers/{uuid_}", headers=headers)
        assert shown.status in (200, 404), shown
        return shown.status == 404 and not engine_containers(docker_client,
                                                              f"zun.container.uuid={uuid_}")

    wait_for(gone, timeout=timeout, what=f"container {uuid_} to be deleted")


def sweep_node(docker_client: Any, host: str) -> list[str]:
    """Remove the engine containers labelled with ``host``; returns a line for each."""
    left = []
    for container in engine_containers(docker_client, f"zun.host={host}"):
        labels = container.labels
        left.append(f"{container.name} ({container.status}, image "
                    f"{container.attrs['Config']['Image']}, uuid "
                    f"{labels.get('zun.container.uuid') or labels.get('zun.capsule.uuid')})")
        container.remove(force=True, v=True)
    return left


def require_node_empty(docker_client: Any, host: str) -> None:
    """Fail when engine containers of ``host`` remain, listing them (removed first)."""
    left = sweep_node(docker_client, host)
    if left:
        pytest.fail(f"engine containers of host {host} were left after the test "
                    f"(now removed): {'; '.join(left)}", pytrace=False)


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
        require_node_empty(docker_client, agent.host)
