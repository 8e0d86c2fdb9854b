"""Create-to-Running latency through the API, against raw Docker create+start on the same engine.

    python benchmarks/create_latency.py [--runs 20] [--keep-state]

What it does, in one run:

1. starts ``zun-all`` as a subprocess (a temporary state dir, SQLite, an ephemeral port, its
   own host name), with the busybox test image present locally;
2. runs one warm-up container (and keeps a second one running, so the project's bridge network
   exists throughout, as on a node that hosts anything at all);
3. ``--runs`` times, alternately:
   * API: ``POST /v1/containers?run=true`` (1.40, ``image_pull_policy: ifnotpresent``) then
     ``GET /v1/containers?name=<its name>`` every 50 ms until the status is ``Running``.
     The latency is from the moment the request was sent to the moment the API's state
     became Running: the create action's ``finish_time``, which the node commits in the
     same transaction as the status (same clock: same machine). Polling faster would
     measure the poller: every GET competes with the node in the process being measured.
     What the polling client saw is printed too. Each container is deleted afterwards,
     untimed;
   * raw: docker-py ``create_container`` + ``start`` with the very arguments Zun sends (same
     image, command, limits, labels, hardening options; see :func:`raw_spec`) on an
     equivalent bridge network; removed afterwards, untimed. The same without the hardening
     options is printed too, for reference;
4. prints both medians and their ratio (target: <= 1.15).

Each API container goes on the project's bridge network, where a resident container runs;
the raw side's network has one too, so Docker does the same network work on both sides.

Both sides run against the same daemon in the same minute, so the ratio holds on any machine.
"""

from __future__ import annotations

import argparse
import datetime
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import docker

from zun.runtime.docker.spec import build_create_spec

IMAGE = "busybox:latest"
COMMAND = ["sleep", "300"]
CPU = 0.1
MEMORY_MB = 32
HEADERS = {
    "OpenStack-API-Version": "container 1.40",
    "Content-Type": "application/json",
    "X-Auth-Token": "notused",
}
POLL_INTERVAL = 0.05


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.port = _free_port()
        self.host = f"bench-{uuid.uuid4().hex[:8]}"
        config = base / "zun.conf"
        config.write_text(
            f"[DEFAULT]\nhost = {self.host}\n[websocket_proxy]\n"
            f"wsproxy_host = 127.0.0.1\nwsproxy_port = {_free_port()}\n"
        )
        zun_all = Path(sys.executable).parent / "zun-all"
        self.log = (base / "zun-all.log").open("wb")
        self.proc = subprocess.Popen(
            [
                str(zun_all),
                "--state-dir",
                str(base / "state"),
                "--port",
                str(self.port),
                "--config-file",
                str(config),
            ],
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"zun-all exited; see {self.log.name}")
            try:
                status, body = self.request("GET", "/v1/hosts")
                if status == 200 and any(h["hostname"] == self.host for h in body["hosts"]):
                    return
            except OSError:
                self.conn.close()
            time.sleep(0.1)
        raise SystemExit("zun-all did not become ready")

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body)
        self.conn.request(method, path, body=data, headers=HEADERS)
        resp = self.conn.getresponse()
        raw = resp.read()
        return resp.status, (json.loads(raw) if raw else None)

    def run_container(self) -> tuple[str, str]:
        """``(uuid, name)`` of a new container, run=true."""
        name = f"bench-{uuid.uuid4().hex[:12]}"
        status, body = self.request(
            "POST",
            "/v1/containers?run=true",
            {
                "name": name,
                "image": IMAGE,
                "command": COMMAND,
                "cpu": CPU,
                "memory": MEMORY_MB,
                "image_pull_policy": "ifnotpresent",
            },
        )
        if status != 202:
            raise SystemExit(f"create answered {status}: {body}")
        return body["uuid"], name

    def wait_running(self, name: str, timeout: float = 60) -> None:
        """Poll the list filtered by name: it reads the stored status, which the node writes
        the moment the container runs, without asking the node anything (a show would, and
        polling it every few ms would load the very process being measured)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            _, body = self.request("GET", f"/v1/containers?name={name}")
            status = body["containers"][0]["status"]
            if status == "Running":
                return
            if status == "Error":
                raise SystemExit(
                    f"container went to Error: {body['containers'][0]['status_reason']}"
                )
            time.sleep(POLL_INTERVAL)
        raise SystemExit("container did not run in time")

    def delete(self, container_uuid: str) -> None:
        self.request("DELETE", f"/v1/containers/{container_uuid}?force=true")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            status, _ = self.request("GET", f"/v1/containers/{container_uuid}")
            if status == 404:
                return
            time.sleep(0.02)

    def stop(self) -> None:
        self.conn.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def api_once(server: Server) -> tuple[float, float]:
    """``(observed, stamped)`` seconds: as the polling client saw it, and up to the moment
    the API's state became Running (the create action's ``finish_time``, committed in the
    same transaction as the status)."""
    sent = time.time()
    start = time.perf_counter()
    container_uuid, name = server.run_container()
    server.wait_running(name)
    observed = time.perf_counter() - start
    _, body = server.request("GET", f"/v1/containers/{container_uuid}/container_actions")
    finish = body["containerActions"][0]["finish_time"]
    done = (
        datetime.datetime.strptime(finish, "%Y-%m-%dT%H:%M:%S.%f")
        .replace(tzinfo=datetime.UTC)
        .timestamp()
    )
    server.delete(container_uuid)
    return observed, done - sent


def raw_spec(network: str) -> Any:
    """The very create arguments Zun sends for the API's containers (limits, labels,
    hardening), so that the ratio measures Zun's machinery, not a different container."""
    row = {
        "uuid": str(uuid.uuid4()),
        "image": IMAGE,
        "command": COMMAND,
        "cpu": CPU,
        "memory": str(MEMORY_MB),
        "labels": {"bench": "raw"},
    }
    spec = build_create_spec(row, IMAGE, {"network_mode": network, "endpoints": {network: {}}})
    spec.create["name"] = f"bench-raw-{row['uuid']}"
    spec.create["labels"]["zun.managed"] = "false"  # not Zun's: no reaper may take it
    return spec


def raw_once(api: docker.APIClient, network: str, hardened: bool = True) -> float:
    spec = raw_spec(network)
    host_args = dict(spec.host_config)
    if not hardened:
        for key in ("security_opt", "cap_drop", "pids_limit"):
            host_args.pop(key, None)
    start = time.perf_counter()
    host_config = api.create_host_config(**host_args)
    created = api.create_container(host_config=host_config, **spec.create)
    api.start(created["Id"])
    elapsed = time.perf_counter() - start
    api.remove_container(created["Id"], force=True)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument(
        "--keep-state",
        action="store_true",
        help="keep the state dir (database, log) and print where it is",
    )
    args = parser.parse_args()

    client = docker.from_env(timeout=120)
    client.images.get(IMAGE)  # scripts/test-images.sh builds it
    base = Path(tempfile.mkdtemp(prefix="zun-bench-create-"))
    raw_network = f"bench-raw-{uuid.uuid4().hex[:8]}"
    client.networks.create(raw_network, driver="bridge")
    server = Server(base)
    keeper = raw_keeper = None
    try:
        server.wait_ready()
        keeper, keeper_name = server.run_container()
        server.wait_running(keeper_name)
        api_once(server)  # warm-up: first image row, first connections
        raw_once(client.api, raw_network)
        # The raw side's network gets a resident container too, as the project's has.
        raw_keeper = client.containers.run(
            IMAGE, COMMAND, detach=True, network=raw_network, labels={"bench": "raw"}
        )

        observed, stamped, raw_times, plain_times = [], [], [], []
        for _ in range(args.runs):
            seen, done = api_once(server)
            observed.append(seen)
            stamped.append(done)
            raw_times.append(raw_once(client.api, raw_network))
            plain_times.append(raw_once(client.api, raw_network, hardened=False))
        api_median = statistics.median(stamped)
        raw_median = statistics.median(raw_times)
        print(f"runs: {args.runs}")
        print(
            f"API create-to-Running median:   {api_median * 1000:8.1f} ms "
            f"(min {min(stamped) * 1000:.1f}, max {max(stamped) * 1000:.1f})"
        )
        print(
            f"  as seen by a client polling every {POLL_INTERVAL * 1000:.0f} ms: "
            f"{statistics.median(observed) * 1000:.1f} ms"
        )
        print(
            f"raw docker create+start median: {raw_median * 1000:8.1f} ms "
            f"(min {min(raw_times) * 1000:.1f}, max {max(raw_times) * 1000:.1f})"
        )
        print(
            f"  same, without Zun's hardening options: "
            f"{statistics.median(plain_times) * 1000:.1f} ms"
        )
        print(
            f"ratio: {api_median / raw_median:.2f} (target <= 1.15); as seen by the client: "
            f"{statistics.median(observed) / raw_median:.2f}"
        )
    finally:
        if keeper is not None:
            server.delete(keeper)
        server.stop()
        for container in client.containers.list(
            all=True, filters={"label": f"zun.host={server.host}"}
        ):
            container.remove(force=True)
        if raw_keeper is not None:
            raw_keeper.remove(force=True)
        client.networks.get(raw_network).remove()
        if args.keep_state:
            print(f"state kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
