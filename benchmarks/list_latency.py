"""Latency of listing containers over HTTP, against the floor of the same work done raw.

    python benchmarks/list_latency.py [--rows 1000] [--runs 40] [--profile]

What it does, in one run:

1. creates a throwaway MariaDB database (127.0.0.1:3306, root) with the real migrations and
   ``--rows`` containers (10% of them in the member's project, the rest elsewhere);
2. serves the real API (``build_app('noauth')`` in ``zun.service.api_server.ApiServer``) on
   127.0.0.1, an ephemeral port;
3. measures the median latency of ``GET /v1/containers?all_projects=1`` at 1.40 as an admin
   (every row), over one keep-alive HTTP connection;
4. measures the floor: one raw SELECT of the same columns and rows through PyMySQL, plus
   ``json.dumps`` of them as dicts; prints both and their ratio (target: <= 3);
5. also reports ``GET /v1/containers/<uuid>`` and a member's list (its 10% of the rows).

``--profile`` prints the top of a cProfile of the list handler run in-process. The database is
dropped at the end, whatever happens.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import http.client
import json
import pstats
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import pymysql

PROFILE_SORT = "cumulative"
ADMIN_URL = "mysql+pymysql://root@127.0.0.1:3306"
ADMIN_HEADERS = {
    "X-User-Id": "bench-admin",
    "X-Project-Id": "bench-admin-project",
    "X-Roles": "admin",
    "OpenStack-API-Version": "container 1.40",
}
MEMBER_PROJECT = "bench-member-project"
MEMBER_HEADERS = {
    "X-User-Id": "bench-member",
    "X-Project-Id": MEMBER_PROJECT,
    "X-Roles": "member",
    "OpenStack-API-Version": "container 1.40",
}

# The columns the container view shows (the floor reads exactly these).
FLOOR_COLUMNS = (
    "uuid",
    "name",
    "image",
    "project_id",
    "user_id",
    "command",
    "entrypoint",
    "status",
    "status_reason",
    "status_detail",
    "task_state",
    "cpu",
    "memory",
    "disk",
    "cpu_policy",
    "environment",
    "labels",
    "workdir",
    "hostname",
    "ports",
    "addresses",
    "restart_policy",
    "interactive",
    "tty",
    "auto_remove",
    "auto_heal",
    "image_driver",
    "security_groups",
    "healthcheck",
    "registry_id",
    "created_at",
    "updated_at",
    "host",
    "image_pull_policy",
    "privileged",
    "runtime",
)


def _raw_connection(database: str | None = None) -> Any:
    return pymysql.connect(
        host="127.0.0.1", port=3306, user="root", database=database, autocommit=True
    )


def create_database() -> str:
    name = f"zun_bench_{uuid.uuid4().hex[:12]}"
    conn = _raw_connection()
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    conn.close()
    return name


def drop_database(name: str) -> None:
    conn = _raw_connection()
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
    conn.close()


def populate(rows: int) -> list[str]:
    """Insert ``rows`` realistic containers; returns their UUIDs."""
    from zun.db import engine, models

    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    uuids = []
    with engine.transaction() as session:
        for i in range(rows):
            project = MEMBER_PROJECT if i % 10 == 0 else f"bench-project-{i % 7}"
            container_uuid = str(uuid.uuid4())
            uuids.append(container_uuid)
            session.add(
                models.Container(
                    uuid=container_uuid,
                    name=f"bench-{i}",
                    image="busybox:latest",
                    project_id=project,
                    user_id="bench-user",
                    command=["sleep", "3600"],
                    status="Running",
                    status_detail="Up 3 hours",
                    cpu=0.5,
                    memory="256",
                    disk=1,
                    environment={"A": "1", "B": "two"},
                    labels={"app": "bench", "tier": "web"},
                    workdir="/",
                    ports=[80],
                    hostname=f"h{i}",
                    image_driver="docker",
                    addresses={
                        "zun-net": [
                            {
                                "addr": f"10.0.{i // 250}.{i % 250 + 2}",
                                "version": 4,
                                "port": str(uuid.uuid4()),
                                "subnet_id": str(uuid.uuid4()),
                                "preserve_on_delete": False,
                            }
                        ]
                    },
                    restart_policy={"Name": "no", "MaximumRetryCount": "0"},
                    interactive=False,
                    tty=False,
                    auto_remove=False,
                    auto_heal=False,
                    security_groups=["default"],
                    host="bench-node",
                    privileged=False,
                    runtime="runc",
                    container_type=0,
                    created_at=now,
                    updated_at=now,
                )
            )
    return uuids


def floor_once(conn: Any, rows: int) -> float:
    """One SELECT of the same columns and rows, then json.dumps: the cost we cannot avoid."""
    started = time.perf_counter()
    with conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute(
            f"SELECT {', '.join(FLOOR_COLUMNS)} FROM container "
            f"WHERE container_type = 0 ORDER BY id LIMIT {rows}"
        )
        result = cur.fetchall()
    # The separators of the API's list answers (no optional spaces).
    json.dumps({"containers": result}, default=str, separators=(",", ":"))
    return time.perf_counter() - started


def http_once(
    conn: http.client.HTTPConnection, path: str, headers: dict[str, str]
) -> tuple[float, bytes]:
    started = time.perf_counter()
    conn.request("GET", path, headers=headers)
    resp = conn.getresponse()
    body = resp.read()
    elapsed = time.perf_counter() - started
    if resp.status != 200:
        raise RuntimeError(f"GET {path} -> {resp.status}: {body[:300]!r}")
    return elapsed, body


def median_ms(fn: Callable[[], float], runs: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    return statistics.median(fn() for _ in range(runs)) * 1000


def interleaved_medians_ms(
    first: Callable[[], float], second: Callable[[], float], runs: int, warmup: int = 3
) -> tuple[float, float]:
    for _ in range(warmup):
        first()
        second()
    a, b = [], []
    for _ in range(runs):
        a.append(first())
        b.append(second())
    return statistics.median(a) * 1000, statistics.median(b) * 1000


def profile_list(rows: int) -> None:
    import webob

    from zun.api.app import build_app

    app = build_app("noauth")
    req_headers = dict(ADMIN_HEADERS)

    def call() -> None:
        req = webob.Request.blank("/v1/containers?all_projects=1", headers=req_headers)
        resp = req.get_response(app)
        assert resp.status_code == 200

    call()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(10):
        call()
    profiler.disable()
    stats = pstats.Stats(profiler).sort_stats(PROFILE_SORT)
    print(f"\ncProfile of 10 in-process lists of {rows} rows (cumulative):")
    stats.print_stats(25)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)

    import logging

    logging.basicConfig(level=logging.WARNING)
    from zun.conf import CONF

    CONF([], project="zun", default_config_files=[], default_config_dirs=[])
    from zun.api.app import build_app
    from zun.db import engine, migration
    from zun.service.api_server import ApiServer

    name = create_database()
    server = None
    try:
        url = f"{ADMIN_URL}/{name}"
        migration.upgrade(url=url)
        engine.set_engine(engine.create_engine(url))
        uuids = populate(args.rows)

        server = ApiServer(build_app("noauth"), "127.0.0.1", 0)
        server.start()
        http_conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        raw = _raw_connection(name)

        list_path = "/v1/containers?all_projects=1"
        _, body = http_once(http_conn, list_path, ADMIN_HEADERS)
        listed = len(json.loads(body)["containers"])
        if listed != args.rows:
            raise RuntimeError(f"listed {listed} containers, expected {args.rows}")

        # Interleaved, so that both see the same machine load.
        api_ms, floor_ms = interleaved_medians_ms(
            lambda: http_once(http_conn, list_path, ADMIN_HEADERS)[0],
            lambda: floor_once(raw, args.rows),
            args.runs,
        )
        show_ms = median_ms(
            lambda: http_once(http_conn, f"/v1/containers/{uuids[1]}", ADMIN_HEADERS)[0], args.runs
        )
        member_count = len(
            json.loads(http_once(http_conn, "/v1/containers", MEMBER_HEADERS)[1])["containers"]
        )
        member_ms = median_ms(
            lambda: http_once(http_conn, "/v1/containers", MEMBER_HEADERS)[0], args.runs
        )
        raw.close()
        http_conn.close()
        time.sleep(0.2)  # let waitress see the connection close before it shuts down

        ratio = api_ms / floor_ms
        print(f"containers in the database:                 {args.rows} (MariaDB, {name})")
        print(
            f"GET /v1/containers?all_projects=1 (admin):  median {api_ms:8.2f} ms "
            f"over {args.runs} runs ({listed} items)"
        )
        print(f"floor: raw SELECT + json.dumps:             median {floor_ms:8.2f} ms")
        print(
            f"ratio API / floor:                          {ratio:8.2f}  (target <= 3) "
            f"{'OK' if ratio <= 3 else 'ABOVE TARGET'}"
        )
        print(
            f"GET /v1/containers/<uuid> (admin):          median {show_ms:8.2f} ms "
            "(host down: stored copy)"
        )
        print(f"GET /v1/containers (member, {member_count} items):     median {member_ms:8.2f} ms")
        if args.profile:
            profile_list(args.rows)
        return 0
    finally:
        if server is not None:
            server.stop()
        engine.dispose()
        drop_database(name)


if __name__ == "__main__":
    sys.exit(main())
