"""Resident memory of zun-all idle, and of zun-api with 2 worker processes.

    python benchmarks/memory.py [--settle 15]

Starts each command with a temporary state directory (SQLite, in-process bus, noauth),
waits until it answers, serves a few requests (containers, hosts, services), lets it
settle for ``--settle`` seconds and reads ``VmRSS`` and ``Pss`` (``/proc/<pid>/smaps_rollup``:
pages shared with other processes counted once in total) of every process. Target:
zun-all idle RSS <= 120 MB.
"""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _kb(pid: int, path: str, key: str) -> int:
    for line in Path(f"/proc/{pid}/{path}").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def _family(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [pid, *map(int, children)]


def _wait(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/services", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise SystemExit("did not answer in time")


def measure(name: str, cmd: list[str], port: int, log: Path, settle: float) -> None:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    try:
        _wait(port, proc, log)
        for path in ("/v1/containers", "/v1/hosts", "/v1/services"):
            req = urllib.request.Request(
                f"http://127.0.0.1:{port}{path}",
                headers={"OpenStack-API-Version": "container latest"},
            )
            with urllib.request.urlopen(req, timeout=30) as r:
                r.read()
        time.sleep(settle)
        pids = _family(proc.pid)
        rss = [_kb(pid, "status", "VmRSS") / 1024 for pid in pids]
        pss = [_kb(pid, "smaps_rollup", "Pss") / 1024 for pid in pids]
        threads = [_kb(pid, "status", "Threads") for pid in pids]
        print(f"{name}: {len(pids)} process(es)")
        for pid, r, p, t in zip(pids, rss, pss, threads, strict=True):
            print(f"  pid {pid}: RSS {r:6.1f} MB  PSS {p:6.1f} MB  threads {t}")
        print(f"  total RSS {sum(rss):6.1f} MB, total PSS {sum(pss):6.1f} MB")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settle", type=float, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="zun-mem-") as tmp:
        base = Path(tmp)
        # By default zun-all forks into a session of its own (--cpu-nice): a small parent that
        # passes signals on, and the service. --cpu-nice 0 is the one process it was before.
        for label, extra in (("zun-all (idle)", []), ("zun-all --cpu-nice 0 (idle)", ["0"])):
            port = _free_port()
            config = base / "all.conf"
            config.write_text(f"[DEFAULT]\nhost = mem-{port}\n")
            measure(
                label,
                [
                    str(BIN / "zun-all"),
                    "--state-dir",
                    str(base / f"state-{port}"),
                    "--port",
                    str(port),
                    "--wsproxy-port",
                    str(_free_port()),
                    "--config-file",
                    str(config),
                    *(["--cpu-nice", *extra] if extra else []),
                ],
                port,
                base / f"all-{port}.log",
                args.settle,
            )
        port = _free_port()
        config = base / "api.conf"
        config.write_text(
            "[DEFAULT]\ntransport_url = fake://\n"
            f"[database]\nconnection = sqlite:///{base / 'api.sqlite'}\n"
            f"[api]\nauth_strategy = noauth\nhost_ip = 127.0.0.1\nport = {port}\nworkers = 2\n"
        )
        subprocess.run(
            [str(BIN / "zun-db-manage"), "--config-file", str(config), "upgrade"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        measure(
            "zun-api, [api] workers = 2",
            [str(BIN / "zun-api"), "--config-file", str(config)],
            port,
            base / "api.log",
            args.settle,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
