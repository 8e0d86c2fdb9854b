"""``network`` rows of hosts that are gone, for ``DELETE /v1/networks/<id>``.

A row stands for a Docker network on its host, and only that host's zun-compute can remove it.
A host with no zun-compute service row at all (its service was deleted with ``DELETE
/v1/services``, or the row names no host) will never answer: its row is stale, and the API
drops it, with that host's kuryr IPAM pools in Neutron (``zun-pool-<subnet id>-<host>``), which
nothing else would delete. A host whose service row is there but down (heartbeat late, or
forced down) may come back with its Docker network still pointing at its pools: its row and
pools are kept and the delete says which host to bring back or delete.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from zun.common import rpc
from zun.db import engine, models
from zun.db.queries import compute_nodes
from zun.db.queries import networks as queries
from zun.network import kuryr_pools, mode
from zun.network import neutron as neutron_api


def host_gone(session: Session, host: str | None) -> bool:
    """Whether ``host`` has no zun-compute service row (or the row names no host)."""
    return not host or not compute_nodes.has_compute_service(session, host)


def host_down(host: str) -> rpc.HostUnreachable:
    """The 503 for a row whose host is down but may come back."""
    return rpc.HostUnreachable(
        host=host,
        method="network_delete",
        reason="the host is down; its network row is kept until the host is back, or until "
        "its zun-compute service is deleted (DELETE /v1/services) if it is gone for good",
    )


def forget(row: models.Network) -> None:
    """Drop a stale row: its host's pools first (a Neutron failure keeps the row, so a later
    delete finds them again), then the row."""
    if mode.kuryr_enabled() and row.neutron_net_id:
        kuryr_pools.remove_host_pools(neutron_api.for_service(), row.neutron_net_id, row.host or "")
    with engine.transaction() as session:
        queries.delete(session, row.id)
