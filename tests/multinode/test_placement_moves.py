"""Allocations follow containers that move, on the multi-node environment with Placement on.

zun-api and both zun-compute agents run with ``[scheduler]/use_placement`` against the local
OpenStack's Placement (``scripts/run-tests.sh -m placement``). An agent is SIGKILLed: the
create sent to it in that window is moved by the API's node monitor to the other node, a
forced delete of one of its containers works without it, and evacuation recreates its
container on the other node. Each time the allocation in Placement is where the row is: on the
new node's provider only, or nowhere. When the dead agent comes back, its reconciliation
leaves its provider empty. The providers (named after this cluster's nodes) are deleted at the
end, which Placement refuses while any allocation is left on them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import openstack_env
import pytest
from multinode.cluster import Cluster
from multinode.conftest import delete_all_containers
from multinode.test_node_loss import call, run, running_on, service, show

pytestmark = [pytest.mark.multinode, pytest.mark.placement]


def wait_until(check: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def test_allocations_follow_reschedule_forced_delete_and_evacuation(
    cluster: Cluster, openstack_cloud: openstack_env.OpenStackCloud
) -> None:
    placement = openstack_env.PlacementAdmin(openstack_cloud)
    conf: dict[str, dict[str, Any]] = {
        **openstack_env.zun_conf_sections("keystone_auth", "placement_client"),
        "scheduler": {"use_placement": True},
        "compute": {"resource_provider_association_refresh": 3},
    }
    victim, survivor = cluster.nodes
    rps: dict[str, str] = {}
    consumers: list[str] = []
    try:
        for node in cluster.nodes:
            node.restart_agent(conf)
        cluster.restart_api(conf)
        for node in cluster.nodes:
            rps[node.name] = wait_until(
                lambda n=node: placement.providers_named(n.name), f"the provider of {node.name}"
            )[0]["uuid"]

        def where(uuid: str) -> set[str]:
            return set(placement.allocations(uuid)["allocations"])

        moved = run(cluster, victim.name)
        deleted = run(cluster, victim.name)
        consumers += [moved, deleted]
        for uuid in (moved, deleted):
            running_on(cluster, uuid, victim.name)
            assert where(uuid) == {rps[victim.name]}

        # Only the victim can take the next create, which it will never do.
        assert (
            call(cluster, "PUT", f"/v1/services/disable?host={survivor.name}&binary=zun-compute")[0]
            == 200
        )
        victim.kill_agent()
        in_window = run(cluster)
        consumers.append(in_window)
        assert show(cluster, in_window)["host"] == victim.name
        assert where(in_window) == {rps[victim.name]}
        assert (
            call(cluster, "PUT", f"/v1/services/enable?host={survivor.name}&binary=zun-compute")[0]
            == 200
        )
        wait_until(
            lambda: service(cluster, victim.name)["state"] == "down",
            "the victim to be seen down",
            40,
        )

        # Rescheduled by the node monitor: the allocation moved with it.
        running_on(cluster, in_window, survivor.name, timeout=60)
        assert where(in_window) == {rps[survivor.name]}

        # A forced delete on the down host releases the allocation without the host.
        assert call(cluster, "DELETE", f"/v1/containers/{deleted}?force=True")[0] == 204
        assert where(deleted) == set()

        status, answer = call(cluster, "POST", f"/v1/hosts/{victim.name}/evacuate", {}, "1.41")
        assert status == 202, answer
        assert {c["uuid"]: c["result"] for c in answer["containers"]} == {moved: "evacuated"}
        running_on(cluster, moved, survivor.name)
        assert where(moved) == {rps[survivor.name]}

        # Back: its reconciliation finds nothing of its own left on its provider.
        victim.start_agent(conf)
        cluster.wait_ready(nodes=[victim])
        time.sleep(4)  # one reconciliation period
        assert placement.on_provider(rps[victim.name]) == {}
        assert set(placement.on_provider(rps[survivor.name])) == {moved, in_window}

        for uuid in (moved, in_window):
            assert call(cluster, "DELETE", f"/v1/containers/{uuid}?force=True")[0] == 204
            wait_until(
                lambda u=uuid: call(cluster, "GET", f"/v1/containers/{u}")[0] == 404,
                f"{uuid} to be deleted",
            )
        for uuid in (moved, deleted, in_window):
            # The node deletes it right after its transaction: a moment after the 404.
            wait_until(lambda u=uuid: where(u) == set(), f"the allocation of {uuid} to go", 15)
    finally:
        # Agents without Placement first, or their next report would make the providers
        # again; then what a failed run may have left, then the providers.
        delete_all_containers(cluster)
        cluster.reset()
        for uuid in consumers:
            placement.call("DELETE", f"/allocations/{uuid}")
        for rp in rps.values():
            status, body = placement.call("DELETE", f"/resource_providers/{rp}")
            assert status in (204, 404), body
