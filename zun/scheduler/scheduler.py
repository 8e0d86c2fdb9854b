"""Host selection inside zun-api: filter the nodes, then claim on the first that fits.

Nodes are tried in hostname order after filtering (Zun applies no weigher either); the first
node whose atomic claim succeeds wins. No node left gives ``NoValidHost``. A requested host
(admins, microversion 1.39) narrows the candidates to that node, which must exist.
"""

from __future__ import annotations

import logging

from sqlalchemy.orm import Session

from zun.common import exception
from zun.compute import claims
from zun.db.queries import compute_nodes
from zun.scheduler import filters

LOG = logging.getLogger(__name__)

NO_VALID_HOST_REASON = "There are not enough hosts available."


def candidates(session: Session, request: filters.Request,
               requested_host: str | None = None) -> list[str]:
    """Hostnames that pass every enabled filter, in the order they will be tried."""
    active = filters.enabled_filters()
    hosts = []
    for node in compute_nodes.list_node_states(session):
        if requested_host and node.hostname != requested_host:
            continue
        if all(f(node, request) for f in active):
            hosts.append(node.hostname)
    return hosts


def select_and_claim(session: Session, request: filters.Request,
                     requested_host: str | None = None) -> str:
    """Claim the request's resources on the first suitable host and return its name.

    The claims run in ``session``'s transaction. Raises ``NoValidHost`` when no host passes
    the filters or none has room left.
    """
    hosts = candidates(session, request, requested_host)
    for host in hosts:
        if claims.claim(session, host, request.cpu, request.memory_mb, request.disk_gb):
            return host
        LOG.debug("Host %s has no room for cpu=%s memory=%s disk=%s", host, request.cpu,
                  request.memory_mb, request.disk_gb)
    raise exception.NoValidHost(reason=NO_VALID_HOST_REASON)
