"""The zun_service row a process keeps alive: created on first report, then refreshed.

A compute agent also reports whether its container engine answers. An engine that does not
disables the service with a reason starting with :data:`AUTO_PREFIX` (as Nova does when it
loses libvirt), which keeps the services API's shape: ``disabled`` + ``disabled_reason`` say
why the node takes no work. The heartbeat enables it again once the engine answers, and only
when the reason is its own: a service an operator disabled stays disabled.
"""

from __future__ import annotations

import datetime

import sqlalchemy as sa
from oslo_db import exception as db_exc

from zun.db import engine, models


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


AUTO_PREFIX = "AUTO: "
_REASON_LENGTH = 255
S = models.ZunService


def engine_down_reason(engine_error: str) -> str:
    return (AUTO_PREFIX + engine_error)[:_REASON_LENGTH]


def _engine_state(host: str, binary: str, engine_error: str | None) -> sa.Update:
    mine = sa.and_(S.host == host, S.binary == binary)
    automatic = S.disabled_reason.like(AUTO_PREFIX.strip() + "%")
    if engine_error is None:
        return (
            sa.update(S)
            .where(mine, S.disabled.is_(True), automatic)
            .values(disabled=False, disabled_reason=None)
        )
    return (
        sa.update(S)
        .where(mine, sa.or_(S.disabled.is_not(True), automatic))
        .values(disabled=True, disabled_reason=engine_down_reason(engine_error))
    )


@engine.retry_on_deadlock
def report_up(
    host: str,
    binary: str,
    availability_zone: str | None = None,
    *,
    engine_checked: bool = False,
    engine_error: str | None = None,
) -> None:
    """Record that ``binary`` on ``host`` is alive now (one UPDATE, an INSERT the first time).

    With ``engine_checked``, also record the engine's health: ``engine_error`` None enables
    a service the heartbeat had disabled, a reason disables it (see the module's doc).
    """
    now = _now()
    with engine.transaction() as session:
        changed = session.execute(
            sa.update(S)
            .where(S.host == host, S.binary == binary)
            .values(last_seen_up=now, updated_at=now, report_count=S.report_count + 1)
        ).rowcount
        if changed and engine_checked:
            session.execute(_engine_state(host, binary, engine_error))
    if changed:
        return
    try:
        with engine.transaction() as session:
            session.add(
                models.ZunService(
                    host=host,
                    binary=binary,
                    report_count=1,
                    disabled=engine_error is not None,
                    disabled_reason=(
                        engine_down_reason(engine_error) if engine_error is not None else None
                    ),
                    forced_down=False,
                    last_seen_up=now,
                    availability_zone=availability_zone,
                )
            )
    except db_exc.DBDuplicateEntry:
        # Another process of the same host registered first; the next beat updates it.
        pass
