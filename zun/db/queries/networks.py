"""Statements on ``network``: Zun's record of a (Neutron or embedded) network on a host."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_utils import uuidutils
from sqlalchemy.orm import Session

from zun.common import exception
from zun.db import models

N = models.Network


def by_neutron_id(session: Session, neutron_net_id: str) -> list[models.Network]:
    """Every project's rows for a network ID, oldest first (one per host)."""
    stmt = sa.select(N).where(N.neutron_net_id == neutron_net_id).order_by(N.id)
    return list(session.scalars(stmt))


def on_host(session: Session, neutron_net_id: str, host: str) -> models.Network | None:
    """The row of a network on one host (the table keeps one per network and host)."""
    stmt = sa.select(N).where(N.neutron_net_id == neutron_net_id, N.host == host)
    return session.scalars(stmt).first()


def by_uuid(session: Session, uuid: str) -> models.Network | None:
    return session.scalars(sa.select(N).where(N.uuid == uuid)).first()


def set_network_id(session: Session, row_id: int, network_id: str) -> int:
    """Record the Docker network a row stands for."""
    stmt = sa.update(N).where(N.id == row_id).values(network_id=network_id)
    return session.execute(stmt).rowcount


def create(session: Session, values: Mapping[str, Any]) -> models.Network:
    row = N(**values)
    if not row.uuid:
        row.uuid = uuidutils.generate_uuid()
    session.add(row)
    try:
        session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.NetworkAlreadyExists(
            field="neutron_net_id", value=row.neutron_net_id
        ) from None
    return row


def delete(session: Session, row_id: int) -> int:
    return session.execute(sa.delete(N).where(N.id == row_id)).rowcount
