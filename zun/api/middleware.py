"""What sits in front of authentication: CORS and ``/healthcheck``, both oslo.middleware's.

The original's paste pipeline put CORS first and mounted oslo.middleware's health check at
``/healthcheck`` beside (not behind) the authenticated API, so a load balancer needs no token;
this is the same arrangement without paste. ``[cors]`` and ``[healthcheck]`` are the
libraries' own options (``[healthcheck]/backends = disable_by_file`` with
``disable_by_file_path`` takes a node out of rotation by creating a file).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from oslo_middleware import cors, healthcheck

from zun.conf import CONF

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

HEALTHCHECK_PATH = "/healthcheck"


class _Front:
    """Send ``/healthcheck`` to the health check and CORS-relevant requests through CORS.

    CORS only acts on a request with an ``Origin`` header, or on ``OPTIONS`` (a preflight,
    whose answer it turns into a 200 whatever the application said); every other request
    skips building its WebOb objects.
    """

    def __init__(self, app: WSGIApp) -> None:
        self.app = app
        self.cors = cors.CORS(app, CONF)
        # A request the health check ignores (outside [healthcheck]/allowed_source_ranges)
        # falls through to the API, which has no such route.
        self.health = healthcheck.Healthcheck(app, CONF)

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == HEALTHCHECK_PATH or path.startswith(HEALTHCHECK_PATH + "/"):
            return self.health(environ, start_response)
        if environ.get("REQUEST_METHOD") == "OPTIONS" or "HTTP_ORIGIN" in environ:
            return self.cors(environ, start_response)
        return self.app(environ, start_response)


def wrap(app: WSGIApp) -> WSGIApp:
    """The authenticated API behind CORS, beside the health check."""
    return _Front(app)
