"""The API test fixtures: defined once in unit/api/appfixtures.py (see docs/api-tests.md)."""

from unit.api.appfixtures import api, api_app, api_db, api_db_template, seed  # noqa: F401
