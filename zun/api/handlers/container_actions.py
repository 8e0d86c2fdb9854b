"""``/v1/containers/{ident}/container_actions`` (rest-api.md §7).

``container:actions`` is checked against the caller (not the container) before the lookup, as
in Zun; event tracebacks are shown only to callers allowed ``container:action:events``.
"""

from __future__ import annotations

import webob

from zun.api.request import ApiRequest
from zun.api.response import json_reply
from zun.api.routing import route
from zun.api.views import actions as views
from zun.common import exception, policy
from zun.compute import api as compute_api
from zun.db import engine
from zun.db.queries import actions as action_q

BASE = "/v1/containers/{container_ident}/container_actions"


@route("GET", BASE)
def list_actions(req: ApiRequest, container_ident: str) -> webob.Response:
    policy.authorize(req.context, "container:actions")
    container = compute_api.get_api().get(req.context, container_ident)
    with engine.transaction(readonly=True) as session:
        rows = action_q.list_for_container(session, container.uuid)
        body = {"containerActions": [views.action_view(a) for a in rows]}
    return json_reply(body)


@route("GET", BASE + "/{request_ident}")
def show_action(req: ApiRequest, container_ident: str, request_ident: str) -> webob.Response:
    policy.authorize(req.context, "container:actions")
    container = compute_api.get_api().get(req.context, container_ident)
    show_traceback = policy.authorize(req.context, "container:action:events", fatal=False)
    with engine.transaction(readonly=True) as session:
        found = action_q.get_with_events(session, container.uuid, request_ident)
        if found is None:
            raise exception.ResourceNotFound(name="Action", id=request_ident)
        action, events = found
        body = views.action_with_events(action, events, show_traceback)
    return json_reply(body)
