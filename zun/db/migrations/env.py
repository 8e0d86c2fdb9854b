"""Alembic environment: runs revisions on the connection zun.db.migration hands over."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context
from sqlalchemy.engine import Connection

from zun.db import engine as db_engine
from zun.db import models

config = context.config
target_metadata = models.Base.metadata


def _create_version_table_like_zun(connection: Connection) -> None:
    # Alembic would create its table with the server's default charset; Zun's is utf8mb3
    # like every other table, and a fresh database should not differ from an upgraded one.
    if connection.dialect.name not in ("mysql", "mariadb"):
        return
    sa.Table(
        "alembic_version",
        sa.MetaData(),
        sa.Column("version_num", sa.String(32), primary_key=True),
        mysql_engine="InnoDB",
        mysql_charset="utf8mb3",
    ).create(connection, checkfirst=True)


def _run(connection: Connection) -> None:
    _create_version_table_like_zun(connection)
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = db_engine.create_engine(config.get_main_option("sqlalchemy.url"))
    try:
        with engine.connect() as conn:
            _run(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
