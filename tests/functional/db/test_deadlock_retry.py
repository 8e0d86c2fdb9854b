"""A real deadlock (two transactions locking two rows in opposite order) is retried.

The database picks one transaction as the victim; oslo.db turns its error into DBDeadlock and
``retry_on_deadlock`` runs the victim's function again, which then succeeds. Galera reports a
certification failure the same way, so the same decorator covers it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa
from oslo_db import exception as db_exc
from sqlalchemy.engine import Engine

from zun.db import engine as db_engine
from zun.db import migration, models


@pytest.fixture(
    params=[
        pytest.param("mariadb", marks=pytest.mark.mariadb),
        pytest.param("postgresql", marks=pytest.mark.postgresql),
    ]
)
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    url = request.getfixturevalue(f"{request.param}_url")()
    eng = db_engine.create_engine(url)
    migration.upgrade("head", engine=eng)
    db_engine.set_engine(eng)
    with db_engine.transaction() as session:
        session.add_all(
            [
                models.Container(uuid="row-a", status="Created"),
                models.Container(uuid="row-b", status="Created"),
            ]
        )
    yield eng
    db_engine.dispose()


def _set_status(session: sa.orm.Session, uuid: str, status: str) -> None:
    session.execute(
        sa.update(models.Container).where(models.Container.uuid == uuid).values(status=status)
    )


def _crossing_writers(
    decorate: Callable[[Callable[[], None]], Callable[[], None]],
) -> tuple[dict[str, int], list[BaseException]]:
    """Run two writers that lock row-a/row-b in opposite order; the first tries meet."""
    both_hold_first_lock = threading.Barrier(2, timeout=30)
    attempts = {"ab": 0, "ba": 0}
    errors: list[BaseException] = []

    def writer(name: str, first: str, second: str) -> Callable[[], None]:
        def run() -> None:
            attempts[name] += 1
            with db_engine.transaction() as session:
                _set_status(session, first, f"by-{name}")
                if attempts[name] == 1:
                    # Only the first tries wait for each other; a retry runs straight through.
                    both_hold_first_lock.wait()
                _set_status(session, second, f"by-{name}")

        return decorate(run)

    def thread(fn: Callable[[], None]) -> threading.Thread:
        def target() -> None:
            try:
                fn()
            except BaseException as exc:  # reported to the test below
                errors.append(exc)

        return threading.Thread(target=target)

    threads = [
        thread(writer("ab", "row-a", "row-b")),
        thread(writer("ba", "row-b", "row-a")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return attempts, errors


def test_deadlock_victim_is_retried_and_succeeds(engine: Engine) -> None:
    attempts, errors = _crossing_writers(db_engine.retry_on_deadlock)

    assert errors == []
    # One writer won at once, the victim needed exactly one more try.
    assert sorted(attempts.values()) == [1, 2]
    with db_engine.transaction(readonly=True) as session:
        statuses = set(session.scalars(sa.select(models.Container.status)).all())
    # Both rows carry the same writer's mark: the retried writer ran last and completely.
    victim = "ab" if attempts["ab"] == 2 else "ba"
    assert statuses == {f"by-{victim}"}


def test_without_the_decorator_the_deadlock_surfaces(engine: Engine) -> None:
    attempts, errors = _crossing_writers(lambda fn: fn)

    assert attempts == {"ab": 1, "ba": 1}
    assert len(errors) == 1 and isinstance(errors[0], db_exc.DBDeadlock)
