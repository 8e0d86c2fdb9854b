"""Periodic work of a compute node (the heartbeat is the agent's).

* :func:`update_inventory`: the node's ``compute_node`` row from the engine and /proc; the
  ``*_used`` columns recounted from this host's rows (which heals any claim drift).
* :func:`sync_container_state`: this host's rows (ONE indexed query) against ONE engine list.
  Rows busy with a task are left alone; every write is a compare-and-swap on the status seen.
  A container gone from the engine becomes Deleted (auto_remove), is rebuilt (auto_heal), or
  goes to Error.
* :func:`delete_unused_containers`: removes this host's auto_remove containers marked Deleted.
* :func:`sync_placement` (``[scheduler]/use_placement``): the node's resource provider and
  inventory reported, its allocations reconciled with its rows (placement_sync.py).
* :func:`reap_orphans`: removes engine containers labelled ``zun.managed`` that have no row on
  this host (none at all, or one moved to another host while this one was down), once they
  are older than ``[compute]/reap_grace_period``.

Every query is scoped to this host (index ``ix_container_host``) or to UUIDs the engine
reported: the cost does not grow with what other nodes hold.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from zun.common import consts
from zun.common.context import RequestContext
from zun.compute import auto_heal, placement_sync
from zun.compute.container_lifecycle import ContainerLifecycle
from zun.conf import CONF
from zun.db import engine, models
from zun.db.queries import containers as container_q
from zun.db.queries import node as node_q
from zun.runtime.docker.driver import REASON_NOT_IN_ENGINE, host_memory
from zun.runtime.docker.status import map_docker_state
from zun.scheduler import inventory, placement

LOG = logging.getLogger(__name__)

# Statuses a vanished container is rebuilt from when it has auto_heal. Error is left out on
# purpose: a container that keeps failing would otherwise be rebuilt every sync, forever.
HEALABLE = auto_heal.HEALABLE
# Rows whose engine container may legitimately be absent or about to go.
_NOT_SYNCED = (consts.CREATING, consts.DELETING, consts.DELETED)


def tasks_for(
    manager: ContainerLifecycle,
) -> list[tuple[Callable[[RequestContext], None], float, bool]]:
    """``(callable(context), spacing seconds, run at start-up)`` for the agent's runner."""
    interval = float(CONF.periodic_interval_max)
    sync = float(CONF.sync_container_state_interval)

    def bind(func: Callable[..., None]) -> Callable[[RequestContext], None]:
        bound = functools.partial(func, manager)
        functools.update_wrapper(bound, func)
        return bound  # type: ignore[return-value]

    tasks = [
        (bind(update_inventory), interval, False),  # init_host already ran it
        (bind(sync_container_state), sync, True),
        (bind(delete_unused_containers), interval, True),
        (bind(reap_orphans), interval, False),
    ]
    refresh = int(CONF.compute.resource_provider_association_refresh or 0)
    if placement.enabled() and refresh > 0:
        tasks.append((bind(sync_placement), float(refresh), False))  # init_host ran it
    return tasks


# --- inventory --------------------------------------------------------------------------------


def node_facts(manager: ContainerLifecycle) -> dict[str, Any]:
    """Capacity and facts of the node as the ``compute_node`` columns hold them."""
    info = manager.driver.host_info()
    disk = manager.driver.disk_usage(info.get("docker_root_dir"))
    reserve = float(CONF.compute.reserve_disk_for_image or 0)
    try:
        memory = host_memory()
    except OSError:
        memory = {"mem_total": info["mem_total"], "mem_free": 0, "mem_available": 0}
    return {
        "cpus": int(info.get("cpus") or 0),
        "mem_total": int(memory["mem_total"] or info.get("mem_total") or 0),
        "mem_free": int(memory.get("mem_free") or 0),
        "mem_available": int(memory.get("mem_available") or 0),
        "total_containers": int(info.get("total_containers") or 0),
        "running_containers": int(info.get("running_containers") or 0),
        "paused_containers": int(info.get("paused_containers") or 0),
        "stopped_containers": int(info.get("stopped_containers") or 0),
        "architecture": info.get("architecture"),
        "os_type": info.get("os_type"),
        "os": info.get("os"),
        "kernel_version": info.get("kernel_version"),
        "labels": info.get("labels") or {},
        "runtimes": info.get("runtimes") or [],
        "disk_total": int(disk["disk_total"] * (1 - reserve)),
        "disk_quota_supported": False,
        "enable_cpu_pinning": bool(CONF.compute.enable_cpu_pinning),
        # This node's own ratios and reserves: the claims in zun-api use them.
        **inventory.own_settings(),
    }


@engine.retry_on_deadlock
def _write_inventory(hostname: str, facts: dict[str, Any]) -> None:
    with engine.transaction() as session:
        node_q.upsert_compute_node(session, hostname, facts)
        node_q.recompute_usage(session, hostname)


def update_inventory(manager: ContainerLifecycle, context: RequestContext) -> None:
    _write_inventory(manager.host, node_facts(manager))


def sync_placement(manager: ContainerLifecycle, context: RequestContext) -> None:
    """The node's provider, inventory and traits in Placement, and its allocations
    reconciled with this host's rows (zun.compute.placement_sync)."""
    placement_sync.sync(manager.host)


# --- state sync -------------------------------------------------------------------------------


def _host_rows(host: str) -> list[Any]:
    with engine.transaction(readonly=True) as session:
        return node_q.host_rows(session, host)


def _cas(uuid: str, values: dict[str, Any], status: str, host: str) -> bool:
    with engine.transaction() as session:
        return container_q.cas_update(
            session, uuid, values, task_states=(None,), statuses=(status,), host=host
        )


def sync_container_state(manager: ContainerLifecycle, context: RequestContext) -> None:
    # Rows first, engine second: a container created in between is then a row in Creating
    # (skipped), never a running row that looks missing.
    rows = _host_rows(manager.host)
    if not rows:
        return
    engine_rows = manager.driver.list_zun_containers(all=True)
    by_uuid = {(c.get("Labels") or {}).get(consts.LABEL_CONTAINER_UUID): c for c in engine_rows}
    for row in rows:
        if row.task_state or row.status in _NOT_SYNCED or manager.workers.busy(row.uuid):
            continue
        found = by_uuid.get(row.uuid)
        if found is not None:
            fields = map_docker_state(
                found.get("State"),
                status=row.status,
                status_reason=row.status_reason,
                status_detail=row.status_detail,
            )
            if fields.status != row.status:
                _cas(
                    row.uuid,
                    {
                        "status": fields.status,
                        "status_reason": fields.status_reason,
                        "status_detail": fields.status_detail,
                    },
                    row.status,
                    manager.host,
                )
            continue
        _vanished(manager, context, row)


def _vanished(manager: ContainerLifecycle, context: RequestContext, row: Any) -> None:
    if row.auto_remove:
        if row.status != consts.DELETED:
            _cas(
                row.uuid,
                {"status": consts.DELETED, "status_reason": None, "status_detail": None},
                row.status,
                manager.host,
            )
        return
    if auto_heal.heals(row):
        auto_heal.start(manager, context, row)
        return
    # A row already in Error keeps the reason that says why it failed.
    if row.status != consts.ERROR:
        _cas(
            row.uuid,
            {"status": consts.ERROR, "status_reason": REASON_NOT_IN_ENGINE, "status_detail": None},
            row.status,
            manager.host,
        )


# --- auto_remove cleanup ------------------------------------------------------------------------


def delete_unused_containers(manager: ContainerLifecycle, context: RequestContext) -> None:
    C = models.Container
    with engine.transaction(readonly=True) as session:
        uuids = list(
            session.scalars(
                sa.select(C.uuid).where(
                    C.host == manager.host,
                    C.status == consts.DELETED,
                    C.auto_remove.is_(True),
                    C.task_state.is_(None),
                )
            )
        )
    for uuid in uuids:
        with engine.transaction() as session:
            won = container_q.cas_update(
                session,
                uuid,
                {"task_state": consts.CONTAINER_DELETING},
                task_states=(None,),
                statuses=(consts.DELETED,),
                host=manager.host,
            )
        if won:
            manager.container_delete(context, uuid, force=True)


# --- orphans ----------------------------------------------------------------------------------


def _created_epoch(engine_row: dict[str, Any]) -> float:
    created = engine_row.get("Created")
    return float(created) if isinstance(created, int | float) else 0.0


def reap_orphans(
    manager: ContainerLifecycle, context: RequestContext, grace_period: float | None = None
) -> list[str]:
    """Remove this node's engine containers that no row knows; returns their UUIDs."""
    if grace_period is None:
        grace_period = float(CONF.compute.reap_grace_period)
    candidates: dict[str, dict[str, Any]] = {}
    for found in manager.driver.list_zun_containers(all=True):
        labels = found.get("Labels") or {}
        uuid = labels.get(consts.LABEL_CONTAINER_UUID)
        if not uuid or labels.get("zun.host", manager.host) != manager.host:
            continue
        if time.time() - _created_epoch(found) >= grace_period:
            candidates[uuid] = found
    if not candidates:
        return []
    with engine.transaction(readonly=True) as session:
        # Rows on this host only: a container moved away (evacuated, rescheduled, deleted
        # while this node was down) left its engine container here for us to remove.
        known = node_q.existing_uuids(session, candidates, manager.host)
    reaped = []
    for uuid, found in candidates.items():
        if uuid in known or manager.workers.busy(uuid):
            continue
        LOG.warning(
            "Removing engine container %s: no container %s in the database", found.get("Id"), uuid
        )
        try:
            manager.driver.delete({"uuid": uuid, "container_id": found.get("Id")}, force=True)
            manager.resources.release_volumes(uuid, [])
        except Exception:
            LOG.warning("Could not reap engine container %s", found.get("Id"), exc_info=True)
            continue
        reaped.append(uuid)
    return reaped
