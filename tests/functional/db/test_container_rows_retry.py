"""The node's writes (``zun.compute.container_rows``, and the delete's last one) survive a
deadlock on every backend.

Under ten parallel creates on MariaDB the final status write of one create was once chosen
as an InnoDB deadlock victim (``DBDeadlock``): without a retry its row stayed in Creating with
its task in flight forever while its engine container ran. Here the first attempt of each
write fails the way oslo.db reports a deadlock, inside its transaction, after its UPDATE ran;
the retry writes the row and the event exactly once.
"""

from __future__ import annotations

from typing import Any

import pytest
from oslo_db import exception as db_exc
from sqlalchemy.engine import Engine

from zun.common import consts
from zun.common.context import RequestContext
from zun.compute import container_lifecycle
from zun.compute import container_rows as rows
from zun.db import engine as db_engine
from zun.db import models
from zun.db.queries import actions as action_q
from zun.db.queries import node as node_q

container_lifecycle_q = container_lifecycle.container_q

UUID = "00000000-0000-4000-8000-000000000501"
HOST = "node-a"
CTX = RequestContext(user_id="u", project_id="p", request_id="req-deadlock-1")


def _deadlock_once(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The first cas_update of the node's writes runs, then its transaction deadlocks."""
    calls = [0]
    real = rows.container_q.cas_update

    def cas_update(session: Any, *args: Any, **kwargs: Any) -> bool:
        calls[0] += 1
        won = real(session, *args, **kwargs)
        if calls[0] == 1:
            raise db_exc.DBDeadlock()
        return won

    monkeypatch.setattr(rows.container_q, "cas_update", cas_update)
    return calls


def _row() -> Any:
    with db_engine.transaction(readonly=True) as session:
        return session.get(models.Container, _id())


def _id() -> int:
    with db_engine.transaction(readonly=True) as session:
        return session.query(models.Container.id).filter_by(uuid=UUID).scalar()


def _events() -> list[Any]:
    with db_engine.transaction(readonly=True) as session:
        return list(session.query(models.ContainerActionEvent).all())


def _seed(task_state: str | None) -> None:
    with db_engine.transaction() as session:
        session.add(
            models.Container(
                uuid=UUID,
                name="c",
                project_id="p",
                user_id="u",
                container_type=0,
                host=HOST,
                status=consts.CREATING,
                task_state=task_state,
            )
        )
        action_q.start_action(session, CTX, UUID, "create")


def test_the_final_write_of_a_create_is_retried(
    backend: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    _seed(consts.CONTAINER_CREATING)
    calls = _deadlock_once(monkeypatch)
    won = rows.finish(
        CTX,
        UUID,
        "create",
        {"status": consts.RUNNING, "task_state": None},
        (consts.CONTAINER_CREATING,),
        started=node_q.now(),
        host=HOST,
    )
    assert won and calls[0] == 2
    row = _row()
    assert (row.status, row.task_state) == (consts.RUNNING, None)
    events = _events()
    assert [e.event for e in events] == [rows.event_name("create")]
    assert events[0].result == action_q.RESULT_SUCCESS


def test_the_task_writes_are_retried(backend: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    _seed(None)
    calls = _deadlock_once(monkeypatch)
    rows.start_event(CTX, UUID, "start", consts.CONTAINER_STARTING, (None,), host=HOST)
    assert calls[0] == 2 and _row().task_state == consts.CONTAINER_STARTING
    assert [e.event for e in _events()] == [rows.event_name("start")]
    calls = _deadlock_once(monkeypatch)
    rows.set_task(UUID, consts.CONTAINER_STOPPING, consts.CONTAINER_STARTING, host=HOST)
    assert calls[0] == 2 and _row().task_state == consts.CONTAINER_STOPPING


def test_the_last_write_of_a_delete_is_retried(
    backend: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    _seed(consts.CONTAINER_DELETING)
    calls = [0]
    real = container_lifecycle_q.destroy

    def destroy(session: Any, uuid: str) -> None:
        calls[0] += 1
        real(session, uuid)
        if calls[0] == 1:
            raise db_exc.DBDeadlock()

    monkeypatch.setattr(container_lifecycle_q, "destroy", destroy)
    node = SimpleNamespace(host=HOST)
    container_lifecycle.ContainerLifecycle._forget(node, _row(), UUID)  # type: ignore[arg-type]
    assert calls[0] == 2 and _id() is None
