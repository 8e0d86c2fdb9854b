"""Behaviour every route shares (rest-api.md §1, §3, §4; errors.md §1-§4), over HTTP.

Handlers that only exist for a test are added to one app object (``make_app(extra_routes)``),
never to the global route table.
"""

from __future__ import annotations

import logging
import sys
import uuid
from typing import Any

import pytest
import webob
from oslo_messaging._drivers import common as rpc_common
from oslo_policy import policy as oslo_policy
from unit.api.apptesting import ApiClient, Seed, extra_route, make_app

from zun.api import validation
from zun.api.request import ApiRequest
from zun.api.response import json_reply
from zun.common import exception, policy
from zun.db import engine, paging
from zun.db.models import Registry

ALLOWED_EXMODS = [exception.__name__]


def _remote(exc: Exception) -> Exception:
    """``exc`` as the API receives it back from a node: through oslo.messaging's round trip."""
    try:
        raise exc
    except Exception:
        data = rpc_common.serialize_remote_exception(sys.exc_info())
    return rpc_common.deserialize_remote_exception(data, ALLOWED_EXMODS)


def _raiser(exc: BaseException):
    def handler(req: ApiRequest) -> webob.Response:
        raise exc

    return handler


def _create_like(req: ApiRequest) -> webob.Response:
    """What a create handler does, in the original's order: 415, schema, then policy."""
    req.require_json()
    body = req.body_object()
    validation.validate_body("registries.registry_create", body)
    policy.authorize(req.context, "network:create")
    return json_reply(body, 202)


def _show_registry(req: ApiRequest, ident: str) -> webob.Response:
    """A resource-bound lookup: scoped lookup (404) before the row's policy (403)."""
    with engine.transaction(readonly=True) as session:
        row = paging.get_by_ident(
            session,
            Registry,
            ident,
            context=req.context,
            not_found=lambda i: exception.RegistryNotFound(registry=i),
            singular="registry",
            plural="registries",
        )
    policy.authorize(
        req.context, "registry:get_one", {"project_id": row.project_id, "user_id": row.user_id}
    )
    return json_reply({"uuid": row.uuid, "project_id": row.project_id})


def _poke(req: ApiRequest, ident: str = "") -> webob.Response:
    return json_reply(None, 202)


@pytest.fixture
def app(api_db: str) -> Any:
    return make_app(
        [
            extra_route("GET", "/v1/test/boom", _raiser(RuntimeError("secret /etc/zun/zun.conf"))),
            extra_route(
                "GET", "/v1/test/zun500", _raiser(exception.DockerError(error_msg="secret"))
            ),
            extra_route(
                "GET",
                "/v1/test/conflict-remote",
                _raiser(_remote(exception.Conflict(message="Timeout on executing command: ls"))),
            ),
            extra_route(
                "GET",
                "/v1/test/invalid-uuid-remote",
                _raiser(_remote(exception.InvalidUUID(uuid="x"))),
            ),
            extra_route(
                "GET",
                "/v1/test/docker-remote",
                _raiser(_remote(exception.DockerError(error_msg="secret"))),
            ),
            extra_route("POST", "/v1/test/create", _create_like),
            extra_route("GET", "/v1/test/registries/{ident}", _show_registry),
            extra_route("POST", "/v1/test/things/{ident}/poke", _poke),
            extra_route("GET", "/v1/test/new", _poke, min_version="1.30"),
        ]
    )


@pytest.fixture
def client(app: Any) -> ApiClient:
    return ApiClient(app)


def _assert_error_shape(reply: Any, status: int, code: str) -> dict[str, Any]:
    assert reply.status == status, reply
    assert reply.headers["Content-Type"] == "application/json"
    (error,) = reply.json["errors"]
    assert set(error) >= {"request_id", "code", "status", "title", "detail", "links"}
    assert error["status"] == status and error["code"] == code and error["links"] == []
    assert error["request_id"] == reply.headers["x-openstack-request-id"]
    assert error["request_id"].startswith("req-")
    assert b"Traceback" not in reply.body
    return error


def test_bare_exception_is_an_obfuscated_500(
    client: ApiClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        reply = client.at("1.12").get("/v1/test/boom")
    error = _assert_error_shape(reply, 500, "container.")
    assert error["title"] == "Internal Server Error"
    assert error["request_id"] in error["detail"]
    assert b"secret" not in reply.body
    assert reply.headers["OpenStack-API-Version"] == "container 1.12"
    # The details go to the log, under the same request id.
    assert any(error["request_id"] in r.getMessage() and r.exc_info for r in caplog.records)


def test_zun_server_error_is_obfuscated(client: ApiClient) -> None:
    error = _assert_error_shape(client.get("/v1/test/zun500"), 500, "container.")
    assert "secret" not in error["title"] + error["detail"]


def test_remote_client_error_keeps_status_and_gains_remote(client: ApiClient) -> None:
    reply = client.get("/v1/test/conflict-remote")
    error = _assert_error_shape(reply, 409, "container.conflict-remote")
    # oslo.messaging appends the node's traceback to str(); none of it reaches the client.
    assert error["title"] == error["detail"] == "Timeout on executing command: ls"


def test_remote_code_keeps_the_original_derivation_quirk(client: ApiClient) -> None:
    # "InvalidUUID_Remote": the regex drops "UUID" before "_", as in the original.
    _assert_error_shape(client.get("/v1/test/invalid-uuid-remote"), 400, "container.invalid-remote")


def test_remote_server_error_is_obfuscated(client: ApiClient) -> None:
    error = _assert_error_shape(client.get("/v1/test/docker-remote"), 500, "container.")
    assert "secret" not in error["title"] + error["detail"]


@pytest.mark.parametrize("content_type", ["text/plain", None, "application/x-www-form-urlencoded"])
def test_non_json_create_is_415(client: ApiClient, content_type: str | None) -> None:
    # Before the schema (this body is invalid) and before the policy (members are refused).
    reply = client.as_member("project-a").post(
        "/v1/test/create", body=b"name=x", content_type=content_type
    )
    error = _assert_error_shape(reply, 415, "container.")
    assert "Unexpected content type" in error["detail"]
    assert reply.headers["OpenStack-API-Version"] == "container 1.1"


def test_json_create_goes_on_to_the_schema_then_policy(client: ApiClient) -> None:
    member = client.as_member("project-a")
    reply = member.post("/v1/test/create", json={"registry": {"name": "x"}})
    _assert_error_shape(reply, 400, "container.schema-validation-error")
    reply = member.post("/v1/test/create", json={"registry": {"domain": "d.example"}})
    _assert_error_shape(reply, 403, "container.policy-not-authorized")
    reply = client.post("/v1/test/create", json={"registry": {"domain": "d.example"}})
    assert reply.status == 202, reply


@pytest.mark.parametrize("body", [b"{bad", b"[1, 2]", b'"text"'])
def test_unparsable_or_non_object_body_is_400(client: ApiClient, body: bytes) -> None:
    reply = client.post("/v1/test/create", body=body, content_type="application/json")
    error = _assert_error_shape(reply, 400, "container.")
    assert error["detail"]


def test_version_window_before_content_type(client: ApiClient) -> None:
    reply = client.at("1.29").get("/v1/test/new")
    error = _assert_error_shape(reply, 406, "container.")
    assert error["detail"] == (
        "Version 1.29 was requested but the requested API is not supported for this version."
    )
    assert client.at("1.30").get("/v1/test/new").status == 202


def test_out_of_range_version_is_406_before_routing(client: ApiClient) -> None:
    reply = client.at("1.42").get("/v1/no/such/route")
    error = _assert_error_shape(reply, 406, "container.")
    assert (error["min_version"], error["max_version"]) == ("1.1", "1.41")
    assert reply.headers["OpenStack-API-Maximum-Version"] == "container 1.41"


def test_custom_action_with_the_wrong_verb_is_404(client: ApiClient) -> None:
    _assert_error_shape(client.get("/v1/test/things/x/poke"), 404, "container.")
    assert client.post("/v1/test/things/x/poke").status == 202


def test_head_has_no_body(client: ApiClient) -> None:
    reply = client.head("/v1/services")
    assert reply.status == 405 and reply.body == b""
    assert reply.headers["Allow"] == "DELETE, GET"
    assert reply.headers["x-openstack-request-id"].startswith("req-")


def test_every_answer_has_a_fresh_request_id(client: ApiClient) -> None:
    ids = {
        client.get(path).headers["x-openstack-request-id"]
        for path in ("/", "/v1", "/v1/services", "/v1/nope", "/v1/test/boom")
    }
    assert len(ids) == 5


def test_version_headers_on_success_and_errors(client: ApiClient) -> None:
    for path, status in (("/v1/services", 200), ("/v1/nope", 404), ("/v1/test/boom", 500)):
        reply = client.at("latest").get(path)
        assert reply.status == status
        assert reply.headers["OpenStack-API-Version"] == "container 1.41"
        assert reply.headers["OpenStack-API-Minimum-Version"] == "container 1.1"
        assert reply.headers["OpenStack-API-Maximum-Version"] == "container 1.41"
        assert reply.headers["Vary"] == "OpenStack-API-Version"


def _registry(seed: Seed, project: str, name: str) -> Registry:
    return seed.row(
        Registry(
            uuid=str(uuid.uuid4()),
            name=name,
            project_id=project,
            user_id=f"user-of-{project}",
            domain="registry.example",
        )
    )


def test_lookup_is_scoped_to_the_project(client: ApiClient, seed: Seed) -> None:
    mine = _registry(seed, "project-a", "shared-name")
    _registry(seed, "project-b", "shared-name")
    a, b = client.as_member("project-a"), client.as_member("project-b")
    assert a.get(f"/v1/test/registries/{mine.uuid}").json["uuid"] == mine.uuid
    # Same name in two projects: each member sees only its own, so no ambiguity.
    assert a.get("/v1/test/registries/shared-name").json["uuid"] == mine.uuid
    assert b.get("/v1/test/registries/shared-name").json["project_id"] == "project-b"
    # Another project's row is a 404, never a 403.
    reply = b.get(f"/v1/test/registries/{mine.uuid}")
    error = _assert_error_shape(reply, 404, "container.registry-not-found")
    assert error["title"] == f"Registry {mine.uuid} could not be found."
    # Admins reach every project, so for them the name is ambiguous.
    assert client.get(f"/v1/test/registries/{mine.uuid}").json["project_id"] == "project-a"
    error = _assert_error_shape(
        client.get("/v1/test/registries/shared-name"), 409, "container.conflict"
    )
    assert error["title"] == (
        "Multiple registries exist with same name. Please use the registry uuid instead."
    )


def test_lookup_404_comes_before_the_resource_policy(client: ApiClient, seed: Seed) -> None:
    mine = _registry(seed, "project-a", "reg")
    enforcer = policy.get_enforcer()
    enforcer.set_rules(
        oslo_policy.Rules.from_dict({"registry:get_one": "!"}), overwrite=False, use_conf=False
    )
    try:
        a = client.as_member("project-a")
        _assert_error_shape(a.get("/v1/test/registries/nope"), 404, "container.registry-not-found")
        _assert_error_shape(
            a.get(f"/v1/test/registries/{mine.uuid}"), 403, "container.policy-not-authorized"
        )
    finally:
        policy.reset()


@pytest.mark.parametrize(
    ("short", "full"),
    [
        ("/containers", "/v1/containers"),
        ("/containers/", "/v1/containers"),
        ("/containers.json", "/v1/containers"),
        ("/services.json", "/v1/services"),
        ("/v1/services/", "/v1/services"),
    ],
)
def test_url_forms_reach_the_same_handler(client: ApiClient, short: str, full: str) -> None:
    a, b = client.at("latest").get(short), client.at("latest").get(full)
    assert a.status == b.status == 200, (a, b)
    assert a.json == b.json
