"""Queries on ``zun_service``: the services list, lookups by (host, binary), admin updates."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from zun.common import exception
from zun.db import engine
from zun.db.models import ZunService


def select_services() -> sa.Select[Any]:
    return sa.select(ZunService).order_by(ZunService.id)


def list_services() -> list[ZunService]:
    """Every service row, by id (the services list has no pagination)."""
    with engine.transaction(readonly=True) as session:
        return list(session.scalars(select_services()))


def _by_host_binary(session: Any, host: str, binary: str) -> ZunService:
    row = session.scalars(
        sa.select(ZunService).where(ZunService.host == host, ZunService.binary == binary)
    ).first()
    if row is None:
        raise exception.ZunServiceNotFound(host=host, binary=binary)
    return row


@engine.retry_on_deadlock
def update_service(host: str, binary: str, values: dict[str, Any]) -> ZunService:
    """Set ``values`` on the service; 404 ``zun-service-not-found`` when there is none."""
    with engine.transaction() as session:
        row = _by_host_binary(session, host, binary)
        for key, value in values.items():
            setattr(row, key, value)
        session.flush()
        return row


@engine.retry_on_deadlock
def delete_service(host: str, binary: str) -> None:
    with engine.transaction() as session:
        session.delete(_by_host_binary(session, host, binary))


def availability_zones(descending: bool = False) -> list[str | None]:
    """Distinct ``availability_zone`` values of every service, null kept, sorted."""
    column = ZunService.availability_zone
    order = [
        column.is_(None).desc() if not descending else column.is_(None).asc(),
        column.desc() if descending else column.asc(),
    ]
    with engine.transaction(readonly=True) as session:
        return list(session.scalars(sa.select(column).distinct().order_by(*order)))
