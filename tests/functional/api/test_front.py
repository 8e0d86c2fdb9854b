"""What answers before the API's own routes: /healthcheck, CORS and OPTIONS, and the Accept
header clients send (python-zunclient via keystoneauth, the openstack CLI, gophercloud, curl,
browsers)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import webob
from unit.api.apptesting import ApiClient, config_overrides, make_app


def _raw(app: Any, path: str, method: str = "GET", **headers: str) -> webob.Response:
    req = webob.Request.blank(path, method=method, headers=headers)
    return req.get_response(app)


@pytest.fixture
def app(api_db: str) -> Any:
    return make_app()


@pytest.mark.parametrize("path", ["/healthcheck", "/healthcheck/"])
def test_healthcheck_answers_ok_without_identity(app: Any, path: str) -> None:
    resp = _raw(app, path)
    assert resp.status_int == 200
    assert resp.text == "OK"
    assert resp.content_type == "text/plain"


def test_healthcheck_head_has_no_body(app: Any) -> None:
    resp = _raw(app, "/healthcheck", method="HEAD")
    assert resp.status_int in (200, 204)
    assert resp.body == b""


def test_healthcheck_disabled_by_file(api_db: str, tmp_path: Any) -> None:
    """oslo.middleware's disable_by_file backend takes a node out of a load balancer."""
    flag = tmp_path / "healthcheck_disable"
    with config_overrides(
        {"healthcheck": {"backends": ["disable_by_file"], "disable_by_file_path": str(flag)}}
    ):
        app = make_app()
        assert _raw(app, "/healthcheck").status_int == 200
        flag.write_text("")
        resp = _raw(app, "/healthcheck")
    assert resp.status_int == 503
    assert "DISABLED" in resp.text


#: Accept headers real clients send; every one must get JSON.
CLIENT_ACCEPTS = [
    None,  # no header (python urllib, some scripts)
    "*/*",  # curl
    "application/json",  # keystoneauth (zunclient, openstack CLI)
    "application/json, */*",
    "application/json;q=0.9, text/plain;q=0.5",
    "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",  # a browser
    "application/*",
    "not a valid header ;;",  # unparsable: treated as absent
]


@pytest.mark.parametrize("accept", CLIENT_ACCEPTS)
def test_accept_headers_clients_send_get_json(app: Any, accept: str | None) -> None:
    headers = {"Accept": accept} if accept is not None else {}
    resp = _raw(app, "/v1/services", **headers)
    assert resp.status_int == 200, resp.text
    assert resp.content_type == "application/json"


@pytest.mark.parametrize(
    "accept", ["text/html", "application/xml", "text/plain", "application/json;q=0"]
)
def test_accept_without_json_is_406(api: ApiClient, accept: str) -> None:
    reply = api.get("/v1/containers", headers={"Accept": accept})
    assert reply.status == 406
    assert reply.error["code"] == "container."
    assert "application/json" in reply.error["title"]
    assert reply.headers["OpenStack-API-Version"] == "container 1.1"


def test_options_anywhere_is_200_as_in_zun(app: Any) -> None:
    """The original's CORS middleware answered every OPTIONS with 200, known path or not."""
    for path in ("/v1/containers", "/v1/no-such-thing", "/"):
        assert _raw(app, path, method="OPTIONS").status_int == 200, path
    assert _raw(app, "/v1/containers", method="OPTIONS").headers["Allow"] == "GET, OPTIONS, POST"


@pytest.fixture
def cors_app(api_db: str) -> Iterator[Any]:
    with config_overrides({"cors": {"allowed_origin": ["https://dashboard.example"]}}):
        yield make_app()


def test_cors_preflight_and_request_headers(cors_app: Any) -> None:
    resp = _raw(
        cors_app,
        "/v1/containers",
        method="OPTIONS",
        Origin="https://dashboard.example",
        **{
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "OpenStack-API-Version",
        },
    )
    assert resp.status_int == 200
    assert resp.headers["Access-Control-Allow-Origin"] == "https://dashboard.example"
    assert "OpenStack-API-Version" in resp.headers["Access-Control-Allow-Headers"]
    resp = _raw(cors_app, "/v1/services", Origin="https://dashboard.example")
    assert resp.status_int == 200
    assert resp.headers["Access-Control-Allow-Origin"] == "https://dashboard.example"
    assert "OpenStack-API-Version" in resp.headers["Access-Control-Expose-Headers"]


def test_cors_ignores_other_origins(cors_app: Any) -> None:
    resp = _raw(cors_app, "/v1/services", Origin="https://evil.example")
    assert resp.status_int == 200
    assert "Access-Control-Allow-Origin" not in resp.headers
