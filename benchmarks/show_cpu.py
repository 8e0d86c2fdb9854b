"""Server CPU of one show poll in zun-all (SQLite), as create_steps.py's clients poll it.

    python benchmarks/show_cpu.py [--requests 3000] [--clients 10] [--poll 0.02]

Starts ``zun-all`` (SQLite, in-process bus) through ``benchmarks/_create_probe.py`` like
``create_steps.py``, makes one container and a frozen copy of its row in Creating (a create in
progress, what the create benchmark's clients poll), then:

1. **serial**: one keep-alive client asks ``GET /v1/containers/<uuid>`` ``--requests`` times
   back to back;
2. **polled**: ``--clients`` keep-alive clients each ask it every ``--poll`` seconds, for as
   many requests in all (the create benchmark's load: about 500 requests/s).

For each, the CPU zun-all's threads ran (``/proc/<pid>/task/<tid>/schedstat``, nanoseconds)
divided by the requests served, so idle threads (the node's monitors, the bus) are counted
too: measured with nobody asking over the same wall time and subtracted. Ratios, not absolute
times, are the result: the machine is shared.
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from create_steps import HEADERS, Zun
from poll_pressure import _frozen_creating_row


def _cpu_ns(pid: int) -> int:
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended meanwhile
    return total


def _poll(port: int, path: str, count: int, pause: float) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for _ in range(count):
        conn.request("GET", path, headers=HEADERS)
        resp = conn.getresponse()
        resp.read()
        if resp.status != 200:
            raise SystemExit(f"show answered {resp.status}")
        if pause:
            time.sleep(pause)
    conn.close()


def _measure(pid: int, run: Callable[[], object]) -> tuple[float, float]:
    cpu0, wall0 = _cpu_ns(pid), time.monotonic()
    run()
    return (_cpu_ns(pid) - cpu0) / 1e6, time.monotonic() - wall0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--poll", type=float, default=0.02)
    parser.add_argument(
        "--path",
        choices=("show", "root"),
        default="show",
        help="what is polled: the show of a Creating row, or GET / (the "
        "version document: the server and middleware alone)",
    )
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="zun-bench-showcpu-"))
    zun: Zun | None = None
    keeper = frozen = None
    load0 = os.getloadavg()[0]
    try:
        zun = Zun(base)
        pid = zun.server_pid()
        keeper = zun.create_and_wait(0.1)["uuid"]
        frozen = _frozen_creating_row(zun, base, keeper)
        path = f"/v1/containers/{frozen}" if args.path == "show" else "/"
        port = zun.port
        _poll(port, path, 200, 0)  # warm: caches, the pool, the first compilations
        idle_ms, idle_wall = _measure(pid, lambda: time.sleep(5))
        idle_rate = idle_ms / idle_wall  # ms of CPU per s with nobody asking

        def serial() -> None:
            _poll(port, path, args.requests, 0)

        def polled() -> None:
            per = args.requests // args.clients
            threads = [
                threading.Thread(target=_poll, args=(port, path, per, args.poll))
                for _ in range(args.clients)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()

        print(
            f"load average {load0:.1f} at start; {os.cpu_count()} CPUs; zun-all idle "
            f"{idle_rate:.1f} ms CPU/s"
        )
        for name, run, count in (
            ("serial", serial, args.requests),
            ("polled", polled, args.requests // args.clients * args.clients),
        ):
            cpu_ms, wall = _measure(pid, run)
            net = cpu_ms - idle_rate * wall
            print(
                f"  {name:7s} {count} shows in {wall:6.2f} s ({count / wall:6.0f}/s): "
                f"{net / count:.3f} ms CPU per show ({cpu_ms / count:.3f} with idle)"
            )
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        if zun is not None:
            for ident in (frozen, keeper):
                if ident:
                    try:
                        zun.delete(ident)
                    except Exception:  # noqa: BLE001 - best effort
                        pass
            zun.stop()
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
