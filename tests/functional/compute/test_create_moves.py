"""A create that fails because its node's engine is unreachable moves to another host.

Two nodes on the in-process bus: ``node`` (the fixture: the real engine) and a node whose
engine socket answers nothing (a stopped dockerd, from the agent's side). The create cast to
the broken node is moved by that node itself (zun.compute.relocation) and ends Running on
the other, with the claim moved and one attempt event per host.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from zun.common import consts, rpc
from zun.common.rpc_service import RPCService
from zun.compute import periodic_tasks
from zun.compute.container_endpoint import ContainerEndpoint
from zun.db import engine as db_engine
from zun.db import models
from zun.db.queries import attempts as attempt_q
from zun.db.queries import service_heartbeat
from zun.runtime.docker.driver import DockerDriver
from zun.scheduler import claims


@pytest.fixture
def bus(node: Any) -> Iterator[RPCService]:
    from unit.api.apptesting import init_config

    from zun.conf import CONF

    init_config()
    rpc.init(CONF, "fake://")
    service = RPCService(node.host, [node.manager])
    service.start()
    try:
        yield service
    finally:
        service.stop()
        service.wait()
        rpc.cleanup()


@pytest.fixture
def broken(node: Any, tmp_path: Path) -> Iterator[ContainerEndpoint]:
    host = f"{node.host}-broken"
    endpoint = ContainerEndpoint(
        host,
        driver=DockerDriver(api_url=f"unix://{tmp_path / 'no-engine.sock'}"),
        state_dir=tmp_path / "broken-state",
        max_workers=2,
    )
    with db_engine.transaction() as session:
        session.add(
            models.ComputeNode(
                uuid=str(uuid.uuid4()),
                rp_uuid=str(uuid.uuid4()),
                hostname=host,
                cpus=4,
                cpu_used=0.0,
                mem_total=8192,
                mem_used=0,
                disk_total=100,
                disk_used=0,
                runtimes=["runc"],
            )
        )
    for name in (node.host, host):
        service_heartbeat.report_up(name, "zun-compute")
    try:
        yield endpoint
    finally:
        endpoint.workers.wait_idle(30)
        endpoint.workers.shutdown(wait=True)


def _usage(host: str) -> tuple[float, int]:
    with db_engine.transaction(readonly=True) as session:
        row = session.execute(
            sa.select(models.ComputeNode.cpu_used, models.ComputeNode.mem_used).where(
                models.ComputeNode.hostname == host
            )
        ).one()
    return float(row[0]), int(row[1])


def test_an_engine_failure_moves_the_create_to_another_host(
    node: Any, bus: RPCService, broken: ContainerEndpoint
) -> None:
    periodic_tasks.update_inventory(node.manager, node.context())
    before = _usage(node.host)
    uuid_, ctx = node.add(host=broken.host)
    with db_engine.transaction() as session:
        action_id = session.scalar(
            sa.select(models.ContainerAction.id).where(
                models.ContainerAction.container_uuid == uuid_
            )
        )
        attempt_q.record(
            session,
            action_id,
            broken.host,
            1,
            {"run": True, "requested_networks": [], "requested_volumes": [], "is_admin": True},
        )
    assert _usage(broken.host) == (0.1, 32)

    broken.container_create(ctx, uuid_, run=True)
    assert broken.workers.wait_idle(60)
    deadline = time.monotonic() + 60  # the moved create crosses the bus: poll
    while node.row(uuid_).status == consts.CREATING and time.monotonic() < deadline:
        time.sleep(0.1)
    node.wait()
    row = node.row(uuid_)
    assert (row.status, row.host, row.task_state) == (consts.RUNNING, node.host, None), (
        row.status_reason
    )
    assert node.engine_container(uuid_).status == "running"
    assert _usage(broken.host) == (0.0, 0)
    cpu, mem, _ = claims.container_resources(0.1, "32", None)
    after = _usage(node.host)
    assert after[0] == pytest.approx(before[0] + cpu) and after[1] == before[1] + mem
    events = node.events(uuid_)
    assert [e for e, _ in events].count("schedule_attempt") == 2
    assert ("compute__do_container_create", "Error") in events
    assert events[-1] == ("compute__do_container_create", "Success")
