"""Does a client polling Zun every 20 ms slow the engine itself? Raw creates with and without it.

    python benchmarks/poll_pressure.py [--rounds 3] [--parallel 10] [--poll 0.02] [--path show]

``create_steps.py`` finds ten parallel API creates slower when their clients poll every 20 ms
than every 500 ms, with the difference in the engine's calls, not in Zun's steps. This
separates the two: ``--parallel`` raw docker-py creates (Zun's arguments, a user-defined bridge
with a resident container; they never touch Zun), alternately while ``--parallel`` clients
poll ``zun-all`` every ``--poll`` seconds and while nobody polls, ``--rounds`` times each
(the order turns each round). ``--path show`` polls ``GET /v1/containers/<uuid>`` of a row in
Creating, as the create benchmark's clients do (the row is written into zun-all's SQLite file
directly: a create in progress, frozen); ``--path root`` polls ``GET /`` (the version
document, nearly no work): what the traffic alone costs. Prints the p50 of each side, their
ratio and the polls per second served. Ratios, not absolute times, are the result.
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import docker
from create_steps import IMAGE, Zun, raw_parallel, resident_network


def _frozen_creating_row(zun: Zun, base: Path, template: str) -> str:
    """A copy of ``template``'s row, in Creating with its task in flight; its UUID."""
    db = next((base / "state").rglob("*.sqlite"))
    con = sqlite3.connect(db, timeout=30)
    try:
        cols = [r[1] for r in con.execute("PRAGMA table_info(container)")]
        row = dict(
            zip(
                cols,
                con.execute("SELECT * FROM container WHERE uuid = ?", (template,)).fetchone(),
                strict=True,
            )
        )
        ident = str(uuid.uuid4())
        row.update(
            id=None,
            uuid=ident,
            name=f"bench-frozen-{ident[:8]}",
            status="Creating",
            task_state="container_creating",
            container_id=None,
        )
        con.execute(
            f"INSERT INTO container ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            [row[c] for c in cols],
        )
        con.commit()
    finally:
        con.close()
    status, shown = zun.request("GET", f"/v1/containers/{ident}")
    assert status == 200 and shown["status"] == "Creating", (status, shown)
    return ident


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--parallel", type=int, default=10)
    parser.add_argument("--poll", type=float, default=0.02)
    parser.add_argument("--path", choices=("show", "root"), default="show")
    args = parser.parse_args()

    client = docker.from_env(timeout=300)
    client.images.get(IMAGE)
    base = Path(tempfile.mkdtemp(prefix="zun-bench-poll-"))
    net, resident = resident_network(client)
    zun: Zun | None = None
    frozen = keeper = None
    load0 = os.getloadavg()[0]
    try:
        zun = Zun(base)
        keeper = zun.create_and_wait(0.1)["uuid"]
        frozen = _frozen_creating_row(zun, base, keeper)
        path = f"/v1/containers/{frozen}" if args.path == "show" else "/"
        stop = threading.Event()
        served = [0]

        def poller() -> None:
            assert zun is not None
            conn = http.client.HTTPConnection("127.0.0.1", zun.port, timeout=60)
            while not stop.is_set():
                zun.request("GET", path, conn=conn)
                served[0] += 1  # one writer at a time is not needed: an estimate
                time.sleep(args.poll)
            conn.close()

        results: dict[str, list[float]] = {"polled": [], "quiet": []}
        rates: list[float] = []
        for i in range(args.rounds):
            for mode in ("quiet", "polled") if i % 2 == 0 else ("polled", "quiet"):
                stop.clear()
                pollers = []
                if mode == "polled":
                    pollers = [threading.Thread(target=poller) for _ in range(args.parallel)]
                    for thread in pollers:
                        thread.start()
                    time.sleep(0.5)  # polling at full rate before the creates start
                before, started = served[0], time.monotonic()
                made = raw_parallel(net, args.parallel)
                if mode == "polled":
                    rates.append((served[0] - before) / (time.monotonic() - started))
                stop.set()
                for thread in pollers:
                    thread.join()
                results[mode].append(statistics.median(t for t, _ in made))
                for _, ident in made:
                    client.api.remove_container(ident, force=True)
        polled, quiet = (statistics.median(results[m]) for m in ("polled", "quiet"))
        print(
            f"load average {load0:.1f} at start, {os.getloadavg()[0]:.1f} at the end, on "
            f"{os.cpu_count()} CPUs; {args.rounds} rounds of {args.parallel} parallel raw "
            f"creates; polling {args.path} ({path})"
        )
        print(
            f"  raw p50, nobody polling          {quiet * 1000:8.1f} ms  "
            f"(rounds: {', '.join(f'{t * 1000:.0f}' for t in results['quiet'])})"
        )
        print(
            f"  raw p50, {args.parallel} clients polling     {polled * 1000:8.1f} ms  "
            f"(rounds: {', '.join(f'{t * 1000:.0f}' for t in results['polled'])})"
        )
        print(
            f"  polled / quiet                   {polled / quiet:8.2f}   "
            f"({statistics.median(rates):.0f} polls/s served)"
        )
    finally:
        if zun is not None:
            for ident in (frozen, keeper):
                if ident:
                    try:
                        zun.delete(ident)
                    except Exception:  # noqa: BLE001 - best effort; the sweep below follows
                        pass
            zun.stop()
            for container in client.containers.list(
                all=True, filters={"label": f"zun.host={zun.host}"}
            ):
                container.remove(force=True)
        resident.remove(force=True)
        client.networks.get(net).remove()
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
