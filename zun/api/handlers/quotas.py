"""``/v1/quotas/{project_id}``: a project's limits, usage, defaults and reset (rest-api.md §14).

Every version (1.1+). Limits are read and written through :mod:`zun.compute.quota`. A member may
read only its own project (``quota:get`` / ``quota:get_default`` target the path's project);
changing limits is for admins.

``usages``: as in Zun, any non-empty value selects the usage form (python-zunclient sends
``usages=True`` and nothing otherwise).
"""

from __future__ import annotations

from typing import Any

import webob

from zun.api import validation
from zun.api.request import ApiRequest
from zun.api.response import json_reply
from zun.api.routing import route
from zun.api.views.quotas import limits_view, usages_view
from zun.common import policy
from zun.compute import quota
from zun.db import engine

ITEM = "/v1/quotas/{project_id}"
SCHEMA = "quotas.query_param_update"


def _target(project_id: str) -> dict[str, Any]:
    return {"project_id": project_id}


def validated_update(req: ApiRequest, schema: str) -> dict[str, Any]:
    """The new limits of a PUT: query values checked as query parameters, then the query merged
    with a JSON body checked as a body (where Zun left body values unchecked)."""
    validation.validate_query(schema, req.query())
    params = req.merged_params()
    validation.validate_body(schema, params)
    return params


@route("PUT", ITEM)
def update_quotas(req: ApiRequest, project_id: str) -> webob.Response:
    """Set some limits of a project; answers its effective limits (admin)."""
    values = validated_update(req, SCHEMA)
    policy.authorize(req.context, "quota:update", _target(project_id))
    with engine.transaction() as session:
        quota.set_project_limits(session, project_id, values)
    with engine.transaction(readonly=True) as session:
        return json_reply(limits_view(quota.get_project_limits(session, project_id)))


@route("GET", ITEM)
def get_quotas(req: ApiRequest, project_id: str) -> webob.Response:
    """A project's limits, or with ``?usages=...`` its limits and what is in use."""
    policy.authorize(req.context, "quota:get", _target(project_id))
    with engine.transaction(readonly=True) as session:
        if req.GET.get("usages"):
            return json_reply(usages_view(quota.get_project_usages(session, project_id)))
        return json_reply(limits_view(quota.get_project_limits(session, project_id)))


@route("GET", ITEM + "/defaults")
def get_default_quotas(req: ApiRequest, project_id: str) -> webob.Response:
    """The limits a project gets when it has none of its own."""
    policy.authorize(req.context, "quota:get_default", _target(project_id))
    with engine.transaction(readonly=True) as session:
        return json_reply(limits_view(quota.get_defaults(session)))


@route("DELETE", ITEM)
def delete_quotas(req: ApiRequest, project_id: str) -> webob.Response:
    """Drop a project's own limits (it falls back to the defaults); 200 ``null`` as in Zun."""
    policy.authorize(req.context, "quota:delete", _target(project_id))
    with engine.transaction() as session:
        quota.delete_project_limits(session, project_id)
    return json_reply(None)
