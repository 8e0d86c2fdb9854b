"""The database side of the node's container work: load a row, start and finish an event.

Every cast ends with ONE conditional UPDATE that writes the final status and clears the task
state it started from (see :mod:`zun.db.queries.node`), and finishes the container-action
event (``compute__do_container_<action>``) with ``Success`` or ``Error``, in one transaction.

Every write here also requires the row to be on the writing node (``host``): a node that
stalled while the API's node monitor moved its create elsewhere (or an admin evacuated it)
must not write over the row that now belongs to another host.

Each write is retried when the database reports a deadlock (InnoDB under parallel creates,
a Galera certification failure, a SQLite writer past its busy timeout): a lost final write
would leave the row in its task state forever although the engine did the work. A retry runs
the whole transaction again (the CAS, ``extra``, the event), so nothing is written twice.
"""

from __future__ import annotations

import datetime
import traceback
from collections.abc import Callable
from typing import Any

from zun.common import exception
from zun.common.context import RequestContext
from zun.db import engine
from zun.db.queries import actions as action_q
from zun.db.queries import containers as container_q
from zun.db.queries import node as node_q
from zun.network import addresses as net_addresses
from zun.network import mode
from zun.runtime.contract import ContainerRuntime
from zun.runtime.docker.status import map_docker_state

REASON_CREATE_INTERRUPTED = "Container failed to create correctly"

reason_of = exception.status_reason


def event_name(action: str) -> str:
    return f"compute__do_container_{action}"


def load(container_uuid: str) -> Any:
    """The container row, or None when it is gone."""
    with engine.transaction(readonly=True) as session:
        return node_q.get_container(session, container_uuid)


def load_for_call(container_uuid: str) -> Any:
    """The container row; a call on a row that is gone is a 404."""
    row = load(container_uuid)
    if row is None:
        raise exception.ContainerNotFound(container=container_uuid)
    return row


@engine.retry_on_deadlock
def start_event(
    context: RequestContext,
    container_uuid: str,
    action: str,
    task_state: str | None = None,
    from_states: tuple[str | None, ...] = (),
    *,
    host: str,
) -> None:
    with engine.transaction() as session:
        if task_state is not None:
            container_q.cas_update(
                session,
                container_uuid,
                {"task_state": task_state},
                task_states=from_states,
                host=host,
            )
        if context.request_id:
            action_q.start_event(session, container_uuid, context.request_id, event_name(action))


@engine.retry_on_deadlock
def set_task(container_uuid: str, task_state: str, current: str, *, host: str) -> None:
    with engine.transaction() as session:
        container_q.cas_update(
            session, container_uuid, {"task_state": task_state}, task_states=(current,), host=host
        )


@engine.retry_on_deadlock
def finish(
    context: RequestContext,
    container_uuid: str,
    action: str,
    values: dict[str, Any],
    task_states: tuple[str | None, ...],
    exc: BaseException | None = None,
    statuses: tuple[str, ...] | None = None,
    extra: Callable[[Any], None] | None = None,
    started: datetime.datetime | None = None,
    *,
    host: str,
) -> bool:
    """Final write (CAS on the task state, and on the row being on ``host``: the node that
    writes) and the event, in one transaction; True when the write won. ``extra(session)``
    runs in the same transaction, only if it won.

    ``started``: the event was not written when the work began (create, to keep a write off
    its path); it is recorded whole now."""
    result = action_q.RESULT_ERROR if exc else action_q.RESULT_SUCCESS
    trace = "".join(traceback.format_exception(exc)) if exc else None
    with engine.transaction() as session:
        won = container_q.cas_update(
            session, container_uuid, values, task_states=task_states, statuses=statuses, host=host
        )
        if won and extra is not None:
            extra(session)
        if context.request_id and started is not None:
            node_q.record_event(
                session,
                container_uuid,
                context.request_id,
                event_name(action),
                started,
                result,
                trace,
            )
        elif context.request_id:
            action_q.finish_event(
                session,
                container_uuid,
                context.request_id,
                event_name(action),
                result=result,
                traceback=trace,
            )
    return won


def engine_fields(
    runtime: ContainerRuntime, row: Any, info: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Status fields, container id and addresses of ``row`` as the engine sees it now."""
    if info is None:
        info = runtime.inspect(row)
    fields = map_docker_state(
        info.get("State"),
        status=row.status,
        status_reason=row.status_reason,
        status_detail=row.status_detail,
        force=True,
    )
    # With Neutron (kuryr) the addresses are the ports Zun made, stored at create and changed
    # by attach and detach: the engine's endpoint ids are not what clients know.
    addresses = (
        row.addresses if mode.kuryr_enabled() else net_addresses.addresses_from_inspect(info)
    )
    return {
        "status": fields.status,
        "status_reason": fields.status_reason,
        "status_detail": fields.status_detail,
        "container_id": info["Id"],
        "addresses": addresses,
    }


def public(values: dict[str, Any]) -> dict[str, Any]:
    """The fields a show answers with."""
    return {k: values.get(k) for k in ("status", "status_reason", "status_detail", "addresses")}
