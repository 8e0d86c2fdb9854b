"""Which compute hosts cannot vouch for their containers right now, and why.

A host is *unhealthy* when its ``zun-compute`` service is down (no heartbeat within
``[DEFAULT]/service_down_time``, or forced down), or when its heartbeat reported that the
container engine does not answer (the service disabled with an ``AUTO:`` reason). The
containers of such a host read ``Unknown`` with a reason naming the host. That status is
derived when a container is read, never stored: the real status stays in the row and shows
again as soon as the host is back.

Hosts without a service row are left alone (nothing is known about them; tests and
half-registered nodes have such rows).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.orm import Session

from zun.common import consts
from zun.db import engine, models
from zun.db.queries import compute_nodes, host_health
from zun.db.queries.service_heartbeat import AUTO_PREFIX

S = models.ZunService

# Statuses whose truth lives in the host's engine: those turn Unknown (see host_health).
ENGINE_STATUSES = host_health.ENGINE_STATUSES


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def down_reason(
    host: str,
    seen: datetime.datetime | None,
    forced_down: bool | None,
    now: datetime.datetime | None = None,
) -> str:
    if forced_down:
        return f"Host {host} is forced down: the state of its containers is not known."
    if seen is None:
        return f"Host {host} has never reported: the state of its containers is not known."
    age = int(((now or _now()) - seen).total_seconds())
    return (
        f"Host {host} is down: its zun-compute service has not reported for {age} s, so "
        "the state of its containers is not known."
    )


def engine_reason(host: str, disabled_reason: str) -> str:
    detail = (
        disabled_reason[len(AUTO_PREFIX) :]
        if disabled_reason.startswith(AUTO_PREFIX)
        else disabled_reason
    )
    return (
        f"Host {host} cannot reach its container engine ({detail}): the state of its "
        "containers is not known."
    )


def unhealthy_hosts(session: Session, hosts: set[str] | None = None) -> dict[str, str]:
    """``{host: reason}`` for every unhealthy compute host (or only those in ``hosts``)."""
    stmt = sa.select(
        S.host,
        S.last_seen_up,
        S.updated_at,
        S.created_at,
        S.forced_down,
        S.disabled,
        S.disabled_reason,
    ).where(S.binary == compute_nodes.COMPUTE_BINARY)
    if hosts is not None:
        if not hosts:
            return {}
        stmt = stmt.where(S.host.in_(sorted(hosts)))
    now = _now()
    found: dict[str, str] = {}
    for row in session.execute(stmt):
        reason = _unhealthy_reason(row, now)
        if reason is not None:
            found[row.host] = reason
    return found


def _unhealthy_reason(row: Any, now: datetime.datetime) -> str | None:
    seen = row.last_seen_up or row.updated_at or row.created_at
    if not compute_nodes.service_is_up(
        row.last_seen_up, row.updated_at, row.created_at, row.forced_down, now
    ):
        return down_reason(row.host, seen, row.forced_down, now)
    if row.disabled and (row.disabled_reason or "").startswith(AUTO_PREFIX.strip()):
        return engine_reason(row.host, row.disabled_reason or "")
    return None


class _Service(NamedTuple):
    """A compute service row's health columns (container_q.SERVICE_KEYS' order)."""

    host: str
    last_seen_up: datetime.datetime | None
    updated_at: datetime.datetime | None
    created_at: datetime.datetime | None
    forced_down: bool | None
    disabled: bool | None
    disabled_reason: str | None


def service_health(service: tuple[Any, ...] | None) -> tuple[bool, str | None]:
    """``(service up, reason it is unhealthy or None)`` of a host, from its compute service
    row read already (``container_q.SERVICE_KEYS`` columns, joined to a container's row).
    A host with no service row (None) is not up and not unhealthy (see the module's note)."""
    if service is None:
        return False, None
    row = _Service(*service)
    now = _now()
    up = compute_nodes.service_is_up(
        row.last_seen_up, row.updated_at, row.created_at, row.forced_down, now
    )
    return up, _unhealthy_reason(row, now)


def host_down(session: Session, host: str) -> str | None:
    """Why ``host``'s service is down (not merely engine-less), or None when it is up."""
    row = session.execute(
        sa.select(S.last_seen_up, S.updated_at, S.created_at, S.forced_down)
        .where(S.host == host, S.binary == compute_nodes.COMPUTE_BINARY)
        .limit(1)
    ).first()
    if row is None:
        return f"Host {host} has no zun-compute service."
    if compute_nodes.service_is_up(
        row.last_seen_up, row.updated_at, row.created_at, row.forced_down
    ):
        return None
    return down_reason(host, row.last_seen_up or row.updated_at or row.created_at, row.forced_down)


def read_unhealthy(hosts: set[str] | None = None) -> dict[str, str]:
    with engine.transaction(readonly=True) as session:
        return unhealthy_hosts(session, hosts)


def overlay(
    host_of: Callable[[Any], str | None],
    status_of: Callable[[Any], str | None],
    unhealthy: Mapping[str, str],
) -> Callable[[Any, dict[str, Any]], dict[str, Any]]:
    """A function that turns a rendered view of a row on an unhealthy host into Unknown."""

    def apply(row: Any, view: dict[str, Any]) -> dict[str, Any]:
        if not unhealthy:
            return view
        host = host_of(row)
        if host in unhealthy and status_of(row) in ENGINE_STATUSES:
            if "status" in view:
                view["status"] = consts.UNKNOWN
            if "status_reason" in view:
                view["status_reason"] = unhealthy[host]
            if "status_detail" in view:
                view["status_detail"] = None
        return view

    return apply
