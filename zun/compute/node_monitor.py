"""The API side's watch over the nodes (in zun-api and zun-all).

Every ``[compute]/node_monitor_interval`` seconds:

* **creates stuck on a down host** (status Creating, the host's service down) move to
  another host (:func:`zun.compute.relocation.move`): a create is never left Creating on a
  dead node. The node's own failures (an engine error) are moved by the node itself.
* **automatic evacuation** (opt-in, ``[compute]/evacuate_auto_heal_after`` > 0): the
  auto_heal containers of a host down for longer than that are evacuated
  (:mod:`zun.compute.evacuation`).

One pass runs at a time across every API process (``[api] workers``) and API host: a pass
needs the lease ``node-monitor`` (:mod:`zun.db.queries.leases`), taken or renewed before the
pass and before each container it moves, for ``max(15 s, 3 x node_monitor_interval)``. The
holder keeps it from pass to pass; another process takes over when it expires (the holder
died) or is given up (the holder stopped). Every change is a compare-and-swap on the row's
host and status as well, so even two passes at once (a holder that stalled past its lease)
move each container once.
"""

from __future__ import annotations

import datetime
import logging
import os
import socket
import uuid
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from zun.common import consts
from zun.common import context as zun_context
from zun.compute import evacuation, node_health, relocation
from zun.compute.periodic import PeriodicRunner
from zun.conf import CONF
from zun.db import engine, models
from zun.db.queries import compute_nodes, leases

LOG = logging.getLogger(__name__)
C, S = models.Container, models.ZunService

LEASE = "node-monitor"
LEASE_MIN_SECONDS = 15.0


def _always() -> bool:
    return True


def _down_hosts() -> dict[str, tuple[str, float]]:
    """``{host: (reason, seconds down)}`` of compute services that are down."""
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    found = {}
    with engine.transaction(readonly=True) as session:
        for row in session.execute(
            sa.select(S.host, S.last_seen_up, S.updated_at, S.created_at, S.forced_down).where(
                S.binary == compute_nodes.COMPUTE_BINARY
            )
        ):
            if compute_nodes.service_is_up(
                row.last_seen_up, row.updated_at, row.created_at, row.forced_down, now
            ):
                continue
            seen = row.last_seen_up or row.updated_at or row.created_at
            age = (now - seen).total_seconds() if seen else float("inf")
            found[row.host] = (node_health.down_reason(row.host, seen, row.forced_down, now), age)
    return found


def move_stuck_creates(
    down: dict[str, tuple[str, float]], rpcapi: Any = None, keep: Callable[[], bool] = _always
) -> list[str]:
    if not down:
        return []
    with engine.transaction(readonly=True) as session:
        stuck = list(
            session.execute(
                sa.select(C.uuid, C.host).where(
                    C.status == consts.CREATING, C.host.in_(sorted(down))
                )
            )
        )
    moved = []
    for uuid_, host in stuck:
        if not keep():
            break
        try:
            if relocation.move(uuid_, host, down[host][0], rpcapi=rpcapi):
                moved.append(uuid_)
        except Exception:
            LOG.exception("Moving the create of %s off %s failed", uuid_, host)
    return moved


def auto_evacuate(
    down: dict[str, tuple[str, float]], rpcapi: Any = None, keep: Callable[[], bool] = _always
) -> list[str]:
    grace = float(CONF.compute.evacuate_auto_heal_after or 0)
    if grace <= 0:
        return []
    moved = []
    admin = zun_context.get_admin_context()
    for host, (_, age) in down.items():
        if age < grace:
            continue
        if not keep():
            break
        with engine.transaction(readonly=True) as session:
            waiting = session.execute(
                sa.select(C.id)
                .where(
                    C.host == host,
                    C.auto_heal.is_(True),
                    C.status.in_(sorted(node_health.ENGINE_STATUSES)),
                )
                .limit(1)
            ).first()
        if waiting is None:
            continue
        LOG.warning("Host %s down for %d s: evacuating its auto_heal containers", host, age)
        try:
            outcomes = evacuation.evacuate(admin, host, only_auto_heal=True, rpcapi=rpcapi)
        except evacuation.HostIsUp:
            continue
        moved += [o.uuid for o in outcomes if o.result == "evacuated"]
    return moved


def run_once(rpcapi: Any = None, keep: Callable[[], bool] = _always) -> None:
    """One pass. ``keep()`` is asked before each move: False stops the pass (the lease is
    lost)."""
    down = _down_hosts()
    move_stuck_creates(down, rpcapi, keep)
    auto_evacuate(down, rpcapi, keep)


class NodeMonitor:
    """A component (start/stop) running :func:`run_once`, under the lease, in a thread of its
    own."""

    name = "node-monitor"

    def __init__(
        self, interval: float | None = None, lease_seconds: float | None = None, rpcapi: Any = None
    ) -> None:
        spacing = interval or float(CONF.compute.node_monitor_interval)
        self.lease_seconds = lease_seconds or max(LEASE_MIN_SECONDS, 3 * spacing)
        self.rpcapi = rpcapi
        self.holder = ""
        self.leading = False
        self.runner = PeriodicRunner(name="zun-node-monitor")
        self.runner.add("node_monitor", self.run_if_leader, spacing=spacing, run_immediately=False)

    def hold(self) -> bool:
        """Take or renew the lease; logs when this process starts or stops leading."""
        try:
            held = leases.hold(LEASE, self.holder, self.lease_seconds)
        except Exception:
            LOG.exception("The node monitor lease could not be read")
            held = False
        if held != self.leading:
            self.leading = held
            if held:
                LOG.info(
                    "Node monitor: this process (%s) holds the lease and runs the passes",
                    self.holder,
                )
            else:
                LOG.info("Node monitor: this process (%s) no longer holds the lease", self.holder)
        return held

    def run_if_leader(self) -> bool:
        """One pass if this process holds the lease; whether it ran."""
        if not self.hold():
            return False
        run_once(self.rpcapi, keep=self.hold)
        return True

    def start(self) -> None:
        # Made here, not at construction: zun-api builds it in each forked worker anyway,
        # but the pid must be the running process's.
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.runner.start()

    def stop(self) -> None:
        self.runner.stop()
        if self.leading:
            try:
                leases.release(LEASE, self.holder)  # the next process need not wait
            except Exception:
                LOG.warning("The node monitor lease could not be given up", exc_info=True)
            self.leading = False
