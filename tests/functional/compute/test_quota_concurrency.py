"""The quota check is atomic on SQLite, MariaDB and PostgreSQL.

N threads, each in its own transaction, call ``enforce_in_transaction`` and then insert a
container row, exactly as the containers API does. Whatever the interleaving, exactly as many
as the limit allows succeed and the others get OverQuota. The threads first make a plain read
in their transaction, so that on MariaDB their snapshot predates the other threads' commits:
the check must still see those rows.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

import sqlalchemy as sa
from functional.db.conftest import backend  # noqa: F401 (SQLite, MariaDB, PostgreSQL)
from sqlalchemy.engine import Engine

from zun.common import exception
from zun.compute import quota
from zun.db import engine as db_engine
from zun.db import models
from zun.db.queries import quotas as quota_q

THREADS = 10
LIMIT = 3


def _count(project: str) -> int:
    with db_engine.transaction(readonly=True) as session:
        return session.scalar(
            sa.select(sa.func.count())
            .select_from(models.Container)
            .where(models.Container.project_id == project)
        )


def _create_factory(engine: Engine, start: threading.Barrier) -> Callable[[str], None]:
    sqlite = engine.dialect.name == "sqlite"

    @db_engine.retry_on_deadlock
    def create(project: str, first_try: list[bool]) -> None:
        if sqlite and first_try[0]:
            start.wait()  # SQLite writers queue at BEGIN: meet before it
        with db_engine.transaction() as session:
            session.execute(sa.select(models.Container.id).limit(1)).all()
            if not sqlite and first_try[0]:
                start.wait()  # every transaction is open (and has its snapshot) here
            first_try[0] = False
            quota.enforce_in_transaction(
                session, None, project, {"containers": 1, "cpu": 0.5, "memory": 64, "disk": 0}
            )
            session.add(
                models.Container(
                    uuid=str(uuid.uuid4()),
                    project_id=project,
                    cpu=0.5,
                    memory="64",
                    disk=0,
                    container_type=0,
                )
            )

    return lambda project: create(project, [True])


def _race(engine: Engine, projects: list[str]) -> dict[str, list[str]]:
    start = threading.Barrier(len(projects), timeout=60)
    create = _create_factory(engine, start)
    outcome: dict[str, list[str]] = {p: [] for p in set(projects)}

    def run(project: str) -> None:
        try:
            create(project)
            outcome[project].append("ok")
        except exception.OverQuota:
            outcome[project].append("over")
        except BaseException as exc:  # reported by the test
            outcome[project].append(f"error: {exc!r}")

    threads = [threading.Thread(target=run, args=(p,)) for p in projects]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=180)
    assert not any(t.is_alive() for t in threads)
    return outcome


def test_concurrent_creates_at_the_limit(backend: Engine) -> None:
    # The limit comes from the default class, so the lock row does not exist yet: the threads
    # also race to create it.
    with db_engine.transaction() as session:
        quota.set_class_limits(session, "default", {"containers": LIMIT})
    outcome = _race(backend, ["p1"] * THREADS)["p1"]

    assert sorted(outcome) == ["ok"] * LIMIT + ["over"] * (THREADS - LIMIT), outcome
    assert _count("p1") == LIMIT
    with db_engine.transaction(readonly=True) as session:
        lock_rows = session.execute(sa.select(quota_q.QU.c.project_id)).scalars().all()
    assert lock_rows == ["p1"]


def test_two_projects_race_independently(backend: Engine) -> None:
    with db_engine.transaction() as session:
        quota.set_class_limits(session, "default", {"containers": 2})
    outcome = _race(backend, ["pa", "pb"] * 4)

    for project in ("pa", "pb"):
        assert sorted(outcome[project]) == ["ok"] * 2 + ["over"] * 2, outcome
        assert _count(project) == 2


def test_a_second_check_waits_for_the_first_transaction(backend: Engine) -> None:
    """Deterministic proof of the lock: B blocks while A holds it, then sees A's row."""
    with db_engine.transaction() as session:
        quota.set_project_limits(session, "p1", {"containers": 1})
    a_checked, a_release = threading.Event(), threading.Event()
    b_result: list[str] = []

    def first() -> None:
        with db_engine.transaction() as session:
            quota.enforce_in_transaction(session, None, "p1", {"containers": 1})
            a_checked.set()
            a_release.wait(30)
            session.add(models.Container(uuid=str(uuid.uuid4()), project_id="p1"))

    def second() -> None:
        try:
            with db_engine.transaction() as session:
                quota.enforce_in_transaction(session, None, "p1", {"containers": 1})
            b_result.append("ok")
        except exception.OverQuota:
            b_result.append("over")

    a = threading.Thread(target=first)
    a.start()
    assert a_checked.wait(30)
    b = threading.Thread(target=second)
    b.start()
    time.sleep(1.0)
    assert b.is_alive() and b_result == []  # blocked behind A's lock
    a_release.set()
    a.join(30)
    b.join(30)
    assert b_result == ["over"]
