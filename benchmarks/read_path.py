"""Server CPU of the read path against its floor, scaling over workers and table size.

    python benchmarks/read_path.py [--rows 1000] [--grow 100000] [--runs 30] [--seconds 6]
                                   [--profile]

In one run, on a throwaway MariaDB database (127.0.0.1:3306, root) holding ``--rows``
containers (10% in the member's project):

1. **CPU per request.** The real ``zun-api`` (1 worker, noauth, in-process bus) serves
   ``--runs`` requests of each kind over one keep-alive connection, in alternated rounds; the
   server's CPU time (its threads' run time from /proc, in ns) divided by the count is its CPU
   per request. The floor is measured in the same rounds: one raw PyMySQL SELECT of the same
   columns and rows plus ``json.dumps`` with the API's separators (CPU of this process,
   ``time.process_time``). The admin page is measured a second time with every JSON value of
   every row changed before each request (an UPDATE from this process, the server idle
   meanwhile; texts in the canonical form the models write): nothing seen before.
2. **Scaling.** ``zun-api`` with 2 workers: requests/s of the admin page and of show over
   ``--seconds`` with 1 client, then 8 clients (each its own keep-alive connection), and how
   the 8 clients' work split between the workers (the busiest one's share of their CPU).
3. **Table size.** A second database gets the same ``--rows`` and grows to ``--grow`` rows
   (raw multi-row INSERTs), with a zun-api of its own; the admin page (first 1000), show and
   the member list are measured on both in alternated rounds, and a page after a marker in
   the middle of the grown table.

``--profile`` prints a cProfile of show and of the admin page run in-process.
"""

from __future__ import annotations

import argparse
import cProfile
import http.client
import json
import os
import pstats
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import list_latency as base  # noqa: E402

BIN = Path(sys.executable).parent
ADMIN_PAGE = "/v1/containers?all_projects=1"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Api:
    """zun-api as a process; ``cpu()`` is the CPU seconds used by it and its workers."""

    def __init__(self, tmp: Path, db_url: str, workers: int, tag: str = "") -> None:
        self.port = _free_port()
        config = tmp / f"api-{workers}{tag}.conf"
        config.write_text(
            "[DEFAULT]\ntransport_url = fake://\n"
            f"[database]\nconnection = {db_url}\n"
            f"[api]\nauth_strategy = noauth\nhost_ip = 127.0.0.1\nport = {self.port}\n"
            f"workers = {workers}\n"
        )
        self.log = tmp / f"api-{workers}{tag}.log"
        self.proc = subprocess.Popen(
            [str(BIN / "zun-api"), "--config-file", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("wb"),
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=2):
                    return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.2)
        raise RuntimeError("zun-api did not come up: " + self.log.read_text()[-2000:])

    def pids(self) -> list[int]:
        pid = self.proc.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return [pid, *map(int, children)]

    def cpu(self) -> float:
        """CPU seconds of every thread of the process and its workers, to the nanosecond
        (``/proc/<pid>/task/<tid>/schedstat``; ``/proc/<pid>/stat`` counts 10 ms ticks, too
        coarse for a 1 ms request). The server's threads live as long as it does."""
        return sum(self.cpu_by_pid().values())

    def cpu_by_pid(self) -> dict[int, float]:
        """CPU seconds of each process (the parent, then the workers)."""
        totals = {}
        for pid in self.pids():
            total = 0
            for tid in os.listdir(f"/proc/{pid}/task"):
                try:
                    total += int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
                except (FileNotFoundError, ProcessLookupError):
                    pass  # a thread that just ended
            totals[pid] = total / 1e9
        return totals

    def rss_mb(self) -> list[float]:
        out = []
        for pid in self.pids():
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    out.append(int(line.split()[1]) / 1024)
        return out

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _get(conn: http.client.HTTPConnection, path: str, headers: dict[str, str]) -> bytes:
    conn.request("GET", path, headers=headers)
    resp = conn.getresponse()
    body = resp.read()
    if resp.status != 200:
        raise RuntimeError(f"GET {path} -> {resp.status}: {body[:300]!r}")
    return body


def server_cpu_ms(
    api: Api,
    conn: http.client.HTTPConnection,
    path: str,
    headers: dict[str, str],
    runs: int,
    before_each: Callable[[int], None] | None = None,
) -> float:
    """The server's CPU per request; ``before_each(n)`` runs before each request, in this
    process (the server is idle meanwhile)."""
    _get(conn, path, headers)
    before = api.cpu()
    for n in range(runs):
        if before_each is not None:
            before_each(n)
        _get(conn, path, headers)
    return (api.cpu() - before) / runs * 1000


# Every JSON column of every row gets a value no earlier request saw, in the canonical form the
# models write (zun.db.types.canonical), of the populated values' length (a first read: no
# cache of encoded values could help; the view splices stored texts since 8d2e6f1a4c57).
_FRESH_JSON = {
    "command": "CONCAT('[\"sleep\",\"', id, '.', {n}, '\"]')",
    "entrypoint": "CONCAT('[\"/bin/sh\",\"-c', {n}, '\"]')",
    "environment": 'CONCAT(\'{{"A":"\', id, \'","B":"\', {n}, \'"}}\')',
    "labels": 'CONCAT(\'{{"app":"bench","n":"\', id, \'.\', {n}, \'"}}\')',
    "ports": "CONCAT('[80,', {n}, ']')",
    "addresses": 'CONCAT(\'{{"zun-net":[{{"addr":"10.0.\', id % 250, \'.\', {n} % 250, '
    '\'","version":4,"port":"\', MD5(CONCAT(id, \'.\', {n})), '
    '\'","subnet_id":"\', MD5({n}), \'","preserve_on_delete":false}}]}}\')',
    "restart_policy": 'CONCAT(\'{{"Name":"no","MaximumRetryCount":"\', {n}, \'"}}\')',
    "security_groups": "CONCAT('[\"default\",\"sg-', id, '.', {n}, '\"]')",
    "healthcheck": "CONCAT('{{\"test\":\"true ', id, '.', {n}, '\"}}')",
}


def fresh_json_values(raw: Any) -> Callable[[int], None]:
    def change(n: int) -> None:
        sets = ", ".join(f"{col} = {expr.format(n=n + 1)}" for col, expr in _FRESH_JSON.items())
        with raw.cursor() as cur:
            cur.execute(f"UPDATE container SET {sets}")

    return change


def floor_cpu_ms(raw: Any, rows: int, runs: int, where: str = "") -> float:
    before = time.process_time()
    for _ in range(runs):
        floor_once(raw, rows, where)
    return (time.process_time() - before) / runs * 1000


def floor_once(conn: Any, rows: int, where: str = "") -> None:
    import pymysql

    with conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute(
            f"SELECT {', '.join(base.FLOOR_COLUMNS)} FROM container "
            f"WHERE container_type = 0 {where} ORDER BY id LIMIT {rows}"
        )
        result = cur.fetchall()
    # The separators of the API's list answers (no optional spaces).
    json.dumps({"containers": result}, default=str, separators=(",", ":"))


def throughput(
    port: int,
    path: str,
    headers: dict[str, str],
    clients: int,
    seconds: float,
    api: Api | None = None,
    shares: list[float] | None = None,
) -> float:
    """Requests/s of ``clients`` keep-alive clients; with ``api`` and ``shares``, appends the
    busiest worker's share of the workers' CPU over the same seconds (0.5: an even split)."""
    done = [0] * clients
    stop = threading.Event()

    def client(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        _get(conn, path, headers)
        while not stop.is_set():
            _get(conn, path, headers)
            done[i] += 1
        conn.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    time.sleep(1.0)  # warm-up: every client connected and served once
    before = api.cpu_by_pid() if api is not None else {}
    start_count, started = sum(done), time.monotonic()
    time.sleep(seconds)
    rate = (sum(done) - start_count) / (time.monotonic() - started)
    if api is not None and shares is not None:
        used = [cpu - before.get(pid, 0.0) for pid, cpu in api.cpu_by_pid().items()][1:]
        shares.append(max(used) / max(sum(used), 1e-9))
    stop.set()
    for t in threads:
        t.join()
    return rate


def grow(total: int) -> None:
    """Copy existing rows with new UUIDs until the table holds ``total`` containers."""
    from zun.db import engine

    with engine.get_engine().begin() as conn:
        count = conn.exec_driver_sql("SELECT COUNT(*) FROM container").scalar_one()
        cols = [c for c in base.FLOOR_COLUMNS if c != "uuid"] + ["container_type"]
        while count < total:
            batch = min(count, total - count)
            conn.exec_driver_sql(
                f"INSERT INTO container (uuid, {', '.join(cols)}) "
                f"SELECT UUID(), {', '.join(cols)} FROM container ORDER BY id LIMIT {batch}"
            )
            count += batch


def table_size(
    args: argparse.Namespace, tmp: Path, apis: list[Api], databases: list[str], small_url: str
) -> None:
    """Admin page, show and member list on ``--rows`` rows against ``--grow`` rows.

    The grown table is a second database with its own zun-api, and the rounds alternate
    between the two servers, so a change of the machine's speed during the run (other
    processes, MariaDB flushing the grown table) weighs on both sides alike.
    """
    from zun.db import engine

    name = base.create_database()
    databases.append(name)
    url = f"{base.ADMIN_URL}/{name}"
    engine.set_engine(engine.create_engine(url))
    from zun.db import migration

    migration.upgrade(url=url)
    base.populate(args.rows)
    grow(args.grow)
    small = Api(tmp, small_url, 1, tag="small")
    apis.append(small)
    big = Api(tmp, url, 1, tag="grown")
    apis.append(big)
    servers = {"small": small, "big": big}
    conns = {
        side: http.client.HTTPConnection("127.0.0.1", api.port, timeout=120)
        for side, api in servers.items()
    }
    shown = {
        side: json.loads(_get(conns[side], f"{ADMIN_PAGE}&limit=2", base.ADMIN_HEADERS))[
            "containers"
        ][1]["uuid"]
        for side in servers
    }
    sized = {
        "admin page of 1000": (lambda side: ADMIN_PAGE, base.ADMIN_HEADERS, 5),
        "show one container": (
            lambda side: f"/v1/containers/{shown[side]}",
            base.ADMIN_HEADERS,
            args.runs,
        ),
        "member list": (lambda side: "/v1/containers?limit=100", base.MEMBER_HEADERS, args.runs),
    }
    samples: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for kind, (path, headers, runs) in sized.items():
            for side, api in servers.items():
                samples.setdefault((kind, side), []).append(
                    server_cpu_ms(api, conns[side], path(side), headers, runs)
                )
    # A marker in the middle of the grown table: the page after it starts from there.
    with engine.get_engine().connect() as db:
        middle = db.exec_driver_sql(
            f"SELECT uuid FROM container ORDER BY id LIMIT 1 OFFSET {args.grow // 2}"
        ).scalar_one()
    deep = statistics.median(
        server_cpu_ms(big, conns["big"], f"{ADMIN_PAGE}&marker={middle}", base.ADMIN_HEADERS, 5)
        for _ in range(args.rounds)
    )
    print(
        f"\nserver CPU per request, {args.rows} rows -> {args.grow} rows "
        f"(two databases, one zun-api each, {args.rounds} alternated rounds):"
    )
    for kind in sized:
        before = statistics.median(samples[(kind, "small")])
        after = statistics.median(samples[(kind, "big")])
        print(f"  {kind:<28} {before:8.2f} -> {after:8.2f} ms  ratio {after / before:5.2f}")
    print(f"  admin page after a marker     {deep:8.2f} ms (at {args.grow} rows)")
    for conn in conns.values():
        conn.close()


def profile(path: str, headers: dict[str, str], label: str, calls: int = 50) -> None:
    import webob

    from zun.api.app import build_app

    app = build_app("noauth")

    def call() -> None:
        resp = webob.Request.blank(path, headers=headers).get_response(app)
        assert resp.status_code == 200, resp.body[:300]

    call()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        call()
    profiler.disable()
    print(f"\ncProfile of {calls} in-process {label} (tottime):")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--grow", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=6)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--skip-scaling", action="store_true")
    args = parser.parse_args(argv)

    import logging

    logging.basicConfig(level=logging.WARNING)
    from zun.conf import CONF

    CONF([], project="zun", default_config_files=[], default_config_dirs=[])
    from zun.db import engine, migration

    name = base.create_database()
    url = f"{base.ADMIN_URL}/{name}"
    apis: list[Api] = []
    databases = [name]
    try:
        migration.upgrade(url=url)
        engine.set_engine(engine.create_engine(url))
        uuids = base.populate(args.rows)
        if args.profile:
            profile(f"/v1/containers/{uuids[1]}", base.ADMIN_HEADERS, "shows")
            profile("/v1/containers?all_projects=1", base.ADMIN_HEADERS, "admin pages", 5)
            return 0
        tmp = Path(tempfile.mkdtemp(prefix="zun-read-"))
        raw = base._raw_connection(name)
        load0 = os.getloadavg()[0]

        one = Api(tmp, url, 1)
        apis.append(one)
        conn = http.client.HTTPConnection("127.0.0.1", one.port, timeout=120)
        admin_page = ADMIN_PAGE
        kinds = {
            "admin page of 1000": (admin_page, base.ADMIN_HEADERS, max(5, args.runs // 3)),
            "member list (100)": ("/v1/containers", base.MEMBER_HEADERS, args.runs),
            "show one container": (f"/v1/containers/{uuids[1]}", base.ADMIN_HEADERS, args.runs),
            "GET /v1/services": ("/v1/services", base.ADMIN_HEADERS, args.runs),
        }
        samples: dict[str, list[float]] = {k: [] for k in kinds}
        cold = "admin page, JSON values new"
        samples[cold] = []
        samples["floor: SELECT 1000 + json"] = []
        for _ in range(args.rounds):
            for kind, (path, headers, runs) in kinds.items():
                samples[kind].append(server_cpu_ms(one, conn, path, headers, runs))
            samples[cold].append(
                server_cpu_ms(
                    one,
                    conn,
                    admin_page,
                    base.ADMIN_HEADERS,
                    max(5, args.runs // 6),
                    fresh_json_values(raw),
                )
            )
            samples["floor: SELECT 1000 + json"].append(floor_cpu_ms(raw, 1000, 10))
        print(
            f"load average at start {load0:.1f} on {os.cpu_count()} CPUs; "
            f"{args.rows} rows; medians of {args.rounds} alternated rounds"
        )
        print("\nserver CPU per request (zun-api, 1 worker):")
        for kind, values in samples.items():
            print(f"  {kind:<28} {statistics.median(values):8.2f} ms")
        page = statistics.median(samples["admin page of 1000"])
        floor = statistics.median(samples["floor: SELECT 1000 + json"])
        print(f"  admin page / floor           {page / floor:8.2f}  (target <= 1.3)")
        print(f"  the same, JSON values new    {statistics.median(samples[cold]) / floor:8.2f}")
        conn.close()
        one.stop()
        apis.remove(one)

        if not args.skip_scaling:
            two = Api(tmp, url, 2)
            apis.append(two)
            print("\nthroughput, zun-api with 2 workers (requests/s):")
            for kind in ("admin page of 1000", "show one container"):
                path, headers, _ = kinds[kind]
                c1, c8, shares = [], [], []
                for _ in range(2):
                    c1.append(throughput(two.port, path, headers, 1, args.seconds))
                    c8.append(throughput(two.port, path, headers, 8, args.seconds, two, shares))
                r1, r8 = statistics.median(c1), statistics.median(c8)
                print(
                    f"  {kind:<28} C=1 {r1:7.1f}  C=8 {r8:7.1f}  ratio {r8 / r1:5.2f} "
                    f"(target >= 1.7); busiest worker at C=8: "
                    f"{', '.join(f'{v:.0%}' for v in shares)} of the workers' CPU"
                )
            print(
                f"  RSS of the parent and workers: {', '.join(f'{v:.0f}' for v in two.rss_mb())} MB"
            )
            two.stop()
            apis.remove(two)

        if args.grow > args.rows:
            table_size(args, tmp, apis, databases, url)
        raw.close()
        return 0
    finally:
        for api in apis:
            api.stop()
        engine.dispose()
        for database in databases:
            base.drop_database(database)


if __name__ == "__main__":
    sys.exit(main())
