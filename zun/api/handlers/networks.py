"""``/v1/networks``: networks Zun manages on its hosts, admin only (rest-api.md §10).

In the embedded mode a network is a Zun-managed Docker bridge network on the compute host,
created and removed by that host's zun-compute (RPC calls); the API keeps the ``network`` row.
With the kuryr driver the node records the row (zun.network.kuryr_networks), as it does for
the Docker networks its containers make, so a DELETE also removes those from every host.

Deliberate difference from Zun (rest-api.md §19 #6): a missing ``neutron_net_id`` is a 400
(Zun: 500). An ID already recorded on the chosen host is a 409 ``network-already-exists``.
"""

from __future__ import annotations

import webob

from zun.api import common, validation
from zun.api.request import ApiRequest
from zun.api.response import empty, json_reply
from zun.api.routing import route
from zun.api.views.networks import network_view
from zun.common import exception, policy
from zun.compute import rpcapi_images_networks as image_network_rpc
from zun.db import engine
from zun.db.queries import networks as queries
from zun.network import mode as network_mode
from zun.network import neutron as neutron_api
from zun.network import stale_networks


@route("POST", "/v1/networks")
def create_network(req: ApiRequest) -> webob.Response:
    req.require_json()
    params = req.merged_params()
    validation.validate_body("network.network_create", params)
    ctx = req.context
    policy.authorize(ctx, "network:create")
    common.require_params(params, ["neutron_net_id"])
    net_id = str(params["neutron_net_id"])
    if network_mode.kuryr_enabled():
        # The caller must see the Neutron network (404 otherwise), as with the original.
        net_id = str(neutron_api.for_request(ctx).get_network(net_id)["id"])
    host = image_network_rpc.pick_host("network_create")
    with engine.transaction(readonly=True) as session:
        if any(row.host == host for row in queries.by_neutron_id(session, net_id)):
            raise exception.NetworkAlreadyExists(field="neutron_net_id", value=net_id)
    created = image_network_rpc.get_rpcapi().network_create(ctx, host, params.get("name"), net_id)
    if created.get("uuid"):
        # The node recorded the row (kuryr driver: zun.network.kuryr_networks).
        with engine.transaction(readonly=True) as session:
            recorded = queries.by_uuid(session, str(created["uuid"]))
            if recorded is None:
                raise exception.NetworkNotFound(network=net_id)
            return json_reply(network_view(recorded))
    with engine.transaction() as session:
        row = queries.create(
            session,
            {
                "name": params.get("name"),
                "neutron_net_id": net_id,
                "host": host,
                "network_id": created.get("network_id"),
                "project_id": ctx.project_id,
                "user_id": ctx.user_id,
            },
        )
    return json_reply(network_view(row))


@route("DELETE", "/v1/networks/{network_ident}", "1.27")
def delete_network(req: ApiRequest, network_ident: str) -> webob.Response:
    """Remove the network (by its network ID) from every host that has it; 204.

    A host that cannot (a container uses it there: 409; down: 503) keeps its row, the others
    are still done, and the first failure is the answer. The row of a host with no compute
    service left is dropped (zun.network.stale_networks)."""
    policy.authorize(req.context, "network:delete")
    with engine.transaction(readonly=True) as session:
        rows = queries.by_neutron_id(session, network_ident)
        gone = {row.id for row in rows if stale_networks.host_gone(session, row.host)}
    if not rows:
        raise exception.NetworkNotFound(network=network_ident)
    api = image_network_rpc.get_rpcapi()
    failed: Exception | None = None
    for row in rows:
        try:
            if row.id in gone:
                stale_networks.forget(row)
                continue
            if not image_network_rpc.host_is_up(row.host):
                raise stale_networks.host_down(row.host)
            api.network_delete(req.context, row.host, network_ident)
        except Exception as exc:
            failed = failed or exc
            continue
        with engine.transaction() as session:
            queries.delete(session, row.id)
    if failed is not None:
        raise failed
    return empty(204)
