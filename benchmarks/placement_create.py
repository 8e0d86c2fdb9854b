"""What scheduling through Placement costs a create: ``POST /v1/containers`` on two zun-all.

    .venv/bin/python benchmarks/placement_create.py [--creates 15] [--rounds 3]

Needs the local OpenStack (``scripts/openstack-services.sh start``). Starts two zun-all on
this machine's Docker engine, one with the built-in claims and one with
``[scheduler]/use_placement`` (tests/e2e/test_placement_e2e.py's configuration), and times
``--creates`` creates (not run; 0.5 CPU, 16 MiB) on each, alternating, per round; prints the
median and maximum time to the 202 and their ratio in each round, and Placement's own median
for ``GET /allocation_candidates``. Deletes what it made (engine containers and the provider
included), also after an interrupted round.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import openstack_env  # noqa: E402
from e2e import test_placement_e2e as placement_tests  # noqa: E402
from e2e.support import ZunAll, http, sweep  # noqa: E402


def _round(server: ZunAll, creates: int) -> list[float]:
    took, made = [], []
    for _ in range(creates):
        started = time.perf_counter()
        status, body = http(
            server,
            "POST",
            "/v1/containers",
            {
                "image": "busybox:latest",
                "image_pull_policy": "never",
                "cpu": 0.5,
                "memory": 16,
                "command": ["true"],
            },
        )
        took.append((time.perf_counter() - started) * 1000)
        if status != 202:
            raise SystemExit(f"create refused: {status} {body}")
        made.append(body["uuid"])
    for container in made:
        http(server, "DELETE", f"/v1/containers/{container}?force=true")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and http(server, "GET", "/v1/containers")[1]["containers"]:
        time.sleep(0.2)  # quota counts rows until they are gone
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--creates", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cloud = openstack_env.running_cloud()
    if cloud is None:
        raise SystemExit("the local OpenStack is not running: scripts/openstack-services.sh start")
    admin = openstack_env.PlacementAdmin(cloud)
    base = Path(tempfile.mkdtemp(prefix="zun-placement-bench-"))
    (base / "plain").mkdir()
    (base / "placement").mkdir()
    plain = ZunAll(base / "plain", host=f"plcb-{uuid.uuid4().hex[:8]}")
    with_placement = placement_tests.make_server(base / "placement")
    plain.start()
    try:
        with_placement.start()
        time.sleep(3)  # the provider reported
        for number in range(args.rounds):
            a = _round(plain, args.creates)
            b = _round(with_placement, args.creates)
            print(
                f"round {number}: median/max ms built-in {statistics.median(a):.1f}/"
                f"{max(a):.1f}, Placement {statistics.median(b):.1f}/{max(b):.1f}, "
                f"ratio of medians {statistics.median(b) / statistics.median(a):.2f}"
            )
        took = []
        for _ in range(20):
            started = time.perf_counter()
            admin.call("GET", "/allocation_candidates?limit=1000&resources=VCPU:1,MEMORY_MB:16")
            took.append((time.perf_counter() - started) * 1000)
        print(f"Placement GET /allocation_candidates: median {statistics.median(took):.1f} ms")
    finally:
        plain.stop()
        with_placement.stop()
        import docker

        engine = docker.from_env()
        for server in (plain, with_placement):
            sweep(engine, server.host)  # what an interrupted round left in the engine
        engine.close()
        time.sleep(2)
        for provider in admin.providers_named(with_placement.host):
            left = admin.on_provider(provider["uuid"])
            print(f"allocations left on the provider: {len(left)}")
            admin.call("DELETE", f"/resource_providers/{provider['uuid']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
