"""``GET /v1/openapi.json``: this service's own OpenAPI document (see zun.api.openapi)."""

from __future__ import annotations

import functools
from typing import Any

import webob

from zun.api import openapi
from zun.api.request import ApiRequest
from zun.api.response import json_reply
from zun.api.routing import route


@functools.cache
def _document() -> dict[str, Any]:
    return openapi.build_document()


@route("GET", "/v1/openapi", versioned=False)
def openapi_document(req: ApiRequest) -> webob.Response:
    """This implementation's OpenAPI 3.1 document (also at /v1/openapi.json)."""
    return json_reply(_document())
