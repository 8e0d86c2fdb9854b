"""Statements on ``quotas``, ``quota_classes``, ``quota_usages`` and the usage of ``container``.

Zun's quota tables have no unique key on (project or class, resource), and ``quota_usages``
has no primary key at all. So that concurrent writers can never make a value ambiguous:

* limit rows are written as "update every matching row, insert when none matched", and read
  as "the newest row (highest id) wins";
* the per-project lock row of ``quota_usages`` is created under a database-wide lock (a named
  lock on MariaDB/MySQL, an advisory lock on PostgreSQL, the single writer on SQLite), so there
  is exactly one per project; it is then locked with ``SELECT ... FOR UPDATE``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import sqlalchemy as sa
from oslo_utils import timeutils
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from zun.common import exception
from zun.db import models

Q = models.Quota.__table__
QC = models.QuotaClass.__table__
QU = models.QuotaUsage.__table__
C = models.Container

# quota_usages rows carry this resource name; they serialise quota checks of one project.
LOCK_RESOURCE = "containers"
# Name of the database lock that serialises the creation of lock rows (all projects).
_CREATE_LOCK = "zun-quota-usages-create"
_NAMED_LOCK_TIMEOUT = 30


# --- limits -------------------------------------------------------------------------------


def _newest_wins(rows: Iterable[Any]) -> dict[str, int | None]:
    limits: dict[str, int | None] = {}
    for resource, hard_limit in rows:  # ordered by id: later rows overwrite earlier ones
        limits[resource] = hard_limit
    return limits


def project_limits(session: Session, project_id: str) -> dict[str, int | None]:
    """The project's own limit rows: ``{resource: hard_limit}``."""
    stmt = sa.select(Q.c.resource, Q.c.hard_limit).where(Q.c.project_id == project_id)
    return _newest_wins(session.execute(stmt.order_by(Q.c.id)))


def class_limits(session: Session, class_name: str) -> dict[str, int | None]:
    """A quota class's limit rows: ``{resource: hard_limit}``."""
    stmt = sa.select(QC.c.resource, QC.c.hard_limit).where(QC.c.class_name == class_name)
    return _newest_wins(session.execute(stmt.order_by(QC.c.id)))


def _upsert(
    session: Session, table: sa.Table, key: Mapping[str, Any], resource: str, hard_limit: int
) -> None:
    where = [table.c[name] == value for name, value in key.items()]
    where.append(table.c.resource == resource)
    now = timeutils.utcnow()
    updated = session.execute(
        sa.update(table).where(*where).values(hard_limit=hard_limit, updated_at=now)
    ).rowcount
    if not updated:
        session.execute(
            sa.insert(table).values(**key, resource=resource, hard_limit=hard_limit, created_at=now)
        )


def set_project_limits(session: Session, project_id: str, limits: Mapping[str, int]) -> None:
    for resource, value in limits.items():
        _upsert(session, Q, {"project_id": project_id}, resource, value)


def set_class_limits(session: Session, class_name: str, limits: Mapping[str, int]) -> None:
    for resource, value in limits.items():
        _upsert(session, QC, {"class_name": class_name}, resource, value)


def delete_project_limits(session: Session, project_id: str) -> int:
    return session.execute(sa.delete(Q).where(Q.c.project_id == project_id)).rowcount


# --- usage --------------------------------------------------------------------------------


def _memory_mb(value: Any) -> int:
    # Stored as a string of MiB ("512"); Zun's older rows may carry a unit suffix.
    if value in (None, ""):
        return 0
    try:
        return int(float(str(value).strip().rstrip("mM")))
    except ValueError:
        return 0


def project_usage(session: Session, project_id: str, *, locking: bool = False) -> dict[str, float]:
    """What the project's plain containers (not capsules, not capsule members) hold now.

    ``locking``: read the rows with a shared lock. On MariaDB/MySQL this is what makes the read
    see the latest committed rows even when the transaction's snapshot is older (InnoDB's
    repeatable read); PostgreSQL (read committed) and SQLite (single writer) see them anyway.
    """
    stmt = (
        sa.select(C.cpu, C.memory, C.disk)
        .where(C.project_id == project_id)
        .where(sa.or_(C.container_type == 0, C.container_type.is_(None)))
    )
    if locking and session.get_bind().dialect.name == "mysql":
        stmt = stmt.with_for_update(read=True)
    containers, cpu, memory, disk = 0, 0.0, 0, 0
    for row_cpu, row_memory, row_disk in session.execute(stmt):
        containers += 1
        cpu += float(row_cpu or 0)
        memory += _memory_mb(row_memory)
        disk += int(row_disk or 0)
    return {"containers": containers, "cpu": round(cpu, 3), "memory": memory, "disk": disk}


# --- the per-project lock row -------------------------------------------------------------


def _lock_rows_stmt(project_id: str) -> sa.Select[Any]:
    return (
        sa.select(QU.c.id)
        .where(QU.c.project_id == project_id, QU.c.resource == LOCK_RESOURCE)
        .order_by(QU.c.id)
    )


def lock_project(session: Session, project_id: str) -> None:
    """Hold the project's quota lock until ``session``'s transaction ends.

    Creates the lock row on first use. Every row matching the project is locked (there is
    exactly one unless an older tool wrote more; locking them all keeps that case safe).
    """
    dialect = session.get_bind().dialect.name
    if dialect == "sqlite":
        # One writer at a time (BEGIN IMMEDIATE): nothing can race with this transaction.
        if session.execute(_lock_rows_stmt(project_id).limit(1)).first() is None:
            _insert_lock_row(session.connection(), project_id)
        return
    # A plain read first: a locking read of a missing row would take a gap lock on MariaDB that
    # the creating connection below would then wait for.
    if session.execute(_lock_rows_stmt(project_id).limit(1)).first() is None:
        create_lock_row(session.get_bind(), project_id)
    rows = session.execute(_lock_rows_stmt(project_id).with_for_update()).all()
    if not rows:  # pragma: no cover - the row was committed above and is never deleted
        raise exception.ZunException(message=f"Quota lock of project {project_id} is missing.")


def _insert_lock_row(conn: Connection, project_id: str) -> None:
    next_id = conn.execute(sa.select(sa.func.coalesce(sa.func.max(QU.c.id), 0) + 1)).scalar_one()
    conn.execute(
        sa.insert(QU).values(
            id=next_id,
            project_id=project_id,
            resource=LOCK_RESOURCE,
            in_use=0,
            reserved=0,
            created_at=timeutils.utcnow(),
        )
    )


def create_lock_row(bind: Any, project_id: str) -> None:
    """Create the project's lock row in its own committed transaction, if it is missing.

    Creations are serialised database-wide, so two API workers can never both insert one (and
    ids stay unique in a table without a primary key). Idempotent.
    """
    engine = bind.engine if hasattr(bind, "engine") else bind
    dialect = engine.dialect.name
    with engine.connect() as conn:
        if dialect == "mysql":
            got = conn.execute(
                sa.text("SELECT GET_LOCK(:n, :t)"), {"n": _CREATE_LOCK, "t": _NAMED_LOCK_TIMEOUT}
            ).scalar()
            conn.commit()
            if got != 1:
                raise exception.ZunException(
                    message="Timed out waiting to create a quota lock row."
                )
            try:
                _create_if_missing(conn, project_id)
            finally:
                conn.execute(sa.text("SELECT RELEASE_LOCK(:n)"), {"n": _CREATE_LOCK})
                conn.commit()
        else:
            if dialect == "postgresql":
                key = int.from_bytes(
                    hashlib.sha1(_CREATE_LOCK.encode()).digest()[:8], "big", signed=True
                )
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})
            _create_if_missing(conn, project_id)


def _create_if_missing(conn: Connection, project_id: str) -> None:
    try:
        if conn.execute(_lock_rows_stmt(project_id).limit(1)).first() is None:
            _insert_lock_row(conn, project_id)
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
