"""The node's side of Placement (``[scheduler]/use_placement``): report, then reconcile.

:func:`sync` runs when zun-compute starts and every ``[compute]/
resource_provider_association_refresh`` seconds (0: only at start):

1. **Report.** The node's resource provider is found again by its UUID
   (``compute_node.rp_uuid``) or by the node's hostname (with ``[compute]/
   host_shared_with_nova`` also by this machine's host name and FQDN, as the original looks
   for Nova's provider); only when neither exists is one created, named after the hostname,
   with the node's UUID. A provider found under another UUID is adopted (``rp_uuid``
   updated), never duplicated. Its inventory (VCPU, MEMORY_MB, DISK_GB) is what the node
   reported to its ``compute_node`` row, with this node's own allocation ratios and reserves;
   a provider shared with Nova keeps Nova's inventory (Nova's compute owns it). The trait
   ``CUSTOM_ZUN_COMPUTE_STATUS_DISABLED`` follows the service's disabled flag; other traits
   are left as they are.
2. **Reconcile** (drift both ways). An allocation against this provider whose consumer is
   one of Zun's (``consumer_type`` ``ZUN_CONTAINER``) but whose container is gone, or no
   longer on any host, is deleted; a container or capsule of this host whose allocation is
   missing or wrong gets the right one. Other consumers (Nova's) are never touched; rows
   still ``Creating`` are left to the API or the mover that owns them.
"""

from __future__ import annotations

import logging
import math
import socket
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from zun.common import consts
from zun.conf import CONF
from zun.db import engine, models
from zun.db.queries import capsules as capsule_q
from zun.db.queries import compute_nodes
from zun.scheduler import claims, inventory, placement

LOG = logging.getLogger(__name__)
C = models.Container
N = models.ComputeNode
S = models.ZunService


@dataclass
class Report:
    """What one :func:`sync` did (logged; the tests read it too)."""

    rp_uuid: str | None = None
    deleted: list[str] = field(default_factory=list)
    claimed: list[str] = field(default_factory=list)
    not_fitting: list[str] = field(default_factory=list)


def inventories(node: Any) -> dict[str, dict[str, Any]]:
    """The provider's inventory from a ``compute_node`` row (its own ratios and reserves)."""
    s = inventory.settings_of(node)
    out: dict[str, dict[str, Any]] = {}
    for rc, total, reserved, ratio in (
        ("VCPU", int(node.cpus or 0), int(s["reserved_host_cpus"]), s["cpu_allocation_ratio"]),
        (
            "MEMORY_MB",
            int(node.mem_total or 0),
            int(s["reserved_host_memory_mb"]),
            s["ram_allocation_ratio"],
        ),
        (
            "DISK_GB",
            int(node.disk_total or 0),
            math.ceil(int(s["reserved_host_disk_mb"]) / 1024),
            s["disk_allocation_ratio"],
        ),
    ):
        if total <= 0:
            continue  # Placement wants a total of at least 1
        out[rc] = {
            "total": total,
            "reserved": max(0, min(reserved, total)),
            "min_unit": 1,
            "max_unit": total,
            "step_size": 1,
            "allocation_ratio": float(ratio),
        }
    return out


def report(host: str) -> str | None:
    """Find or create the node's provider, report its inventory and traits; its UUID (None
    while the node has no ``compute_node`` row yet)."""
    with engine.transaction(readonly=True) as session:
        node = session.scalars(sa.select(N).where(N.hostname == host)).first()
        disabled = session.scalar(
            sa.select(S.disabled).where(S.host == host, S.binary == compute_nodes.COMPUTE_BINARY)
        )
        if node is None:
            return None
        session.expunge(node)
    api = placement.client()
    shared = bool(CONF.compute.host_shared_with_nova)
    others = [socket.gethostname(), socket.getfqdn()] if shared else []
    provider = api.ensure_provider(node.rp_uuid or node.uuid, host, others)
    rp_uuid = str(provider["uuid"])
    if rp_uuid != node.rp_uuid:
        LOG.info(
            "Host %s: resource provider %s (%s) found in Placement, adopted",
            host,
            rp_uuid,
            provider.get("name"),
        )
        with engine.transaction() as session:
            session.execute(sa.update(N).where(N.hostname == host).values(rp_uuid=rp_uuid))
    if not shared:
        api.set_inventory(rp_uuid, inventories(node))
    disabled_trait = {placement.DISABLED_TRAIT}
    if disabled:
        api.set_traits(rp_uuid, add=disabled_trait)
    else:
        api.set_traits(rp_uuid, remove=disabled_trait)
    return rp_uuid


def _expected(host: str) -> tuple[dict[str, placement.Consumer], set[str]]:
    """This host's consumers with their amounts, and those still Creating."""
    expected: dict[str, placement.Consumer] = {}
    creating: set[str] = set()
    with engine.transaction(readonly=True) as session:
        rows = session.execute(
            sa.select(
                C.id,
                C.uuid,
                C.project_id,
                C.user_id,
                C.cpu,
                C.memory,
                C.disk,
                C.container_type,
                C.status,
            ).where(
                C.host == host, C.container_type.in_((consts.TYPE_CONTAINER, consts.TYPE_CAPSULE))
            )
        )
        for row in rows:
            if row.status == consts.CREATING:
                creating.add(row.uuid)
            if row.container_type == consts.TYPE_CAPSULE:
                cpu, memory = capsule_q.member_resources(session, row.id)
                amounts = placement.resources_of(cpu, memory, 0)
            else:
                amounts = placement.resources_of(
                    *claims.container_resources(row.cpu, row.memory, row.disk)
                )
            expected[row.uuid] = placement.consumer_of(
                row.uuid, row.project_id, row.user_id, amounts
            )
    return expected, creating


def _rows_elsewhere(uuids: list[str]) -> dict[str, tuple[str | None, str]]:
    """``{uuid: (host, status)}`` of the given containers, wherever they are."""
    if not uuids:
        return {}
    with engine.transaction(readonly=True) as session:
        return {
            uuid: (host, status)
            for uuid, host, status in session.execute(
                sa.select(C.uuid, C.host, C.status).where(C.uuid.in_(uuids))
            )
        }


def reconcile(host: str, rp_uuid: str, result: Report | None = None) -> Report:
    result = result or Report(rp_uuid=rp_uuid)
    api = placement.client()
    # Placement first, rows second: a container deleted in between is then a stranger whose
    # allocation is deleted (again), never a row that seems to lack one and gets it back.
    have = api.provider_allocations(rp_uuid)
    expected, creating = _expected(host)
    strangers = [consumer for consumer in have if consumer not in expected]
    known = _rows_elsewhere(strangers)
    for consumer in strangers:
        row = known.get(consumer)
        if row is not None and (row[0] is not None or row[1] == consts.CREATING):
            continue  # another host's (its own reconcile moves it), or being scheduled
        if api.get_allocations(consumer).get("consumer_type") != placement.CONSUMER_TYPE:
            continue  # not ours: Nova's, or anyone else's
        LOG.warning(
            "Host %s: deleting the Placement allocation of %s, a container that is gone",
            host,
            consumer,
        )
        api.delete_allocation(consumer)
        result.deleted.append(consumer)
    for uuid, consumer in expected.items():
        if have.get(uuid) == consumer.resources or uuid in creating:
            continue
        if api.put_allocation(
            uuid,
            {rp_uuid: consumer.resources},
            project_id=consumer.project_id,
            user_id=consumer.user_id,
        ):
            LOG.warning(
                "Host %s: container %s had no (or a wrong) allocation in Placement; set it",
                host,
                uuid,
            )
            result.claimed.append(uuid)
        else:
            LOG.error(
                "Host %s: container %s does not fit in Placement's inventory of this "
                "node (over-committed by another consumer?)",
                host,
                uuid,
            )
            result.not_fitting.append(uuid)
    return result


def sync(host: str) -> Report | None:
    """Report and reconcile (no-op unless ``[scheduler]/use_placement``)."""
    if not placement.enabled():
        return None
    rp_uuid = report(host)
    if rp_uuid is None:
        return None
    result = reconcile(host, rp_uuid)
    if result.deleted or result.claimed or result.not_fitting:
        LOG.info(
            "Placement reconciliation of %s: deleted %s, claimed %s, not fitting %s",
            host,
            result.deleted,
            result.claimed,
            result.not_fitting,
        )
    return result
