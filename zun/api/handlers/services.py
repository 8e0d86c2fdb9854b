"""``/v1/services``: the services list and the admin actions on one service (rest-api.md §12).

python-zunclient sends every parameter of the PUT actions and of DELETE in the query string
(booleans as ``True``/``False``). A JSON body is merged in and validated with the query, so a
body value can no longer bypass the schema (the original validated the query only).
"""

from __future__ import annotations

from typing import Any

import webob

from zun.api import common, openapi
from zun.api.request import ApiRequest
from zun.api.response import json_reply
from zun.api.routing import route
from zun.api.validation import validate_query
from zun.api.views.services import service_view
from zun.common import policy
from zun.db.queries import services as queries


@route("GET", "/v1/services")
def list_services(req: ApiRequest) -> webob.Response:
    """List every service with its state (admin)."""
    policy.authorize(req.context, "zun-service:get_all")
    return json_reply({"services": [service_view(s) for s in queries.list_services()]})


def _delete(req: ApiRequest, host: str | None, binary: str | None) -> webob.Response:
    common.require_params({"host": host, "binary": binary}, ("host", "binary"))
    policy.authorize(req.context, "zun-service:delete")
    assert host is not None and binary is not None
    queries.delete_service(host, binary)
    return json_reply(None)


@route("DELETE", "/v1/services")
def delete_service(req: ApiRequest) -> webob.Response:
    """Delete the service ``binary`` on ``host`` (query parameters; admin)."""
    params = req.merged_params()
    return _delete(req, params.get("host"), params.get("binary"))


@route("DELETE", "/v1/services/{host}/{binary}")
def delete_service_by_path(req: ApiRequest, host: str, binary: str) -> webob.Response:
    """The path form the original's router also accepted (rest-api.md §12)."""
    return _delete(req, host, binary)


def _action_params(req: ApiRequest, schema: str, required: tuple[str, ...]) -> dict[str, Any]:
    params = req.merged_params()
    validate_query(schema, params)
    common.require_params(params, required)
    return params


def _service_answer(row: Any, keys: tuple[str, ...]) -> webob.Response:
    return json_reply({"service": {key: getattr(row, key) for key in keys}})


@route("PUT", "/v1/services/enable")
@openapi.describe(query="services.query_param_enable")
def enable_service(req: ApiRequest) -> webob.Response:
    """Enable a service (admin)."""
    params = _action_params(req, "services.query_param_enable", ("host", "binary"))
    policy.authorize(req.context, "zun-service:enable")
    row = queries.update_service(
        params["host"], params["binary"], {"disabled": False, "disabled_reason": None}
    )
    return _service_answer(row, ("host", "binary", "disabled", "disabled_reason"))


@route("PUT", "/v1/services/disable")
@openapi.describe(query="services.query_param_disable")
def disable_service(req: ApiRequest) -> webob.Response:
    """Disable a service, with an optional reason (admin)."""
    params = _action_params(req, "services.query_param_disable", ("host", "binary"))
    policy.authorize(req.context, "zun-service:disable")
    row = queries.update_service(
        params["host"],
        params["binary"],
        {"disabled": True, "disabled_reason": params.get("disabled_reason")},
    )
    return _service_answer(row, ("host", "binary", "disabled", "disabled_reason"))


@route("PUT", "/v1/services/force_down")
@openapi.describe(query="services.query_param_force_down")
def force_down_service(req: ApiRequest) -> webob.Response:
    """Mark a service forced down, or clear it (admin)."""
    params = _action_params(
        req, "services.query_param_force_down", ("host", "binary", "forced_down")
    )
    forced_down = common.parse_bool(params["forced_down"], "forced_down")
    policy.authorize(req.context, "zun-service:force_down")
    row = queries.update_service(params["host"], params["binary"], {"forced_down": forced_down})
    return _service_answer(row, ("host", "binary", "forced_down"))
