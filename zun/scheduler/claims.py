"""Atomic resource claims on a compute node: one conditional UPDATE each, no read-then-write.

A claim adds the container's cpu, memory (MiB) and disk (GiB) to the node's ``*_used``
columns only if the result still fits the node's capacity; two API workers claiming the last
resources of a node at the same moment therefore cannot both win. Capacity is what the node
reported minus its ``reserved_host_*``, times its allocation ratio, all read from the node's
own row (see :mod:`zun.scheduler.inventory`; NULL falls back to zun-api's ``[compute]``).
A request for more CPUs or memory than the node physically has never fits, whatever the
ratio: Docker would refuse the CPUs, and the memory could never be given.

``release`` gives resources back (never below zero). The node's periodic inventory also
recomputes ``*_used`` from the container rows of its host, which heals any drift.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.orm import Session

from zun.db import models
from zun.scheduler import inventory

N = models.ComputeNode

# Kept for callers of the old name: this process's own ratio.
allocation_ratio = inventory.allocation_ratio


def _ratio(resource: str) -> sa.ColumnElement[float]:
    column = getattr(N, inventory.RATIO_COLUMNS[resource])
    return sa.case((column > 0, column), else_=inventory.allocation_ratio(resource))


def _reserved(name: str) -> sa.ColumnElement[float]:
    return sa.func.coalesce(getattr(N, name), inventory.reserve(name))


def claim(
    session: Session,
    hostname: str,
    cpu: float,
    memory_mb: int,
    disk_gb: int = 0,
    totals: tuple[float, int] | None = None,
) -> bool:
    """Take ``cpu``/``memory_mb``/``disk_gb`` on ``hostname`` if they fit; True when taken.

    Runs in the caller's transaction: the claim is undone if that transaction rolls back.
    Disk is only checked (and counted) when asked for, as in Zun. ``totals``: the container's
    whole cpu and memory when this claim is only the growth of a resize; they, not the
    growth, must not exceed what the node physically has.
    """
    cpu = float(cpu or 0)
    memory_mb = int(memory_mb or 0)
    disk_gb = int(disk_gb or 0)
    whole_cpu, whole_mem = totals if totals is not None else (cpu, memory_mb)
    stmt = (
        sa.update(N)
        .where(N.hostname == hostname)
        .where(N.cpus >= float(whole_cpu or 0))
        .where(N.mem_total >= int(whole_mem or 0))
        .where(N.cpu_used + cpu <= (N.cpus - _reserved("reserved_host_cpus")) * _ratio("cpu"))
        .where(
            N.mem_used + memory_mb
            <= (N.mem_total - _reserved("reserved_host_memory_mb")) * _ratio("ram")
        )
    )
    if disk_gb > 0:
        stmt = stmt.where(
            N.disk_used + disk_gb
            <= (N.disk_total - _reserved("reserved_host_disk_mb") / 1024.0) * _ratio("disk")
        )
    values = {N.cpu_used: N.cpu_used + cpu, N.mem_used: N.mem_used + memory_mb}
    if disk_gb > 0:
        values[N.disk_used] = N.disk_used + disk_gb
    return session.execute(stmt.values(values)).rowcount == 1


def release(session: Session, hostname: str, cpu: float, memory_mb: int, disk_gb: int = 0) -> None:
    """Give back what :func:`claim` took (clamped at zero, so a double release is harmless)."""
    cpu = float(cpu or 0)
    memory_mb = int(memory_mb or 0)
    disk_gb = int(disk_gb or 0)
    values = {
        N.cpu_used: sa.case((N.cpu_used - cpu < 0, 0.0), else_=N.cpu_used - cpu),
        N.mem_used: sa.case((N.mem_used - memory_mb < 0, 0), else_=N.mem_used - memory_mb),
    }
    if disk_gb > 0:
        values[N.disk_used] = sa.case((N.disk_used - disk_gb < 0, 0), else_=N.disk_used - disk_gb)
    session.execute(sa.update(N).where(N.hostname == hostname).values(values))


def container_resources(
    cpu: float | None, memory: str | int | None, disk: int | None
) -> tuple[float, int, int]:
    """``(cpu, memory_mb, disk_gb)`` of a container row (memory is stored as a string)."""
    try:
        memory_mb = int(str(memory).rstrip("mM")) if memory not in (None, "") else 0
    except ValueError:
        memory_mb = 0
    return float(cpu or 0), memory_mb, int(disk or 0)
