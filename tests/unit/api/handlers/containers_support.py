"""Support for the container API tests: a real oslo.messaging server that records messages.

The node side (``zun.compute.container_endpoint``) is another component; these tests check
what the API sends. :class:`RecordingNode` is a genuine RPC endpoint served by an
oslo.messaging server on the ``fake://`` (in-process) transport, listening on
``zun-compute.<host>`` exactly as a node does: casts and calls really cross the bus, with the
context serializer of the real service.
Calls answer with canned values (``node.replies[method]``), or raise what
``node.failures[method]`` holds, so the API's remote-error handling is exercised for real.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from unit.api.apptesting import RecordingNode, SentMessage

from zun.common import rpc
from zun.common.rpc_service import RPCService

# One recording node for every API test: the declarative suite's (unit/api/apptesting.py).
Message = SentMessage


class Nodes:
    """Start recording nodes on the bus (``nodes.start("node1")``); stopped at teardown."""

    def __init__(self) -> None:
        self._services: list[RPCService] = []
        self.by_host: dict[str, RecordingNode] = {}

    def start(self, host: str) -> RecordingNode:
        node = RecordingNode(host)
        service = RPCService(host, [node])
        service.start()
        self._services.append(service)
        self.by_host[host] = node
        return node

    def stop(self) -> None:
        for service in self._services:
            service.stop()
            service.wait()


@pytest.fixture
def bus() -> Iterator[None]:
    """The in-process transport, as zun-all uses it."""
    from unit.api.apptesting import init_config

    from zun.conf import CONF

    init_config()
    rpc.init(CONF, "fake://")
    yield
    rpc.cleanup()


@pytest.fixture
def nodes(bus: None) -> Iterator[Nodes]:
    started = Nodes()
    yield started
    started.stop()


def fresh_rpcapi() -> None:
    """Nothing to forget: zun.common.rpc.client_for rebuilds clients for a new transport."""


# --- rows and identities ------------------------------------------------------------------------

ADMIN_PROJECT = "project-admin"
PROJECT_A = "project-a"
PROJECT_B = "project-b"


def container_row(**values: Any) -> Any:
    """A container row with the values a created container has (status Created on node1)."""
    import uuid as uuidlib

    from zun.db import models

    defaults: dict[str, Any] = {
        "uuid": str(uuidlib.uuid4()),
        "name": f"c-{uuidlib.uuid4().hex[:8]}",
        "image": "busybox",
        "status": "Created",
        "host": "node1",
        "project_id": PROJECT_A,
        "user_id": "user-a",
        "cpu": 1.0,
        "memory": "512",
        "command": ["sleep", "100"],
        "interactive": False,
        "tty": False,
        "auto_heal": False,
        "privileged": False,
        "image_driver": "docker",
        "container_type": 0,
    }
    defaults.update(values)
    return models.Container(**defaults)


def set_rules(rules: dict[str, str]) -> None:
    """Override policy rules for one test (call ``zun.common.policy.reset()`` afterwards)."""
    from oslo_policy import policy as oslo_policy

    from zun.common import policy

    enforcer = policy.get_enforcer()
    enforcer.set_rules(oslo_policy.Rules.from_dict(rules), overwrite=False, use_conf=False)


@pytest.fixture
def policy_reset() -> Iterator[None]:
    from zun.common import policy

    yield
    policy.reset()


@pytest.fixture
def node1(nodes: Nodes, seed: Any) -> RecordingNode:
    """node1: an up zun-compute service, a compute node with room, a recording RPC server."""
    seed.service("node1")
    seed.compute_node("node1", cpus=4, cpu_used=0.0, mem_total=8192, mem_used=0, disk_used=0)
    return nodes.start("node1")


def db_row(uuid: str) -> Any:
    from zun.db import engine
    from zun.db.queries import containers as container_q

    with engine.transaction(readonly=True) as session:
        return container_q.get_by_uuid(session, uuid)


def node_usage(hostname: str = "node1") -> tuple[float, int, int]:
    import sqlalchemy as sa

    from zun.db import engine, models

    with engine.transaction(readonly=True) as session:
        row = session.execute(
            sa.select(
                models.ComputeNode.cpu_used,
                models.ComputeNode.mem_used,
                models.ComputeNode.disk_used,
            ).where(models.ComputeNode.hostname == hostname)
        ).one()
    return float(row[0]), int(row[1]), int(row[2])
