"""Read-only queries on ``compute_node`` for the hosts API (the node writes its own rows)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from oslo_utils import uuidutils

from zun.common import exception
from zun.db import engine
from zun.db.models import ComputeNode


def select_nodes() -> sa.Select[Any]:
    return sa.select(ComputeNode)


def get_node(ident: str) -> ComputeNode:
    """A compute node by UUID (when ``ident`` looks like one) or hostname.

    404 ``compute-node-not-found``; 409 when several nodes share a hostname.
    """
    column = ComputeNode.uuid if uuidutils.is_uuid_like(ident) else ComputeNode.hostname
    with engine.transaction(readonly=True) as session:
        rows = list(session.scalars(sa.select(ComputeNode).where(column == ident).limit(2)))
    if not rows:
        raise exception.ComputeNodeNotFound(compute_node=ident)
    if len(rows) > 1:
        raise exception.Conflict(
            message="Multiple compute nodes exist with same hostname. Please use the uuid instead."
        )
    return rows[0]
