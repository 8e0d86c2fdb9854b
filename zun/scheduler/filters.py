"""Host filters, with Zun's names: AvailabilityZoneFilter, ComputeFilter, RuntimeFilter.

Each filter is a function ``(node, request) -> bool``; ``[scheduler]/enabled_filters`` names
the ones applied, in order. Unknown names are a configuration error (404-coded
``SchedulerHostFilterNotFound``, as in Zun), reported at the first scheduling.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zun.common import exception
from zun.common import utils as zun_utils
from zun.db.queries.compute_nodes import NodeState


@dataclass(frozen=True)
class Request:
    """What a container asks of its host."""

    cpu: float
    memory_mb: int
    disk_gb: int
    runtime: str | None = None
    availability_zone: str | None = None
    hints: dict[str, Any] = field(default_factory=dict)


Filter = Callable[[NodeState, Request], bool]


def availability_zone_filter(node: NodeState, request: Request) -> bool:
    wanted = request.availability_zone or zun_utils.conf_value(
        None, "default_schedule_zone", None)
    if not wanted:
        return True
    zone = node.availability_zone or zun_utils.conf_value(
        None, "default_availability_zone", "nova")
    return zone == wanted


def compute_filter(node: NodeState, request: Request) -> bool:
    return node.service_up and not node.service_disabled


def runtime_filter(node: NodeState, request: Request) -> bool:
    # A node that has not reported its runtimes yet is not ruled out on that ground.
    if not request.runtime or node.runtimes is None:
        return True
    return request.runtime in node.runtimes


FILTERS: dict[str, Filter] = {
    "AvailabilityZoneFilter": availability_zone_filter,
    "ComputeFilter": compute_filter,
    "RuntimeFilter": runtime_filter,
}

DEFAULT_ENABLED = ("AvailabilityZoneFilter", "ComputeFilter", "RuntimeFilter")


def enabled_filters() -> list[Filter]:
    names = zun_utils.conf_value("scheduler", "enabled_filters", list(DEFAULT_ENABLED))
    selected = []
    for name in names or ():
        if name not in FILTERS:
            raise exception.SchedulerHostFilterNotFound(filter_name=name)
        selected.append(FILTERS[name])
    return selected
