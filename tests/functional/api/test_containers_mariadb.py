"""The container API on a real MariaDB (InnoDB row locks, real concurrency), over the bus.

Same in-process pipeline as the unit API tests, but the database is a throwaway MariaDB
schema built by the real migrations: compare-and-swap on ``task_state`` and the atomic claims
are checked where several connections really race.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from unit.api.apptesting import ApiClient, Seed, make_app
from unit.api.handlers import containers_support as support
from unit.api.handlers.containers_support import PROJECT_A, container_row, db_row, node_usage

from zun.db import engine as db_engine
from zun.db import migration, models

bus = support.bus
nodes = support.nodes

pytestmark = pytest.mark.mariadb


@pytest.fixture
def maria(mariadb_url: Callable[[], str]) -> Iterator[str]:
    url = mariadb_url()
    migration.upgrade(url=url)
    db_engine.set_engine(db_engine.create_engine(url))
    try:
        yield url
    finally:
        db_engine.dispose()


@pytest.fixture
def client(maria: str, nodes: support.Nodes) -> tuple[ApiClient, Seed, Any]:
    seed = Seed()
    seed.service("node1")
    seed.compute_node("node1", cpus=2, cpu_used=0.0, mem_total=8192, mem_used=0, disk_used=0)
    node = nodes.start("node1")
    return ApiClient(make_app()), seed, node


def _parallel(count: int, fn: Callable[[], int]) -> list[int]:
    barrier = threading.Barrier(count)
    results: list[int] = []
    failures: list[BaseException] = []
    lock = threading.Lock()

    def run() -> None:
        barrier.wait()
        try:
            status = fn()
        except BaseException as exc:  # surfaced below: a dead thread must fail the test
            with lock:
                failures.append(exc)
            return
        with lock:
            results.append(status)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]
    return sorted(results)


def test_create_list_show_delete(client):
    api, _, node = client
    member = api.as_member(PROJECT_A).at("1.40")
    r = member.post(
        "/v1/containers?run=True",
        json={"image": "busybox", "name": "web", "memory": 128, "cpu": 0.5},
    )
    assert r.status == 202 and r.json["status"] == "Creating"
    uuid = r.json["uuid"]
    assert node.wait_for("container_create")[0].kwargs["container_uuid"] == uuid
    items = member.get("/v1/containers").json["containers"]
    assert [c["name"] for c in items] == ["web"] and items[0]["memory"] == "128"
    assert member.get("/v1/containers/web").json["uuid"] == uuid
    assert node_usage() == (0.5, 128, 0)
    assert member.delete(f"/v1/containers/{uuid}").status == 409  # still Creating


def test_concurrent_starts_one_202_one_409(client):
    api, seed, node = client
    row = seed.row(container_row(status="Stopped"))
    member = api.as_member(PROJECT_A)
    results = _parallel(2, lambda: member.post(f"/v1/containers/{row.uuid}/start").status)
    assert results == [202, 409]
    assert len(node.wait_for("container_start")) == 1
    assert db_row(row.uuid).task_state == "container_starting"


def test_concurrent_creates_never_overcommit_a_node(client):
    api, _, _ = client
    # node1: 2 cpus x 16 = 32 cpus of capacity; 8 requests of 2 cpus (no more than the node
    # has) with the node's own ratio lowered to 5: 10 cpus, only 5 fit. One project per
    # request, so that the project quota (20 cpus by default) is not what stops them.
    with db_engine.transaction() as session:
        session.execute(sa.update(models.ComputeNode).values(cpu_allocation_ratio=5.0))
    statuses: list[str] = []
    lock = threading.Lock()
    counter = iter(range(8))

    def create() -> int:
        with lock:
            project = f"project-{next(counter)}"
        r = (
            api.as_member(project)
            .at("1.40")
            .post("/v1/containers", json={"image": "busybox", "cpu": 2, "memory": 64})
        )
        with lock:
            statuses.append(r.json.get("status") or f"HTTP {r.status}: {r.body[:300]!r}")
        return r.status

    assert _parallel(8, create) == [202] * 8
    assert sorted(statuses) == ["Creating"] * 5 + ["Error"] * 3
    assert node_usage()[0] == 10.0


def test_concurrent_deletes_of_a_hostless_row(client):
    api, seed, _ = client
    row = seed.row(container_row(status="Error", host=None))
    member = api.as_member(PROJECT_A)
    results = _parallel(3, lambda: member.delete(f"/v1/containers/{row.uuid}").status)
    assert all(s in (204, 404) for s in results) and 204 in results
    assert db_row(row.uuid) is None
