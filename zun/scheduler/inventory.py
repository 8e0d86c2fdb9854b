"""A node's schedulable capacity: what it has, less its reserve, times its allocation ratio.

Each node writes its own ratios and reserves on its ``compute_node`` row (as Nova nodes put
them in their inventory): :func:`own_settings` is what zun-compute reports. A row that has
none yet (NULL: an older node, a database written by Zun) falls back to zun-api's
``[compute]`` options, which is all the rewrite used before.

``cpu_allocation_ratio`` (and ram, disk) unset or 0 means ``initial_<res>_allocation_ratio``,
as in Nova and Zun.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zun.conf import CONF

RATIO_COLUMNS = {
    "cpu": "cpu_allocation_ratio",
    "ram": "ram_allocation_ratio",
    "disk": "disk_allocation_ratio",
}
RESERVE_COLUMNS = ("reserved_host_cpus", "reserved_host_memory_mb", "reserved_host_disk_mb")


def allocation_ratio(resource: str) -> float:
    """This process's ``[compute]/<resource>_allocation_ratio``, else the initial ratio."""
    value = getattr(CONF.compute, f"{resource}_allocation_ratio")
    if value is None or float(value) <= 0:
        value = getattr(CONF.compute, f"initial_{resource}_allocation_ratio")
    return float(value)


def reserve(name: str) -> int:
    """This process's ``[compute]/<name>`` (one of RESERVE_COLUMNS)."""
    return int(getattr(CONF.compute, name) or 0)


def own_settings() -> dict[str, Any]:
    """The ``compute_node`` columns a node writes from its own configuration."""
    values: dict[str, Any] = {col: allocation_ratio(res) for res, col in RATIO_COLUMNS.items()}
    values.update({name: reserve(name) for name in RESERVE_COLUMNS})
    return values


@dataclass(frozen=True)
class Capacity:
    """Sellable capacity of one node (CPUs, MiB, GiB)."""

    cpu_capacity: float
    mem_capacity: float
    disk_capacity: float


def settings_of(node: Any) -> dict[str, Any]:
    """The node's values, each falling back to this process's when the row has none."""
    values = {}
    for res, col in RATIO_COLUMNS.items():
        own = getattr(node, col, None)
        values[col] = float(own) if own is not None and own > 0 else allocation_ratio(res)
    for name in RESERVE_COLUMNS:
        own = getattr(node, name, None)
        values[name] = int(own) if own is not None else reserve(name)
    return values


def of(node: Any) -> Capacity:
    """Capacity of a node row or NodeState (``cpus``, ``mem_total``, ``disk_total`` ...)."""
    s = settings_of(node)
    return Capacity(
        cpu_capacity=((node.cpus or 0) - s["reserved_host_cpus"]) * s["cpu_allocation_ratio"],
        mem_capacity=((node.mem_total or 0) - s["reserved_host_memory_mb"])
        * s["ram_allocation_ratio"],
        disk_capacity=((node.disk_total or 0) - s["reserved_host_disk_mb"] / 1024)
        * s["disk_allocation_ratio"],
    )
