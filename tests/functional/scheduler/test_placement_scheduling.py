"""The scheduler with Placement (``-m placement``): a migrated SQLite database with two compute
nodes whose providers are made in the real Placement by the test, ``[scheduler]/use_placement``
on in this process.

The race the scheduler must survive: Placement offers a node, and before the claim reaches it
another consumer ("Nova") takes the room. The client used is the real one, with one hook: right
after the real candidates call, it fills the first node's provider through the admin's API. The
scheduler must then give that node's database claim back and claim on the other node."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openstack_env
import pytest

from zun.conf import CONF
from zun.db import engine as db_engine
from zun.db import migration, models
from zun.db.queries import node as node_q
from zun.scheduler import filters, placement, scheduler

pytestmark = pytest.mark.placement


def _inventory(memory_mb: int) -> dict[str, Any]:
    return {
        "VCPU": {
            "total": 4,
            "reserved": 0,
            "min_unit": 1,
            "max_unit": 4,
            "step_size": 1,
            "allocation_ratio": 1.0,
        },
        "MEMORY_MB": {
            "total": memory_mb,
            "reserved": 0,
            "min_unit": 1,
            "max_unit": memory_mb,
            "step_size": 1,
            "allocation_ratio": 1.0,
        },
    }


class RacingClient(placement.PlacementClient):
    """The real client; after each candidates call, "Nova" fills ``victim``'s provider."""

    def __init__(self, session: Any, admin: openstack_env.PlacementAdmin) -> None:
        super().__init__(session=session)
        self.admin = admin
        self.victim: str | None = None
        self.nova: list[str] = []

    def allocation_candidates(self, query: str) -> list[str]:
        offered = super().allocation_candidates(query)
        if self.victim is not None:
            nova = str(uuid.uuid4())
            self.nova.append(nova)
            total = self.admin.get(f"/resource_providers/{self.victim}/inventories")["inventories"][
                "MEMORY_MB"
            ]["total"]
            total -= sum(
                a["resources"].get("MEMORY_MB", 0)
                for a in self.admin.on_provider(self.victim).values()
            )
            status, body = self.admin.call(
                "PUT",
                f"/allocations/{nova}",
                {
                    "allocations": {self.victim: {"resources": {"MEMORY_MB": total}}},
                    "project_id": "nova",
                    "user_id": "nova",
                    "consumer_generation": None,
                    "consumer_type": "INSTANCE",
                },
            )
            assert status == 204, body
            self.victim = None
        return offered


@pytest.fixture
def cloud_db(
    tmp_path: Path, openstack_cloud: openstack_env.OpenStackCloud
) -> Iterator[tuple[RacingClient, dict[str, str]]]:
    url = f"sqlite:///{tmp_path / 'zun.sqlite'}"
    migration.upgrade(url=url)
    db_engine.set_engine(db_engine.create_engine(url))
    admin = openstack_env.PlacementAdmin(openstack_cloud)
    client = RacingClient(openstack_cloud.session(), admin)
    saved = placement._CLIENT
    placement._CLIENT = client
    CONF.set_override("use_placement", True, group="scheduler")
    rps: dict[str, str] = {}
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    try:
        # The bigger node is the one spread tries first.
        for name, memory in (("big", 4096), ("small", 2048)):
            host = f"plc-fn-{name}-{uuid.uuid4().hex[:8]}"
            rp = str(uuid.uuid4())
            client.ensure_provider(rp, host)
            rps[host] = rp
            client.set_inventory(rp, _inventory(memory))
            with db_engine.transaction() as session:
                node_q.upsert_compute_node(
                    session, host, {"cpus": 4, "mem_total": memory, "disk_total": 10}
                )
                session.execute(
                    models.ComputeNode.__table__.update()
                    .where(models.ComputeNode.hostname == host)
                    .values(rp_uuid=rp)
                )
                session.add(
                    models.ZunService(
                        host=host, binary="zun-compute", last_seen_up=now, created_at=now
                    )
                )
        yield client, rps
    finally:
        CONF.clear_override("use_placement", group="scheduler")
        placement._CLIENT = saved
        for consumer in client.nova + getattr(client, "consumers", []):
            admin.call("DELETE", f"/allocations/{consumer}")
        for rp in rps.values():
            admin.call("DELETE", f"/resource_providers/{rp}")
        db_engine.dispose()


def _node(hostname: str) -> Any:
    with db_engine.transaction(readonly=True) as session:
        return session.query(models.ComputeNode).filter_by(hostname=hostname).one()


def test_a_node_filled_between_candidates_and_claim_is_given_up_for_the_next(
    cloud_db: tuple[RacingClient, dict[str, str]],
) -> None:
    client, rps = cloud_db
    big, small = sorted(rps, key=lambda h: "small" in h)
    request = filters.Request(cpu=1.0, memory_mb=512, disk_gb=0)
    consumer = placement.consumer_of(
        str(uuid.uuid4()), "plc-project", "plc-user", placement.resources_of(1.0, 512, 0), new=True
    )
    client.consumers = [consumer.uuid]  # type: ignore[attr-defined]
    # Without the race, the bigger node wins (spread).
    with db_engine.transaction() as session:
        assert scheduler.select_and_claim(session, request, consumer=consumer) == big
    assert set(client.get_allocations(consumer.uuid)["allocations"]) == {rps[big]}
    assert _node(big).mem_used == 512
    # Once more for another container, with "Nova" filling the big node in between.
    second = placement.consumer_of(
        str(uuid.uuid4()), "plc-project", "plc-user", placement.resources_of(1.0, 512, 0), new=True
    )
    client.consumers.append(second.uuid)  # type: ignore[attr-defined]
    client.victim = rps[big]
    with db_engine.transaction() as session:
        assert scheduler.select_and_claim(session, request, consumer=second) == small
    assert set(client.get_allocations(second.uuid)["allocations"]) == {rps[small]}
    # The big node's database claim for the second container was given back.
    assert _node(big).mem_used == 512
    assert _node(small).mem_used == 512


def test_a_rolled_back_scheduling_transaction_leaves_no_allocation(
    cloud_db: tuple[RacingClient, dict[str, str]],
) -> None:
    client, rps = cloud_db
    consumer = placement.consumer_of(
        str(uuid.uuid4()), "plc-project", "plc-user", placement.resources_of(1.0, 256, 0), new=True
    )
    client.consumers = [consumer.uuid]  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError), db_engine.transaction() as session:
        scheduler.select_and_claim(
            session, filters.Request(cpu=1.0, memory_mb=256, disk_gb=0), consumer=consumer
        )
        raise RuntimeError("the row could not be written")
    assert client.get_allocations(consumer.uuid)["allocations"] == {}
    assert sum(_node(host).mem_used for host in rps) == 0
