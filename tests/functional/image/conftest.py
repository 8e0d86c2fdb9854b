"""Fixtures of the Glance tests (glance_support) and the API app fixtures (unit/api)."""

from functional.api.resources_support import agent, bus  # noqa: F401
from functional.image.glance_support import accounts, images, saved_busybox  # noqa: F401
from unit.api.appfixtures import api, api_app, api_db, api_db_template  # noqa: F401
