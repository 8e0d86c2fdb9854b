"""Engine and sessions on SQLite, the embedded mode's database (a real file, real threads)."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from oslo_config import cfg
from oslo_db import exception as db_exc

from zun.db import engine as db_engine
from zun.db import migration, models


@pytest.fixture
def db_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "zun.sqlite"
    db_engine.set_engine(db_engine.create_engine(f"sqlite:///{path}"))
    migration.upgrade("head")
    yield path
    db_engine.dispose()


def test_configure_uses_the_default_when_no_connection_is_set(tmp_path: Path) -> None:
    conf = cfg.ConfigOpts()
    conf([], default_config_files=[])
    path = tmp_path / "embedded.sqlite"
    try:
        engine = db_engine.configure(default_connection=f"sqlite:///{path}", conf=conf)
        assert db_engine.get_engine() is engine
        assert engine.url.database == str(path)
        other = tmp_path / "configured.sqlite"
        conf.set_override("connection", f"sqlite:///{other}", group="database")
        assert db_engine.configure(f"sqlite:///{path}", conf=conf).url.database == str(other)
    finally:
        db_engine.dispose()


def test_no_connection_at_all_is_a_clear_error() -> None:
    conf = cfg.ConfigOpts()
    conf([], default_config_files=[])
    with pytest.raises(RuntimeError, match=r"\[database\]/connection"):
        db_engine.connection_url(conf=conf)


def test_sqlite_connections_use_wal_foreign_keys_and_a_busy_timeout(db_file: Path) -> None:
    with db_engine.get_engine().connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert (
            conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == db_engine.SQLITE_BUSY_TIMEOUT_MS
        )


def test_transaction_commits_and_rolls_back(db_file: Path) -> None:
    with db_engine.transaction() as session:
        session.add(models.Container(uuid="kept"))
    with pytest.raises(ZeroDivisionError):
        with db_engine.transaction() as session:
            session.add(models.Container(uuid="dropped"))
            session.flush()
            1 / 0  # noqa: B018 - any error in the block must roll back

    with db_engine.transaction(readonly=True) as session:
        uuids = session.scalars(sa.select(models.Container.uuid)).all()
        session.add(models.Container(uuid="never-committed"))
        session.flush()
    with db_engine.transaction(readonly=True) as session:
        after = session.scalars(sa.select(models.Container.uuid)).all()
    assert uuids == ["kept"] and after == ["kept"]


def test_objects_stay_readable_after_the_transaction(db_file: Path) -> None:
    with db_engine.transaction() as session:
        ctr = models.Container(uuid="c1", labels={"a": "b"})
        session.add(ctr)
    assert ctr.id is not None and ctr.labels == {"a": "b"} and ctr.created_at is not None


def test_threads_writing_at_once_all_succeed(db_file: Path) -> None:
    # Read-modify-write from several threads: with a deferred BEGIN, SQLite would fail some of
    # these at once with "database is locked"; write transactions must queue instead.
    with db_engine.transaction() as session:
        session.add(models.ZunService(host="h", binary="b", report_count=0))
    threads_n, rounds = 6, 15
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(rounds):
                with db_engine.transaction() as session:
                    svc = session.scalars(sa.select(models.ZunService)).one()
                    svc.report_count = svc.report_count + 1
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(threads_n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)

    assert errors == []
    with db_engine.transaction(readonly=True) as session:
        assert session.scalars(sa.select(models.ZunService.report_count)).one() == (
            threads_n * rounds
        )


def test_readers_are_not_blocked_by_a_writer(db_file: Path) -> None:
    with db_engine.transaction() as session:
        session.add(models.Container(uuid="c1"))
    holder = sqlite3.connect(db_file, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
    try:
        started = time.monotonic()
        with db_engine.transaction(readonly=True) as session:
            assert session.scalars(sa.select(models.Container.uuid)).all() == ["c1"]
        assert time.monotonic() - started < 2
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_locked_database_is_retried(db_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A short busy timeout so that the first try gives up while the lock is still held.
    monkeypatch.setattr(db_engine, "SQLITE_BUSY_TIMEOUT_MS", 100)
    db_engine.set_engine(db_engine.create_engine(f"sqlite:///{db_file}"))
    holder = sqlite3.connect(db_file, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    releaser = threading.Timer(0.4, lambda: holder.execute("ROLLBACK"))
    releaser.start()
    tries = []

    @db_engine.retry_on_deadlock
    def insert() -> None:
        tries.append(1)
        with db_engine.transaction() as session:
            session.add(models.Container(uuid="late"))

    try:
        insert()
    finally:
        releaser.join()
        holder.close()

    assert len(tries) >= 2
    with db_engine.transaction(readonly=True) as session:
        assert session.scalars(sa.select(models.Container.uuid)).all() == ["late"]


def test_other_errors_are_not_retried(db_file: Path) -> None:
    tries = []

    @db_engine.retry_on_deadlock
    def insert_twice() -> None:
        tries.append(1)
        with db_engine.transaction() as session:
            session.add_all([models.Container(uuid="dup"), models.Container(uuid="dup")])

    with pytest.raises(db_exc.DBDuplicateEntry):
        insert_twice()
    assert len(tries) == 1


def test_sqlite_file_connections_are_pooled(db_file: Path) -> None:
    # oslo.db would hand out a new connection (file open, pragmas, schema parse) each time.
    engine = db_engine.get_engine()
    assert isinstance(engine.pool, sa.pool.QueuePool)
    seen = set()
    for _ in range(3):
        with db_engine.transaction(readonly=True) as session:
            seen.add(id(session.connection().connection.dbapi_connection))
    assert len(seen) == 1


def test_writers_of_one_process_queue_in_order_of_the_lock(db_file: Path) -> None:
    # The second writer waits on the in-process lock, not in SQLite's busy handler, and goes
    # on as soon as the first commits.
    order: list[str] = []
    first_in = threading.Event()
    release = threading.Event()

    def first() -> None:
        with db_engine.transaction() as session:
            session.add(models.Container(uuid="first"))
            session.flush()
            first_in.set()
            release.wait(10)
            order.append("first")

    def second() -> None:
        with db_engine.transaction() as session:
            order.append("second")
            session.add(models.Container(uuid="second"))

    a = threading.Thread(target=first)
    a.start()
    assert first_in.wait(10)
    b = threading.Thread(target=second)
    b.start()
    b.join(0.3)
    assert b.is_alive() and order == []  # queued behind the first writer...
    assert db_engine.get_engine().pool.checkedout() == 1  # ...before taking a connection
    release.set()
    a.join(10)
    b.join(10)
    assert order == ["first", "second"]
    with db_engine.transaction(readonly=True) as session:
        assert sorted(session.scalars(sa.select(models.Container.uuid))) == ["first", "second"]


def test_a_writer_waiting_too_long_gets_database_is_locked(
    db_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db_engine, "SQLITE_BUSY_TIMEOUT_MS", 100)
    holding = threading.Event()
    done = threading.Event()

    def hold() -> None:
        with db_engine.transaction():
            holding.set()
            done.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(10)
        with pytest.raises(sa.exc.OperationalError, match="database is locked") as caught:
            with db_engine.transaction():
                pass
        assert db_engine._is_sqlite_busy(caught.value)  # what retry_on_deadlock retries
    finally:
        done.set()
        holder.join(10)


def test_single_read_sends_no_begin_and_writes_still_take_the_lock(db_file: Path) -> None:
    # single_read marks its connection as in a transaction so that neither our BEGIN hook
    # nor oslo.db's sends one; the mark must go with the connection, or a later write on it
    # would run without BEGIN IMMEDIATE.
    engine = db_engine.get_engine()
    statements: list[str] = []

    def record(_conn, _cursor, statement, *_args):  # noqa: ANN001
        statements.append(statement.strip().upper())

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        # One at a time, so the pool hands the same connection to all of them.
        for _ in range(3):
            with db_engine.single_read() as conn:
                assert conn.execute(sa.select(models.Container.uuid)).all() == []
        assert len(statements) == 3 and not [s for s in statements if s.startswith("BEGIN")]
        statements.clear()
        for i in range(3):
            with db_engine.transaction() as session:
                session.add(models.Container(uuid=f"w{i}"))
        assert statements.count("BEGIN IMMEDIATE") == 3, statements
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)


def test_no_eventlet_yield_at_pool_checkin(db_file: Path) -> None:
    from oslo_db.sqlalchemy import engines as oslo_engines

    assert not sa.event.contains(db_engine.get_engine(), "checkin", oslo_engines._thread_yield)
