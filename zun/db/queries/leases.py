"""Named leases with an expiry (table ``zun_lease``): one holder at a time, across processes
and hosts sharing the database.

:func:`hold` takes a lease that is free or expired, or renews it for its holder, in ONE
conditional UPDATE (an INSERT the first time the lease is ever taken; the primary key lets one
of two racing inserts win). A holder that dies keeps the lease until it expires. Expiry is
compared with the clock of the process asking, as service liveness is: API hosts need clocks
that agree within a fraction of the lease's time.
"""

from __future__ import annotations

import datetime

import sqlalchemy as sa
from oslo_db import exception as db_exc

from zun.db import engine, models

L = models.Lease


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def hold(name: str, holder: str, seconds: float) -> bool:
    """Take or renew ``name`` for ``holder`` for ``seconds``; False when another holds it."""
    now = _now()
    until = now + datetime.timedelta(seconds=seconds)
    with engine.transaction() as session:
        won = (
            session.execute(
                sa.update(L)
                .where(
                    L.name == name,
                    sa.or_(
                        L.holder == holder,
                        L.holder.is_(None),
                        L.expires_at.is_(None),
                        L.expires_at < now,
                    ),
                )
                .values(holder=holder, expires_at=until)
            ).rowcount
            == 1
        )
        if won:
            return True
        exists = session.execute(sa.select(L.name).where(L.name == name)).first()
    if exists is not None:
        return False
    try:
        with engine.transaction() as session:
            session.execute(sa.insert(L).values(name=name, holder=holder, expires_at=until))
    except db_exc.DBDuplicateEntry:
        return False  # another process took it first
    return True


def release(name: str, holder: str) -> bool:
    """Give ``name`` up if ``holder`` holds it (another process may take it at once)."""
    with engine.transaction() as session:
        return (
            session.execute(
                sa.update(L)
                .where(L.name == name, L.holder == holder)
                .values(holder=None, expires_at=None)
            ).rowcount
            == 1
        )


def holder_of(name: str) -> tuple[str | None, datetime.datetime | None]:
    with engine.transaction(readonly=True) as session:
        row = session.execute(sa.select(L.holder, L.expires_at).where(L.name == name)).first()
    return (row.holder, row.expires_at) if row is not None else (None, None)
