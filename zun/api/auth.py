"""Authentication strategies: keystone (auth_token) and noauth (the embedded mode).

Both end with the identity in the same X-* headers, so the request context is built in one
place (:func:`zun.api.app.build_context`) whatever the strategy.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from zun.conf import CONF

LOG = logging.getLogger(__name__)

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

# The identity a noauth request without identity headers gets: an admin of a default project.
NOAUTH_USER_ID = "admin"
NOAUTH_PROJECT_ID = "default"
NOAUTH_ROLES = "admin"

_IDENTITY_HEADERS = ("HTTP_X_USER_ID", "HTTP_X_PROJECT_ID", "HTTP_X_ROLES")


def is_public_path(path: str) -> bool:
    """``/`` and ``/v1`` (with ``.json`` or a trailing slash) need no token."""
    path = path.rstrip("/")
    if path.endswith(".json"):
        path = path[: -len(".json")]
    return path in ("", "/v1")


class NoAuth:
    """Trust identity headers; give a request without them the default admin identity."""

    def __init__(self, app: WSGIApp) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]):
        if not any(environ.get(h) for h in _IDENTITY_HEADERS):
            environ["HTTP_X_USER_ID"] = NOAUTH_USER_ID
            environ["HTTP_X_PROJECT_ID"] = NOAUTH_PROJECT_ID
            environ["HTTP_X_ROLES"] = NOAUTH_ROLES
        environ.setdefault("HTTP_X_ROLES", "")
        return self.app(environ, start_response)


class KeystoneAuth:
    """keystonemiddleware's auth_token for every path but the public version documents."""

    def __init__(self, app: WSGIApp) -> None:
        from keystonemiddleware import auth_token

        self.public_app = app
        self.protected_app = auth_token.AuthProtocol(app, {"oslo_config_config": CONF})

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]):
        if is_public_path(environ.get("PATH_INFO", "")):
            for header in _IDENTITY_HEADERS:
                environ.pop(header, None)
            return self.public_app(environ, start_response)
        return self.protected_app(environ, start_response)


def wrap(app: WSGIApp, strategy: str | None = None) -> WSGIApp:
    strategy = strategy or CONF.api.auth_strategy
    if strategy == "noauth":
        LOG.warning(
            "Authentication is off (auth_strategy=noauth): identity comes from the "
            "X-User-Id, X-Project-Id and X-Roles headers, or is the default admin."
        )
        return NoAuth(app)
    if strategy == "keystone":
        return KeystoneAuth(app)
    raise ValueError(f"Unknown [api]/auth_strategy {strategy!r}")
