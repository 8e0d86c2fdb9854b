"""Where creates land on the two-node test environment, sequential and in a burst.

    .venv/bin/python benchmarks/multinode_spread.py [--sequential 6] [--parallel 12]

Starts the environment of tests/multinode/cluster.py (two dockerd in their own network
namespaces, a MariaDB database, a RabbitMQ vhost, zun-api and a zun-compute per node; needs
root), creates ``--sequential`` plain containers one after the other, then ``--parallel`` at
once from as many threads, and prints how many landed on each node and how long each round
took until every container was Running. Tears everything down at the end.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from e2e.support import wait_for  # noqa: E402
from multinode.cluster import Cluster  # noqa: E402


def _create(cluster: Cluster) -> str:
    zun = cluster.client()
    return zun.containers.run(
        image="busybox", command=["sleep", "600"], image_pull_policy="ifnotpresent"
    ).uuid


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequential", type=int, default=6)
    parser.add_argument("--parallel", type=int, default=12)
    args = parser.parse_args()
    cluster = Cluster().start()
    try:
        zun = cluster.client()
        start = time.monotonic()
        hosts = [
            wait_for(zun, _create(cluster), "Running", timeout=180).host
            for _ in range(args.sequential)
        ]
        print(
            f"sequential {args.sequential}: {dict(collections.Counter(hosts))} "
            f"in {time.monotonic() - start:.1f} s",
            flush=True,
        )
        start = time.monotonic()
        with ThreadPoolExecutor(args.parallel) as pool:
            uuids = list(pool.map(lambda _: _create(cluster), range(args.parallel)))
        hosts = [wait_for(zun, uuid, "Running", timeout=300).host for uuid in uuids]
        print(
            f"parallel {args.parallel}: {dict(collections.Counter(hosts))} "
            f"in {time.monotonic() - start:.1f} s",
            flush=True,
        )
    finally:
        zun = cluster.client()
        for ct in zun.containers.list(all_projects=True):
            zun.containers.delete(ct.uuid, force=True, all_projects=True)
        deadline = time.monotonic() + 60
        while zun.containers.list(all_projects=True) and time.monotonic() < deadline:
            time.sleep(0.5)
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
