"""``/v1/registries``: private image registries and their credentials (rest-api.md §15).

Every version (the 1.30 history entry was never enforced). The password is stored
Fernet-encrypted (:mod:`zun.common.crypt`), always shown as ``***`` and never logged.

Deliberate difference from Zun (rest-api.md §19 #25, "decide"): PATCH reaches any project's
registry for admins, like GET and DELETE (Zun's PATCH looked only in the admin's own project).
Deleting a registry that containers still use is a 409 (Zun failed on the foreign key).
"""

from __future__ import annotations

from typing import Any

import webob

from zun.api import common, validation
from zun.api.request import ApiRequest
from zun.api.response import empty, json_reply
from zun.api.routing import route
from zun.api.views.registries import hidden_fields, registry_view
from zun.common import exception, policy
from zun.db import engine, models
from zun.db.queries import registries as queries

COLLECTION = "registries"
ITEM = "/v1/registries/{registry_ident}"
LIST_PARAMS = ("all_projects", *common.PAGE_PARAMS, *queries.FILTERS)


def _target(row: models.Registry) -> dict[str, Any]:
    return {"project_id": row.project_id, "user_id": row.user_id}


def _body(req: ApiRequest, schema: str) -> dict[str, Any]:
    params = req.merged_params()
    if not isinstance(params.get("registry"), dict) and "registry" not in params:
        # Zun's validator reported the missing wrapper first (a flat body is the usual mistake).
        raise exception.SchemaValidationError(detail="'registry' is a required property")
    validation.validate_body(schema, params)
    return dict(params["registry"])


def _lookup(req: ApiRequest, ident: str, rule: str) -> models.Registry:
    with engine.transaction(readonly=True) as session:
        row = queries.get_by_ident(session, req.context, ident)
    policy.authorize(req.context, rule, _target(row))
    return row


@route("GET", "/v1/registries")
def list_registries(req: ApiRequest) -> webob.Response:
    """The caller's project's registries (``all_projects``: every project, admin)."""
    ctx = req.context
    policy.authorize(ctx, "registry:get_all")
    params = req.query()
    wide = common.all_projects(params)
    if wide:
        policy.authorize(ctx, "registry:get_all_all_projects")
    page = common.page_params(params)
    filters = {}
    for name in queries.FILTERS:
        if name in params:
            policy.authorize(ctx, f"registry:get_one:{name}", might_not_exist=True)
            filters[name] = params[name]
    common.check_unknown_params(params, LIST_PARAMS)
    with engine.transaction(readonly=True) as session:
        rows = queries.list_page(session, ctx, page, filters, wide)
    hidden = None if policy.field_rules_depend_on_target("registry:get_one") else hidden_fields(ctx)
    items = [registry_view(ctx, row, hidden=hidden) for row in rows]
    return json_reply(
        {"registries": items, "next": common.next_link(req.host_url, COLLECTION, page, rows)}
    )


@route("POST", "/v1/registries")
def create_registry(req: ApiRequest) -> webob.Response:
    """Store a registry (and its encrypted password); 201 with its Location."""
    req.require_json()
    values = _body(req, "registries.registry_create")
    ctx = req.context
    policy.authorize(ctx, "registry:create")
    values.update(project_id=ctx.project_id, user_id=ctx.user_id)
    with engine.transaction() as session:
        row = queries.create(session, values)
    return json_reply(
        {"registry": registry_view(ctx, row, req.host_url)},
        201,
        [("Location", common.location(req.host_url, COLLECTION, row.uuid or ""))],
    )


@route("GET", ITEM)
def show_registry(req: ApiRequest, registry_ident: str) -> webob.Response:
    row = _lookup(req, registry_ident, "registry:get_one")
    return json_reply({"registry": registry_view(req.context, row, req.host_url)})


@route("PATCH", ITEM)
def update_registry(req: ApiRequest, registry_ident: str) -> webob.Response:
    """Change name, domain, username or password."""
    values = _body(req, "registries.registry_update")
    row = _lookup(req, registry_ident, "registry:update")
    with engine.transaction() as session:
        row = queries.update(session, row.uuid or "", values)
    return json_reply({"registry": registry_view(req.context, row, req.host_url)})


@route("DELETE", ITEM)
def delete_registry(req: ApiRequest, registry_ident: str) -> webob.Response:
    row = _lookup(req, registry_ident, "registry:delete")
    with engine.transaction() as session:
        queries.delete(session, row.uuid or "")
    return empty(204)
