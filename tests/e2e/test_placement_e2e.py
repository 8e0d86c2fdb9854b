"""Scheduling through the real Placement (``[scheduler]/use_placement``), with real zun-all
processes, the local Docker engine and the local OpenStack's Keystone and Placement.

Run with ``scripts/run-tests.sh -m placement`` (starts the local OpenStack). Every zun-all
here has a host name of its own (``plc-<hex>``), so its resource provider is this run's
alone; the providers are deleted at the end. Consumers made by the tests are remembered and
counted in Placement by the last test: none may be left.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openstack_env
import pytest
from e2e.support import ZunAll, delete_container, free_port, http, sweep

pytestmark = pytest.mark.placement

# The node's own inventory settings: Placement must show these, not Placement's defaults.
CPU_RATIO = 4.0
RAM_RATIO = 1.0
RESERVED_MB = 256
REFRESH = 2  # [compute]/resource_provider_association_refresh: the reconciliation's period

# Every consumer and provider the tests made: counted and cleaned up at the end.
CONSUMERS: set[str] = set()
PROVIDERS: set[str] = set()


Placement = openstack_env.PlacementAdmin


def placement_conf(extra: str = "") -> str:
    """[keystone_auth] and [placement_client] of the local OpenStack, Placement on."""
    lines = []
    for section, values in openstack_env.zun_conf_sections(
        "keystone_auth", "placement_client"
    ).items():
        lines.append(f"[{section}]")
        lines += [f"{key} = {value}" for key, value in values.items()]
    return (
        "\n".join(lines) + "\n[scheduler]\nuse_placement = true\n"
        f"[compute]\ncpu_allocation_ratio = {CPU_RATIO}\n"
        f"ram_allocation_ratio = {RAM_RATIO}\nreserved_host_memory_mb = {RESERVED_MB}\n"
        f"resource_provider_association_refresh = {REFRESH}\n" + extra
    )


def make_server(base: Path, extra: str = "") -> ZunAll:
    server = ZunAll(base, host=f"plc-{uuid.uuid4().hex[:10]}")
    server.config.write_text(server.config.read_text() + placement_conf(extra))
    return server


def wait(predicate: Any, what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def placement(openstack_cloud: openstack_env.OpenStackCloud) -> Iterator[Placement]:
    api = Placement(openstack_cloud)
    yield api
    for consumer in CONSUMERS:
        api.call("DELETE", f"/allocations/{consumer}")
    for rp in PROVIDERS:
        api.call("DELETE", f"/resource_providers/{rp}")


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory,
    docker_client: Any,
    busybox_image: str,
    placement: Placement,
) -> Iterator[ZunAll]:
    zun_all = make_server(tmp_path_factory.mktemp("zun-all-placement")).start()
    try:
        yield zun_all
    finally:
        zun_all.stop()
        sweep(docker_client, zun_all.host)


@pytest.fixture(scope="module")
def provider(server: ZunAll, placement: Placement) -> dict[str, Any]:
    found = wait(lambda: placement.providers_named(server.host), "the node's provider")
    PROVIDERS.add(found[0]["uuid"])
    return found[0]


def create(server: ZunAll, body: dict[str, Any], run: bool = True) -> str:
    status, created = http(server, "POST", "/v1/containers" + ("?run=true" if run else ""), body)
    assert status == 202, created
    CONSUMERS.add(created["uuid"])
    return str(created["uuid"])


def settled(server: ZunAll, uuid_: str, timeout: float = 90) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        status, body = http(server, "GET", f"/v1/containers/{uuid_}")
        assert status == 200, body
        if body["status"] not in ("Creating",) and body["task_state"] is None:
            return body
        return None

    return wait(done, f"container {uuid_} to settle", timeout)


def delete(server: ZunAll, docker_client: Any, uuid_: str) -> None:
    delete_container(server, docker_client, uuid_, expect=(204,))


def released(placement: Placement, uuid_: str) -> None:
    """The allocation goes right after the row (the node deletes it once its transaction
    has committed, so a client may see the 404 a moment earlier)."""
    wait(
        lambda: placement.allocations(uuid_)["allocations"] == {},
        f"the allocation of {uuid_} to be released",
        15,
    )


def sleeper(image: str, **extra: Any) -> dict[str, Any]:
    return {
        "image": image,
        "image_pull_policy": "ifnotpresent",
        "command": ["sleep", "3600"],
        **extra,
    }


# --- inventory ----------------------------------------------------------------------------------


def test_inventory_reported_with_the_nodes_own_ratios_and_reserves(
    server: ZunAll, provider: dict[str, Any], placement: Placement
) -> None:
    assert provider["name"] == server.host
    status, host = http(server, "GET", f"/v1/hosts/{server.host}")
    assert status == 200, host
    # The original's naming: the provider's UUID is the compute node's.
    assert provider["uuid"] == host["uuid"]
    inventories = placement.get(f"/resource_providers/{provider['uuid']}/inventories")
    inv = inventories["inventories"]
    assert inv["VCPU"]["total"] == int(host["cpus"])
    assert inv["VCPU"]["allocation_ratio"] == CPU_RATIO
    assert inv["MEMORY_MB"]["total"] == int(host["mem_total"])
    assert inv["MEMORY_MB"]["reserved"] == RESERVED_MB
    assert inv["MEMORY_MB"]["allocation_ratio"] == RAM_RATIO
    assert inv["DISK_GB"]["total"] == int(host["disk_total"])
    traits = placement.get(f"/resource_providers/{provider['uuid']}/traits")["traits"]
    assert "CUSTOM_ZUN_COMPUTE_STATUS_DISABLED" not in traits


# --- claim and release ----------------------------------------------------------------------------


def test_create_claims_the_allocation_and_delete_releases_it(
    server: ZunAll,
    provider: dict[str, Any],
    placement: Placement,
    busybox_image: str,
    docker_client: Any,
) -> None:
    uuid_ = create(server, sleeper(busybox_image, cpu=0.5, memory=64))
    # The allocation is claimed by zun-api before the 202, with the container as consumer.
    allocation = placement.allocations(uuid_)
    assert allocation["allocations"] == {
        provider["uuid"]: {
            "resources": {"VCPU": 1, "MEMORY_MB": 64},
            "generation": allocation["allocations"][provider["uuid"]]["generation"],
        }
    }
    assert allocation["project_id"] == "default"
    assert allocation["consumer_type"] == "ZUN_CONTAINER"
    assert settled(server, uuid_)["status"] == "Running"
    delete(server, docker_client, uuid_)
    released(placement, uuid_)


def test_failed_create_on_the_node_releases_the_allocation(
    server: ZunAll, provider: dict[str, Any], placement: Placement, docker_client: Any
) -> None:
    uuid_ = create(
        server,
        {
            "image": f"zun-test/absent-{uuid.uuid4().hex[:8]}:latest",
            "image_pull_policy": "never",
            "memory": 32,
        },
    )
    shown = settled(server, uuid_)
    assert shown["status"] == "Error", shown
    released(placement, uuid_)
    delete(server, docker_client, uuid_)


def test_capsule_claims_the_sum_of_its_members_and_releases_it(
    server: ZunAll, provider: dict[str, Any], placement: Placement, busybox_image: str
) -> None:
    template = {
        "kind": "capsule",
        "metadata": {"name": f"plc-{uuid.uuid4().hex[:6]}"},
        "spec": {
            "containers": [
                {
                    "image": busybox_image,
                    "command": ["sleep", "3600"],
                    "imagePullPolicy": "IfNotPresent",
                    "resources": {"requests": {"cpu": 0.1, "memory": 32}},
                },
                {
                    "image": busybox_image,
                    "command": ["sleep", "3600"],
                    "imagePullPolicy": "IfNotPresent",
                    "resources": {"requests": {"cpu": 0.2, "memory": 48}},
                },
            ]
        },
    }
    status, body = http(server, "POST", "/v1/capsules", {"template": template})
    assert status == 202, body
    CONSUMERS.add(body["uuid"])
    allocation = placement.allocations(body["uuid"])["allocations"]
    assert allocation[provider["uuid"]]["resources"] == {"VCPU": 1, "MEMORY_MB": 80}

    def capsule_settled() -> bool:
        return http(server, "GET", f"/v1/capsules/{body['uuid']}")[1]["status"] not in ("Creating",)

    wait(capsule_settled, "the capsule to settle", 120)
    status, deleted = http(server, "DELETE", f"/v1/capsules/{body['uuid']}")
    assert status == 204, deleted
    wait(
        lambda: http(server, "GET", f"/v1/capsules/{body['uuid']}")[0] == 404,
        "the capsule to go",
        90,
    )
    released(placement, body["uuid"])


def test_capsule_that_fails_on_the_node_releases_its_allocation(
    server: ZunAll, provider: dict[str, Any], placement: Placement
) -> None:
    template = {
        "kind": "capsule",
        "metadata": {"name": f"plc-{uuid.uuid4().hex[:6]}"},
        "spec": {
            "containers": [
                {
                    "image": f"zun-test/absent-{uuid.uuid4().hex[:8]}:latest",
                    "imagePullPolicy": "Never",
                    "resources": {"requests": {"cpu": 0.1, "memory": 24}},
                }
            ]
        },
    }
    status, body = http(server, "POST", "/v1/capsules", {"template": template})
    assert status == 202, body
    CONSUMERS.add(body["uuid"])

    def failed() -> bool:
        return http(server, "GET", f"/v1/capsules/{body['uuid']}")[1]["status"] == "Error"

    wait(failed, "the capsule to fail", 120)
    released(placement, body["uuid"])
    status, deleted = http(server, "DELETE", f"/v1/capsules/{body['uuid']}")
    assert status == 204, deleted


# --- a node shared with Nova --------------------------------------------------------------------


def test_a_nova_consumer_on_the_same_provider_is_never_double_booked(
    server: ZunAll,
    provider: dict[str, Any],
    placement: Placement,
    busybox_image: str,
    docker_client: Any,
) -> None:
    rp = provider["uuid"]
    inv = placement.get(f"/resource_providers/{rp}/inventories")["inventories"]["MEMORY_MB"]
    capacity = int((inv["total"] - inv["reserved"]) * inv["allocation_ratio"])
    used = sum(a["resources"].get("MEMORY_MB", 0) for a in placement.on_provider(rp).values())
    # "Nova" takes all the memory but 100 MiB, straight through the Placement API.
    nova = str(uuid.uuid4())
    CONSUMERS.add(nova)
    nova_mb = capacity - used - 100
    status, body = placement.call(
        "PUT",
        f"/allocations/{nova}",
        {
            "allocations": {rp: {"resources": {"MEMORY_MB": nova_mb, "VCPU": 1}}},
            "project_id": str(uuid.uuid4()),
            "user_id": str(uuid.uuid4()),
            "consumer_generation": None,
            "consumer_type": "INSTANCE",
        },
    )
    assert status == 204, body
    try:
        # Zun's own bookkeeping knows nothing of Nova: only Placement can refuse this one.
        too_big = create(server, sleeper(busybox_image, memory=200), run=False)
        shown = settled(server, too_big)
        assert shown["status"] == "Error"
        assert shown["status_reason"] == "There are not enough hosts available."
        assert placement.allocations(too_big)["allocations"] == {}  # never claimed
        fits = create(server, sleeper(busybox_image, memory=64))
        assert settled(server, fits)["status"] == "Running"
        booked = sum(a["resources"].get("MEMORY_MB", 0) for a in placement.on_provider(rp).values())
        assert booked <= capacity
        assert placement.on_provider(rp)[fits]["resources"]["MEMORY_MB"] == 64
        # The reconciliation leaves Nova's allocation alone.
        time.sleep(REFRESH * 2)
        assert placement.allocations(nova)["allocations"][rp]["resources"]["MEMORY_MB"] == nova_mb
        delete(server, docker_client, fits)
        delete(server, docker_client, too_big)
    finally:
        placement.call("DELETE", f"/allocations/{nova}")


# --- resize -------------------------------------------------------------------------------------


def test_resize_moves_the_allocation_with_the_limits_or_is_refused(
    server: ZunAll,
    provider: dict[str, Any],
    placement: Placement,
    busybox_image: str,
    docker_client: Any,
) -> None:
    rp = provider["uuid"]
    uuid_ = create(server, sleeper(busybox_image, memory=64))
    assert settled(server, uuid_)["status"] == "Running"
    status, body = http(server, "PATCH", f"/v1/containers/{uuid_}", {"memory": 96})
    assert status == 200, body
    assert placement.allocations(uuid_)["allocations"][rp]["resources"] == {
        "VCPU": 1,
        "MEMORY_MB": 96,
    }
    # Room only in Zun's own bookkeeping: a "Nova" consumer holds the rest in Placement.
    inv = placement.get(f"/resource_providers/{rp}/inventories")["inventories"]["MEMORY_MB"]
    capacity = int((inv["total"] - inv["reserved"]) * inv["allocation_ratio"])
    used = sum(a["resources"].get("MEMORY_MB", 0) for a in placement.on_provider(rp).values())
    nova = str(uuid.uuid4())
    CONSUMERS.add(nova)
    status, body = placement.call(
        "PUT",
        f"/allocations/{nova}",
        {
            "allocations": {rp: {"resources": {"MEMORY_MB": capacity - used - 10}}},
            "project_id": str(uuid.uuid4()),
            "user_id": str(uuid.uuid4()),
            "consumer_generation": None,
            "consumer_type": "INSTANCE",
        },
    )
    assert status == 204, body
    try:
        status, body = http(server, "PATCH", f"/v1/containers/{uuid_}", {"memory": 128})
        assert status == 409, body
        assert "Placement refused" in body["errors"][0]["detail"], body
        assert placement.allocations(uuid_)["allocations"][rp]["resources"]["MEMORY_MB"] == 96
        status, shown = http(server, "GET", f"/v1/containers/{uuid_}")
        assert shown["memory"] in ("96", "96M", 96), shown
    finally:
        placement.call("DELETE", f"/allocations/{nova}")
    delete(server, docker_client, uuid_)
    released(placement, uuid_)


# --- drift ----------------------------------------------------------------------------------------


def test_reconciliation_heals_drift_both_ways(
    server: ZunAll,
    provider: dict[str, Any],
    placement: Placement,
    busybox_image: str,
    docker_client: Any,
) -> None:
    rp = provider["uuid"]
    uuid_ = create(server, sleeper(busybox_image, memory=48))
    assert settled(server, uuid_)["status"] == "Running"
    # Lost: the running container's allocation disappears.
    status, _ = placement.call("DELETE", f"/allocations/{uuid_}")
    assert status == 204
    # Leaked: an allocation of Zun's kind for a container that does not exist.
    ghost = str(uuid.uuid4())
    CONSUMERS.add(ghost)
    status, body = placement.call(
        "PUT",
        f"/allocations/{ghost}",
        {
            "allocations": {rp: {"resources": {"MEMORY_MB": 16, "VCPU": 1}}},
            "project_id": "default",
            "user_id": "default",
            "consumer_generation": None,
            "consumer_type": "ZUN_CONTAINER",
        },
    )
    assert status == 204, body
    wait(
        lambda: placement.allocations(uuid_)["allocations"].get(rp),
        "the running container's allocation to come back",
        REFRESH * 30,
    )
    assert placement.allocations(uuid_)["allocations"][rp]["resources"] == {
        "VCPU": 1,
        "MEMORY_MB": 48,
    }
    wait(
        lambda: placement.allocations(ghost)["allocations"] == {},
        "the leaked allocation to be deleted",
        REFRESH * 30,
    )
    delete(server, docker_client, uuid_)
    released(placement, uuid_)


# --- restart --------------------------------------------------------------------------------------


def test_restarted_node_finds_its_provider_again(
    server: ZunAll,
    provider: dict[str, Any],
    placement: Placement,
    busybox_image: str,
    docker_client: Any,
) -> None:
    uuid_ = create(server, sleeper(busybox_image, memory=40))
    assert settled(server, uuid_)["status"] == "Running"
    server.stop()
    server.start()
    time.sleep(REFRESH * 2)  # at least one reconciliation after the restart
    found = placement.providers_named(server.host)
    assert [p["uuid"] for p in found] == [provider["uuid"]]
    assert placement.allocations(uuid_)["allocations"][provider["uuid"]]["resources"] == {
        "VCPU": 1,
        "MEMORY_MB": 40,
    }
    delete(server, docker_client, uuid_)


def test_a_provider_already_named_after_the_node_is_adopted(
    tmp_path: Path, placement: Placement, docker_client: Any
) -> None:
    # As when the node's database row was lost, or Nova made the provider: same name,
    # another UUID. The node must use that provider, not make a second one.
    host = f"plc-{uuid.uuid4().hex[:10]}"
    existing = str(uuid.uuid4())
    status, body = placement.call("POST", "/resource_providers", {"name": host, "uuid": existing})
    assert status == 200, body
    PROVIDERS.add(existing)
    zun_all = ZunAll(tmp_path, host=host)
    zun_all.config.write_text(zun_all.config.read_text() + placement_conf())
    zun_all.start()
    try:
        wait(
            lambda: (
                "VCPU"
                in placement.get(f"/resource_providers/{existing}/inventories")["inventories"]
            ),
            "the inventory on the existing provider",
        )
        assert [p["uuid"] for p in placement.providers_named(host)] == [existing]
    finally:
        zun_all.stop()
        sweep(docker_client, host)


def test_host_shared_with_nova_books_on_novas_provider_and_keeps_its_inventory(
    tmp_path: Path, placement: Placement, docker_client: Any, busybox_image: str
) -> None:
    host = f"plc-{uuid.uuid4().hex[:10]}"
    nova_rp = str(uuid.uuid4())
    status, body = placement.call("POST", "/resource_providers", {"name": host, "uuid": nova_rp})
    assert status == 200, body
    PROVIDERS.add(nova_rp)
    nova_inventory = {
        "VCPU": {
            "total": 8,
            "reserved": 0,
            "min_unit": 1,
            "max_unit": 8,
            "step_size": 1,
            "allocation_ratio": 16.0,
        },
        "MEMORY_MB": {
            "total": 4096,
            "reserved": 512,
            "min_unit": 1,
            "max_unit": 4096,
            "step_size": 1,
            "allocation_ratio": 1.5,
        },
    }
    status, body = placement.call(
        "PUT",
        f"/resource_providers/{nova_rp}/inventories",
        {"resource_provider_generation": 0, "inventories": nova_inventory},
    )
    assert status == 200, body
    zun_all = ZunAll(tmp_path, host=host)
    zun_all.config.write_text(
        zun_all.config.read_text() + placement_conf("host_shared_with_nova = true\n")
    )
    zun_all.start()
    try:
        uuid_ = create(zun_all, sleeper(busybox_image, memory=32))
        assert set(placement.allocations(uuid_)["allocations"]) == {nova_rp}
        assert settled(zun_all, uuid_)["status"] == "Running"
        time.sleep(REFRESH * 2)  # reports since: Nova's inventory is still Nova's
        inventories = placement.get(f"/resource_providers/{nova_rp}/inventories")
        assert {
            rc: (inv["total"], inv["reserved"], inv["allocation_ratio"])
            for rc, inv in inventories["inventories"].items()
        } == {"VCPU": (8, 0, 16.0), "MEMORY_MB": (4096, 512, 1.5)}
        assert [p["uuid"] for p in placement.providers_named(host)] == [nova_rp]
        delete(zun_all, docker_client, uuid_)
        released(placement, uuid_)
    finally:
        zun_all.stop()
        sweep(docker_client, host)


def test_evacuation_without_room_keeps_and_purge_releases_the_allocation(
    tmp_path: Path, placement: Placement, docker_client: Any, busybox_image: str
) -> None:
    zun_all = make_server(tmp_path)
    zun_all.start()
    try:
        rp = wait(lambda: placement.providers_named(zun_all.host), "the provider")[0]["uuid"]
        PROVIDERS.add(rp)
        uuid_ = create(zun_all, sleeper(busybox_image, memory=20))
        assert settled(zun_all, uuid_)["status"] == "Running"
        status, body = http(
            zun_all,
            "PUT",
            f"/v1/services/force_down?host={zun_all.host}&binary=zun-compute&forced_down=true",
        )
        assert status == 200, body
        admin = {"OpenStack-API-Version": "container 1.41"}
        # No other host: the container stays, and so does its allocation.
        status, body = http(zun_all, "POST", f"/v1/hosts/{zun_all.host}/evacuate", {}, admin)
        assert status == 202, body
        assert [c["result"] for c in body["containers"]] == ["failed"], body
        assert set(placement.allocations(uuid_)["allocations"]) == {rp}
        status, body = http(zun_all, "POST", f"/v1/hosts/{zun_all.host}/purge", {}, admin)
        assert status == 200 and body["purged"] == [uuid_], body
        assert placement.allocations(uuid_)["allocations"] == {}
        assert placement.on_provider(rp) == {}
    finally:
        zun_all.stop()
        sweep(docker_client, zun_all.host)


# --- Placement unreachable ------------------------------------------------------------------------


def test_placement_unreachable_is_a_503_and_leaves_nothing(
    tmp_path: Path, placement: Placement, docker_client: Any, busybox_image: str
) -> None:
    # Nothing listens on this port (the helper's range): every call is refused.
    dead = f"http://127.0.0.1:{free_port()}"
    zun_all = make_server(tmp_path, f"[placement_client]\nendpoint_override = {dead}\n")
    zun_all.start()
    try:
        status, body = http(
            zun_all, "POST", "/v1/containers?run=true", sleeper(busybox_image, memory=32)
        )
        assert status == 503, body
        error = body["errors"][0]
        assert error["code"] == "container.placement-unavailable", error
        assert "placement service is unavailable" in error["detail"], error
        # The client never got a UUID: no row may stay (nor quota, nor claim).
        status, listed = http(zun_all, "GET", "/v1/containers")
        assert status == 200 and listed["containers"] == [], listed
        status, body = http(
            zun_all,
            "POST",
            "/v1/capsules",
            {
                "template": {
                    "kind": "capsule",
                    "metadata": {"name": "plc-down"},
                    "spec": {"containers": [{"image": busybox_image}]},
                }
            },
        )
        assert status == 503, body
        assert body["errors"][0]["code"] == "container.placement-unavailable"
        status, listed = http(zun_all, "GET", "/v1/capsules")
        assert status == 200 and listed["capsules"] == [], listed
        status, host = http(zun_all, "GET", f"/v1/hosts/{zun_all.host}")
        assert status == 200 and float(host["cpu_used"]) == 0.0, host
    finally:
        zun_all.stop()
        sweep(docker_client, zun_all.host)
    assert placement.providers_named(zun_all.host) == []


# --- nothing leaked -----------------------------------------------------------------------------


def test_no_allocation_is_left_behind(
    server: ZunAll, provider: dict[str, Any], placement: Placement
) -> None:
    """Last: every consumer the tests made, and the node's provider, hold nothing."""
    leaked = {c: a for c in sorted(CONSUMERS) if (a := placement.allocations(c)["allocations"])}
    assert leaked == {}, leaked
    assert placement.on_provider(provider["uuid"]) == {}
    assert len(CONSUMERS) >= 8
