"""Node loss on the multi-node environment (one dockerd per network namespace): issue 12,
items 3-5, with the shipped detection defaults (report_interval 5 s, service_down_time 25 s).

* SIGKILL of an agent: down in ``services`` within 30 s, its containers read Unknown naming
  it, a create sent to it in that window ends Running on the other node, a forced delete
  works, evacuating brings its containers up on the other node's engine, and when it comes
  back it removes the engine containers of the rows that left it.
* A stopped dockerd: its node is unschedulable (service disabled, "AUTO: ...") within 30 s,
  its containers read Unknown, creates go elsewhere; it comes back by itself.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from multinode.cluster import Cluster, Node

pytestmark = pytest.mark.multinode

DETECT_WITHIN = 30.0


def call(
    cluster: Cluster, method: str, path: str, body: Any = None, version: str = "1.40"
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        cluster.url + path,
        data=data,
        method=method,
        headers={
            "OpenStack-API-Version": f"container {version}",
            "Content-Type": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw = resp.read()
            return resp.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        return exc.code, json.loads(raw) if raw else None


def service(cluster: Cluster, host: str) -> dict[str, Any]:
    return next(
        s
        for s in call(cluster, "GET", "/v1/services")[1]["services"]
        if s["host"] == host and s["binary"] == "zun-compute"
    )


def run(cluster: Cluster, host: str | None = None) -> str:
    body: dict[str, Any] = {
        "image": "busybox",
        "command": ["sleep", "3600"],
        "image_pull_policy": "ifnotpresent",
    }
    if host:
        body["host"] = host
    status, answer = call(cluster, "POST", "/v1/containers?run=true", body)
    assert status == 202, answer
    return answer["uuid"]


def show(cluster: Cluster, uuid: str) -> dict[str, Any]:
    status, answer = call(cluster, "GET", f"/v1/containers/{uuid}")
    assert status == 200, answer
    return answer


def wait(
    cluster: Cluster, uuid: str, check: Callable[[dict[str, Any]], bool], timeout: float = 90
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    shown: dict[str, Any] = {}
    while time.monotonic() < deadline:
        shown = show(cluster, uuid)
        if check(shown):
            return shown
        time.sleep(0.3)
    raise AssertionError(
        f"{uuid}: {shown.get('status')} {shown.get('task_state')} "
        f"{shown.get('host')} {shown.get('status_reason')}"
    )


def running_on(cluster: Cluster, uuid: str, host: str, timeout: float = 90) -> dict[str, Any]:
    return wait(
        cluster,
        uuid,
        lambda c: (c["status"], c["host"], c["task_state"]) == ("Running", host, None),
        timeout,
    )


def timed(check: Callable[[], bool], timeout: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if check():
            return time.monotonic() - started
        time.sleep(0.25)
    raise AssertionError(f"not within {timeout} s")


def engine_uuids(node: Node) -> set[str]:
    engine = node.engine()
    try:
        # The low-level list: the high-level one inspects each container, and the reaper
        # may remove one in between.
        return {
            (c.get("Labels") or {}).get("zun.container.uuid")
            for c in engine.api.containers(all=True)
        }
    finally:
        engine.close()


def test_sigkill_of_an_agent_then_evacuation(cluster: Cluster) -> None:
    victim, survivor = cluster.nodes
    moved = run(cluster, victim.name)
    deleted = run(cluster, victim.name)
    for uuid in (moved, deleted):
        running_on(cluster, uuid, victim.name)
    # Only the victim takes the next create, which it will never do.
    assert (
        call(cluster, "PUT", f"/v1/services/disable?host={survivor.name}&binary=zun-compute")[0]
        == 200
    )

    victim.kill_agent()
    killed = time.monotonic()
    in_window = run(cluster)
    assert show(cluster, in_window)["host"] == victim.name
    assert (
        call(cluster, "PUT", f"/v1/services/enable?host={survivor.name}&binary=zun-compute")[0]
        == 200
    )

    timed(lambda: service(cluster, victim.name)["state"] == "down", DETECT_WITHIN)
    print(f"\nSIGKILLed agent seen down after {time.monotonic() - killed:.1f} s")
    shown = show(cluster, moved)
    assert shown["status"] == "Unknown" and victim.name in shown["status_reason"]

    running_on(cluster, in_window, survivor.name, timeout=60)
    assert in_window in engine_uuids(survivor)

    assert call(cluster, "DELETE", f"/v1/containers/{deleted}?force=True")[0] == 204
    assert call(cluster, "GET", f"/v1/containers/{deleted}")[0] == 404

    assert call(cluster, "POST", f"/v1/hosts/{victim.name}/evacuate", {})[0] == 406
    status, answer = call(cluster, "POST", f"/v1/hosts/{victim.name}/evacuate", {}, "1.41")
    assert status == 202, answer
    assert {c["uuid"]: c["result"] for c in answer["containers"]} == {moved: "evacuated"}
    running_on(cluster, moved, survivor.name)
    assert moved in engine_uuids(survivor)

    # Back: it removes what its engine still runs of the rows that left it.
    assert {moved, deleted} <= engine_uuids(victim)
    victim.start_agent(
        {"DEFAULT": {"periodic_interval_max": 5}, "compute": {"reap_grace_period": 0}}
    )
    cluster.wait_ready(nodes=[victim])
    timed(lambda: not ({moved, deleted} & engine_uuids(victim)), 60)
    assert running_on(cluster, moved, survivor.name)["status"] == "Running"


def test_a_stopped_dockerd_makes_its_node_unschedulable(cluster: Cluster) -> None:
    victim, survivor = cluster.nodes
    held = run(cluster, victim.name)
    running_on(cluster, held, victim.name)

    stopping = time.monotonic()
    victim.stop_engine()  # SIGTERM: dockerd stops its containers first (up to 10 s)
    timed(lambda: service(cluster, victim.name)["disabled"], DETECT_WITHIN)
    took = time.monotonic() - stopping
    assert took < DETECT_WITHIN
    print(f"\nnode unschedulable {took:.1f} s after dockerd was told to stop")
    state = service(cluster, victim.name)
    assert state["state"] == "up"
    assert state["disabled_reason"].startswith("AUTO: the container engine at")
    shown = show(cluster, held)
    assert shown["status"] == "Unknown"
    assert f"{victim.name} cannot reach its container engine" in shown["status_reason"]
    other = run(cluster)
    running_on(cluster, other, survivor.name)

    victim.start_engine()
    timed(lambda: not service(cluster, victim.name)["disabled"], DETECT_WITHIN)
    assert service(cluster, victim.name)["disabled_reason"] is None
    wait(cluster, held, lambda c: c["status"] != "Unknown", 30)
