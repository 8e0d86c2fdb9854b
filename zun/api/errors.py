"""Every non-2xx answer in Zun's error shape.

``{"errors": [{"request_id", "code", "status", "title", "detail", "links"}]}``. ``code`` is
``container.<kebab-case class name>`` for client errors (``-remote`` added for an exception that
came back from a node), and ``container.`` for server errors, as clients expect. Unlike the
original, ``request_id`` is filled in and no traceback ever reaches a client.
"""

from __future__ import annotations

import json
import logging
from http import HTTPStatus
from typing import Any

from zun.common import exception

LOG = logging.getLogger(__name__)

_TRACEBACK_MARK = "Traceback (most recent call last):"
REMOTE_SUFFIX = "_Remote"


def reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def error_body(request_id: str, status: int, code: str, title: str, detail: str) -> bytes:
    return json.dumps(
        {
            "errors": [
                {
                    "request_id": request_id,
                    "code": code,
                    "status": status,
                    "title": title,
                    "detail": detail,
                    "links": [],
                }
            ]
        }
    ).encode()


def server_error_detail(request_id: str) -> str:
    return (
        "The server met an unexpected error and could not handle the request. "
        f"Look for request id {request_id} in the service logs."
    )


def strip_traceback(text: str) -> str:
    cut = text.find(_TRACEBACK_MARK)
    return (text[:cut] if cut >= 0 else text).rstrip()


def describe(exc: BaseException, request_id: str) -> tuple[int, str, str, str]:
    """(status, code, title, detail) for an exception raised while serving a request."""
    if isinstance(exc, exception.ZunException):
        status = int(getattr(exc, "code", 500) or 500)
        if status < 500:
            # "<Class>_Remote" (an exception that crossed RPC) derives "<class>-remote" by
            # itself; deriving from the full name also keeps the original's quirks, e.g.
            # InvalidUUID_Remote -> "invalid-remote".
            code = "container." + exception.convert_excp_to_err_code(type(exc).__name__)
            message = strip_traceback(str(exc))
            return status, code, message, message
        if getattr(exc, "public_message", False):
            # A server-side failure whose message is written for clients (e.g. an
            # unreachable node): say it, with the request id to find the rest in the logs.
            LOG.warning("Request %s failed: %s", request_id, exc)
            message = strip_traceback(str(exc))
            code = "container." + exception.convert_excp_to_err_code(type(exc).__name__)
            return status, code, message, f"{message} (request id {request_id})"
    else:
        status = 500
    LOG.error(
        "Request %s failed: %s", request_id, exc, exc_info=(type(exc), exc, exc.__traceback__)
    )
    return status, "container.", reason(status), server_error_detail(request_id)


def to_error(exc: BaseException, request_id: str) -> tuple[int, bytes]:
    status, code, title, detail = describe(exc, request_id)
    return status, error_body(request_id, status, code, title, detail)


def plain_error(
    request_id: str,
    status: int,
    detail: str = "",
    extra: dict[str, Any] | None = None,
    title: str | None = None,
) -> bytes:
    """An error the service raises itself (routing, version, content type).

    The title is the status phrase unless one is given: python-zunclient shows only the
    title, so an error whose phrase says too little (406) carries its reason there too.
    """
    body: dict[str, Any] = {
        "request_id": request_id,
        "code": "container.",
        "status": status,
        "title": title or reason(status),
        "detail": detail,
        "links": [],
    }
    if extra:
        body.update(extra)
    return json.dumps({"errors": [body]}).encode()


class HTTPError(Exception):
    """An error decided by the API layer itself (404 route, 405, 406, 415, bad body)."""

    def __init__(
        self,
        status: int,
        detail: str = "",
        headers: list[tuple[str, str]] | None = None,
        extra: dict[str, Any] | None = None,
        version_headers: bool = True,
        title: str | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.title = title
        self.headers = headers or []
        self.extra = extra
        self.version_headers = version_headers
