"""Compute nodes as the scheduler and the API see them: each with its zun-compute service.

A node is usable when its ``zun-compute`` service row is enabled, not forced down and has
reported within ``[DEFAULT]/service_down_time`` seconds. One query reads the nodes with their
services (a LEFT JOIN: a node whose service never registered is simply "down").
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from zun.conf import CONF
from zun.db import models

COMPUTE_BINARY = "zun-compute"
N = models.ComputeNode
S = models.ZunService


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def service_down_time() -> int:
    return int(CONF.service_down_time)


def service_is_up(
    last_seen_up: datetime.datetime | None,
    updated_at: datetime.datetime | None,
    created_at: datetime.datetime | None,
    forced_down: bool | None,
    now: datetime.datetime | None = None,
) -> bool:
    """Zun's rule: the newest of the heartbeat times is within ``service_down_time``."""
    if forced_down:
        return False
    seen = last_seen_up or updated_at or created_at
    if seen is None:
        return False
    return ((now or _now()) - seen).total_seconds() <= service_down_time()


@dataclass(frozen=True)
class NodeState:
    """A node and its service, as the scheduler filters read them."""

    hostname: str
    uuid: str
    cpus: int
    cpu_used: float
    mem_total: int
    mem_used: int
    disk_total: int
    disk_used: int
    runtimes: list[str] | None
    labels: dict[str, Any] | None
    service_up: bool
    service_disabled: bool
    availability_zone: str | None
    # The node's own inventory settings (NULL: not reported; see zun.scheduler.inventory).
    cpu_allocation_ratio: float | None = None
    ram_allocation_ratio: float | None = None
    disk_allocation_ratio: float | None = None
    reserved_host_cpus: int | None = None
    reserved_host_memory_mb: int | None = None
    reserved_host_disk_mb: int | None = None
    enable_cpu_pinning: bool = False
    disk_quota_supported: bool = False


_INVENTORY_COLUMNS = (
    "cpu_allocation_ratio",
    "ram_allocation_ratio",
    "disk_allocation_ratio",
    "reserved_host_cpus",
    "reserved_host_memory_mb",
    "reserved_host_disk_mb",
    "enable_cpu_pinning",
    "disk_quota_supported",
)


def list_node_states(session: Session) -> list[NodeState]:
    """Every compute node with the state of its zun-compute service, in hostname order."""
    stmt = (
        sa.select(
            N.hostname,
            N.uuid,
            N.cpus,
            N.cpu_used,
            N.mem_total,
            N.mem_used,
            N.disk_total,
            N.disk_used,
            N.runtimes,
            N.labels,
            *[getattr(N, name) for name in _INVENTORY_COLUMNS],
            S.last_seen_up,
            S.updated_at,
            S.created_at,
            S.forced_down,
            S.disabled,
            S.availability_zone,
            S.id.label("service_id"),
        )
        .select_from(N)
        .outerjoin(S, sa.and_(S.host == N.hostname, S.binary == COMPUTE_BINARY))
        .order_by(N.hostname)
    )
    now = _now()
    states = []
    for row in session.execute(stmt):
        up = row.service_id is not None and service_is_up(
            row.last_seen_up, row.updated_at, row.created_at, row.forced_down, now
        )
        states.append(
            NodeState(
                hostname=row.hostname,
                uuid=row.uuid,
                cpus=row.cpus or 0,
                cpu_used=row.cpu_used or 0.0,
                mem_total=row.mem_total or 0,
                mem_used=row.mem_used or 0,
                disk_total=row.disk_total or 0,
                disk_used=row.disk_used or 0,
                runtimes=row.runtimes,
                labels=row.labels,
                service_up=up,
                service_disabled=bool(row.disabled),
                availability_zone=row.availability_zone,
                **{name: getattr(row, name) for name in _INVENTORY_COLUMNS},
            )
        )
    return states


def hostname_exists(session: Session, hostname: str) -> bool:
    return (
        session.execute(sa.select(N.uuid).where(N.hostname == hostname).limit(1)).first()
        is not None
    )


# Built once: every show of a container asks this, and building a statement costs more than
# running it.
_SERVICE_UP = (
    sa.select(S.last_seen_up, S.updated_at, S.created_at, S.forced_down)
    .where(S.host == sa.bindparam("host"), S.binary == COMPUTE_BINARY)
    .limit(1)
)


def has_compute_service(session: Session, host: str) -> bool:
    """Whether ``host`` has a zun-compute service row at all (up, down or forced down)."""
    return session.connection().execute(_SERVICE_UP, {"host": host}).first() is not None


def compute_service_up(session: Session, host: str) -> bool:
    """Whether ``host``'s zun-compute service is up (a host with no service row is not)."""
    row = session.connection().execute(_SERVICE_UP, {"host": host}).first()
    if row is None:
        return False
    return service_is_up(row.last_seen_up, row.updated_at, row.created_at, row.forced_down)
