"""The registry view (rest-api.md §16.6): the password is always ``***``.

Every key passes through ``registry:get_one:<key>``: no default rule exists, so all are shown
unless a deployment's policy hides some.
"""

from __future__ import annotations

from typing import Any

from zun.api import common
from zun.common import policy
from zun.common.context import RequestContext
from zun.db.models import Registry

FIELDS = ("uuid", "name", "domain", "username", "password", "project_id", "user_id")
MASK = "***"


def registry_view(
    context: RequestContext,
    row: Registry,
    host_url: str | None = None,
    hidden: frozenset[str] | None = None,
) -> dict[str, Any]:
    """One registry; ``host_url`` given: with its links (single-item answers only)."""
    if hidden is None:
        hidden = hidden_fields(context, row)
    view: dict[str, Any] = {}
    for name in FIELDS:
        if name in hidden:
            continue
        view[name] = MASK if name == "password" else getattr(row, name)
        if name == "uuid" and host_url is not None:
            view["links"] = common.links(host_url, "registries", row.uuid or "")
    return view


def hidden_fields(context: RequestContext, row: Registry | None = None) -> frozenset[str]:
    target = None if row is None else {"project_id": row.project_id, "user_id": row.user_id}
    return policy.hidden_fields(context, "registry:get_one", FIELDS, target)
