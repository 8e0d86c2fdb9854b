"""auto_heal: a container that vanished from its engine is rebuilt, whoever notices first.

The state sync and a show (a GET refreshed by the node) both find vanished containers. Either
way an auto_heal container is moved to Rebuilding by one compare-and-swap and rebuilt; a read
never writes the Error "missing in the engine" that would stop auto_heal for good. A row that
an earlier release left in that Error (only that reason) is healed too; any other Error keeps
its reason and is left alone, so a container that keeps failing is not rebuilt forever.
"""

from __future__ import annotations

import logging
from typing import Any

from zun.common import consts
from zun.db import engine
from zun.db.queries import containers as container_q
from zun.runtime.docker.driver import REASON_NOT_IN_ENGINE

LOG = logging.getLogger(__name__)

# Statuses a vanished container is rebuilt from when it has auto_heal.
HEALABLE = (consts.CREATED, consts.RUNNING, consts.STOPPED, consts.PAUSED)


def heals(row: Any) -> bool:
    """Whether ``row``, gone from the engine, is to be rebuilt."""
    if not row.auto_heal or row.auto_remove:
        return False
    return row.status in HEALABLE or (
        row.status == consts.ERROR and row.status_reason == REASON_NOT_IN_ENGINE
    )


def start(node: Any, context: Any, row: Any) -> bool:
    """Rebuilding (one CAS on the status seen, no task under way), then the rebuild is
    queued on ``node``; False when another writer changed the row first."""
    # Stopped/Created come back as they were; a Running or Paused one is started again, and
    # so is one a read had put in Error (what it was before is lost; most were running).
    run = row.status in (consts.RUNNING, consts.PAUSED, consts.ERROR)
    with engine.transaction() as session:
        won = container_q.cas_update(
            session,
            row.uuid,
            {
                "status": consts.REBUILDING,
                "task_state": consts.CONTAINER_REBUILDING,
                "status_reason": None,
            },
            task_states=(None,),
            statuses=(row.status,),
            host=node.host,
        )
    if won:
        LOG.info("Container %s vanished from the engine: rebuilding it (auto_heal)", row.uuid)
        node.container_rebuild(context, row.uuid, run=run)
    return won
