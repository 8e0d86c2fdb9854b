"""Schema migrations, driven from code: no alembic.ini is needed on disk.

Every function takes either an ``engine`` or a ``url``; with neither, it uses the process-wide
engine of :mod:`zun.db.engine` (``[database]/connection``).
"""

from __future__ import annotations

import os

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine

from zun.db import engine as db_engine

MIGRATIONS_DIR = os.path.join(os.path.dirname(__file__), "migrations")

# Zun's own last revision, and our first: a database built by Zun is at our base.
BASE_REVISION = "3f2b36231bee"


def alembic_config(url: str | None = None) -> Config:
    """An in-memory Alembic configuration pointing at our migrations."""
    cfg = Config()
    cfg.set_main_option("script_location", MIGRATIONS_DIR)
    if url:
        # ConfigParser treats % as interpolation; URLs may carry %-escapes.
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def _engine(engine: Engine | None, url: str | None) -> tuple[Engine, bool]:
    """The engine to use and whether we built it (and so must dispose of it)."""
    if engine is not None:
        return engine, False
    if url is not None:
        return db_engine.create_engine(url), True
    return db_engine.get_engine(), False


def _run(fn, engine: Engine | None, url: str | None, *args, **kwargs) -> None:  # noqa: ANN001
    eng, owned = _engine(engine, url)
    try:
        with eng.begin() as conn:
            cfg = alembic_config(eng.url.render_as_string(hide_password=False))
            cfg.attributes["connection"] = conn
            fn(cfg, *args, **kwargs)
    finally:
        if owned:
            eng.dispose()


def upgrade(
    revision: str = "head", *, engine: Engine | None = None, url: str | None = None
) -> None:
    """Bring the schema up to ``revision`` (default: the newest)."""
    _run(command.upgrade, engine, url, revision)


def downgrade(revision: str, *, engine: Engine | None = None, url: str | None = None) -> None:
    """Take the schema back to ``revision`` (``base`` drops every table)."""
    _run(command.downgrade, engine, url, revision)


def stamp(revision: str, *, engine: Engine | None = None, url: str | None = None) -> None:
    """Record ``revision`` as current without running anything."""
    _run(command.stamp, engine, url, revision)


def version(*, engine: Engine | None = None, url: str | None = None) -> str | None:
    """The revision the database is at, or None for a database we never migrated."""
    eng, owned = _engine(engine, url)
    try:
        with eng.connect() as conn:
            heads = MigrationContext.configure(conn).get_current_heads()
    finally:
        if owned:
            eng.dispose()
    return ",".join(heads) if heads else None


def head() -> str:
    """The newest revision of our migrations."""
    head_rev = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head_rev is not None
    return head_rev


def revision(
    message: str,
    autogenerate: bool = False,
    *,
    engine: Engine | None = None,
    url: str | None = None,
) -> str:
    """Write a new revision file into the migrations and return its id.

    With ``autogenerate`` the file holds the differences between the models and the database
    (which must be at head).
    """
    created: list[str] = []

    def _make(cfg: Config) -> None:
        scripts = command.revision(cfg, message=message, autogenerate=autogenerate)
        for script in scripts if isinstance(scripts, list) else [scripts]:
            if script is not None:
                created.append(script.revision)

    if autogenerate:
        _run(_make, engine, url)
    else:
        _make(alembic_config())
    return ",".join(created)


def table_names(*, engine: Engine | None = None, url: str | None = None) -> list[str]:
    """Tables present in the database (handy for checks and tools)."""
    eng, owned = _engine(engine, url)
    try:
        return sorted(sa.inspect(eng).get_table_names())
    finally:
        if owned:
            eng.dispose()
