"""The zun_service row a process keeps alive: created on first report, then refreshed."""

from __future__ import annotations

import datetime

import sqlalchemy as sa
from oslo_db import exception as db_exc

from zun.db import engine, models


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


@engine.retry_on_deadlock
def report_up(host: str, binary: str, availability_zone: str | None = None) -> None:
    """Record that ``binary`` on ``host`` is alive now (one UPDATE, an INSERT the first time)."""
    now = _now()
    with engine.transaction() as session:
        changed = session.execute(
            sa.update(models.ZunService)
            .where(models.ZunService.host == host, models.ZunService.binary == binary)
            .values(
                last_seen_up=now, updated_at=now, report_count=models.ZunService.report_count + 1
            )
        ).rowcount
    if changed:
        return
    try:
        with engine.transaction() as session:
            session.add(
                models.ZunService(
                    host=host,
                    binary=binary,
                    report_count=1,
                    disabled=False,
                    forced_down=False,
                    last_seen_up=now,
                    availability_zone=availability_zone,
                )
            )
    except db_exc.DBDuplicateEntry:
        # Another process of the same host registered first; the next beat updates it.
        pass
