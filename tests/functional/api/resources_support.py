"""A real zun-compute agent for the image and network API tests.

``agent`` starts :class:`zun.compute.agent.ComputeAgent` in this process on the ``fake://``
bus (as zun-all does), with every endpoint (containers, images, networks) and the real Docker
engine, under a host name unique to the test; the API app of ``api`` talks to it over that bus
and shares its (SQLite) database.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

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
