"""``GET /v1/availability_zones``: the zones named by the services (rest-api.md §13).

The original paginated the service rows and then crashed on a full page or any marker. Here the
page is over the distinct zones themselves, sorted by name (null first in ascending order), and
the marker is a zone name.
"""

from __future__ import annotations

import webob

from zun.api import common
from zun.api.request import ApiRequest
from zun.api.response import json_reply
from zun.api.routing import route
from zun.api.views.availability_zones import zone_view
from zun.common import exception, policy
from zun.db import paging
from zun.db.models import ZunService
from zun.db.queries import services as queries


@route("GET", "/v1/availability_zones")
def list_zones(req: ApiRequest) -> webob.Response:
    """List the availability zones of the services."""
    policy.authorize(req.context, "availability_zones:get_all")
    page = common.page_params(req.query(), default_sort_key="availability_zone")
    paging.check_sort_key(ZunService, page.sort_key)
    zones = queries.availability_zones(descending=page.sort_dir == "desc")
    if page.marker is not None:
        if page.marker not in zones:
            raise exception.ResourceNotFound(name="availability zone", id=page.marker)
        zones = zones[zones.index(page.marker) + 1 :]
    items = [zone_view(z) for z in zones[: page.limit]]
    return json_reply(
        {
            "availability_zones": items,
            "next": common.next_link(
                req.host_url, "availability_zones", page, items, marker_attr="availability_zone"
            ),
        }
    )
