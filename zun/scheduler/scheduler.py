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
"""

from __future__ import annotations

import logging
import random
from collections.abc import Collection

from sqlalchemy.orm import Session

from zun.common import exception
from zun.db.queries import compute_nodes, host_loads
from zun.db.queries.compute_nodes import NodeState
from zun.scheduler import claims, filters, loading, weighers

LOG = logging.getLogger(__name__)

NO_VALID_HOST_REASON = "There are not enough hosts available."


def _nodes(session: Session, requested_host: str | None) -> list[NodeState]:
    return [node for node in compute_nodes.list_node_states(session)
            if not requested_host or node.hostname == requested_host]


def _filtered(session: Session, request: filters.Request,
              requested_host: str | None) -> list[NodeState]:
    active = filters.enabled_filters()
    return [node for node in _nodes(session, requested_host)
            if all(f(node, request) for f in active)]


def ordered_nodes(session: Session, request: filters.Request,
                  requested_host: str | None = None) -> list[NodeState]:
    """The candidate nodes in the order claims will be tried, per the configured driver."""
    if loading.driver_name() == "chance_scheduler":
        nodes = [node for node in _nodes(session, requested_host)
                 if filters.compute_filter(node, request)]
        random.shuffle(nodes)
        return nodes
    nodes = _filtered(session, request, requested_host)
    if len(nodes) < 2:
        return nodes
    counts = host_loads.container_counts(session, request.project_id)
    loads = {host: weighers.Load(total, mine) for host, (total, mine) in counts.items()}
    return weighers.weigh(nodes, request, loads)


def candidates(session: Session, request: filters.Request,
               requested_host: str | None = None,
               exclude: Collection[str] = ()) -> list[str]:
    """Hostnames of :func:`ordered_nodes`, without ``exclude`` (hosts a moved create
    already failed on)."""
    return [node.hostname for node in ordered_nodes(session, request, requested_host)
            if node.hostname not in exclude]


def select_and_claim(session: Session, request: filters.Request,
                     requested_host: str | None = None,
                     exclude: Collection[str] = ()) -> str:
    """Claim the request's resources on the best suitable host and return its name.

    The claims run in ``session``'s transaction. Raises ``NoValidHost`` when no host passes
    the filters or none has room left.
    """
    for host in candidates(session, request, requested_host, exclude):
        if claims.claim(session, host, request.cpu, request.memory_mb, request.disk_gb):
            return host
        LOG.debug("Host %s has no room for cpu=%s memory=%s disk=%s", host, request.cpu,
                  request.memory_mb, request.disk_gb)
    raise exception.NoValidHost(reason=NO_VALID_HOST_REASON)
