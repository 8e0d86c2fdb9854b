"""Start-up recovery of a compute node: finish or undo what a crash interrupted.

Read once, through the host index, before the node takes messages:

=====================================================  =========================================
Row                                                    Action
=====================================================  =========================================
Creating, task container_creating, with its create   what a first try left is removed, and the
request stored for this host                           create starts again (claim kept)
Creating, or task image_pulling / container_creating   undo the create (engine container,
(no stored request)                                    volumes, claim, host), Error "Container
                                                       failed to create correctly"
task network_* / sg_*                                  Error with the same reason (the engine
                                                       container stays: it was made before)
Deleting, or task container_deleting                   delete again, forced
task container_starting / _stopping / _rebooting /     the action again
_pausing / _unpausing
task container_killing                                 the state read back from the engine (a
                                                       kill is not repeated: the signal the
                                                       user chose is not known any more)
task container_rebuilding                              the rebuild again (run if it was running)
task container_resizing / container_committing         task cleared, state read back
Running, engine says exited, and                       started again
[compute]/resume_container_state
=====================================================  =========================================
"""

from __future__ import annotations

import logging
from typing import Any

from zun.common import consts
from zun.common.context import RequestContext
from zun.compute import container_rows as rows
from zun.compute import relocation
from zun.compute.container_lifecycle import ContainerLifecycle
from zun.compute.container_resources import Taken
from zun.conf import CONF
from zun.db import engine
from zun.db.queries import attempts as attempt_q
from zun.db.queries import containers as container_q
from zun.db.queries import node as node_q

LOG = logging.getLogger(__name__)

_CREATE_TASKS = (consts.CONTAINER_CREATING, consts.IMAGE_PULLING)
_SIDE_TASKS = (
    consts.NETWORK_ATTACHING,
    consts.NETWORK_DETACHING,
    consts.SG_ADDING,
    consts.SG_REMOVING,
)
_RETRIED = {
    consts.CONTAINER_STARTING: "container_start",
    consts.CONTAINER_STOPPING: "container_stop",
    consts.CONTAINER_REBOOTING: "container_reboot",
    consts.CONTAINER_PAUSING: "container_pause",
    consts.CONTAINER_UNPAUSING: "container_unpause",
}
_COLUMNS = (
    *node_q.SYNC_COLUMNS,
    "cpu",
    "memory",
    "disk",
    "host",
    "user_id",
    "labels",
    "registry_id",
    "addresses",
    "container_type",
)


def recover(manager: ContainerLifecycle, context: RequestContext) -> None:
    with engine.transaction(readonly=True) as session:
        rows = node_q.host_rows(session, manager.host, _COLUMNS)
    for row in rows:
        try:
            _recover_one(manager, context, row)
        except Exception:
            LOG.exception("Recovery of container %s failed", row.uuid)


def _recover_one(manager: ContainerLifecycle, context: RequestContext, row: Any) -> None:
    task = row.task_state
    if row.container_type != consts.TYPE_CONTAINER and (
        row.status == consts.CREATING or task in _CREATE_TASKS
    ):
        # A capsule's create is its endpoint's (it ran first): redone from its stored
        # request, or failed with its members.
        return
    # An interrupted pull is not redone: it is the likeliest to hang again (a registry that
    # does not answer); the create then ends in Error as before.
    if (
        row.status == consts.CREATING
        and task == consts.CONTAINER_CREATING
        and _redo_create(manager, row)
    ):
        return
    if row.status == consts.CREATING or task in _CREATE_TASKS:
        LOG.warning("Container %s was being created when the node stopped", row.uuid)
        full = rows.load(row.uuid)
        if full is not None:
            full.status = consts.CREATING
            manager.fail_create(context, full, rows.REASON_CREATE_INTERRUPTED)
            with engine.transaction() as session:
                # fail_create only moves rows still in Creating; this one may be another.
                container_q.cas_update(
                    session,
                    row.uuid,
                    {
                        "status": consts.ERROR,
                        "task_state": None,
                        "status_reason": rows.REASON_CREATE_INTERRUPTED,
                    },
                    task_states=(task,),
                    host=manager.host,
                )
        return
    if task in _SIDE_TASKS:
        with engine.transaction() as session:
            container_q.cas_update(
                session,
                row.uuid,
                {
                    "status": consts.ERROR,
                    "task_state": None,
                    "status_reason": rows.REASON_CREATE_INTERRUPTED,
                },
                task_states=(task,),
                host=manager.host,
            )
        return
    if row.status == consts.DELETING or task == consts.CONTAINER_DELETING:
        manager.container_delete(context, row.uuid, force=True)
        return
    if task in _RETRIED:
        LOG.info("Retrying %s of container %s", _RETRIED[task], row.uuid)
        getattr(manager, _RETRIED[task])(context, row.uuid)
        return
    if task == consts.CONTAINER_REBUILDING:
        manager.container_rebuild(context, row.uuid, run=_engine_running(manager, row))
        return
    if task is not None:
        _clear_task(manager, row)
        return
    if (
        row.status == consts.RUNNING
        and CONF.compute.resume_container_state
        and not _engine_running(manager, row)
    ):
        with engine.transaction() as session:
            won = container_q.cas_update(
                session,
                row.uuid,
                {"task_state": consts.CONTAINER_STARTING},
                task_states=(None,),
                host=manager.host,
            )
        if won:
            manager.container_start(context, row.uuid)


def _redo_create(manager: ContainerLifecycle, row: Any) -> bool:
    """Start again, from its stored request, a create this host was given: the node died
    before finishing it, or before even receiving it (the message is then still queued and
    finds the row done). What a first try left is removed first; the claim stays."""
    with engine.transaction(readonly=True) as session:
        attempt = attempt_q.latest(session, row.uuid)
    if attempt is None or not attempt.hosts or attempt.hosts[-1] != manager.host:
        return False
    full = rows.load(row.uuid)
    if full is None:
        return True
    full.container_id = None  # remove an engine container by its name
    manager._undo(full, Taken())
    with engine.transaction() as session:
        won = container_q.cas_update(
            session,
            row.uuid,
            {"task_state": consts.CONTAINER_CREATING, "container_id": None},
            task_states=(row.task_state,),
            statuses=(consts.CREATING,),
            host=manager.host,
        )
    if not won:
        return True
    LOG.warning("Container %s was to be created when the node stopped: creating it now", row.uuid)
    request = attempt.request
    manager.container_create(
        relocation.replay_context(attempt),
        row.uuid,
        run=bool(request.get("run")),
        requested_networks=list(request.get("requested_networks") or []),
        requested_volumes=list(request.get("requested_volumes") or []),
    )
    return True


def _engine_running(manager: ContainerLifecycle, row: Any) -> bool:
    try:
        state = manager.driver.inspect(row).get("State") or {}
    except Exception:
        return False
    return bool(state.get("Running"))


def _clear_task(manager: ContainerLifecycle, row: Any) -> None:
    values: dict[str, Any] = {"task_state": None}
    try:
        full = rows.load(row.uuid)
        if full is not None:
            values.update(manager.engine_fields(full))
    except Exception:
        LOG.info("Container %s: state not read back from the engine", row.uuid)
    with engine.transaction() as session:
        container_q.cas_update(
            session, row.uuid, values, task_states=(row.task_state,), host=manager.host
        )
