"""Console tokens on SQLite, MariaDB and PostgreSQL: storage, expiry by the DB clock, and
single use under concurrency (one conditional UPDATE decides)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from zun.console import tokens
from zun.db import engine, migration, models


@pytest.fixture(params=["sqlite", "mariadb", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'zun.sqlite'}"
    else:
        make: Callable[[], str] = request.getfixturevalue(f"{request.param}_url")
        url = make()
    engine.set_engine(engine.create_engine(url))
    migration.upgrade("head", engine=engine.get_engine())
    yield request.param
    engine.dispose()


def _container(host: str = "node-a") -> str:
    container_uuid = str(uuid.uuid4())
    with engine.transaction() as session:
        session.add(
            models.Container(
                uuid=container_uuid,
                host=host,
                status="Running",
                container_id="e" * 64,
                project_id="p",
                user_id="u",
            )
        )
    return container_uuid


def _column(container_uuid: str) -> str | None:
    with engine.transaction(readonly=True) as session:
        return session.scalar(
            sa.select(models.Container.websocket_token).where(
                models.Container.uuid == container_uuid
            )
        )


def test_db_clock_is_unix_time(db: str) -> None:
    with engine.transaction(readonly=True) as session:
        assert abs(tokens.db_now(session) - time.time()) < 5


def test_only_a_digest_is_stored_and_the_token_is_single_use(db: str) -> None:
    cid = _container()
    token = tokens.issue_attach_token(cid)
    stored = _column(cid)
    assert stored and token not in stored and tokens.digest(token) in stored
    grant = tokens.consume(cid, token)
    assert (grant.container_uuid, grant.kind, grant.host) == (cid, "attach", "node-a")
    with pytest.raises(tokens.TokenRefused, match="^token already used for container"):
        tokens.consume(cid, token)


def test_expiry(db: str) -> None:
    cid = _container()
    short = tokens.issue_attach_token(cid, ttl_seconds=1)
    longer = tokens.issue_attach_token(cid, ttl_seconds=60)
    time.sleep(2.1)
    with pytest.raises(tokens.TokenRefused, match="^token expired for container"):
        tokens.consume(cid, short)
    assert tokens.consume(cid, longer).container_uuid == cid


def test_binding_to_container_and_exec(db: str) -> None:
    first, second = _container(), _container()
    token = tokens.issue_attach_token(first)
    with pytest.raises(tokens.TokenRefused, match=f"^invalid token for container {second}$"):
        tokens.consume(second, token)
    exec_token = tokens.issue_exec_token(first, "a" * 64)
    with pytest.raises(tokens.TokenRefused, match=f"^invalid token for container {first}$"):
        tokens.consume(first, exec_token)
    with pytest.raises(tokens.TokenRefused, match="^unknown exec b+ for container"):
        tokens.consume(first, exec_token, "b" * 64)
    with pytest.raises(tokens.TokenRefused, match="^unknown exec a+ for container"):
        tokens.consume(second, exec_token, "a" * 64)
    assert tokens.consume(first, exec_token, "a" * 64).exec_id == "a" * 64
    assert tokens.consume(first, token).exec_id is None
    with pytest.raises(tokens.TokenRefused, match="^container nope not found$"):
        tokens.consume("nope", token)


def test_several_pending_attach_tokens_and_eviction(db: str) -> None:
    cid = _container()
    issued = [tokens.issue_attach_token(cid) for _ in range(tokens.MAX_ATTACH_ENTRIES + 1)]
    assert len(_column(cid) or "") <= 255
    with pytest.raises(tokens.TokenRefused, match="^invalid token"):
        tokens.consume(cid, issued[0])  # the oldest made room for the newest
    for token in issued[1:]:
        tokens.consume(cid, token)


def test_a_token_left_by_zun_is_not_a_live_token(db: str) -> None:
    cid = _container()
    legacy = str(uuid.uuid4())
    with engine.transaction() as session:
        session.execute(
            sa.update(models.Container)
            .where(models.Container.uuid == cid)
            .values(websocket_token=legacy)
        )
    with pytest.raises(tokens.TokenRefused, match="^invalid token"):
        tokens.consume(cid, legacy)
    assert tokens.consume(cid, tokens.issue_attach_token(cid)).container_uuid == cid


@pytest.mark.parametrize("kind", ["attach", "exec"])
def test_concurrent_use_lets_exactly_one_in(db: str, kind: str) -> None:
    cid = _container()
    # Keep other attach tokens pending so the CAS has something to race on.
    for _ in range(3):
        tokens.issue_attach_token(cid)
    exec_id = "c" * 64 if kind == "exec" else None
    token = tokens.issue_exec_token(cid, exec_id) if exec_id else tokens.issue_attach_token(cid)
    barrier = threading.Barrier(8)
    outcomes: list[str] = []

    def use() -> None:
        barrier.wait()
        try:
            tokens.consume(cid, token, exec_id)
            outcomes.append("ok")
        except tokens.TokenRefused as exc:
            outcomes.append(exc.reason)

    threads = [threading.Thread(target=use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("ok") == 1, outcomes
    assert all(o == "ok" or o.startswith("token already used") for o in outcomes), outcomes
