"""The WSGI application: request id, context, microversion, routing, errors, in that order.

Authentication wraps it (:mod:`zun.api.auth`), so the precedence of failures is the original's:
401, then a bad version header (406), then routing (404/405), then the handler's own checks
(version window 406, content type 415, schema 400, policy 403, lookup 404, state 409).
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import webob

from zun.api import auth, errors, microversion, middleware, routing
from zun.api.errors import HTTPError
from zun.api.request import ApiRequest
from zun.common import log as zun_log
from zun.common import policy
from zun.common.context import RequestContext

LOG = logging.getLogger(__name__)

_HANDLERS_LOADED = False


def load_handlers() -> None:
    """Import every module of zun.api.handlers, which registers its routes."""
    global _HANDLERS_LOADED
    if _HANDLERS_LOADED:
        return
    import zun.api.handlers as package

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
    _HANDLERS_LOADED = True


def build_context(req: webob.Request, request_id: str) -> RequestContext:
    """The one place a request's identity becomes a context."""
    headers = req.headers
    roles = [r.strip() for r in headers.get("X-Roles", "").split(",") if r.strip()]
    ctx = RequestContext(
        auth_token=headers.get("X-Auth-Token"),
        user_id=headers.get("X-User-Id"),
        project_id=headers.get("X-Project-Id"),
        user_name=headers.get("X-User-Name"),
        project_name=headers.get("X-Project-Name"),
        user_domain_id=headers.get("X-User-Domain-Id"),
        user_domain_name=headers.get("X-User-Domain-Name"),
        roles=roles,
        request_id=request_id,
        is_admin=False,
        overwrite=False,
    )
    ctx.is_admin = policy.check_is_admin(ctx)
    return ctx


class ZunApp:
    def __init__(self) -> None:
        load_handlers()
        self.router = routing.Router(routing.registered_routes())

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        started = time.monotonic()
        request_id = "req-" + str(uuid.uuid4())
        token = zun_log.REQUEST_ID.set(request_id)
        req = ApiRequest(environ)
        req.request_id = request_id
        try:
            resp = self.dispatch(req)
            resp.headers["x-openstack-request-id"] = request_id
            LOG.info(
                "%s %s -> %s (%.1f ms)",
                req.method,
                _path_for_log(environ),
                resp.status_code,
                (time.monotonic() - started) * 1000,
            )
            return resp(environ, start_response)
        finally:
            zun_log.REQUEST_ID.reset(token)

    def dispatch(self, req: ApiRequest) -> webob.Response:
        try:
            check_url(req.environ)
        except HTTPError as exc:
            return self.http_error(req, exc)
        path = routing.normalise_path(req.path_info)
        versioned = path != "/"
        version_headers: list[tuple[str, str]] = []
        try:
            if versioned:
                req.version = microversion.parse_header(req.headers.get(microversion.HEADER))
                version_headers = microversion.response_headers(req.version)
            else:
                req.version = microversion.MIN_VERSION
            req.context = build_context(req, req.request_id)
            resp = self.route(req, path)
        except HTTPError as exc:
            resp = self.http_error(req, exc)
            if not exc.version_headers:
                version_headers = []
        except microversion.VersionError as exc:
            extra = None
            if exc.unsupported:
                extra = {
                    "min_version": str(microversion.MIN_VERSION),
                    "max_version": str(microversion.MAX_VERSION),
                }
            resp = self.http_error(req, HTTPError(406, exc.detail, extra=extra, title=exc.detail))
            version_headers = [
                (microversion.MIN_HEADER, f"container {microversion.MIN_VERSION}"),
                (microversion.MAX_HEADER, f"container {microversion.MAX_VERSION}"),
            ]
        except Exception as exc:  # every failure gets Zun's error shape
            status, body = errors.to_error(exc, req.request_id)
            resp = webob.Response(
                status=status, content_type="application/json", charset=None, body=body
            )
        for name, value in version_headers:
            resp.headers[name] = value
        if req.method == "HEAD":
            resp.body = b""
        return resp

    def route(self, req: ApiRequest, path: str) -> webob.Response:
        found = self.router.match(path)
        if found is None:
            raise HTTPError(404, f"The resource could not be found: {req.path_info}")
        entry, params = found
        candidates = entry.by_method.get(req.method)
        if not candidates:
            return self.unserved_method(req, entry, params)
        # After routing (404/405 first) and before the handler, as the original negotiated.
        req.require_json_acceptable()
        for candidate in candidates:
            if not candidate.versioned or candidate.accepts(req.version):
                return self.call(candidate.handler, req, params)
        detail = (
            f"Version {req.version} was requested but the requested API is not "
            "supported for this version."
        )
        low = min(c.min_version for c in candidates)
        high = max(c.max_version for c in candidates)
        raise HTTPError(406, detail, title=f"{detail} It is served from version {low} to {high}.")

    def unserved_method(
        self, req: ApiRequest, entry: routing.PathEntry, params: dict[str, str]
    ) -> webob.Response:
        """A method the path has no handler for: a misroute's answer, OPTIONS, 404 or 405."""
        misroute = entry.misroutes.get(req.method)
        if misroute is not None:
            req.require_json_acceptable()
            return self.call(misroute, req, params)
        allow = ", ".join(sorted(entry.by_method))
        if req.method == "OPTIONS":
            # What the path serves; browsers' CORS preflights get their headers from the
            # CORS middleware around the application.
            resp = webob.Response(status=200, charset=None)
            resp.content_type = None
            resp.headers["Allow"] = ", ".join(sorted([*entry.by_method, "OPTIONS"]))
            return resp
        if entry.is_custom_action:
            raise HTTPError(404, f"The resource could not be found: {req.path_info}")
        raise HTTPError(
            405,
            f"The method {req.method} is not allowed for this resource.",
            headers=[("Allow", allow)],
        )

    @staticmethod
    def call(handler: routing.Handler, req: ApiRequest, params: dict[str, str]) -> webob.Response:
        result = handler(req, **params)
        if not isinstance(result, webob.Response):
            raise TypeError(
                f"{handler.__qualname__} returned {type(result).__name__}, not a response"
            )
        return result

    @staticmethod
    def http_error(req: ApiRequest, exc: HTTPError) -> webob.Response:
        body = errors.plain_error(req.request_id, exc.status, exc.detail, exc.extra, exc.title)
        resp = webob.Response(
            status=exc.status, content_type="application/json", charset=None, body=body
        )
        for name, value in exc.headers:
            resp.headers[name] = value
        return resp


def _path_for_log(environ: dict[str, Any]) -> str:
    # The raw URL, percent-encoded again: WebOb's path_qs fails on bytes that are not UTF-8.
    path = urllib.parse.quote(environ.get("PATH_INFO", "").encode("latin-1"), safe="/")
    query = environ.get("QUERY_STRING", "")
    return f"{path}?{query}" if query else path


def check_url(environ: dict[str, Any]) -> None:
    """400 for a path or query that is not UTF-8 or carries a NUL character.

    WebOb decodes both as UTF-8 on first use and raised UnicodeDecodeError (a 500); a NUL
    reached the database, which PostgreSQL refuses in text.
    """
    # PEP 3333: PATH_INFO is already percent-decoded, as latin-1 text of the raw bytes.
    raw_path = environ.get("PATH_INFO", "").encode("latin-1")
    raw_query = urllib.parse.unquote_to_bytes(
        environ.get("QUERY_STRING", "").encode("latin-1").replace(b"+", b" ")
    )
    for where, raw in (("path", raw_path), ("query string", raw_query)):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raise HTTPError(400, f"The URL {where} is not valid UTF-8.") from None
        if b"\x00" in raw:
            raise HTTPError(400, f"The URL {where} contains a NUL character.")


def build_app(
    auth_strategy: str | None = None, zun_app: ZunApp | None = None
) -> Callable[..., Iterable[bytes]]:
    """The full WSGI pipeline: CORS and the health check, then authentication, then Zun."""
    return middleware.wrap(auth.wrap(zun_app or ZunApp(), auth_strategy))
