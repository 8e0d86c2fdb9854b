"""Moving a container's create to another host: reschedule, and evacuation's recreate.

There is no conductor: whoever notices that a create cannot finish where it is — the API's
node monitor (the host died before the work was done), the node itself (its engine failed)
or an admin's evacuation — calls :func:`move`. One transaction claims on a new host, moves
the row with a compare-and-swap on ``(host, status)`` (two movers: one wins), gives the old
host's claim back and records the attempt under the container's create (or evacuate)
action; then ``container_create`` is cast to the new host. Attempts are bounded by
``[compute]/max_create_attempts``; the last one that fails leaves the row in Error with the
reason, and no claim.

The node that lost the create may come back with the message still queued, or with an
engine container made before it died: it drops a create whose row names another host and
reaps engine containers whose row lives on another host (``periodic_tasks.reap_orphans``).
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from zun.common import consts, exception
from zun.common.context import RequestContext
from zun.conf import CONF
from zun.db import engine, models
from zun.db.queries import actions as action_q
from zun.db.queries import attempts as attempt_q
from zun.scheduler import claims, filters, placement, scheduler

LOG = logging.getLogger(__name__)
C = models.Container


def create_request(
    *,
    run: bool,
    requested_networks: list[dict[str, Any]] | None,
    requested_volumes: list[dict[str, Any]] | None,
    is_admin: bool,
    availability_zone: str | None = None,
    hints: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What a replay of the create needs, as stored in the attempt's event."""
    return {
        "run": bool(run),
        "requested_networks": list(requested_networks or []),
        "requested_volumes": list(requested_volumes or []),
        "is_admin": bool(is_admin),
        "availability_zone": availability_zone,
        "hints": dict(hints or {}),
    }


def max_attempts() -> int:
    return max(1, int(CONF.compute.max_create_attempts or 1))


def sched_request(row: Any, request: dict[str, Any]) -> filters.Request:
    cpu, memory_mb, disk_gb = claims.container_resources(row.cpu, row.memory, row.disk)
    return filters.Request(
        cpu=cpu,
        memory_mb=memory_mb,
        disk_gb=disk_gb,
        runtime=row.runtime,
        availability_zone=request.get("availability_zone"),
        hints=dict(request.get("hints") or {}),
        cpu_policy=row.cpu_policy,
        project_id=row.project_id,
    )


def consumer_of(row: Any) -> placement.Consumer:
    """The Placement consumer of a container row; moving it to a new host replaces its
    allocation on the old one (one PUT)."""
    return placement.consumer_of(
        row.uuid,
        row.project_id,
        row.user_id,
        placement.resources_of(*claims.container_resources(row.cpu, row.memory, row.disk)),
    )


def replay_context(attempt: attempt_q.Attempt) -> RequestContext:
    """The context the node sees: the create's request id, so its events join the action."""
    admin = bool(attempt.request.get("is_admin"))
    return RequestContext(
        request_id=attempt.request_id,
        user_id=attempt.user_id,
        project_id=attempt.project_id,
        is_admin=admin,
        roles=["admin"] if admin else [],
        overwrite=False,
    )


@dataclass
class Moved:
    host: str
    context: RequestContext
    request: dict[str, Any]


def _fail(
    session: Session,
    row: Any,
    from_host: str | None,
    reason: str,
    attempt: attempt_q.Attempt | None,
) -> bool:
    won = (
        session.execute(
            sa.update(C)
            .where(C.uuid == row.uuid, C.host == from_host, C.status == consts.CREATING)
            .values(
                status=consts.ERROR,
                status_reason=reason[:65535],
                task_state=None,
                host=None,
                container_id=None,
                status_detail=None,
                addresses=None,
            )
        ).rowcount
        == 1
    )
    if won and from_host:
        claims.release(
            session, from_host, *claims.container_resources(row.cpu, row.memory, row.disk)
        )
    if won:
        placement.release_after_commit(session, row.uuid)
    if won and attempt is not None:
        attempt_q.record_failure(session, attempt.action_id, from_host, reason)
        session.execute(
            sa.update(models.ContainerAction)
            .where(models.ContainerAction.id == attempt.action_id)
            .values(finish_time=attempt_q._now(), message="Error")
        )
    return won


class _Lost(Exception):
    """The row changed under the move: roll the new claim back."""


def _move_in(
    session: Session, uuid: str, from_host: str, reason: str, exclude: Collection[str]
) -> Moved | None:
    row = session.scalars(sa.select(C).where(C.uuid == uuid)).first()
    if row is None or row.host != from_host or row.status != consts.CREATING:
        return None
    attempt = attempt_q.latest(session, uuid)
    if attempt is None:
        _fail(session, row, from_host, f"{reason} (the request cannot be replayed)", None)
        return None
    if attempt.count >= max_attempts():
        _fail(
            session,
            row,
            from_host,
            f"Creating failed on {attempt.count} host(s); the last one: {reason}",
            attempt,
        )
        return None
    skip = {from_host, *attempt.hosts, *exclude}
    try:
        host = scheduler.select_and_claim(
            session,
            sched_request(row, attempt.request),
            None,
            exclude=skip,
            consumer=consumer_of(row),
        )
    except exception.NoValidHost:
        _fail(
            session,
            row,
            from_host,
            f"{reason}; no other host can take it: {scheduler.NO_VALID_HOST_REASON}",
            attempt,
        )
        return None
    won = (
        session.execute(
            sa.update(C)
            .where(C.uuid == uuid, C.host == from_host, C.status == consts.CREATING)
            .values(
                host=host,
                task_state=consts.CONTAINER_CREATING,
                status_reason=None,
                container_id=None,
                status_detail=None,
                addresses=None,
            )
        ).rowcount
        == 1
    )
    if not won:
        raise _Lost
    claims.release(session, from_host, *claims.container_resources(row.cpu, row.memory, row.disk))
    attempt_q.record_failure(session, attempt.action_id, from_host, reason)
    attempt_q.record(session, attempt.action_id, host, attempt.count + 1, attempt.request)
    return Moved(host, replay_context(attempt), attempt.request)


def move(
    uuid: str, from_host: str, reason: str, *, exclude: Collection[str] = (), rpcapi: Any = None
) -> str | None:
    """Move a create from ``from_host`` to another host; the new host, or None when the
    row was not there any more or the create ended in Error (attempts used up, no host)."""
    try:
        with engine.transaction() as session:
            moved = _move_in(session, uuid, from_host, reason, exclude)
    except _Lost:
        return None
    if moved is None:
        return None
    LOG.warning(
        "Container %s: moving its create from %s to %s (%s)", uuid, from_host, moved.host, reason
    )
    cast(uuid, moved, rpcapi)
    return moved.host


def cast(uuid: str, moved: Moved, rpcapi: Any = None) -> None:
    """Send the create to its new host; a failure to send leaves the row in Error."""
    if rpcapi is None:
        from zun.compute import rpcapi as rpcapi_mod

        rpcapi = rpcapi_mod.get_rpcapi()
    try:
        rpcapi.container_create(
            moved.context,
            moved.host,
            uuid,
            run=bool(moved.request.get("run")),
            requested_networks=list(moved.request.get("requested_networks") or []),
            requested_volumes=list(moved.request.get("requested_volumes") or []),
        )
    except Exception as exc:
        LOG.exception("Sending container_create for %s to %s failed", uuid, moved.host)
        with engine.transaction() as session:
            row = session.scalars(sa.select(C).where(C.uuid == uuid)).first()
            if row is not None:
                _fail(
                    session,
                    row,
                    moved.host,
                    f"The create request could not be sent to host {moved.host}: {exc}",
                    attempt_q.latest(session, uuid),
                )


def fail(uuid: str, from_host: str, reason: str) -> bool:
    """Error for a create on ``from_host`` that will not be moved (claim given back)."""
    with engine.transaction() as session:
        row = session.scalars(sa.select(C).where(C.uuid == uuid)).first()
        if row is None:
            return False
        return _fail(session, row, from_host, reason, attempt_q.latest(session, uuid))


def record_first(
    session: Session,
    context: RequestContext,
    uuid: str,
    host: str,
    request: dict[str, Any],
    action: str = "create",
) -> None:
    """The action and its first attempt, in the scheduling transaction."""
    row = action_q.start_action(session, context, uuid, action)
    attempt_q.record(session, row.id, host, 1, request)
