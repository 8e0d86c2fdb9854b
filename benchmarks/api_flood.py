"""A well-behaved request while 1000 idle and slow connections are held open.

    python benchmarks/api_flood.py [--workers 2] [--idle 500] [--slow 500] [--runs 40]

Starts the real ``zun-api`` (SQLite, in-process bus, noauth, ``[api] workers``) on an ephemeral
port, then in one run:

1. times ``GET /v1/services`` on a fresh connection ``--runs`` times (no flood);
2. opens ``--idle`` connections that send nothing and ``--slow`` connections that send a
   partial request header and then one more header byte per second (slowloris);
3. times the same GET again while they are held, then once more after they are closed.

Prints the median, p95 and maximum of each round and the flood/idle ratio of the medians.
The target is that every GET during the flood is answered within 100 ms.
"""

from __future__ import annotations

import argparse
import http.client
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_api(base: Path, workers: int) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    config = base / "zun-api.conf"
    config.write_text(
        "[DEFAULT]\ntransport_url = fake://\n"
        f"[database]\nconnection = sqlite:///{base / 'zun.sqlite'}\n"
        f"[api]\nauth_strategy = noauth\nhost_ip = 127.0.0.1\nport = {port}\n"
        f"workers = {workers}\n"
    )
    subprocess.run(
        [str(BIN / "zun-db-manage"), "--config-file", str(config), "upgrade"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    proc = subprocess.Popen(
        [str(BIN / "zun-api"), "--config-file", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=(base / "api.log").open("wb"),
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/services", timeout=2):
                return proc, port
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("zun-api did not come up: " + (base / "api.log").read_text()[-2000:])


def timed_get(port: int) -> float:
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/v1/services")
    resp = conn.getresponse()
    resp.read()
    conn.close()
    if resp.status != 200:
        raise RuntimeError(f"GET /v1/services -> {resp.status}")
    return (time.perf_counter() - started) * 1000


def round_ms(port: int, runs: int) -> list[float]:
    timed_get(port)
    return [timed_get(port) for _ in range(runs)]


class Flood:
    def __init__(self, port: int, idle: int, slow: int) -> None:
        self.socks: list[socket.socket] = []
        self.slow: list[socket.socket] = []
        self.stop = threading.Event()
        for _ in range(idle):
            self.socks.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        for _ in range(slow):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(b"GET /v1/services HTTP/1.1\r\nHost: bench\r\nX-Slow: ")
            self.slow.append(sock)
        self.thread = threading.Thread(target=self._trickle, daemon=True)
        self.thread.start()

    def _trickle(self) -> None:
        while not self.stop.wait(1.0):
            for sock in self.slow:
                try:
                    sock.send(b"a")
                except OSError:
                    pass

    def still_open(self) -> int:
        alive = 0
        for sock in self.socks + self.slow:
            sock.setblocking(False)
            try:
                alive += sock.recv(1) != b""
            except BlockingIOError:
                alive += 1
            except OSError:
                pass
        return alive

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        for sock in self.socks + self.slow:
            sock.close()


def summary(name: str, values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    return (
        f"{name:<34} median {statistics.median(values):7.2f} ms  p95 {p95:7.2f} ms  "
        f"max {max(values):7.2f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--idle", type=int, default=500)
    parser.add_argument("--slow", type=int, default=500)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args(argv)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    with tempfile.TemporaryDirectory(prefix="zun-flood-") as tmp:
        proc, port = start_api(Path(tmp), args.workers)
        try:
            before = round_ms(port, args.runs)
            flood = Flood(port, args.idle, args.slow)
            time.sleep(2)
            during = round_ms(port, args.runs)
            alive = flood.still_open()
            flood.close()
            after = round_ms(port, args.runs)
        finally:
            proc.send_signal(signal.SIGTERM)
            stopped = time.monotonic()
            code = proc.wait(timeout=90)
            stop_s = time.monotonic() - stopped
    load = os.getloadavg()
    print(
        f"zun-api, {args.workers} worker processes; load average {load[0]:.1f} "
        f"on {os.cpu_count()} CPUs"
    )
    print(summary("GET /v1/services, no flood", before))
    print(summary(f"... with {args.idle} idle + {args.slow} slow", during))
    print(summary("... after the flood closed", after))
    ratio = statistics.median(during) / statistics.median(before)
    print(f"flood / no flood (medians):        {ratio:.2f}")
    print(f"flood connections still open when measured: {alive} of {args.idle + args.slow}")
    print(f"every GET during the flood within 100 ms: {'yes' if max(during) <= 100 else 'NO'}")
    print(f"SIGTERM -> exit {code} in {stop_s:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
