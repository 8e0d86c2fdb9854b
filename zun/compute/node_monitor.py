"""The API side's watch over the nodes (in zun-api and zun-all; several may run at once).

Every ``[compute]/node_monitor_interval`` seconds:

* **creates stuck on a down host** (status Creating, the host's service down) move to
  another host (:func:`zun.compute.relocation.move`): a create is never left Creating on a
  dead node. The node's own failures (an engine error) are moved by the node itself.
* **automatic evacuation** (opt-in, ``[compute]/evacuate_auto_heal_after`` > 0): the
  auto_heal containers of a host down for longer than that are evacuated
  (:mod:`zun.compute.evacuation`).

Every change is a compare-and-swap on the row's host and status, so two API processes
running this at once move each container once.
"""

from __future__ import annotations

import datetime
import logging
from typing import Any

import sqlalchemy as sa

from zun.common import consts
from zun.common import context as zun_context
from zun.compute import evacuation, node_health, relocation
from zun.compute.periodic import PeriodicRunner
from zun.conf import CONF
from zun.db import engine, models
from zun.db.queries import compute_nodes

LOG = logging.getLogger(__name__)
C, S = models.Container, models.ZunService


def _down_hosts() -> dict[str, tuple[str, float]]:
    """``{host: (reason, seconds down)}`` of compute services that are down."""
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    found = {}
    with engine.transaction(readonly=True) as session:
        for row in session.execute(
                sa.select(S.host, S.last_seen_up, S.updated_at, S.created_at, S.forced_down)
                .where(S.binary == compute_nodes.COMPUTE_BINARY)):
            if compute_nodes.service_is_up(row.last_seen_up, row.updated_at, row.created_at,
                                           row.forced_down, now):
                continue
            seen = row.last_seen_up or row.updated_at or row.created_at
            age = (now - seen).total_seconds() if seen else float("inf")
            found[row.host] = (node_health.down_reason(row.host, seen, row.forced_down, now),
                               age)
    return found


def move_stuck_creates(down: dict[str, tuple[str, float]], rpcapi: Any = None) -> list[str]:
    if not down:
        return []
    with engine.transaction(readonly=True) as session:
        stuck = list(session.execute(
            sa.select(C.uuid, C.host).where(C.status == consts.CREATING,
                                            C.host.in_(sorted(down)))))
    moved = []
    for uuid, host in stuck:
        try:
            if relocation.move(uuid, host, down[host][0], rpcapi=rpcapi):
                moved.append(uuid)
        except Exception:
            LOG.exception("Moving the create of %s off %s failed", uuid, host)
    return moved


def auto_evacuate(down: dict[str, tuple[str, float]], rpcapi: Any = None) -> list[str]:
    grace = float(CONF.compute.evacuate_auto_heal_after or 0)
    if grace <= 0:
        return []
    moved = []
    admin = zun_context.get_admin_context()
    for host, (_, age) in down.items():
        if age < grace:
            continue
        with engine.transaction(readonly=True) as session:
            waiting = session.execute(
                sa.select(C.id).where(C.host == host, C.auto_heal.is_(True),
                                      C.status.in_(sorted(node_health.ENGINE_STATUSES)))
                .limit(1)).first()
        if waiting is None:
            continue
        LOG.warning("Host %s down for %d s: evacuating its auto_heal containers", host, age)
        try:
            outcomes = evacuation.evacuate(admin, host, only_auto_heal=True, rpcapi=rpcapi)
        except evacuation.HostIsUp:
            continue
        moved += [o.uuid for o in outcomes if o.result == "evacuated"]
    return moved


def run_once(rpcapi: Any = None) -> None:
    down = _down_hosts()
    move_stuck_creates(down, rpcapi)
    auto_evacuate(down, rpcapi)


class NodeMonitor:
    """A component (start/stop) running :func:`run_once` in a thread of its own."""

    name = "node-monitor"

    def __init__(self, interval: float | None = None) -> None:
        spacing = interval or float(CONF.compute.node_monitor_interval)
        self.runner = PeriodicRunner(name="zun-node-monitor")
        self.runner.add("node_monitor", run_once, spacing=spacing, run_immediately=False)

    def start(self) -> None:
        self.runner.start()

    def stop(self) -> None:
        self.runner.stop()
