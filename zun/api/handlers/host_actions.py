"""``POST /v1/hosts/{host_ident}/evacuate`` and ``/purge`` (1.41, admin): a dead node's work.

Both refuse a host whose zun-compute service is up (409 ``host-is-up``): force it down first
(``PUT /v1/services/force_down``) when it is known dead but its heartbeat is still fresh.
Evacuate answers 202 with one entry per container of the host (``evacuated``, ``rescheduled``,
``skipped`` or ``failed``, the new host, the reason); the creates run on the new hosts. Purge
answers 200 with the UUIDs of the rows it removed. See :mod:`zun.compute.evacuation`.
"""

from __future__ import annotations

import webob
from oslo_utils import uuidutils

from zun.api import openapi
from zun.api.request import ApiRequest
from zun.api.response import json_reply
from zun.api.routing import route
from zun.common import exception, policy
from zun.compute import evacuation
from zun.db.queries import compute_nodes_read as queries

VERSION = "1.41"


def _hostname(host_ident: str) -> str:
    return queries.get_node(host_ident).hostname


@route("POST", "/v1/hosts/{host_ident}/evacuate", VERSION)
@openapi.describe(status=202, summary="Recreate the containers of a down host elsewhere.")
def evacuate_host(req: ApiRequest, host_ident: str) -> webob.Response:
    """Recreate the containers of a down host on other hosts (admin)."""
    policy.authorize(req.context, "host:evacuate")
    body = req.body_object()
    unknown = sorted(set(body) - {"containers"})
    if unknown:
        raise exception.Invalid(message=f"Unknown field(s) in the body: {', '.join(unknown)}.")
    wanted = body.get("containers")
    if wanted is not None and (
        not isinstance(wanted, list)
        or not all(isinstance(u, str) and uuidutils.is_uuid_like(u) for u in wanted)
    ):
        raise exception.Invalid(message="'containers' must be a list of container UUIDs.")
    host = _hostname(host_ident)
    outcomes = evacuation.evacuate(req.context, host, wanted or None)
    return json_reply({"host": host, "containers": [o.view() for o in outcomes]}, status=202)


@route("POST", "/v1/hosts/{host_ident}/purge", VERSION)
@openapi.describe(summary="Remove the containers and claims of a down host.")
def purge_host(req: ApiRequest, host_ident: str) -> webob.Response:
    """Delete the container rows and claims of a down host (admin)."""
    policy.authorize(req.context, "host:purge")
    host = _hostname(host_ident)
    return json_reply({"host": host, "purged": evacuation.purge(host)})
