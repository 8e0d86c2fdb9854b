"""The shared service fixtures of tests/conftest.py hand out real, usable, separate resources."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
import sqlalchemy as sa

# The account the fixtures use: root/postgres by default, run-tests.sh's zun_test on stock Debian.
MARIADB_ADMIN_URL = os.environ.get(
    "ZUN_TEST_MARIADB_URL", "mysql+pymysql://root@127.0.0.1:3306"
).rstrip("/")
POSTGRESQL_ADMIN_URL = os.environ.get(
    "ZUN_TEST_POSTGRESQL_URL", "postgresql+psycopg2://postgres@127.0.0.1:5432"
).rstrip("/")


def _roundtrip(url: str) -> list[tuple[int, str]]:
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE TABLE t (id INTEGER PRIMARY KEY, name VARCHAR(20))"))
            conn.execute(sa.text("INSERT INTO t VALUES (1, 'zun')"))
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(sa.text("SELECT id, name FROM t"))]
    finally:
        engine.dispose()


@pytest.mark.mariadb
def test_mariadb_url_gives_fresh_databases(mariadb_url: Callable[[], str]) -> None:
    first, second = mariadb_url(), mariadb_url()
    assert first != second
    assert first.startswith(f"{MARIADB_ADMIN_URL}/zun_test_")
    assert _roundtrip(first) == [(1, "zun")]
    assert _roundtrip(second) == [(1, "zun")]  # same table name: really a separate database


@pytest.mark.postgresql
def test_postgresql_url_gives_fresh_databases(postgresql_url: Callable[[], str]) -> None:
    first, second = postgresql_url(), postgresql_url()
    assert first != second
    assert first.startswith(f"{POSTGRESQL_ADMIN_URL}/zun_test_")
    assert _roundtrip(first) == [(1, "zun")]
    assert _roundtrip(second) == [(1, "zun")]


@pytest.mark.rabbitmq
def test_rabbit_url_reaches_the_broker(rabbit_url: str) -> None:
    import kombu
    import oslo_messaging
    from oslo_config import cfg

    parsed = oslo_messaging.TransportURL.parse(cfg.ConfigOpts(), rabbit_url)
    assert parsed.transport == "rabbit"
    host = parsed.hosts[0]
    # kombu is what oslo.messaging's rabbit driver speaks through; it logs in with the URL's
    # credentials and, unlike an RPC call, gives up instead of retrying forever.
    amqp = f"amqp://{host.username}:{host.password}@{host.hostname}:{host.port}/"
    with kombu.Connection(amqp, connect_timeout=5) as conn:
        conn.ensure_connection(max_retries=1)
        assert conn.connected
