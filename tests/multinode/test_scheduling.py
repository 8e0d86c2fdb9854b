"""Scheduling across two real nodes: spread by default, binpack on request, per-node inventory."""

from __future__ import annotations

import collections
import time
from typing import Any

import pytest
import sqlalchemy as sa
from e2e.support import wait_for
from multinode.cluster import NODE_LABEL, Cluster

from zun.db import models

pytestmark = pytest.mark.multinode

NO_VALID_HOST = "There are not enough hosts available."


def _run(zun: Any, **extra: Any) -> Any:
    created = zun.containers.run(
        image="busybox", command=["sleep", "600"], image_pull_policy="ifnotpresent", **extra
    )
    return wait_for(zun, created.uuid, timeout=90)


def _node_row(cluster: Cluster, host: str) -> Any:
    engine = sa.create_engine(cluster.db_url)
    try:
        with engine.connect() as conn:
            return conn.execute(
                sa.select(models.ComputeNode).where(models.ComputeNode.hostname == host)
            ).one()
    finally:
        engine.dispose()


def _wait_row(cluster: Cluster, host: str, **expected: Any) -> Any:
    deadline = time.monotonic() + 60
    while True:
        row = _node_row(cluster, host)
        if all(getattr(row, key) == value for key, value in expected.items()):
            return row
        if time.monotonic() > deadline:
            raise AssertionError(f"{host} did not report {expected}: {row}")
        time.sleep(0.5)


def test_six_plain_creates_land_three_and_three(cluster: Cluster) -> None:
    zun = cluster.client()
    placed = [_run(zun) for _ in range(6)]
    assert all(ct.status == "Running" for ct in placed)
    by_host = collections.Counter(ct.host for ct in placed)
    assert by_host == {node.name: 3 for node in cluster.nodes}
    # Each is on the engine of the node the API names.
    for node in cluster.nodes:
        engine = node.engine()
        try:
            on_engine = {
                c.labels.get("zun.container.uuid")
                for c in engine.containers.list(ignore_removed=True)
            }
        finally:
            engine.close()
        assert {ct.uuid for ct in placed if ct.host == node.name} == on_engine


ZUN_FILTERS = [
    "AvailabilityZoneFilter",
    "ComputeFilter",
    "RuntimeFilter",
    "CPUFilter",
    "RamFilter",
    "DiskFilter",
    "LabelFilter",
    "CpuSetFilter",
    "PciPassthroughFilter",
]


def test_zuns_scheduler_options_work_unchanged(cluster: Cluster) -> None:
    # The [scheduler] section of a Zun deployment, with every filter Zun ships enabled.
    cluster.restart_api(
        {
            "scheduler": {
                "driver": "filter_scheduler",
                "available_filters": "zun.scheduler.filters.all_filters",
                "enabled_filters": ZUN_FILTERS,
                "max_placement_results": 50,
            }
        }
    )
    zun = cluster.client()
    placed = [_run(zun, cpu=0.1, memory="64") for _ in range(2)]
    assert [ct.status for ct in placed] == ["Running", "Running"]
    assert {ct.host for ct in placed} == {node.name for node in cluster.nodes}
    # LabelFilter: each node's engine carries the label zun-test.node=n<index>.
    second = cluster.nodes[1]
    for _ in range(2):
        assert _run(zun, hints={f"label:{NODE_LABEL}": "n2"}).host == second.name
    nowhere = _run(zun, hints={f"label:{NODE_LABEL}": "n9"})
    assert nowhere.status == "Error" and nowhere.status_reason == NO_VALID_HOST


def test_binpack_fills_one_node_first(cluster: Cluster) -> None:
    cluster.restart_api({"scheduler": {"weigher": "binpack"}})
    zun = cluster.client()
    placed = [_run(zun, cpu=0.5) for _ in range(3)]
    assert len({ct.host for ct in placed}) == 1


def test_chance_scheduler_uses_both_nodes(cluster: Cluster) -> None:
    cluster.restart_api({"scheduler": {"driver": "chance_scheduler"}})
    zun = cluster.client()
    hosts = {_run(zun).host for _ in range(8)}
    # Random, not round-robin: 8 draws all on one of two nodes has probability 1/128.
    assert hosts == {node.name for node in cluster.nodes}


def test_each_node_claims_with_its_own_ratio_and_reserve(cluster: Cluster) -> None:
    first, second = cluster.nodes
    cpus = _node_row(cluster, first.name).cpus
    # first: half its CPUs are sellable; second: keeps every CPU for itself.
    first.restart_agent({"compute": {"cpu_allocation_ratio": 0.5}})
    second.restart_agent({"compute": {"reserved_host_cpus": cpus}})
    _wait_row(cluster, first.name, cpu_allocation_ratio=0.5, reserved_host_cpus=0)
    _wait_row(cluster, second.name, reserved_host_cpus=cpus, cpu_allocation_ratio=16.0)
    cluster.wait_ready()

    zun = cluster.client()
    half = cpus / 2
    ct = _run(zun, cpu=half)
    assert ct.status == "Running" and ct.host == first.name
    # zun-api's own ratio (16) would take this; the node's own (0.5) does not.
    full = _run(zun, cpu=0.1)
    assert full.status == "Error" and full.status_reason == NO_VALID_HOST


def test_more_cpus_than_any_node_has_is_no_valid_host(cluster: Cluster) -> None:
    zun = cluster.client()
    cpus = max(_node_row(cluster, node.name).cpus for node in cluster.nodes)
    ct = _run(zun, cpu=cpus + 1)
    assert ct.status == "Error" and ct.status_reason == NO_VALID_HOST
    for node in cluster.nodes:
        assert _node_row(cluster, node.name).cpu_used == 0
