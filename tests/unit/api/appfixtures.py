"""The API test fixtures, shared by tests/unit/api and tests/functional/api (see docs/api-tests.md).

api_db_template  a SQLite file migrated once per session (copied by api_db)
api_db   URL of a migrated SQLite database in tmp_path, installed as the process engine
api_app  the WSGI app (noauth strategy, every registered handler)
api      an ApiClient on api_app, as the admin, with no version header
seed     a Seed writing rows into api_db
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from unit.api.apptesting import ApiClient, Seed, database, make_app, migrate_sqlite


@pytest.fixture(scope="session")
def api_db_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("api-db-template")
    migrate_sqlite(directory)
    return directory / "zun.sqlite"


@pytest.fixture
def api_db(tmp_path: Path, api_db_template: Path) -> Iterator[str]:
    with database(tmp_path, template=api_db_template) as url:
        yield url


@pytest.fixture
def api_app(api_db: str) -> Any:
    return make_app()


@pytest.fixture
def api(api_app: Any) -> ApiClient:
    return ApiClient(api_app)


@pytest.fixture
def seed(api_db: str) -> Seed:
    return Seed()
