"""Fixtures of the Glance tests (glance_support) and the API app fixtures (unit/api)."""

from functional.api.resources_support import agent, bus  # noqa: F401
from functional.image.glance_support import (  # noqa: F401
    accounts,
    catalog_region,
    glance_conf,
    glance_options,
    images,
    saved_busybox,
    service_credentials,
    tls_files,
    tls_glance,
)
from unit.api.appfixtures import api, api_app, api_db, api_db_template  # noqa: F401
