"""Database engine and sessions for every Zun process.

The connection comes from ``[database]/connection`` (oslo.db's options), or from a default the
caller passes (the embedded mode passes a SQLite file URL). Engines are built by oslo.db, so
driver errors arrive translated: ``DBDeadlock``, ``DBDuplicateEntry``, ``DBConnectionError``...

Usage::

    engine.configure(default_connection="sqlite:////var/lib/zun/zun.sqlite")

    @engine.retry_on_deadlock
    def set_status(uuid, status):
        with engine.transaction() as session:
            ...

``transaction()`` commits when the block ends and rolls back on an exception. Objects loaded in
it stay readable afterwards (no expiry on commit). Each ``transaction()`` holds its own
connection: do not open one inside another, pass the session down instead.

SQLite (the embedded mode) gets two things oslo.db does not give it: a pool of connections
(oslo.db puts SQLAlchemy's NullPool back for files, so each transaction would open the file,
set its pragmas and parse the schema again: 0.6 ms a transaction idle, several ms on a busy
machine), and an in-process queue for writers (see :func:`transaction`).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ParamSpec, TypeVar

import sqlalchemy as sa
from oslo_config import cfg
from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db import options as oslo_db_options
from oslo_db.sqlalchemy import engines as oslo_engines
from sqlalchemy import pool as sa_pool
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from zun.db.direct_select import DirectSelect

P = ParamSpec("P")
R = TypeVar("R")

# How long a SQLite writer waits for another one before giving up (milliseconds). Writers are
# serialized by the file lock; waiting is the normal case when several threads write.
SQLITE_BUSY_TIMEOUT_MS = 30_000
# Connections kept open to a SQLite file (at least; [database]/max_pool_size if larger).
SQLITE_POOL_SIZE = 10

# Execution option read by the SQLite BEGIN hook; write sessions set it to "IMMEDIATE",
# single_read() connections to _NO_BEGIN.
_SQLITE_BEGIN_OPTION = "zun_sqlite_begin"
_NO_BEGIN = "none"


def get_conf() -> cfg.ConfigOpts:
    """Zun's configuration object with oslo.db's ``[database]`` options registered."""
    try:
        from zun.conf import CONF as conf
    except ImportError:  # zun.conf not importable (yet): use the global oslo object
        conf = cfg.CONF
    return _with_db_opts(conf)


def _with_db_opts(conf: cfg.ConfigOpts) -> cfg.ConfigOpts:
    # Registering the same library options again is a no-op in oslo.config.
    oslo_db_options.set_defaults(conf)
    return conf


def connection_url(default: str | None = None, conf: cfg.ConfigOpts | None = None) -> str:
    """``[database]/connection``, else ``default``; raises if neither is set."""
    conf = _with_db_opts(conf) if conf is not None else get_conf()
    url = conf.database.connection or default
    if not url:
        raise RuntimeError("no database configured: set [database]/connection")
    return url


def _sqlite_file_pool(db: Any) -> Callable[..., tuple[Engine, Engine]]:
    """oslo.db's engine factory step, with a QueuePool instead of NullPool for SQLite files.

    oslo.db (18.x) replaces SQLAlchemy 2's QueuePool with NullPool for SQLite files "to avoid
    compatibility issues" (of eventlet-era code); we run plain threads, and SQLAlchemy's
    default for such files is exactly this pool. A connection is used by one thread at a time
    (the pool hands it out exclusively), so ``check_same_thread`` is off, as SQLAlchemy sets
    it. No pre-ping: a file connection does not drop. ``_engine_target`` is oslo.db's hook for
    this step; tests/unit/db/test_db_engine_sqlite.py fails if oslo.db stops honouring it.
    """

    def target(url: Any, **engine_args: Any) -> tuple[Engine, Engine]:
        if engine_args.get("poolclass") is sa_pool.NullPool:
            engine_args.update(
                poolclass=sa_pool.QueuePool,
                pool_size=max(int(db.max_pool_size or 0), SQLITE_POOL_SIZE),
                max_overflow=int(db.max_overflow if db.max_overflow is not None else 50),
                pool_timeout=int(db.pool_timeout or 30),
                pool_pre_ping=False,
            )
            engine_args.setdefault("connect_args", {})["check_same_thread"] = False
        engine = sa.create_engine(url, **engine_args)
        return engine, engine

    return target


def create_engine(url: str, conf: cfg.ConfigOpts | None = None) -> Engine:
    """A new engine for ``url`` tuned by the ``[database]`` options (pool, retries, modes)."""
    conf = _with_db_opts(conf) if conf is not None else get_conf()
    db = conf.database
    sqlite_file = url.startswith("sqlite") and sa.engine.make_url(url).database not in (
        None,
        "",
        ":memory:",
    )
    extra: dict[str, Any] = {"_engine_target": _sqlite_file_pool(db)} if sqlite_file else {}
    engine = oslo_engines.create_engine(
        url,
        sqlite_fk=True,
        sqlite_synchronous=db.sqlite_synchronous,
        mysql_sql_mode=db.mysql_sql_mode,
        mysql_wsrep_sync_wait=db.mysql_wsrep_sync_wait,
        connection_recycle_time=db.connection_recycle_time,
        connection_debug=db.connection_debug,
        max_pool_size=db.max_pool_size,
        max_overflow=db.max_overflow,
        pool_timeout=db.pool_timeout,
        connection_trace=db.connection_trace,
        max_retries=db.max_retries,
        retry_interval=db.retry_interval,
        connection_parameters=db.connection_parameters,
        logging_name="zun.db",
        # oslo.db's default puts a time.sleep(0) at every pool check-in, a yield for
        # eventlet's green threads; Zun runs none, and for real threads it is a needless
        # trip through the scheduler after every transaction (about 0.1 ms of CPU a show on
        # a busy machine, benchmarks/show_cpu.py).
        thread_checkin=False,
        **extra,
    )
    if engine.dialect.name == "sqlite":
        _tune_sqlite(engine)
    return engine


def _tune_sqlite(engine: Engine) -> None:
    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_con: Any, _record: Any) -> None:
        # WAL lets readers go on while one thread writes; the busy timeout makes a second
        # writer wait for the first instead of failing at once.
        dbapi_con.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        dbapi_con.execute("PRAGMA journal_mode = WAL")

    # oslo.db emits a plain (deferred) BEGIN itself and marks conn.info["in_transaction"].
    # A deferred transaction that reads and then writes fails at once with "database is
    # locked" when another writer got in between, whatever the busy timeout. Write sessions
    # therefore take the write lock up front with BEGIN IMMEDIATE. Our listener must run
    # before oslo.db's, which then sees its marker and emits nothing; SQLAlchemy ignores
    # insert=True for connection events, so the existing listeners are re-added after ours.
    def _on_begin(conn: sa.Connection) -> None:
        if "in_transaction" in conn.info:
            return
        mode = conn.get_execution_options().get(_SQLITE_BEGIN_OPTION, "")
        if mode != _NO_BEGIN:
            conn.exec_driver_sql(f"BEGIN {mode}".strip())
        # Also for _NO_BEGIN: oslo.db's own listener would emit a BEGIN otherwise. Its
        # rollback/commit listener removes the marker when the connection is given back.
        conn.info["in_transaction"] = True

    existing = list(engine.dispatch.begin)
    for fn in existing:
        sa.event.remove(engine, "begin", fn)
    sa.event.listen(engine, "begin", _on_begin)
    for fn in existing:
        sa.event.listen(engine, "begin", fn)
    # oslo.db tested a connection before these listeners existed; a pool keeps it: drop it,
    # so that every connection handed out has the pragmas above.
    engine.dispose()


class _State:
    lock = threading.Lock()
    engine: Engine | None = None
    # SQLite writers of this process queue here (see transaction()); None on other databases.
    write_lock: threading.RLock | None = None
    default_connection: str | None = None
    write_sessions: sessionmaker[Session] | None = None
    read_sessions: sessionmaker[Session] | None = None
    single_reader: Engine | None = None


def configure(default_connection: str | None = None, conf: cfg.ConfigOpts | None = None) -> Engine:
    """Build the process-wide engine (replacing any previous one) and return it.

    ``default_connection`` is used when ``[database]/connection`` is unset, e.g. the embedded
    mode's SQLite file.
    """
    engine = create_engine(connection_url(default_connection, conf), conf)
    with _State.lock:
        _State.default_connection = default_connection
        _install(engine)
    return engine


def set_engine(engine: Engine) -> None:
    """Use an engine built elsewhere (tests, tools) as the process-wide one."""
    with _State.lock:
        _install(engine)


def _install(engine: Engine) -> None:
    old = _State.engine
    _State.engine = engine
    _State.write_lock = threading.RLock() if engine.dialect.name == "sqlite" else None
    writer = engine.execution_options(**{_SQLITE_BEGIN_OPTION: "IMMEDIATE"})
    _State.write_sessions = sessionmaker(bind=writer, expire_on_commit=False)
    _State.read_sessions = sessionmaker(bind=engine, expire_on_commit=False)
    _State.single_reader = engine.execution_options(**{_SQLITE_BEGIN_OPTION: _NO_BEGIN})
    if old is not None and old is not engine:
        old.dispose()


def get_engine() -> Engine:
    """The process-wide engine, built from the configuration on first use."""
    if _State.engine is None:
        with _State.lock:
            if _State.engine is None:
                url = connection_url(_State.default_connection)
                _install(create_engine(url))
    assert _State.engine is not None
    return _State.engine


def dispose() -> None:
    """Close all pooled connections and forget the engine (e.g. after fork, at shutdown)."""
    with _State.lock:
        if _State.engine is not None:
            _State.engine.dispose()
        _State.engine = _State.write_sessions = _State.read_sessions = None
        _State.single_reader = None


@contextlib.contextmanager
def transaction(readonly: bool = False) -> Iterator[Session]:
    """A session in a transaction: committed at the end of the block, rolled back on error.

    ``readonly=True`` never commits and, on SQLite, does not take the write lock, so readers
    do not queue behind writers.

    On SQLite, the writers of this process first queue on a process-wide lock, then take the
    file's write lock (``BEGIN IMMEDIATE``). SQLite's own wait for a busy file polls with
    sleeps of up to 100 ms, so ten writers of one process (ten creates at once) waited far
    longer than the few ms each holds the file; a thread waiting on the in-process lock wakes
    as soon as the previous writer ends. Other processes on the same file still wait in
    SQLite's busy handler. The wait is bounded like SQLite's: after the busy timeout it fails
    with "database is locked", which :func:`retry_on_deadlock` retries.
    """
    get_engine()
    maker = _State.read_sessions if readonly else _State.write_sessions
    assert maker is not None
    if readonly:
        with maker() as session:
            yield session
        return
    write_lock = _State.write_lock
    if write_lock is not None and not write_lock.acquire(timeout=SQLITE_BUSY_TIMEOUT_MS / 1000):
        raise sa.exc.OperationalError("BEGIN IMMEDIATE", None, Exception("database is locked"))
    try:
        with maker() as session, session.begin():
            yield session
    finally:
        if write_lock is not None:
            write_lock.release()


@contextlib.contextmanager
def single_read() -> Iterator[sa.Connection]:
    """A connection for ONE read statement: no ORM session, and on SQLite no BEGIN.

    A single SELECT is its own consistent snapshot, so the explicit BEGIN and the rollback
    a read-only :func:`transaction` spends around it buy nothing; with the session they were
    about three quarters of a show's database time (0.4 of 0.5 ms of CPU). Run exactly one
    statement in it: two would each see their own snapshot on SQLite. Other databases begin
    their transaction as usual.
    """
    get_engine()
    reader = _State.single_reader
    assert reader is not None
    with reader.connect() as conn:
        yield conn


def select_rows(select: DirectSelect, params: Mapping[str, Any]) -> Sequence[Any]:
    """The rows of ONE read statement, run on a pooled driver connection directly
    (:class:`zun.db.direct_select.DirectSelect`); through a :func:`single_read` connection
    when the driver fails, so errors arrive translated as from any other read."""
    get_engine()
    reader = _State.single_reader
    assert reader is not None

    def through_sqlalchemy() -> Sequence[Any]:
        with single_read() as conn:
            return conn.execute(select.statement, dict(params)).all()

    return select.rows(reader, params, through_sqlalchemy)


def _is_sqlite_busy(exc: BaseException) -> bool:
    # SQLite's "database is locked" (busy timeout elapsed) is not translated by oslo.db: it
    # arrives as a generic DBError, or untranslated when raised by BEGIN IMMEDIATE.
    return isinstance(exc, (db_exc.DBError, sa.exc.OperationalError)) and (
        "database is locked" in str(exc)
    )


def retry_on_deadlock(func: Callable[P, R]) -> Callable[P, R]:
    """Run ``func`` again when the database reports a deadlock.

    Covers InnoDB deadlocks, Galera certification failures (which MariaDB reports as
    deadlocks at commit), PostgreSQL deadlocks and a SQLite writer that waited too long.
    ``func`` must open its own :func:`transaction`, so each try starts afresh.
    """
    retrying = oslo_db_api.wrap_db_retry(
        max_retries=5,
        retry_interval=0.1,
        inc_retry_interval=True,
        max_retry_interval=2,
        retry_on_deadlock=True,
        exception_checker=_is_sqlite_busy,
    )(func)
    return functools.wraps(func)(retrying)
