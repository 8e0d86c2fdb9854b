"""Host health as SQL conditions: the rule of :mod:`zun.compute.node_health`, inside a query.

A list filtered by ``?status=`` must agree with what the list shows, and the list shows
``Unknown`` for the containers of an unhealthy host (derived at read time, never stored).
The condition is an EXISTS on the host's service row, found through its unique
``(host, binary)`` key: one index probe per row, no query per row, and the plain list
(no status filter) does not pay for it at all.
"""

from __future__ import annotations

import datetime
from typing import Any

import sqlalchemy as sa

from zun.common import consts
from zun.db import models
from zun.db.queries import compute_nodes
from zun.db.queries.service_heartbeat import AUTO_PREFIX

S = models.ZunService

# Statuses whose truth lives in the host's engine: those read Unknown when the host is
# unhealthy. Creating (moved by the node monitor), Deleting/Deleted (a forced delete needs no
# host) and Error (a stored outcome) keep their stored value.
ENGINE_STATUSES = frozenset(
    {
        consts.CREATED,
        consts.RUNNING,
        consts.STOPPED,
        consts.PAUSED,
        consts.RESTARTING,
        consts.REBUILDING,
        consts.DEAD,
    }
)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def unhealthy_condition(host: Any, now: datetime.datetime | None = None) -> Any:
    """SQL: the compute service of ``host`` (a column) is down (no heartbeat within
    ``service_down_time``, never reported, forced down) or engine-less (disabled ``AUTO:``).
    A host without a service row is not unhealthy (as in node_health)."""
    cutoff = (now or _now()) - datetime.timedelta(seconds=compute_nodes.service_down_time())
    seen = sa.func.coalesce(S.last_seen_up, S.updated_at, S.created_at)
    return sa.exists().where(
        S.host == host,
        S.binary == compute_nodes.COMPUTE_BINARY,
        sa.or_(
            S.forced_down.is_(True),
            seen.is_(None),
            seen < sa.literal(cutoff, sa.DateTime()),
            sa.and_(S.disabled.is_(True), S.disabled_reason.like(AUTO_PREFIX.strip() + "%")),
        ),
    )


def status_condition(status_col: Any, host_col: Any, status: str) -> Any:
    """SQL: the status a read shows is ``status``, ``Unknown`` derived as a read derives it."""
    engine_statuses = sorted(ENGINE_STATUSES)
    if status == consts.UNKNOWN:
        return sa.or_(
            status_col == status,
            sa.and_(status_col.in_(engine_statuses), unhealthy_condition(host_col)),
        )
    if status in ENGINE_STATUSES:
        return sa.and_(status_col == status, ~unhealthy_condition(host_col))
    return status_col == status
