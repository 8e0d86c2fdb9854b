"""Periodic tasks of the node: inventory, per-host state sync, auto_remove, auto_heal, reaping."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sqlalchemy as sa

from zun.common import consts
from zun.compute import periodic_tasks
from zun.db import engine as db_engine
from zun.db import models

pytestmark = pytest.mark.docker


@contextmanager
def count_statements() -> Iterator[list[str]]:
    statements: list[str] = []
    eng = db_engine.get_engine()

    def before(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    sa.event.listen(eng, "before_cursor_execute", before)
    try:
        yield statements
    finally:
        sa.event.remove(eng, "before_cursor_execute", before)


def _add_other_host_rows(count: int) -> None:
    rows = [
        {
            "uuid": str(uuid.uuid4()),
            "name": f"o{i}",
            "host": "some-other-node",
            "status": consts.RUNNING,
            "cpu": 1.0,
            "memory": "64",
            "image": "busybox",
            "container_type": consts.TYPE_CONTAINER,
            "project_id": "other",
        }
        for i in range(count)
    ]
    with db_engine.transaction() as session:
        session.execute(sa.insert(models.Container), rows)


def test_inventory(node: Any, docker_client: Any) -> None:
    info = docker_client.info()
    cn = node.compute_node()
    assert cn.cpus == info["NCPU"]
    assert cn.mem_total > 0 and cn.disk_total > 0
    assert cn.kernel_version == info["KernelVersion"]
    assert "runc" in cn.runtimes
    assert cn.rp_uuid == cn.uuid
    node.run(cpu=0.5, memory="100")
    # Drift (a claim lost by a crash) is healed from the rows of this host.
    with db_engine.transaction() as session:
        session.execute(
            sa.update(models.ComputeNode)
            .where(models.ComputeNode.hostname == node.host)
            .values(cpu_used=7.0, mem_used=9999)
        )
    _add_other_host_rows(3)
    periodic_tasks.update_inventory(node.manager, node.context())
    cn = node.compute_node()
    assert cn.cpu_used == pytest.approx(0.5)
    assert cn.mem_used == 100


@pytest.mark.parametrize("node_db", ["sqlite", "mariadb"], indirect=True)
def test_sync_reads_only_this_host(node: Any) -> None:
    uuid_ = node.run()
    _add_other_host_rows(1)
    with count_statements() as few:
        periodic_tasks.sync_container_state(node.manager, node.context())
    _add_other_host_rows(1000)
    with count_statements() as many:
        periodic_tasks.sync_container_state(node.manager, node.context())
    assert len(few) == len(many), (few, many)
    assert all("some-other-node" not in s for s in many)
    select = [s for s in many if s.lstrip().upper().startswith("SELECT")]
    assert len(select) == 1 and "host" in select[0]
    assert node.row(uuid_).status == consts.RUNNING


def test_sync_copies_engine_status(node: Any) -> None:
    uuid_ = node.run()
    node.docker.api.stop(f"zun-{uuid_}", timeout=0)
    periodic_tasks.sync_container_state(node.manager, node.context())
    assert node.row(uuid_).status == consts.STOPPED


def test_sync_leaves_busy_rows_alone(node: Any) -> None:
    uuid_ = node.run()
    node.docker.api.stop(f"zun-{uuid_}", timeout=0)
    with db_engine.transaction() as session:
        session.execute(
            sa.update(models.Container)
            .where(models.Container.uuid == uuid_)
            .values(task_state=consts.CONTAINER_STOPPING)
        )
    periodic_tasks.sync_container_state(node.manager, node.context())
    assert node.row(uuid_).status == consts.RUNNING


def test_vanished_container_goes_to_error(node: Any) -> None:
    uuid_ = node.run()
    node.docker.api.remove_container(f"zun-{uuid_}", force=True)
    periodic_tasks.sync_container_state(node.manager, node.context())
    row = node.row(uuid_)
    assert row.status == consts.ERROR
    assert row.status_reason


def test_auto_heal_rebuilds_a_vanished_container(node: Any) -> None:
    uuid_ = node.run(auto_heal=True)
    old_id = node.row(uuid_).container_id
    node.docker.api.remove_container(f"zun-{uuid_}", force=True)
    periodic_tasks.sync_container_state(node.manager, node.context())
    node.wait()
    row = node.row(uuid_)
    assert row.status == consts.RUNNING, row.status_reason
    assert row.task_state is None
    assert row.container_id != old_id
    assert node.engine_container(uuid_).status == "running"


def test_auto_remove_container_is_deleted_after_it_exits(node: Any) -> None:
    uuid_ = node.run(auto_remove=True, command=["sleep", "1"])
    deadline = time.monotonic() + 20
    while node.engine_container(uuid_) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    periodic_tasks.sync_container_state(node.manager, node.context())
    assert node.row(uuid_).status == consts.DELETED
    periodic_tasks.delete_unused_containers(node.manager, node.context())
    node.wait()
    assert node.row(uuid_) is None
    assert node.compute_node().cpu_used == pytest.approx(0.0)


def test_reaping_removes_only_rowless_engine_containers(node: Any, busybox_image: str) -> None:
    kept = node.run()
    orphan_uuid = str(uuid.uuid4())
    orphan = node.docker.containers.create(
        busybox_image,
        ["sleep", "300"],
        name=f"zun-{orphan_uuid}",
        labels={"zun.managed": "true", "zun.container.uuid": orphan_uuid, "zun.host": node.host},
    )
    other_host_uuid = str(uuid.uuid4())
    other = node.docker.containers.create(
        busybox_image,
        ["sleep", "300"],
        name=f"zun-{other_host_uuid}",
        labels={
            "zun.managed": "true",
            "zun.container.uuid": other_host_uuid,
            "zun.host": "another-node",
        },
    )
    try:
        assert periodic_tasks.reap_orphans(node.manager, node.context(), grace_period=3600) == []
        reaped = periodic_tasks.reap_orphans(node.manager, node.context(), grace_period=0)
        assert reaped == [orphan_uuid]
        assert node.engine_container(orphan_uuid) is None
        assert node.engine_container(kept) is not None
        assert node.engine_container(other_host_uuid) is not None
    finally:
        other.remove(force=True)
        if node.engine_container(orphan_uuid) is not None:
            orphan.remove(force=True)


def test_reaping_removes_containers_whose_row_moved_to_another_host(node: Any) -> None:
    """An evacuated (or rescheduled) container's row names its new host: the engine container
    left on this node, which was down meanwhile, goes; one still on this host stays."""
    moved = node.run()
    kept = node.run()
    with db_engine.transaction() as session:
        session.execute(
            sa.update(models.Container)
            .where(models.Container.uuid == moved)
            .values(host="another-node")
        )
    reaped = periodic_tasks.reap_orphans(node.manager, node.context(), grace_period=0)
    assert reaped == [moved]
    assert node.engine_container(moved) is None
    assert node.engine_container(kept) is not None
    assert node.row(moved) is not None  # the row is the new host's


def test_auto_remove_container_gone_before_its_status_is_read(node: Any) -> None:
    uuid_, ctx = node.add(auto_remove=True, command=["true"])
    node.manager.container_create(ctx, uuid_, run=True)
    node.wait()
    row = node.row(uuid_)
    assert row.status in (consts.RUNNING, consts.DELETED, consts.DEAD, consts.STOPPED), (
        row.status_reason
    )
    deadline = time.monotonic() + 20
    while node.engine_container(uuid_) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    periodic_tasks.sync_container_state(node.manager, node.context())
    periodic_tasks.delete_unused_containers(node.manager, node.context())
    node.wait()
    assert node.row(uuid_) is None


def test_tasks_for_the_agent(node: Any) -> None:
    tasks = node.manager.periodic_tasks()
    names = {func.__name__ for func, _, _ in tasks}
    assert names == {
        "update_inventory",
        "sync_container_state",
        "delete_unused_containers",
        "reap_orphans",
    }
    for func, spacing, _ in tasks:
        assert spacing > 0
        func(node.context())
