"""The filters under Zun's names, the spread and binpack weighers, each node's capacity."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from zun.conf import CONF
from zun.db.queries.compute_nodes import NodeState
from zun.scheduler import filters, inventory, weighers
from zun.scheduler.filters import Request


def node(name: str = "n1", **values: Any) -> NodeState:
    base: dict[str, Any] = dict(
        hostname=name,
        uuid=f"uuid-{name}",
        cpus=4,
        cpu_used=0.0,
        mem_total=4608,
        mem_used=0,
        disk_total=100,
        disk_used=0,
        runtimes=["runc"],
        labels={"zone": "a"},
        service_up=True,
        service_disabled=False,
        availability_zone=None,
    )
    base.update(values)
    return NodeState(**base)


def plain(**values: Any) -> Request:
    return Request(**{"cpu": 0, "memory_mb": 0, "disk_gb": 0, **values})


@pytest.fixture
def conf() -> Iterator[Any]:
    yield CONF
    for name in (
        "cpu_allocation_ratio",
        "ram_allocation_ratio",
        "reserved_host_memory_mb",
        "enable_cpu_pinning",
    ):
        CONF.clear_override(name, group="compute")
    CONF.clear_override("weigher", group="scheduler")


# --- capacity ----------------------------------------------------------------------------------


def test_a_node_without_settings_uses_this_process_ones(conf: Any) -> None:
    # 4 CPUs x 16; (4608 - 512) MiB x 1.5; 100 GiB x 1.0: Zun's defaults.
    cap = inventory.of(node())
    assert (cap.cpu_capacity, cap.mem_capacity, cap.disk_capacity) == (64, 6144, 100)
    conf.set_override("cpu_allocation_ratio", 2.0, group="compute")
    assert inventory.of(node()).cpu_capacity == 8


def test_a_nodes_own_settings_win_over_this_process_ones(conf: Any) -> None:
    conf.set_override("cpu_allocation_ratio", 2.0, group="compute")
    mine = node(
        cpu_allocation_ratio=1.0,
        reserved_host_cpus=1,
        ram_allocation_ratio=1.0,
        reserved_host_memory_mb=0,
        reserved_host_disk_mb=10240,
        disk_allocation_ratio=2.0,
    )
    cap = inventory.of(mine)
    assert (cap.cpu_capacity, cap.mem_capacity, cap.disk_capacity) == (3, 4608, 180)
    # A ratio of 0 means "unset", as in Nova: the fallback applies.
    assert inventory.of(node(cpu_allocation_ratio=0.0)).cpu_capacity == 8


def test_own_settings_report_effective_values(conf: Any) -> None:
    conf.set_override("ram_allocation_ratio", 0.0, group="compute")
    conf.set_override("reserved_host_memory_mb", 1024, group="compute")
    own = inventory.own_settings()
    assert own == {
        "cpu_allocation_ratio": 16.0,
        "ram_allocation_ratio": 1.5,
        "disk_allocation_ratio": 1.0,
        "reserved_host_cpus": 0,
        "reserved_host_memory_mb": 1024,
        "reserved_host_disk_mb": 0,
    }


# --- filters -----------------------------------------------------------------------------------


def test_every_name_of_zun_is_a_filter() -> None:
    assert set(filters.FILTERS) == {
        "AvailabilityZoneFilter",
        "ComputeFilter",
        "RuntimeFilter",
        "CPUFilter",
        "RamFilter",
        "DiskFilter",
        "LabelFilter",
        "CpuSetFilter",
        "PciPassthroughFilter",
    }


def test_cpu_ram_disk_filters_use_the_nodes_capacity(conf: Any) -> None:
    tight = node(
        cpu_allocation_ratio=1.0,
        cpu_used=3.5,
        ram_allocation_ratio=1.0,
        reserved_host_memory_mb=0,
        mem_used=4000,
        disk_quota_supported=True,
        disk_used=99,
    )
    assert filters.cpu_filter(tight, plain(cpu=0.5))
    assert not filters.cpu_filter(tight, plain(cpu=0.6))
    assert filters.ram_filter(tight, plain(memory_mb=608))
    assert not filters.ram_filter(tight, plain(memory_mb=609))
    assert filters.disk_filter(tight, plain(disk_gb=1))
    assert not filters.disk_filter(tight, plain(disk_gb=2))
    # Nothing asked: nothing checked.
    full = node(cpu_used=1000.0, mem_used=10**6)
    assert filters.cpu_filter(full, plain()) and filters.ram_filter(full, plain())


def test_disk_filter_needs_disk_quota_support_as_in_zun() -> None:
    assert not filters.disk_filter(node(disk_quota_supported=False), plain(disk_gb=1))
    assert filters.disk_filter(node(disk_quota_supported=False), plain())


def test_label_filter_matches_label_hints() -> None:
    labelled = node(labels={"zone": "a", "ssd": "yes"})
    assert filters.label_filter(labelled, plain(hints={"label:ssd": "yes", "other": "x"}))
    assert not filters.label_filter(labelled, plain(hints={"label:ssd": "no"}))
    assert not filters.label_filter(node(labels=None), plain(hints={"label:ssd": "yes"}))
    assert filters.label_filter(node(labels=None), plain(hints={}))


def test_cpuset_filter_keeps_pinned_and_shared_apart() -> None:
    pinning = node(enable_cpu_pinning=True, cpu_used=2.0)
    assert filters.cpuset_filter(pinning, plain(cpu=2, cpu_policy="dedicated"))
    assert not filters.cpuset_filter(pinning, plain(cpu=3, cpu_policy="dedicated"))
    assert not filters.cpuset_filter(pinning, plain(cpu=1))
    assert not filters.cpuset_filter(node(), plain(cpu=1, cpu_policy="dedicated"))
    assert filters.cpuset_filter(node(), plain(cpu=1, cpu_policy="shared"))


def test_compute_runtime_and_pci_filters() -> None:
    assert not filters.compute_filter(node(service_up=False), plain())
    assert not filters.compute_filter(node(service_disabled=True), plain())
    assert filters.runtime_filter(node(runtimes=None), plain(runtime="kata"))
    assert not filters.runtime_filter(node(), plain(runtime="kata"))
    assert filters.pci_passthrough_filter(node(), plain())


# --- weighers ----------------------------------------------------------------------------------


def _order(
    weigher: Any,
    nodes: list[NodeState],
    request: Request,
    loads: dict[str, weighers.Load] | None = None,
) -> list[str]:
    return [n.hostname for n in weigher(nodes, request, loads or {})]


def test_spread_prefers_the_least_allocated_share() -> None:
    busy = node("a", cpu_used=8.0)  # 8/64 of its CPUs
    idle_small = node("b", cpus=1)  # 0/16
    assert _order(weighers.spread, [busy, idle_small], plain(cpu=1)) == ["b", "a"]
    # Shares after placing the request: b would be 4/16 = 0.25 > a's 12/64.
    assert _order(weighers.spread, [busy, idle_small], plain(cpu=4)) == ["a", "b"]


def test_spread_ties_are_broken_by_project_then_by_count() -> None:
    a, b = node("a"), node("b")
    loads = {"a": weighers.Load(total=1, project=1), "b": weighers.Load(total=5, project=0)}
    assert _order(weighers.spread, [a, b], plain(project_id="p"), loads) == ["b", "a"]
    loads = {"a": weighers.Load(total=3, project=1), "b": weighers.Load(total=2, project=1)}
    assert _order(weighers.spread, [a, b], plain(project_id="p"), loads) == ["b", "a"]


def test_spread_breaks_exact_ties_at_random() -> None:
    a, b = node("a"), node("b")
    firsts = {weighers.spread([a, b], plain(), {})[0].hostname for _ in range(200)}
    assert firsts == {"a", "b"}


def test_spread_alternates_plain_containers_between_equal_nodes() -> None:
    nodes = [node("a"), node("b")]
    loads: dict[str, weighers.Load] = {}
    placed = []
    for _ in range(6):
        host = weighers.spread(nodes, plain(project_id="p"), loads)[0].hostname
        old = loads.get(host, weighers.Load())
        loads[host] = weighers.Load(old.total + 1, old.project + 1)
        placed.append(host)
    assert placed.count("a") == 3 and placed.count("b") == 3


def test_binpack_prefers_the_most_allocated() -> None:
    a, b = node("a", cpu_used=1.0), node("b")
    assert _order(weighers.binpack, [b, a], plain(cpu=1)) == ["a", "b"]
    loads = {"b": weighers.Load(total=2)}
    assert _order(weighers.binpack, [node("a"), node("b")], plain(), loads) == ["b", "a"]


def test_a_node_with_no_sellable_capacity_is_weighed_as_full() -> None:
    empty = node("a", cpus=0, mem_total=0)
    assert weighers.allocated_share(empty, plain()) == 1.0
    assert _order(weighers.spread, [empty, node("b")], plain()) == ["b", "a"]


def test_weigh_follows_the_option(conf: Any) -> None:
    nodes = [node("a"), node("b", cpu_used=1.0)]
    assert _order(weighers.weigh, nodes, plain()) == ["a", "b"]
    conf.set_override("weigher", "binpack", group="scheduler")
    assert _order(weighers.weigh, nodes, plain()) == ["b", "a"]


def test_node_state_has_every_inventory_field() -> None:
    names = {f.name for f in dataclasses.fields(NodeState)}
    assert set(inventory.RESERVE_COLUMNS) <= names
    assert set(inventory.RATIO_COLUMNS.values()) <= names
