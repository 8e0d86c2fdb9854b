"""Console tokens: random, bound to one container (and exec), single-use, expiring.

The token handed to the user is a random string; the database only keeps a short SHA-256
digest of it with its expiry, so a database dump does not give console access. Attach tokens
live in ``container.websocket_token`` (up to :data:`MAX_ATTACH_ENTRIES` at a time, so several
consoles can be opened on one container), exec tokens in ``exec_instance.token`` (one per
exec: Docker starts an exec once).

A column holds space-separated entries ``<state><digest>.<expires>``: ``p`` pending, ``s``
spent; ``expires`` is a Unix time taken from the database's clock, so the API, the proxy and
the nodes agree on it whatever their own clocks say. Spending rewrites the column with one
conditional UPDATE (``WHERE token = <value read>``): of two proxies presenting the same token
only one changes a row; the other re-reads, finds the entry spent and is refused.

No schema change is needed: the two columns exist since Zun's head.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import secrets
import time

import sqlalchemy as sa
from sqlalchemy.orm import Session

from zun.conf import CONF
from zun.db import engine, models

DIGEST_CHARS = 32  # 128 bits of SHA-256: plenty against guessing, small enough for 5 per column
MAX_ATTACH_ENTRIES = 5  # 5 * 45 - 1 characters fit in container.websocket_token (255)
_CAS_TRIES = 8

PENDING = "p"
SPENT = "s"


class TokenRefused(Exception):
    """The token does not open a console; ``reason`` is safe to show to the client."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclasses.dataclass(frozen=True)
class Grant:
    """What a spent token entitles its bearer to: one console on this container (or exec)."""

    container_uuid: str
    container_db_id: int
    engine_id: str | None
    host: str | None
    status: str | None
    project_id: str | None
    user_id: str | None
    exec_id: str | None

    @property
    def kind(self) -> str:
        return "exec" if self.exec_id else "attach"


@dataclasses.dataclass
class _Entry:
    state: str
    digest: str
    expires: int

    def render(self) -> str:
        return f"{self.state}{self.digest}.{self.expires}"


def console_url(container_uuid: str, token: str, exec_id: str | None = None) -> str:
    """The URL python-zunclient parses: ``<[websocket_proxy]/base_url>?token=<t>&uuid=<c>``,
    plus ``&exec_id=<id>`` for an exec."""
    url = f"{CONF.websocket_proxy.base_url}?token={token}&uuid={container_uuid}"
    return f"{url}&exec_id={exec_id}" if exec_id else url


def ttl() -> int:
    return int(CONF.websocket_proxy.token_ttl)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()[:DIGEST_CHARS]


def _parse(value: str | None) -> list[_Entry]:
    entries = []
    for item in (value or "").split():
        # Anything else (e.g. a plain UUID left by Zun before an upgrade) is not a live token.
        state, _, rest = item[:1], None, item[1:]
        hexpart, dot, exp = rest.partition(".")
        if state in (PENDING, SPENT) and dot and len(hexpart) == DIGEST_CHARS and exp.isdigit():
            entries.append(_Entry(state, hexpart, int(exp)))
    return entries


def _render(entries: list[_Entry]) -> str | None:
    return " ".join(e.render() for e in entries) or None


def db_now(session: Session) -> int:
    """Unix time on the database server: one clock for every process."""
    dialect = session.get_bind().dialect.name
    if dialect == "sqlite":
        query = "SELECT CAST(strftime('%s','now') AS INTEGER)"
    elif dialect in ("mysql", "mariadb"):
        query = "SELECT UNIX_TIMESTAMP()"
    elif dialect == "postgresql":
        query = "SELECT CAST(EXTRACT(EPOCH FROM now()) AS BIGINT)"
    else:
        return int(time.time())
    return int(session.execute(sa.text(query)).scalar_one())


def _new_token() -> str:
    return secrets.token_urlsafe(32)  # URL-safe: goes into the query string as it is


def _container(session: Session, container_uuid: str) -> models.Container:
    row = session.scalars(
        sa.select(models.Container).where(models.Container.uuid == container_uuid)
    ).first()
    if row is None:
        raise TokenRefused(f"container {container_uuid} not found")
    return row


def _cas_container(session: Session, row_id: int, old: str | None, new: str | None) -> bool:
    col = models.Container.websocket_token
    cond = col.is_(None) if old is None else col == old
    result = session.execute(
        sa.update(models.Container)
        .where(models.Container.id == row_id, cond)
        .values(websocket_token=new)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1


def _cas_exec(session: Session, row_id: int, old: str | None, new: str | None) -> bool:
    col = models.ExecInstance.token
    cond = col.is_(None) if old is None else col == old
    result = session.execute(
        sa.update(models.ExecInstance)
        .where(models.ExecInstance.id == row_id, cond)
        .values(token=new)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1


def _prune(entries: list[_Entry], now: int, room_for: int) -> list[_Entry]:
    live = [e for e in entries if e.expires >= now]
    while len(live) + room_for > MAX_ATTACH_ENTRIES:
        # Forget spent entries first, then the oldest pending ones.
        spent = [e for e in live if e.state == SPENT]
        victim = spent[0] if spent else min(live, key=lambda e: e.expires)
        live.remove(victim)
    return live


@engine.retry_on_deadlock
def issue_attach_token(container_uuid: str, ttl_seconds: int | None = None) -> str:
    """A new attach token for the container, valid ``ttl_seconds`` (default ``token_ttl``)."""
    token = _new_token()
    lifetime = ttl_seconds if ttl_seconds is not None else ttl()
    for _ in range(_CAS_TRIES):
        with engine.transaction() as session:
            row = _container(session, container_uuid)
            now = db_now(session)
            old = row.websocket_token
            entries = _prune(_parse(old), now, 1)
            entries.append(_Entry(PENDING, digest(token), now + lifetime))
            if _cas_container(session, row.id, old, _render(entries)):
                return token
    raise RuntimeError(f"could not store a console token for container {container_uuid}")


@engine.retry_on_deadlock
def issue_exec_token(container_uuid: str, exec_id: str, ttl_seconds: int | None = None) -> str:
    """A new token for the exec (the exec_instance row is created when missing)."""
    token = _new_token()
    lifetime = ttl_seconds if ttl_seconds is not None else ttl()
    with engine.transaction() as session:
        container = _container(session, container_uuid)
        now = db_now(session)
        value = _Entry(PENDING, digest(token), now + lifetime).render()
        changed = session.execute(
            sa.update(models.ExecInstance)
            .where(
                models.ExecInstance.container_id == container.id,
                models.ExecInstance.exec_id == exec_id,
            )
            .values(token=value)
            .execution_options(synchronize_session=False)
        ).rowcount
        if not changed:
            session.add(
                models.ExecInstance(container_id=container.id, exec_id=exec_id, token=value)
            )
    return token


def _grant(row: models.Container, exec_id: str | None) -> Grant:
    return Grant(
        container_uuid=row.uuid or "",
        container_db_id=row.id,
        engine_id=row.container_id,
        host=row.host,
        status=row.status,
        project_id=row.project_id,
        user_id=row.user_id,
        exec_id=exec_id,
    )


def _spend(entries: list[_Entry], wanted: str, now: int, what: str) -> list[_Entry]:
    """``entries`` with the wanted one marked spent, or TokenRefused with the reason."""
    for entry in entries:
        if hmac.compare_digest(entry.digest, wanted):
            if entry.state == SPENT:
                raise TokenRefused(f"token already used for {what}")
            if entry.expires < now:
                raise TokenRefused(f"token expired for {what}")
            entry.state = SPENT
            return entries
    raise TokenRefused(f"invalid token for {what}")


@engine.retry_on_deadlock
def consume(container_uuid: str, token: str, exec_id: str | None = None) -> Grant:
    """Spend ``token`` on the container (or on its exec ``exec_id``); raises TokenRefused."""
    if not token:
        raise TokenRefused("no token given")
    wanted = digest(token)
    for _ in range(_CAS_TRIES):
        with engine.transaction() as session:
            row = _container(session, container_uuid)
            now = db_now(session)
            if exec_id is None:
                old = row.websocket_token
                what = f"container {container_uuid}"
                entries = _spend(_parse(old), wanted, now, what)
                if _cas_container(session, row.id, old, _render(entries)):
                    return _grant(row, None)
                continue
            exec_row = session.scalars(
                sa.select(models.ExecInstance).where(
                    models.ExecInstance.container_id == row.id,
                    models.ExecInstance.exec_id == exec_id,
                )
            ).first()
            if exec_row is None:
                raise TokenRefused(f"unknown exec {exec_id} for container {container_uuid}")
            old = exec_row.token
            entries = _spend(_parse(old), wanted, now, f"exec {exec_id}")
            if _cas_exec(session, exec_row.id, old, _render(entries)):
                return _grant(row, exec_id)
    raise TokenRefused("token is being used concurrently")
