"""A node that stalled while its create was moved to another host writes nothing over it.

The API's node monitor moves a create off a host whose service looks down (no heartbeat); the
agent may only have stalled (a long GC pause, a hung engine call) and finish the create after
the move. Its final write must lose (the row names another host now) and the engine container
it made must go: the container lives on its new host only.
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from zun.common import consts
from zun.compute import periodic_tasks
from zun.db import engine as db_engine
from zun.db import models

C = models.Container


def _move(uuid_: str, from_host: str, to_host: str) -> None:
    """What zun.compute.relocation.move writes when it moves a create (its CAS)."""
    with db_engine.transaction() as session:
        moved = session.execute(
            sa.update(C)
            .where(C.uuid == uuid_, C.host == from_host, C.status == consts.CREATING)
            .values(
                host=to_host,
                task_state=consts.CONTAINER_CREATING,
                status_reason=None,
                container_id=None,
                status_detail=None,
                addresses=None,
            )
        ).rowcount
    assert moved == 1


def test_a_create_moved_away_while_the_node_stalled_is_not_overwritten(node: Any) -> None:
    uuid_, ctx = node.add()
    other = f"{node.host}-new"
    start_and_inspect = node.manager._start_and_inspect

    def stalled(row: Any, run: bool) -> dict[str, Any]:
        values = start_and_inspect(row, run)
        # The engine container runs; before the node writes Running, the monitor moves it.
        _move(uuid_, node.host, other)
        return values

    node.manager._start_and_inspect = stalled
    node.manager.container_create(ctx, uuid_, run=True)
    node.wait()
    row = node.row(uuid_)
    assert (row.host, row.status, row.task_state) == (
        other,
        consts.CREATING,
        consts.CONTAINER_CREATING,
    )
    assert row.container_id is None
    assert node.engine_container(uuid_) is None


def test_a_failed_create_moved_away_is_not_marked_error(node: Any) -> None:
    uuid_, ctx = node.add(command=["/no/such/binary"])
    other = f"{node.host}-new"
    create_engine_container = node.manager._create_engine_container

    def stalled(row: Any, *args: Any) -> Any:
        made = create_engine_container(row, *args)
        _move(uuid_, node.host, other)
        return made

    node.manager._create_engine_container = stalled
    node.manager.container_create(ctx, uuid_, run=True)
    node.wait()
    row = node.row(uuid_)
    assert (row.host, row.status) == (other, consts.CREATING), row.status_reason
    assert node.engine_container(uuid_) is None


def test_a_status_sync_does_not_write_a_row_that_moved_away(
    node: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    uuid_ = node.run()
    other = f"{node.host}-new"
    node.engine_container(uuid_).stop(timeout=0)
    rows = periodic_tasks._host_rows(node.host)
    with db_engine.transaction() as session:
        session.execute(sa.update(C).where(C.uuid == uuid_).values(host=other))
    # The rows were read just before the move.
    monkeypatch.setattr(periodic_tasks, "_host_rows", lambda host: rows)
    periodic_tasks.sync_container_state(node.manager, node.context())
    assert node.row(uuid_).status == consts.RUNNING
