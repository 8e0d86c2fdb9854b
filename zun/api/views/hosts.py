"""The host view (rest-api.md §16.4), the same at every version from 1.4."""

from __future__ import annotations

from typing import Any

from zun.api import common
from zun.db.models import ComputeNode

FIELDS = (
    "hostname",
    "mem_total",
    "mem_used",
    "cpus",
    "cpu_used",
    "total_containers",
    "architecture",
    "os_type",
    "os",
    "kernel_version",
    "labels",
    "disk_total",
    "disk_used",
    "disk_quota_supported",
    "runtimes",
    "enable_cpu_pinning",
)


def host_view(node: ComputeNode, host_url: str) -> dict[str, Any]:
    view: dict[str, Any] = {"uuid": node.uuid, "links": common.links(host_url, "hosts", node.uuid)}
    for name in FIELDS:
        view[name] = getattr(node, name)
    view["labels"] = node.labels or {}
    view["runtimes"] = node.runtimes or []
    view["disk_quota_supported"] = bool(node.disk_quota_supported)
    view["enable_cpu_pinning"] = bool(node.enable_cpu_pinning)
    return view
