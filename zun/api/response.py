"""Building responses: JSON bodies, empty answers, Location headers."""

from __future__ import annotations

import json
from typing import Any

import webob

JSON_CONTENT_TYPE = "application/json"


def json_reply(
    body: Any, status: int = 200, headers: list[tuple[str, str]] | None = None
) -> webob.Response:
    resp = webob.Response(status=status, content_type=JSON_CONTENT_TYPE, charset=None)
    resp.body = json.dumps(body).encode()
    if headers:
        for name, value in headers:
            resp.headers[name] = value
    return resp


def empty(status: int = 204) -> webob.Response:
    resp = webob.Response(status=status, charset=None)
    resp.content_type = None
    return resp


def null_reply(status: int = 202) -> webob.Response:
    """The original's action answers carry a JSON ``null`` body; clients ignore it."""
    return json_reply(None, status)


def accepted_with_location(body: Any, location: str, status: int = 202) -> webob.Response:
    return json_reply(body, status, [("Location", location)])
