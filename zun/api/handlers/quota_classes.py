"""``/v1/quota_classes/{quota_class_name}``: class limits, admin only (rest-api.md §14).

The ``default`` class holds the limits of projects without their own; a class that sets only
some resources, or an unknown class, reads the ``[quota]`` options for the others.
"""

from __future__ import annotations

import webob

from zun.api.handlers.quotas import validated_update
from zun.api.request import ApiRequest
from zun.api.response import json_reply
from zun.api.routing import route
from zun.api.views.quotas import limits_view
from zun.common import policy
from zun.compute import quota
from zun.db import engine

ITEM = "/v1/quota_classes/{quota_class_name}"
SCHEMA = "quota_classes.query_param_update"


@route("PUT", ITEM)
def update_quota_class(req: ApiRequest, quota_class_name: str) -> webob.Response:
    values = validated_update(req, SCHEMA)
    policy.authorize(req.context, "quota_class:update")
    with engine.transaction() as session:
        quota.set_class_limits(session, quota_class_name, values)
    with engine.transaction(readonly=True) as session:
        return json_reply(limits_view(quota.get_class_limits(session, quota_class_name)))


@route("GET", ITEM)
def get_quota_class(req: ApiRequest, quota_class_name: str) -> webob.Response:
    policy.authorize(req.context, "quota_class:get")
    with engine.transaction(readonly=True) as session:
        return json_reply(limits_view(quota.get_class_limits(session, quota_class_name)))
