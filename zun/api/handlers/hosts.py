"""``/v1/hosts`` (1.4+): the compute nodes, admin only (rest-api.md §11)."""

from __future__ import annotations

import webob

from zun.api import common
from zun.api.request import ApiRequest
from zun.api.response import json_reply
from zun.api.routing import route
from zun.api.views.hosts import host_view
from zun.common import exception, policy
from zun.db import engine, paging
from zun.db.models import ComputeNode
from zun.db.queries import compute_nodes_read as queries


def _not_found(ident: str) -> Exception:
    return exception.ComputeNodeNotFound(compute_node=ident)


@route("GET", "/v1/hosts", "1.4")
def list_hosts(req: ApiRequest) -> webob.Response:
    """List the compute hosts, paginated, by hostname (admin)."""
    policy.authorize(req.context, "host:get_all")
    page = common.page_params(req.query(), default_sort_key="hostname")
    with engine.transaction(readonly=True) as session:
        nodes = paging.paginate(
            session,
            queries.select_nodes(),
            ComputeNode,
            page,
            not_found=_not_found,
            tiebreak="uuid",
        )
    host_url = req.host_url
    return json_reply(
        {
            "hosts": [host_view(n, host_url) for n in nodes],
            "next": common.next_link(host_url, "hosts", page, nodes),
        }
    )


@route("GET", "/v1/hosts/{host_ident}", "1.4")
def show_host(req: ApiRequest, host_ident: str) -> webob.Response:
    """Show one compute host by UUID or hostname (admin)."""
    policy.authorize(req.context, "host:get")
    return json_reply(host_view(queries.get_node(host_ident), req.host_url))
