"""Host filters, under Zun's names.

Each filter is a function ``(node, request) -> bool``. ``[scheduler]/enabled_filters`` names the
ones applied, in order; ``[scheduler]/available_filters`` says which may be named (Zun's
default, ``zun.scheduler.filters.all_filters``, makes all of them available). A name that is
not available is a configuration error: :func:`zun.scheduler.loading.check_config` refuses it
when zun-api starts, and :func:`enabled_filters` raises Zun's 404-coded
``SchedulerHostFilterNotFound`` should one appear later (a configuration reloaded in tests).

What each filter checks, against the node's own inventory (see :mod:`zun.scheduler.inventory`):

  AvailabilityZoneFilter  the request's zone (else ``default_schedule_zone``) is the node's
  ComputeFilter           the node's zun-compute service is up and enabled
  RuntimeFilter           the node reports the requested runtime (or has reported none yet)
  CPUFilter               the request's CPUs fit the node's free capacity (ratio and reserve
                          of the node); Zun's deprecated filter compared raw counts
  RamFilter               the same for memory
  DiskFilter              the same for disk, and the node supports disk quotas (as in Zun)
  LabelFilter             every ``label:<key>=<value>`` hint is a label of the node
  CpuSetFilter            a ``dedicated`` request needs a node with CPU pinning enabled and as
                          many CPUs; a ``shared`` one needs a node without pinning
  PciPassthroughFilter    no PCI request can be made through this API, so every node passes

The capacity filters are a fast pre-check only: the atomic claim is what admits a container.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zun.common import consts, exception
from zun.conf import CONF
from zun.db.queries.compute_nodes import NodeState
from zun.scheduler import inventory


@dataclass(frozen=True)
class Request:
    """What a container asks of its host."""

    cpu: float
    memory_mb: int
    disk_gb: int
    runtime: str | None = None
    availability_zone: str | None = None
    hints: dict[str, Any] = field(default_factory=dict)
    cpu_policy: str | None = None
    project_id: str | None = None


Filter = Callable[[NodeState, Request], bool]


def availability_zone_filter(node: NodeState, request: Request) -> bool:
    wanted = request.availability_zone or CONF.default_schedule_zone
    if not wanted:
        return True
    zone = node.availability_zone or CONF.default_availability_zone
    return zone == wanted


def compute_filter(node: NodeState, request: Request) -> bool:
    return node.service_up and not node.service_disabled


def runtime_filter(node: NodeState, request: Request) -> bool:
    # A node that has not reported its runtimes yet is not ruled out on that ground.
    if not request.runtime or node.runtimes is None:
        return True
    return request.runtime in node.runtimes


def cpu_filter(node: NodeState, request: Request) -> bool:
    if not request.cpu:
        return True
    return node.cpu_used + request.cpu <= inventory.of(node).cpu_capacity


def ram_filter(node: NodeState, request: Request) -> bool:
    if not request.memory_mb:
        return True
    return node.mem_used + request.memory_mb <= inventory.of(node).mem_capacity


def disk_filter(node: NodeState, request: Request) -> bool:
    if not request.disk_gb:
        return True
    if not node.disk_quota_supported:
        return False
    return node.disk_used + request.disk_gb <= inventory.of(node).disk_capacity


def label_filter(node: NodeState, request: Request) -> bool:
    wanted = {
        key[len("label:") :]: value
        for key, value in (request.hints or {}).items()
        if isinstance(key, str) and key.startswith("label:")
    }
    labels = node.labels or {}
    return all(key in labels and labels[key] == value for key, value in wanted.items())


def cpuset_filter(node: NodeState, request: Request) -> bool:
    if (request.cpu_policy or consts.CPU_POLICY_SHARED) == consts.CPU_POLICY_DEDICATED:
        return node.enable_cpu_pinning and node.cpus - node.cpu_used >= (request.cpu or 0)
    return not node.enable_cpu_pinning


def pci_passthrough_filter(node: NodeState, request: Request) -> bool:
    return True


FILTERS: dict[str, Filter] = {
    "AvailabilityZoneFilter": availability_zone_filter,
    "ComputeFilter": compute_filter,
    "RuntimeFilter": runtime_filter,
    "CPUFilter": cpu_filter,
    "RamFilter": ram_filter,
    "DiskFilter": disk_filter,
    "LabelFilter": label_filter,
    "CpuSetFilter": cpuset_filter,
    "PciPassthroughFilter": pci_passthrough_filter,
}


def all_filters() -> list[str]:
    """Every filter name; ``zun.scheduler.filters.all_filters`` in available_filters."""
    return list(FILTERS)


def enabled_filters() -> list[Filter]:
    from zun.scheduler import loading

    names = CONF.scheduler.enabled_filters
    available = loading.available_filter_names()
    selected = []
    for name in names or ():
        if name not in available:
            raise exception.SchedulerHostFilterNotFound(filter_name=name)
        selected.append(FILTERS[name])
    return selected
