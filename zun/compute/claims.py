"""Atomic resource claims on a compute node: one conditional UPDATE each, no read-then-write.

A claim adds the container's cpu, memory (MiB) and disk (GiB) to the node's ``*_used``
columns only if the result still fits the node's capacity; two API workers claiming the last
resources of a node at the same moment therefore cannot both win. Capacity is what the node
reported minus what ``[compute]/reserved_host_*`` keeps for the host, times the allocation
ratio (``[compute]/<res>_allocation_ratio``, else ``initial_<res>_allocation_ratio``).

``release`` gives resources back (never below zero). The node's periodic inventory also
recomputes ``*_used`` from the container rows of its host, which heals any drift.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.orm import Session

from zun.common import utils as zun_utils
from zun.db import models

N = models.ComputeNode

# Zun's defaults for the initial ratios (config-options.md [compute]).
_INITIAL_RATIOS = {"cpu": 16.0, "ram": 1.5, "disk": 1.0}


def allocation_ratio(resource: str) -> float:
    """``[compute]/<resource>_allocation_ratio``, else the initial ratio."""
    value = zun_utils.conf_value("compute", f"{resource}_allocation_ratio", None)
    if value is None or float(value) <= 0:
        value = zun_utils.conf_value("compute", f"initial_{resource}_allocation_ratio",
                                     _INITIAL_RATIOS[resource])
    return float(value)


def _reserved() -> tuple[float, float, float]:
    cpus = float(zun_utils.conf_value("compute", "reserved_host_cpus", 0) or 0)
    mem = float(zun_utils.conf_value("compute", "reserved_host_memory_mb", 512) or 0)
    disk_gb = float(zun_utils.conf_value("compute", "reserved_host_disk_mb", 0) or 0) / 1024
    return cpus, mem, disk_gb


def claim(session: Session, hostname: str, cpu: float, memory_mb: int,
          disk_gb: int = 0) -> bool:
    """Take ``cpu``/``memory_mb``/``disk_gb`` on ``hostname`` if they fit; True when taken.

    Runs in the caller's transaction: the claim is undone if that transaction rolls back.
    Disk is only checked (and counted) when asked for, as in Zun.
    """
    cpu = float(cpu or 0)
    memory_mb = int(memory_mb or 0)
    disk_gb = int(disk_gb or 0)
    res_cpus, res_mem, res_disk = _reserved()
    stmt = (
        sa.update(N)
        .where(N.hostname == hostname)
        .where(N.cpu_used + cpu <= (N.cpus - res_cpus) * allocation_ratio("cpu"))
        .where(N.mem_used + memory_mb <= (N.mem_total - res_mem) * allocation_ratio("ram"))
    )
    if disk_gb > 0:
        stmt = stmt.where(N.disk_used + disk_gb <= (N.disk_total - res_disk)
                          * allocation_ratio("disk"))
    values = {N.cpu_used: N.cpu_used + cpu, N.mem_used: N.mem_used + memory_mb}
    if disk_gb > 0:
        values[N.disk_used] = N.disk_used + disk_gb
    return session.execute(stmt.values(values)).rowcount == 1


def release(session: Session, hostname: str, cpu: float, memory_mb: int,
            disk_gb: int = 0) -> None:
    """Give back what :func:`claim` took (clamped at zero, so a double release is harmless)."""
    cpu = float(cpu or 0)
    memory_mb = int(memory_mb or 0)
    disk_gb = int(disk_gb or 0)
    values = {
        N.cpu_used: sa.case((N.cpu_used - cpu < 0, 0.0), else_=N.cpu_used - cpu),
        N.mem_used: sa.case((N.mem_used - memory_mb < 0, 0), else_=N.mem_used - memory_mb),
    }
    if disk_gb > 0:
        values[N.disk_used] = sa.case((N.disk_used - disk_gb < 0, 0),
                                      else_=N.disk_used - disk_gb)
    session.execute(sa.update(N).where(N.hostname == hostname).values(values))


def container_resources(cpu: float | None, memory: str | int | None,
                        disk: int | None) -> tuple[float, int, int]:
    """``(cpu, memory_mb, disk_gb)`` of a container row (memory is stored as a string)."""
    try:
        memory_mb = int(str(memory).rstrip("mM")) if memory not in (None, "") else 0
    except ValueError:
        memory_mb = 0
    return float(cpu or 0), memory_mb, int(disk or 0)
