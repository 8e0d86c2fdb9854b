"""``/v1/images``: images pulled onto compute hosts, and registry search (rest-api.md §9).

Every version. Pull and delete are casts to the image's host (202 / 200 ``null``); search is
a call to an up compute host. Images are listed for the caller's project only, admins included
(Zun has no ``all_projects`` here); the default policy makes everything but search admin-only.

Deliberate differences from Zun (rest-api.md §19 #7, #8):
* an ident that is not a UUID gives the same 400 ``image-not-found`` as an unknown UUID (Zun
  crashed with a 500);
* an invalid image reference in a pull is a 400 with the same code string (Zun: 500);
* a search with ``image_driver=glance`` runs in the API with the user's token, not on a node;
* a pull from Glance (``[DEFAULT]/default_image_driver = glance``, or ``repo`` a Glance image
  id, as in Zun) is looked up in the API with the user's token first: a missing, foreign,
  ambiguous or non-Docker image is a 400/409 and Glance down a 503, before any row is made
  (Zun answered 202 and only logged the failure on the node).
"""

from __future__ import annotations

import webob
from oslo_utils import uuidutils

from zun.api import common, validation
from zun.api.request import ApiRequest
from zun.api.response import accepted_with_location, json_reply
from zun.api.routing import route
from zun.api.views.images import image_view
from zun.common import consts, exception, policy
from zun.compute import rpcapi_images_networks as image_network_rpc
from zun.conf import CONF
from zun.db import engine, models
from zun.db.queries import compute_nodes_read
from zun.db.queries import images as queries
from zun.image import glance_client
from zun.image import policy as image_policy

COLLECTION = "images"
ITEM = "/v1/images/{image_id}"


def _target(row: models.Image) -> dict[str, str | None]:
    return {"project_id": row.project_id, "user_id": row.user_id}


@route("GET", "/v1/images")
def list_images(req: ApiRequest) -> webob.Response:
    policy.authorize(req.context, "image:get_all")
    page = common.page_params(req.query())
    with engine.transaction(readonly=True) as session:
        rows = queries.list_page(session, req.context, page)
    host_url = req.host_url
    return json_reply(
        {
            "images": [image_view(r, host_url) for r in rows],
            "next": common.next_link(host_url, COLLECTION, page, rows),
        }
    )


def _host(ident: str) -> str:
    try:
        return compute_nodes_read.get_node(ident).hostname
    except exception.ComputeNodeNotFound:
        raise exception.InvalidValue(message=f"The host {ident} does not exist.") from None


@route("POST", "/v1/images")
def pull_image(req: ApiRequest) -> webob.Response:
    """Record the image on a host and ask that host to pull it; 202 with its Location."""
    req.require_json()
    params = req.merged_params()
    validation.validate_body("images.image_create", params)
    ctx = req.context
    policy.authorize(ctx, "image:pull")
    host = _host(params["host"])
    driver = _pull_driver(params["repo"])
    if driver == consts.IMAGE_DRIVER_GLANCE:
        # Found now with the user's token (tokens never reach the nodes): a missing, foreign,
        # ambiguous or non-Docker image, or Glance down, is refused before a row is made.
        # The node finds it again by this name or id, as the caller's project may see it.
        glance_client.for_request(ctx).find(params["repo"])
        repo, tag = params["repo"], ""
    else:
        try:
            repo, tag = image_policy.parse_image_name(params["repo"], "docker")
        except exception.InvalidReference as exc:
            raise type(exc)(message=str(exc), code=400) from None
    with engine.transaction() as session:
        row = queries.create(
            session,
            {
                "repo": repo,
                "tag": tag,
                "host": host,
                "project_id": ctx.project_id,
                "user_id": ctx.user_id,
            },
        )
    try:
        image_network_rpc.get_rpcapi().image_pull(
            ctx,
            host,
            row.uuid or "",
            image_driver=driver if driver == consts.IMAGE_DRIVER_GLANCE else None,
        )
    except Exception:
        with engine.transaction() as session:
            queries.delete(session, row.uuid or "")
        raise
    return accepted_with_location(
        image_view(row, req.host_url), common.location(req.host_url, COLLECTION, row.uuid or "")
    )


def _pull_driver(repo: str) -> str:
    """Where a pull comes from, as the original decided it: Glance when it is the default
    image driver, or when the image is named by a UUID (a Glance image id)."""
    if CONF.default_image_driver == consts.IMAGE_DRIVER_GLANCE or uuidutils.is_uuid_like(repo):
        return consts.IMAGE_DRIVER_GLANCE
    return consts.IMAGE_DRIVER_DOCKER


def _search_without_image(req: ApiRequest) -> webob.Response:
    """``GET /v1/images/search``: the original took ``search`` for its search action with the
    image missing, and its query schema refuses an ``image`` parameter (400); without any
    query the image is just as missing, and the answer says where it goes."""
    validation.validate_query("images.query_param_search", req.query())
    raise exception.SchemaValidationError(
        detail="The image to search for goes in the path: GET /v1/images/<image>/search."
    )


@route("GET", ITEM)
def show_image(req: ApiRequest, image_id: str) -> webob.Response:
    if image_id == "search":
        return _search_without_image(req)
    with engine.transaction(readonly=True) as session:
        row = queries.get(session, req.context, image_id)
    policy.authorize(req.context, "image:get_one", _target(row))
    return json_reply(image_view(row, req.host_url))


@route("DELETE", ITEM)
def delete_image(req: ApiRequest, image_id: str) -> webob.Response:
    """Ask the image's host to remove it (policy first, as in Zun); 200 ``null``."""
    policy.authorize(req.context, "image:delete")
    with engine.transaction(readonly=True) as session:
        row = queries.get(session, req.context, image_id)
    image_network_rpc.get_rpcapi().image_delete(req.context, row.host or "", row.uuid or "")
    return json_reply(None)


@route("GET", "/v1/images/{image}/search", greedy=("image",))
def search_image(req: ApiRequest, image: str) -> webob.Response:
    """Matching repositories of the registry, from any up compute host."""
    params = req.query()
    validation.validate_query("images.query_param_search", params)
    ctx = req.context
    policy.authorize(ctx, "image:search")
    exact = common.parse_bool(params.get("exact_match", False), "exact_match")
    driver = common.optional(params.get("image_driver")) or CONF.default_image_driver
    if driver == consts.IMAGE_DRIVER_GLANCE:
        # Searched here with the user's token (Glance applies its visibility rules); tokens
        # never travel to the nodes. The hits are Glance's image documents, as in Zun.
        found = glance_client.for_request(ctx).search(image, exact=exact)
        return json_reply([hit.raw for hit in found])
    host = image_network_rpc.pick_host("image_search")
    api = image_network_rpc.get_rpcapi()
    return json_reply(api.image_search(ctx, host, image, driver, exact))
