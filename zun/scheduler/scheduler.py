"""Host selection inside zun-api: choose candidate nodes, order them, claim on the first that fits.

``[scheduler]/driver`` (Zun's names):

  filter_scheduler  the nodes passing every enabled filter, ordered by the weigher
                    (``[scheduler]/weigher``, spread by default; see weighers.py)
  chance_scheduler  the nodes whose service is up and enabled, in random order (as Zun's,
                    which applies no filter either)

Either way the first node whose atomic claim succeeds wins (claims.py: capacity with the
node's own ratios and reserves, and never more CPUs or memory than the node physically has);
no node left gives ``NoValidHost``. A requested host (admins, microversion 1.39) narrows the
candidates to that node, which must exist.

With ``[scheduler]/use_placement`` (and a consumer: the container being placed), the nodes
are also narrowed to Placement's allocation candidates for the request (placement.py), and a
node is taken only when both its database claim and its Placement allocation succeed; a
node whose allocation no longer fits (another consumer, e.g. Nova, took the room) gives its
database claim back and the next one is tried.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Collection

import sqlalchemy as sa
from sqlalchemy.orm import Session

from zun.common import exception
from zun.db import models
from zun.db.queries import compute_nodes, host_loads
from zun.db.queries.compute_nodes import NodeState
from zun.scheduler import claims, filters, loading, placement, weighers

LOG = logging.getLogger(__name__)

NO_VALID_HOST_REASON = "There are not enough hosts available."


def _nodes(session: Session, requested_host: str | None) -> list[NodeState]:
    return [
        node
        for node in compute_nodes.list_node_states(session)
        if not requested_host or node.hostname == requested_host
    ]


def _filtered(
    session: Session, request: filters.Request, requested_host: str | None
) -> list[NodeState]:
    active = filters.enabled_filters()
    return [
        node for node in _nodes(session, requested_host) if all(f(node, request) for f in active)
    ]


def ordered_nodes(
    session: Session, request: filters.Request, requested_host: str | None = None
) -> list[NodeState]:
    """The candidate nodes in the order claims will be tried, per the configured driver."""
    if loading.driver_name() == "chance_scheduler":
        nodes = [
            node
            for node in _nodes(session, requested_host)
            if filters.compute_filter(node, request)
        ]
        random.shuffle(nodes)
        return nodes
    nodes = _filtered(session, request, requested_host)
    if len(nodes) < 2:
        return nodes
    counts = host_loads.container_counts(session, request.project_id)
    loads = {host: weighers.Load(total, mine) for host, (total, mine) in counts.items()}
    return weighers.weigh(nodes, request, loads)


def candidates(
    session: Session,
    request: filters.Request,
    requested_host: str | None = None,
    exclude: Collection[str] = (),
) -> list[str]:
    """Hostnames of :func:`ordered_nodes`, without ``exclude`` (hosts a moved create
    already failed on)."""
    return [
        node.hostname
        for node in ordered_nodes(session, request, requested_host)
        if node.hostname not in exclude
    ]


def select_and_claim(
    session: Session,
    request: filters.Request,
    requested_host: str | None = None,
    exclude: Collection[str] = (),
    consumer: placement.Consumer | None = None,
) -> str:
    """Claim the request's resources on the best suitable host and return its name.

    The claims run in ``session``'s transaction (the Placement allocation, when used, is
    put back if it rolls back). Raises ``NoValidHost`` when no host passes the filters or
    none has room left.
    """
    if consumer is not None and placement.enabled():
        return _select_with_placement(session, request, requested_host, exclude, consumer)
    for host in candidates(session, request, requested_host, exclude):
        if claims.claim(session, host, request.cpu, request.memory_mb, request.disk_gb):
            return host
        LOG.debug(
            "Host %s has no room for cpu=%s memory=%s disk=%s",
            host,
            request.cpu,
            request.memory_mb,
            request.disk_gb,
        )
    raise exception.NoValidHost(reason=NO_VALID_HOST_REASON)


def provider_uuids(session: Session, hosts: Collection[str] | None = None) -> dict[str, str]:
    """``{hostname: resource provider UUID}`` of the compute nodes (``compute_node.rp_uuid``)."""
    node = models.ComputeNode
    stmt = sa.select(node.hostname, node.rp_uuid)
    if hosts is not None:
        stmt = stmt.where(node.hostname.in_(sorted(hosts)))
    return {hostname: rp for hostname, rp in session.execute(stmt) if rp}


def _select_with_placement(
    session: Session,
    request: filters.Request,
    requested_host: str | None,
    exclude: Collection[str],
    consumer: placement.Consumer,
) -> str:
    hosts = candidates(session, request, requested_host, exclude)
    rps = provider_uuids(session, hosts if not requested_host else [requested_host])
    in_tree = rps.get(requested_host) if requested_host else None
    query = placement.candidate_query(
        consumer.resources,
        in_tree=in_tree,
        limit=placement.query_limit(request.hints, 1 if requested_host else None),
    )
    api = placement.client()
    offered = set(api.allocation_candidates(query))
    current: dict | None = dict(placement.NO_ALLOCATIONS) if consumer.new else None
    for host in hosts:
        rp = rps.get(host)
        if rp is None or rp not in offered:
            LOG.debug("Host %s is not an allocation candidate in Placement", host)
            continue
        if not claims.claim(session, host, request.cpu, request.memory_mb, request.disk_gb):
            continue
        try:
            if current is None:
                current = api.get_allocations(consumer.uuid)
            if placement.claim_in_transaction(session, consumer, rp, current):
                return host
        except Exception:
            # The caller may go on with this transaction (to record the failure).
            claims.release(session, host, request.cpu, request.memory_mb, request.disk_gb)
            raise
        # Placement says no room (another consumer took it meanwhile): give the claim back.
        claims.release(session, host, request.cpu, request.memory_mb, request.disk_gb)
        current = None
    raise exception.NoValidHost(reason=NO_VALID_HOST_REASON)
