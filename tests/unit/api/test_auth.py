"""Authentication strategies: noauth identities and keystone's public/protected split."""

from __future__ import annotations

import json

import pytest
import webob
from unit.api.apptesting import init_config

from zun.api import auth
from zun.api.app import ZunApp, build_app


def _whoami_app(environ, start_response):
    body = json.dumps(
        {h: environ.get(h) for h in ("HTTP_X_USER_ID", "HTTP_X_PROJECT_ID", "HTTP_X_ROLES")}
    ).encode()
    start_response("200 OK", [("Content-Type", "application/json")])
    return [body]


def test_noauth_without_headers_is_the_default_admin() -> None:
    resp = webob.Request.blank("/v1/containers").get_response(auth.NoAuth(_whoami_app))
    assert resp.json == {
        "HTTP_X_USER_ID": "admin",
        "HTTP_X_PROJECT_ID": "default",
        "HTTP_X_ROLES": "admin",
    }


def test_noauth_token_only_is_the_default_admin() -> None:
    # What `openstack --os-auth-type none` and keystoneauth's NoAuth send.
    req = webob.Request.blank("/v1/containers", headers={"X-Auth-Token": "notused"})
    assert req.get_response(auth.NoAuth(_whoami_app)).json["HTTP_X_ROLES"] == "admin"


def test_noauth_headers_give_exactly_that_identity() -> None:
    req = webob.Request.blank(
        "/v1/containers",
        headers={"X-User-Id": "u1", "X-Project-Id": "p1", "X-Roles": "member,reader"},
    )
    assert req.get_response(auth.NoAuth(_whoami_app)).json == {
        "HTTP_X_USER_ID": "u1",
        "HTTP_X_PROJECT_ID": "p1",
        "HTTP_X_ROLES": "member,reader",
    }


def test_noauth_partial_headers_are_not_completed() -> None:
    req = webob.Request.blank("/v1/containers", headers={"X-Project-Id": "p1"})
    body = req.get_response(auth.NoAuth(_whoami_app)).json
    assert body["HTTP_X_PROJECT_ID"] == "p1"
    assert body["HTTP_X_USER_ID"] is None
    assert body["HTTP_X_ROLES"] == ""


def test_context_from_headers(api_db: str) -> None:
    seen = {}

    class Probe(ZunApp):
        def route(self, req, path):
            seen["ctx"] = req.context
            return webob.Response(status=200)

    init_config()
    app = auth.NoAuth(Probe())
    webob.Request.blank(
        "/v1/containers", headers={"X-User-Id": "u1", "X-Project-Id": "p1", "X-Roles": "member"}
    ).get_response(app)
    assert (seen["ctx"].user_id, seen["ctx"].project_id) == ("u1", "p1")
    assert seen["ctx"].is_admin is False
    webob.Request.blank("/v1/containers").get_response(app)
    assert seen["ctx"].is_admin is True
    assert seen["ctx"].project_id == "default"


@pytest.mark.parametrize("path", ["/", "/v1", "/v1/", "/v1.json"])
def test_public_paths(path: str) -> None:
    assert auth.is_public_path(path)


@pytest.mark.parametrize("path", ["/v1/containers", "/containers", "/v1/services/"])
def test_protected_paths(path: str) -> None:
    assert not auth.is_public_path(path)


@pytest.fixture
def keystone_app(api_db: str):
    from keystonemiddleware import auth_token  # registers [keystone_authtoken]

    from zun.conf import CONF

    assert auth_token
    init_config()
    # An unreachable Keystone: a request without a token must be refused before any lookup.
    CONF.set_override("www_authenticate_uri", "http://127.0.0.1:9/v3", group="keystone_authtoken")
    yield build_app("keystone")
    CONF.clear_override("www_authenticate_uri", group="keystone_authtoken")


def test_keystone_refuses_a_request_without_token(keystone_app) -> None:
    resp = webob.Request.blank("/v1/containers").get_response(keystone_app)
    assert resp.status_int == 401
    assert "WWW-Authenticate" in resp.headers


def test_keystone_ignores_forged_identity_headers_without_token(keystone_app) -> None:
    req = webob.Request.blank(
        "/v1/containers", headers={"X-User-Id": "u", "X-Project-Id": "p", "X-Roles": "admin"}
    )
    assert req.get_response(keystone_app).status_int == 401


@pytest.mark.parametrize("path", ["/", "/v1", "/v1/"])
def test_keystone_serves_version_documents_without_token(keystone_app, path: str) -> None:
    resp = webob.Request.blank(path).get_response(keystone_app)
    assert resp.status_int == 200
    assert resp.json.get("versions") or resp.json.get("id") == "v1"


def test_keystone_serves_the_healthcheck_without_token(keystone_app) -> None:
    """Load balancers probe /healthcheck with no token, as the original's paste pipeline let
    them (the health check sat beside authentication, not behind it)."""
    resp = webob.Request.blank("/healthcheck").get_response(keystone_app)
    assert resp.status_int == 200
    assert resp.text == "OK"


def test_keystone_cors_preflight_needs_no_token(keystone_app) -> None:
    """A browser's preflight carries no token; the CORS middleware answers it with 200."""
    resp = webob.Request.blank("/v1/containers", method="OPTIONS").get_response(keystone_app)
    assert resp.status_int == 200
