"""Start-up recovery (init_host): what a crash interrupted is finished or undone."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from zun.common import consts
from zun.compute.container_rows import REASON_CREATE_INTERRUPTED
from zun.conf import CONF
from zun.db import engine as db_engine
from zun.db import models

pytestmark = pytest.mark.docker


def _set(uuid_: str, **values: Any) -> None:
    with db_engine.transaction() as session:
        session.execute(
            sa.update(models.Container).where(models.Container.uuid == uuid_).values(**values)
        )


def test_interrupted_create_is_undone(node: Any, busybox_image: str) -> None:
    uuid_, _ = node.add(task_state=consts.IMAGE_PULLING)
    # What a crash between docker create and the final write leaves behind.
    node.docker.containers.create(
        busybox_image,
        ["sleep", "300"],
        name=f"zun-{uuid_}",
        labels={"zun.managed": "true", "zun.container.uuid": uuid_, "zun.host": node.host},
    )
    assert node.compute_node().cpu_used == pytest.approx(0.1)
    node.manager.init_host(node.context())
    node.wait()
    row = node.row(uuid_)
    assert row.status == consts.ERROR
    assert row.status_reason == REASON_CREATE_INTERRUPTED
    assert row.task_state is None and row.host is None
    assert node.engine_container(uuid_) is None
    assert node.compute_node().cpu_used == pytest.approx(0.0)


def test_interrupted_create_with_its_request_is_done_again(node: Any, busybox_image: str) -> None:
    """A create whose request is stored (every create since issue 12) is redone at start-up,
    whether the node died in its middle or before receiving it; the half-made engine
    container goes first, the claim stays."""
    from zun.db.queries import attempts as attempt_q

    uuid_, ctx = node.add(task_state=consts.CONTAINER_CREATING)
    with db_engine.transaction() as session:
        action_id = session.scalar(
            sa.select(models.ContainerAction.id).where(
                models.ContainerAction.container_uuid == uuid_
            )
        )
        attempt_q.record(
            session,
            action_id,
            node.host,
            1,
            {"run": True, "requested_networks": [], "requested_volumes": [], "is_admin": True},
        )
    stale = node.docker.containers.create(
        busybox_image,
        ["sleep", "300"],
        name=f"zun-{uuid_}",
        labels={"zun.managed": "true", "zun.container.uuid": uuid_, "zun.host": node.host},
    )
    node.manager.init_host(node.context())
    node.wait()
    row = node.row(uuid_)
    assert (row.status, row.task_state, row.host) == (consts.RUNNING, None, node.host), (
        row.status_reason
    )
    assert node.engine_container(uuid_).id != stale.id
    assert node.compute_node().cpu_used == pytest.approx(0.1)
    assert ("compute__do_container_create", "Success") in node.events(uuid_)
    # The create message, still queued when the node died, arrives now: nothing happens.
    node.manager.container_create(ctx, uuid_, run=True)
    node.wait()
    assert node.row(uuid_).status == consts.RUNNING
    assert (
        len([c for c in node.engine_containers() if c.labels.get("zun.container.uuid") == uuid_])
        == 1
    )


def test_interrupted_delete_is_finished(node: Any) -> None:
    uuid_ = node.run()
    _set(uuid_, status=consts.DELETING, task_state=consts.CONTAINER_DELETING)
    node.manager.init_host(node.context())
    node.wait()
    assert node.row(uuid_) is None
    assert node.engine_container(uuid_) is None


def test_interrupted_stop_is_retried(node: Any) -> None:
    uuid_ = node.run()
    _set(uuid_, task_state=consts.CONTAINER_STOPPING)
    node.manager.init_host(node.context())
    node.wait()
    row = node.row(uuid_)
    assert (row.status, row.task_state) == (consts.STOPPED, None)


def test_interrupted_kill_reads_the_engine(node: Any) -> None:
    uuid_ = node.run()
    _set(uuid_, task_state=consts.CONTAINER_KILLING)
    node.manager.init_host(node.context())
    node.wait()
    row = node.row(uuid_)
    assert (row.status, row.task_state) == (consts.RUNNING, None)


def test_interrupted_network_attach_is_an_error(node: Any) -> None:
    uuid_ = node.run()
    _set(uuid_, task_state=consts.NETWORK_ATTACHING)
    node.manager.init_host(node.context())
    row = node.row(uuid_)
    assert (row.status, row.task_state) == (consts.ERROR, None)
    assert node.engine_container(uuid_) is not None


def test_resume_container_state(node: Any) -> None:
    uuid_ = node.run()
    node.docker.api.stop(f"zun-{uuid_}", timeout=0)
    CONF.set_override("resume_container_state", True, group="compute")
    try:
        node.manager.init_host(node.context())
        node.wait()
    finally:
        CONF.clear_override("resume_container_state", group="compute")
    assert node.row(uuid_).status == consts.RUNNING
    assert node.engine_container(uuid_).status == "running"
