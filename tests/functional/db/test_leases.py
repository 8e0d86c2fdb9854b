"""Named leases (zun.db.queries.leases) on SQLite, MariaDB and PostgreSQL: one holder at a
time, renewed by its holder, taken over once expired or given up; of processes racing for it
from nothing, one wins."""

from __future__ import annotations

import datetime
import multiprocessing

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from zun.db import engine as db_engine
from zun.db import models
from zun.db.queries import leases


def _expire(name: str) -> None:
    past = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) - datetime.timedelta(seconds=1)
    with db_engine.transaction() as session:
        session.execute(
            sa.update(models.Lease).where(models.Lease.name == name).values(expires_at=past)
        )


def test_one_holder_renewal_expiry_and_release(backend: Engine) -> None:
    assert leases.hold("monitor", "a", 60)
    assert not leases.hold("monitor", "b", 60)
    assert leases.hold("monitor", "a", 60)  # its holder renews it
    assert leases.holder_of("monitor")[0] == "a"
    assert leases.hold("other", "b", 60)  # leases are independent
    _expire("monitor")  # "a" died: its lease runs out
    assert leases.hold("monitor", "b", 60)
    assert not leases.hold("monitor", "a", 60)
    assert not leases.release("monitor", "a")  # only the holder gives it up
    assert leases.release("monitor", "b")
    assert leases.hold("monitor", "a", 60)


def _race(
    url: str, holder: str, start: multiprocessing.synchronize.Event, results: multiprocessing.Queue
) -> None:
    db_engine.set_engine(db_engine.create_engine(url))
    start.wait(30)
    results.put((holder, leases.hold("race", holder, 60)))


def test_processes_racing_from_nothing_one_wins(backend: Engine) -> None:
    url = backend.url.render_as_string(hide_password=False)
    db_engine.dispose()  # no pooled connection crosses the fork
    ctx = multiprocessing.get_context("fork")
    start, results = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_race, args=(url, f"p{i}", start, results)) for i in range(4)]
    for proc in procs:
        proc.start()
    start.set()
    won = dict(results.get(timeout=60) for _ in procs)
    for proc in procs:
        proc.join(30)
    db_engine.set_engine(db_engine.create_engine(url))
    assert sorted(won.values()) == [False, False, False, True]
    assert leases.holder_of("race")[0] == next(h for h, w in won.items() if w)
