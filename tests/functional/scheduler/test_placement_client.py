"""zun.scheduler.placement against the real Placement of the local OpenStack (``-m placement``):
providers found again, inventory and traits, consumer generations (a stale one is retried),
a claim that does not fit, the allocation put back when the scheduling transaction rolls back,
and Placement unreachable as PlacementUnavailable. Providers and consumers are this test's own
(unique names) and deleted at the end."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import openstack_env
import pytest
import sqlalchemy as sa
from e2e.support import free_port
from sqlalchemy.orm import Session

from zun.common import exception
from zun.scheduler import placement

pytestmark = pytest.mark.placement

INVENTORY = {
    "VCPU": {
        "total": 4,
        "reserved": 0,
        "min_unit": 1,
        "max_unit": 4,
        "step_size": 1,
        "allocation_ratio": 1.0,
    },
    "MEMORY_MB": {
        "total": 1024,
        "reserved": 0,
        "min_unit": 1,
        "max_unit": 1024,
        "step_size": 1,
        "allocation_ratio": 1.0,
    },
}


@pytest.fixture
def api(openstack_cloud: openstack_env.OpenStackCloud) -> Iterator[placement.PlacementClient]:
    client = placement.PlacementClient(session=openstack_cloud.session())
    saved = placement._CLIENT
    placement._CLIENT = client  # claim_in_transaction uses the process's client: this one
    made: list[str] = []
    client.made = made  # type: ignore[attr-defined]
    try:
        yield client
    finally:
        placement._CLIENT = saved
        for consumer in getattr(client, "consumers", []):
            client.delete_allocation(consumer)
        for rp in made:
            client.delete_provider(rp)


def provider(api: placement.PlacementClient, inventory: dict[str, Any] = INVENTORY) -> str:
    rp = str(uuid.uuid4())
    found = api.ensure_provider(rp, f"plc-fn-{uuid.uuid4().hex[:10]}")
    assert found["uuid"] == rp
    api.made.append(rp)  # type: ignore[attr-defined]
    api.set_inventory(rp, inventory)
    return rp


def consumer(api: placement.PlacementClient, amounts: dict[str, int]) -> placement.Consumer:
    made = placement.consumer_of(str(uuid.uuid4()), "plc-project", "plc-user", amounts)
    api.consumers = [*getattr(api, "consumers", []), made.uuid]  # type: ignore[attr-defined]
    return made


def test_a_provider_is_found_again_by_uuid_and_by_name(api: placement.PlacementClient) -> None:
    rp = provider(api)
    name = api.get_provider(rp)["name"]
    assert api.ensure_provider(rp, name)["uuid"] == rp
    assert api.ensure_provider(str(uuid.uuid4()), name)["uuid"] == rp
    assert api.provider_by_name(name)["uuid"] == rp
    # Inventory set twice is one write; the disabled trait comes and goes, others stay.
    api.set_inventory(rp, INVENTORY)
    api.ensure_trait("CUSTOM_PLC_FN_OTHER")
    api.set_traits(rp, add={"CUSTOM_PLC_FN_OTHER"})
    assert api.set_traits(rp, add={placement.DISABLED_TRAIT}) == {
        "CUSTOM_PLC_FN_OTHER",
        placement.DISABLED_TRAIT,
    }
    assert api.set_traits(rp, remove={placement.DISABLED_TRAIT}) == {"CUSTOM_PLC_FN_OTHER"}


def test_a_stale_consumer_generation_is_retried(
    api: placement.PlacementClient, caplog: pytest.LogCaptureFixture
) -> None:
    rp = provider(api)
    mine = consumer(api, {"VCPU": 1, "MEMORY_MB": 100})
    assert api.put_allocation(
        mine.uuid, {rp: mine.resources}, project_id=mine.project_id, user_id=mine.user_id
    )
    # As if another writer changed the consumer since we read it: Placement answers 409
    # placement.concurrent_update, and the claim reads the generation again.
    stale = {"allocations": {}, "consumer_generation": None}
    caplog.set_level("INFO", logger="zun.scheduler.placement")
    assert api.put_allocation(
        mine.uuid,
        {rp: {"VCPU": 2, "MEMORY_MB": 200}},
        project_id=mine.project_id,
        user_id=mine.user_id,
        expect=stale,
    )
    assert api.get_allocations(mine.uuid)["allocations"][rp]["resources"] == {
        "VCPU": 2,
        "MEMORY_MB": 200,
    }
    assert f"Allocation of {mine.uuid}: generation conflict, retrying" in caplog.text


def test_a_claim_that_does_not_fit_is_refused(api: placement.PlacementClient) -> None:
    rp = provider(api)
    big = consumer(api, {"VCPU": 1, "MEMORY_MB": 2048})
    assert not api.put_allocation(
        big.uuid, {rp: big.resources}, project_id=big.project_id, user_id=big.user_id
    )
    assert api.get_allocations(big.uuid)["allocations"] == {}
    query = placement.candidate_query({"VCPU": 1, "MEMORY_MB": 2048}, in_tree=rp, limit=10)
    assert api.allocation_candidates(query) == []
    query = placement.candidate_query({"VCPU": 1, "MEMORY_MB": 512}, in_tree=rp, limit=10)
    assert api.allocation_candidates(query) == [rp]


def _transaction(work: Any, fail: bool) -> None:
    engine = sa.create_engine("sqlite://")
    with Session(engine) as session:
        try:
            with session.begin():
                work(session)
                if fail:
                    raise RuntimeError("the scheduling transaction fails")
        except RuntimeError:
            pass
    engine.dispose()


def test_a_rolled_back_claim_is_undone_and_a_committed_one_stays(
    api: placement.PlacementClient,
) -> None:
    old_rp, new_rp = provider(api), provider(api)
    fresh = consumer(api, {"VCPU": 1, "MEMORY_MB": 64})
    _transaction(lambda s: placement.claim_in_transaction(s, fresh, new_rp), fail=True)
    assert api.get_allocations(fresh.uuid)["allocations"] == {}
    _transaction(lambda s: placement.claim_in_transaction(s, fresh, old_rp), fail=False)
    assert set(api.get_allocations(fresh.uuid)["allocations"]) == {old_rp}
    # A move that rolls back puts the allocation back where it was.
    _transaction(lambda s: placement.claim_in_transaction(s, fresh, new_rp), fail=True)
    assert set(api.get_allocations(fresh.uuid)["allocations"]) == {old_rp}
    _transaction(lambda s: placement.claim_in_transaction(s, fresh, new_rp), fail=False)
    assert set(api.get_allocations(fresh.uuid)["allocations"]) == {new_rp}


def test_unreachable_placement_is_placement_unavailable(
    openstack_cloud: openstack_env.OpenStackCloud,
) -> None:
    dead = placement.PlacementClient(
        session=openstack_cloud.session(), endpoint_override=f"http://127.0.0.1:{free_port()}"
    )
    with pytest.raises(exception.PlacementUnavailable) as raised:
        dead.get_allocations(str(uuid.uuid4()))
    assert raised.value.code == 503
    assert "could not reach it" in str(raised.value.message)
