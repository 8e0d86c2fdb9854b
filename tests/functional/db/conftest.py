"""Shared by the tests here: the ``backend`` fixture, and the tests' folder on sys.path (they
import their helper module _db_schema_dump under --import-mode=importlib, which does not put a
test's folder on sys.path)."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from zun.db import engine as db_engine
from zun.db import migration

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param("mariadb", marks=pytest.mark.mariadb),
        pytest.param("postgresql", marks=pytest.mark.postgresql),
    ]
)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """A new database of each kind (SQLite, MariaDB, PostgreSQL), also the process-wide
    engine, migrated to the test module's ``BACKEND_REVISION`` ("head" when it has none;
    None leaves it empty)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'zun.sqlite'}"
    else:
        url = request.getfixturevalue(f"{request.param}_url")()
    revision = getattr(request.module, "BACKEND_REVISION", "head")
    if revision is not None:
        migration.upgrade(revision, url=url)
    engine = db_engine.create_engine(url)
    db_engine.set_engine(engine)
    yield engine
    db_engine.dispose()
