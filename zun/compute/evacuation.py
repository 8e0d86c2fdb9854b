"""Evacuation and purge of a dead host (admin, microversion 1.41), and automatic evacuation.

**Evacuate** recreates the containers of a host that is down on other hosts, from their
stored request (see :mod:`zun.compute.relocation`): same UUID, name, image, command,
resources and networks; a new engine container. Each one moves in its own transaction (a
claim on the new host, the row moved by compare-and-swap on its host and status, the old
claim given back, an ``evacuate`` action with its attempt), then ``container_create`` is cast.
A container that was Running, Paused or Restarting is started again; Created, Stopped, Error
or Dead ones are created and left Created. Creates still under way are moved like a
reschedule. Left where they are, with the reason in the answer:

* containers with **local volumes** (``mounts``, injected files): their data lives on the
  dead host's disk and cannot move. Bring the host back, or delete them (a forced delete works
  on a down host);
* capsules and their members (a capsule is moved as a whole only by re-creating it);
* containers being deleted (the host finishes, or a forced delete removes them).

**Purge** removes every container row of a dead host (capsules and members included), their
volume records and actions, and zeroes the host's claims. The engine containers it leaves
behind are reaped by the host if it ever comes back.

The dead host's engine containers of evacuated rows are reaped when it comes back (their rows
name another host), so a container never runs twice for long.
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
from zun.compute import node_health, relocation
from zun.db import engine, models
from zun.db.queries import actions as action_q
from zun.db.queries import attempts as attempt_q
from zun.db.queries import node as node_q
from zun.network import docker_network
from zun.scheduler import claims, placement, scheduler

LOG = logging.getLogger(__name__)
C = models.Container

RESTARTED = (consts.RUNNING, consts.PAUSED, consts.RESTARTING)
LEFT = (consts.DELETING, consts.DELETED)


class HostIsUp(exception.Conflict):
    message = (
        "Host %(host)s is up: only a host that is down can be evacuated or purged. "
        "Force it down first (PUT /v1/services/force_down) if it is dead."
    )


@dataclass
class Outcome:
    uuid: str
    name: str | None
    result: str  # "evacuated", "rescheduled", "skipped", "failed"
    host: str | None = None
    reason: str | None = None

    def view(self) -> dict[str, Any]:
        return {
            "uuid": self.uuid,
            "name": self.name,
            "result": self.result,
            "host": self.host,
            "reason": self.reason,
        }


def require_down(host: str) -> str:
    with engine.transaction(readonly=True) as session:
        why = node_health.host_down(session, host)
    if why is None:
        raise HostIsUp(host=host)
    return why


def _rows(session: Session, host: str, uuids: Collection[str] | None) -> list[Any]:
    stmt = sa.select(C).where(C.host == host).order_by(C.id)
    if uuids:
        stmt = stmt.where(C.uuid.in_(list(uuids)))
    return list(session.scalars(stmt))


def _has_volumes(session: Session, uuid: str) -> bool:
    return (
        session.execute(
            sa.select(models.VolumeMapping.id)
            .where(models.VolumeMapping.container_uuid == uuid)
            .limit(1)
        ).first()
        is not None
    )


def _replay_request(session: Session, row: Any) -> dict[str, Any]:
    """The stored create request, or one rebuilt from the row (containers made before
    requests were stored): its networks from ``addresses``."""
    attempt = attempt_q.latest(session, row.uuid)
    if attempt is not None and attempt.request:
        request = dict(attempt.request)
    else:
        project_net = docker_network.project_network_name(row.project_id or "default")
        names = [n for n in (row.addresses or {}) if n != project_net]
        request = relocation.create_request(
            run=False,
            requested_networks=[{"network": n} for n in names],
            requested_volumes=[],
            is_admin=False,
        )
    request["run"] = row.status in RESTARTED
    return request


class _Changed(Exception):
    pass


def _evacuate_one(
    context: RequestContext, row: Any, host: str, why: str
) -> tuple[Outcome, relocation.Moved | None]:
    with engine.transaction() as session:
        current = session.scalars(sa.select(C).where(C.uuid == row.uuid)).first()
        if current is None or current.host != host:
            return Outcome(row.uuid, row.name, "skipped", reason="it moved meanwhile"), None
        if _has_volumes(session, row.uuid):
            return Outcome(
                row.uuid,
                row.name,
                "skipped",
                reason=(
                    f"its local volumes stay on host {host}: their data cannot move. Bring the "
                    "host back, or delete the container (force)"
                ),
            ), None
        request = _replay_request(session, current)
        try:
            target = scheduler.select_and_claim(
                session,
                relocation.sched_request(current, request),
                None,
                exclude={host},
                consumer=relocation.consumer_of(current),
            )
        except exception.NoValidHost:
            return Outcome(
                row.uuid, row.name, "failed", reason=scheduler.NO_VALID_HOST_REASON
            ), None
        won = (
            session.execute(
                sa.update(C)
                .where(C.uuid == row.uuid, C.host == host, C.status == current.status)
                .values(
                    host=target,
                    status=consts.CREATING,
                    task_state=consts.CONTAINER_CREATING,
                    status_reason=None,
                    status_detail=None,
                    container_id=None,
                    addresses=None,
                    websocket_token=None,
                )
            ).rowcount
            == 1
        )
        if not won:
            raise _Changed  # rolls the new claim back
        claims.release(
            session, host, *claims.container_resources(current.cpu, current.memory, current.disk)
        )
        action = action_q.start_action(session, context, row.uuid, "evacuate")
        attempt_q.record_failure(session, action.id, host, why)
        attempt_q.record(session, action.id, target, 1, request)
    replay = RequestContext(
        request_id=context.request_id,
        user_id=current.user_id,
        project_id=current.project_id,
        is_admin=bool(request.get("is_admin")),
        roles=["admin"] if request.get("is_admin") else [],
        overwrite=False,
    )
    return (
        Outcome(row.uuid, row.name, "evacuated", host=target),
        relocation.Moved(target, replay, request),
    )


def evacuate(
    context: RequestContext,
    host: str,
    uuids: Collection[str] | None = None,
    only_auto_heal: bool = False,
    rpcapi: Any = None,
) -> list[Outcome]:
    """Recreate the containers of the down ``host`` elsewhere; one outcome per container."""
    why = require_down(host)
    with engine.transaction(readonly=True) as session:
        rows = _rows(session, host, uuids)
    outcomes = []
    for row in rows:
        if only_auto_heal and not row.auto_heal:
            continue
        if row.container_type != consts.TYPE_CONTAINER or row.capsule_id is not None:
            outcomes.append(
                Outcome(
                    row.uuid,
                    row.name,
                    "skipped",
                    reason="capsules and their members are not evacuated",
                )
            )
            continue
        if row.status in LEFT:
            outcomes.append(Outcome(row.uuid, row.name, "skipped", reason=f"it is {row.status}"))
            continue
        if row.status == consts.CREATING:
            target = relocation.move(row.uuid, host, why, rpcapi=rpcapi)
            outcomes.append(
                Outcome(
                    row.uuid,
                    row.name,
                    "rescheduled" if target else "failed",
                    host=target,
                    reason=None if target else "its create could not move (see its status)",
                )
            )
            continue
        try:
            outcome, moved = _evacuate_one(context, row, host, why)
        except _Changed:
            outcome, moved = (
                Outcome(row.uuid, row.name, "skipped", reason="it changed meanwhile"),
                None,
            )
        except Exception as exc:  # noqa: BLE001 - one container's failure must not stop the rest
            LOG.exception("Evacuating container %s from %s failed", row.uuid, host)
            outcome, moved = Outcome(row.uuid, row.name, "failed", reason=str(exc)), None
        if moved is not None:
            LOG.warning("Evacuating container %s from %s to %s", row.uuid, host, moved.host)
            relocation.cast(row.uuid, moved, rpcapi)
        outcomes.append(outcome)
    return outcomes


def purge(host: str) -> list[str]:
    """Delete every container row of the down ``host`` and zero its claims; their UUIDs."""
    require_down(host)
    with engine.transaction() as session:
        rows = _rows(session, host, None)
        # Members before their capsules (foreign key), plain containers in any order.
        ordered = sorted(rows, key=lambda r: r.container_type == consts.TYPE_CAPSULE)
        for row in ordered:
            node_q.destroy_with_volume_records(session, row.uuid)
            if row.container_type in (consts.TYPE_CONTAINER, consts.TYPE_CAPSULE):
                placement.release_after_commit(session, row.uuid)
        session.execute(
            sa.update(models.ComputeNode)
            .where(models.ComputeNode.hostname == host)
            .values(cpu_used=0.0, mem_used=0, disk_used=0)
        )
    LOG.warning("Purged %d container(s) of down host %s", len(rows), host)
    return [row.uuid for row in rows]
