"""Zun's kuryr IPAM pools in Neutron: one subnet pool per subnet and host.

Why a pool per host: see :mod:`zun.network.kuryr_networks`. No Docker here, so the API can
remove the pools of a host that is gone (``zun.network.stale_networks``).
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from zun.network.neutron import NeutronClient

LOG = logging.getLogger(__name__)

POOL_PREFIX = "zun-pool-"
POOL_OPTIONS = {4: "neutron.pool.uuid", 6: "neutron.pool.v6.uuid"}


def pool_name(subnet_id: str, host: str) -> str:
    return f"{POOL_PREFIX}{subnet_id}-{host}"


def ensure_pool(neutron: NeutronClient, subnet: Mapping[str, Any], shared: bool, host: str) -> str:
    """This host's pool of a subnet (found by name, made if missing); a pool of that name
    whose prefix or ``shared`` no longer fits (kuryr refuses it) is replaced."""
    name = pool_name(str(subnet["id"]), host)
    cidr = str(ipaddress.ip_network(subnet["cidr"]))
    for pool in neutron.subnetpools(name=name):
        if list(pool.get("prefixes") or []) == [cidr] and bool(pool.get("shared")) == shared:
            return str(pool["id"])
        neutron.delete_subnetpool(str(pool["id"]))
    body = {
        "name": name,
        "prefixes": [cidr],
        "default_prefixlen": ipaddress.ip_network(cidr).prefixlen,
        "shared": shared,
        "description": f"kuryr IPAM pool of Zun host {host} for subnet {subnet['id']}",
    }
    return str(neutron.create_subnetpool(body)["id"])


def remove_pools(neutron: NeutronClient, pool_ids: Iterable[str]) -> None:
    """Delete Zun's pools among ``pool_ids`` (a pool of another name, of an original Zun's
    network or an operator's, is kept); never raises: a pool left behind is found again by
    its name."""
    for pool_id in pool_ids:
        try:
            found = neutron.subnetpools(id=pool_id)
            if found and str(found[0].get("name", "")).startswith(POOL_PREFIX):
                neutron.delete_subnetpool(pool_id)
        except Exception:
            LOG.warning("Could not delete Neutron subnet pool %s", pool_id, exc_info=True)


def remove_host_pools(neutron: NeutronClient, net_id: str, host: str) -> int:
    """Delete ``host``'s pools of the network's subnets (found by name); how many went.
    Neutron's errors are raised: the caller keeps what names the pools until they are gone."""
    removed = 0
    for subnet in neutron.subnets(net_id):
        for pool in neutron.subnetpools(name=pool_name(str(subnet["id"]), host)):
            removed += neutron.delete_subnetpool(str(pool["id"]))
    return removed
