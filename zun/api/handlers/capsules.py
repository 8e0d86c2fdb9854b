"""``/v1/capsules``: list, create, show, delete (rest-api.md §8, capsule-template.md).

The request format is the same at every version; the answer's shape changes at 1.32 (see
:mod:`zun.api.views.capsules`), hence two handlers for list, create and show.

Deliberate differences from Zun (docs/compatibility.md, "Capsules"):
* template errors are 400s that name the problem (Zun: obfuscated 500s), see
  :mod:`zun.api.capsule_template`;
* ``all_projects`` on the list needs ``capsule:get_all_all_projects`` (admin by default), like
  containers; Zun never checked that rule and silently ignored the parameter for members;
* a capsule whose host is down cannot be deleted: 409 naming the host (Zun: obfuscated 500).
"""

from __future__ import annotations

from typing import Any

import webob

from zun.api import capsule_template, openapi, validation
from zun.api import common as api_common
from zun.api.request import ApiRequest
from zun.api.response import accepted_with_location, empty, json_reply
from zun.api.routing import route
from zun.api.views import capsules as views
from zun.common import policy
from zun.compute import capsule_api, node_health
from zun.db import engine, models
from zun.db.queries import capsules as capsule_q

COLLECTION = "capsules"
ITEM = "/v1/capsules/{capsule_ident}"
LEGACY_MAX = "1.31"
CURRENT_MIN = "1.32"


def _target(capsule: models.Container) -> dict[str, Any]:
    return {"project_id": capsule.project_id, "user_id": capsule.user_id}


def _render(
    req: ApiRequest,
    capsules: list[models.Container],
    legacy: bool,
) -> list[dict[str, Any]]:
    with engine.transaction(readonly=True) as session:
        members = capsule_q.member_view_rows(session, [c.id for c in capsules])
        # A capsule of a down (or engine-less) host reads Unknown, as its containers do.
        hosts = {c.host for c in capsules if c.host}
        unhealthy = node_health.unhealthy_hosts(session, hosts) if hosts else {}
    render = views.Renderer(req.context, req.host_url, legacy, unhealthy)
    return [render(c, members[c.id]) for c in capsules]


def _render_uuid(req: ApiRequest, uuid: str, legacy: bool) -> dict[str, Any]:
    with engine.transaction(readonly=True) as session:
        capsule = capsule_q.get_by_uuid(session, uuid)
    if capsule is None:
        raise capsule_q.not_found(uuid)
    return _render(req, [capsule], legacy)[0]


# --- list -------------------------------------------------------------------------------------


def _list(req: ApiRequest, legacy: bool) -> webob.Response:
    ctx = req.context
    policy.authorize(ctx, "capsule:get_all")
    params = req.query()  # unknown parameters are ignored, as in Zun
    all_projects = api_common.all_projects(params)
    if all_projects:
        policy.authorize(ctx, "capsule:get_all_all_projects")
    page = api_common.page_params(params)
    with engine.transaction(readonly=True) as session:
        capsules = capsule_q.list_page(session, ctx, all_projects=all_projects, page=page)
    items = _render(req, capsules, legacy)
    return json_reply(
        {"capsules": items, "next": api_common.next_link(req.host_url, COLLECTION, page, items)}
    )


@route("GET", "/v1/capsules", "1.1", LEGACY_MAX)
def list_capsules_legacy(req: ApiRequest) -> webob.Response:
    """List capsules (legacy shape)."""
    return _list(req, legacy=True)


@route("GET", "/v1/capsules", CURRENT_MIN)
def list_capsules(req: ApiRequest) -> webob.Response:
    """List capsules."""
    return _list(req, legacy=False)


# --- create -----------------------------------------------------------------------------------


def _create(req: ApiRequest, legacy: bool) -> webob.Response:
    req.require_json()
    ctx = req.context
    params = req.merged_params()
    capsule_template.check_template_type(params)
    validation.validate_body(capsule_template.CREATE_SCHEMA, params)
    template = capsule_template.load(params["template"])
    policy.authorize(ctx, "capsule:create")
    # Zun drops a member's imagePullPolicy silently when the caller may not set it.
    allow_pull_policy = capsule_template.wants_pull_policy(template) and policy.authorize(
        ctx, "container:create:image_pull_policy", fatal=False
    )
    plan = capsule_template.build_plan(template, allow_pull_policy=allow_pull_policy)
    uuid = capsule_api.get_api().create(ctx, plan)
    return accepted_with_location(
        _render_uuid(req, uuid, legacy), api_common.location(req.host_url, COLLECTION, uuid)
    )


@route("POST", "/v1/capsules", "1.1", LEGACY_MAX)
# No body schema in the document: Zun's lists the non-standard type "unicode", which OpenAPI
# tools reject; tests/unit/api/handlers/test_capsules.py fuzzes the template itself.
@openapi.describe(status=202)
def create_capsule_legacy(req: ApiRequest) -> webob.Response:
    """Create a capsule (legacy answer shape)."""
    return _create(req, legacy=True)


@route("POST", "/v1/capsules", CURRENT_MIN)
# No body schema in the document: Zun's lists the non-standard type "unicode", which OpenAPI
# tools reject; tests/unit/api/handlers/test_capsules.py fuzzes the template itself.
@openapi.describe(status=202)
def create_capsule(req: ApiRequest) -> webob.Response:
    """Create a capsule."""
    return _create(req, legacy=False)


# --- show, delete -----------------------------------------------------------------------------


def _show(req: ApiRequest, capsule_ident: str, legacy: bool) -> webob.Response:
    capsule = capsule_api.get_api().get(req.context, capsule_ident)
    policy.authorize(req.context, "capsule:get", _target(capsule))
    return json_reply(_render(req, [capsule], legacy)[0])


@route("GET", ITEM, "1.1", LEGACY_MAX)
def show_capsule_legacy(req: ApiRequest, capsule_ident: str) -> webob.Response:
    """Show a capsule (legacy shape)."""
    return _show(req, capsule_ident, legacy=True)


@route("GET", ITEM, CURRENT_MIN)
def show_capsule(req: ApiRequest, capsule_ident: str) -> webob.Response:
    """Show a capsule."""
    return _show(req, capsule_ident, legacy=False)


@route("DELETE", ITEM)
@openapi.describe(status=204)
def delete_capsule(req: ApiRequest, capsule_ident: str) -> webob.Response:
    """Delete a capsule (asynchronous when it has a host)."""
    ctx = req.context
    if api_common.all_projects(req.query()):
        policy.authorize(ctx, "capsule:delete_all_projects")
    api = capsule_api.get_api()
    capsule = api.get(ctx, capsule_ident)
    policy.authorize(ctx, "capsule:delete", _target(capsule))
    api.delete(ctx, capsule)
    return empty(204)
