"""Where a create's time goes, and create-to-Running as a polling client sees it vs raw Docker.

    python benchmarks/create_steps.py [--runs 10] [--parallel 10] [--poll 0.02]
        [--set GROUP.OPTION=VALUE ...] [--cpu-nice N]

One run, on the local Docker engine, with ``zun-all`` (SQLite, in-process bus) started through
``benchmarks/_create_probe.py``, which times each step of a create from the outside:

1. **Idle**, ``--runs`` alternated rounds (each container removed, untimed, before the next) of:
   * API: ``POST /v1/containers?run=true`` then ``GET /v1/containers/<uuid>`` every
     ``--poll`` seconds (what a client does) until ``Running``: the client-visible time;
   * raw: docker-py ``create_container`` + ``start`` with the very arguments Zun sends
     (``build_create_spec``), on a user-defined bridge with a resident container, as the
     project network has;
   * plain: docker-py create + start of the same image and command, no options, on Docker's
     default bridge (what ``docker run -d`` does, without the CLI's own start-up);
   * Zun's arguments on Docker's default bridge: what the project network itself costs;
   * quiet: the API create again, polled only every 500 ms, and its create action's
     ``finish_time``: does fast polling slow the create down?
2. **Under load**, ``--parallel-rounds`` rounds of: ``--parallel`` API creates at once, each
   polled every ``--poll``; the same polled every 500 ms; ``--parallel`` raw creates at once
   (Zun's arguments and network), in an order that turns each round. p50 of each; the
   containers of a phase are removed before the next phase.
3. The steps of every API create (medians), for each of the four API columns (idle or
   parallel, fast or slow polling): API (quota + insert + schedule + claim in one transaction,
   cast), the wait in the node's per-container queue, image check, volumes, network (the
   project network lock and check around ``docker create``), docker create, docker start,
   inspect, status write, and the time from the status write to the client's poll that saw it.
4. The CPU zun-all and this client used while the API creates of each phase ran (utime +
   stime over wall time, of zun-all's whole process tree: it forks to run in a session of its
   own, ``--cpu-nice``): what a fast-polling client costs.

Every container is removed afterwards. Ratios, not absolute times, are the result: the machine
is shared.
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
import threading
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import docker

from zun.runtime.docker.spec import build_create_spec

IMAGE = "busybox:latest"
COMMAND = ["sleep", "300"]
CPU = 0.1
MEMORY_MB = 32
HEADERS = {"OpenStack-API-Version": "container 1.40", "Content-Type": "application/json"}
STEP_ORDER = (
    "api: quota + insert + schedule + claim",
    "api: cast",
    "node: queue",
    "node: image check",
    "node: volumes",
    "node: network",
    "node: docker create",
    "node: docker start",
    "node: inspect",
    "node: status write",
    "client: write -> seen",
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def config_text(host: str, settings: list[str]) -> str:
    """zun-all's configuration file: its host and console port, plus ``GROUP.OPTION=VALUE``
    settings (``--set``)."""
    groups: dict[str, list[str]] = defaultdict(list)
    groups["DEFAULT"].append(f"host = {host}")
    groups["websocket_proxy"] += ["wsproxy_host = 127.0.0.1", f"wsproxy_port = {_free_port()}"]
    for setting in settings:
        name, sep, value = setting.partition("=")
        group, dot, option = name.rpartition(".")
        if not (sep and dot and group and option):
            raise SystemExit(f"--set wants GROUP.OPTION=VALUE, not {setting!r}")
        groups[group].append(f"{option} = {value}")
    return "".join(
        f"[{group}]\n" + "".join(f"{line}\n" for line in lines) for group, lines in groups.items()
    )


class ZunClient:
    """The benchmark's client of a Zun API on ``127.0.0.1:<port>``: requests, a create polled
    until Running, a forced delete (also used by create_distributed.py)."""

    port: int

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        conn: http.client.HTTPConnection | None = None,
    ) -> tuple[int, Any]:
        own = conn is None
        conn = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            conn.request(
                method, path, body=None if body is None else json.dumps(body), headers=HEADERS
            )
            resp = conn.getresponse()
            raw = resp.read()
            return resp.status, (json.loads(raw) if raw else None)
        finally:
            if own:
                conn.close()

    def create_and_wait(self, poll: float, timeout: float = 120) -> dict[str, Any]:
        """One create, polled with show every ``poll`` s (for ``timeout`` s at most); times on
        the wall clock."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        sent = time.time()
        status, body = self.request(
            "POST",
            "/v1/containers?run=true",
            {
                "name": f"bench-{uuid.uuid4().hex[:12]}",
                "image": IMAGE,
                "command": COMMAND,
                "cpu": CPU,
                "memory": MEMORY_MB,
                "image_pull_policy": "ifnotpresent",
            },
            conn,
        )
        answered = time.time()
        if status != 202:
            raise SystemExit(f"create answered {status}: {body}")
        ident = body["uuid"]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            time.sleep(poll)
            _, shown = self.request("GET", f"/v1/containers/{ident}", conn=conn)
            if shown["status"] == "Running":
                break
            if shown["status"] == "Error":
                raise SystemExit(f"create failed: {shown['status_reason']}")
        seen = time.time()
        _, actions = self.request("GET", f"/v1/containers/{ident}/container_actions", conn=conn)
        conn.close()
        finish = (
            datetime.datetime.strptime(
                actions["containerActions"][0]["finish_time"], "%Y-%m-%dT%H:%M:%S.%f"
            )
            .replace(tzinfo=datetime.UTC)
            .timestamp()
        )
        return {"uuid": ident, "sent": sent, "answered": answered, "seen": seen, "finished": finish}

    def delete(self, ident: str) -> None:
        self.request("DELETE", f"/v1/containers/{ident}?force=true")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.request("GET", f"/v1/containers/{ident}")[0] == 404:
                return
            time.sleep(0.05)


class Zun(ZunClient):
    def __init__(
        self, base: Path, settings: list[str] | None = None, cpu_nice: int | None = None
    ) -> None:
        self.port = _free_port()
        self.host = f"bench-{uuid.uuid4().hex[:8]}"
        self.steps = base / "steps.jsonl"
        config = base / "zun.conf"
        config.write_text(config_text(self.host, settings or []))
        self.log = (base / "zun-all.log").open("wb")
        # ZUN_BENCH_PROBE: another probe script (e.g. one that also profiles).
        probe = Path(
            os.environ.get("ZUN_BENCH_PROBE") or Path(__file__).with_name("_create_probe.py")
        )
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(probe),
                "--state-dir",
                str(base / "state"),
                "--port",
                str(self.port),
                "--config-file",
                str(config),
                *([] if cpu_nice is None else ["--cpu-nice", str(cpu_nice)]),
            ],
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            env={**os.environ, "ZUN_BENCH_STEPS": str(self.steps)},
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"zun-all exited; see {self.log.name}")
            try:
                status, body = self.request("GET", "/v1/hosts")
                if status == 200 and any(h["hostname"] == self.host for h in body["hosts"]):
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise SystemExit("zun-all did not become ready")

    def server_pid(self) -> int:
        """The process that serves: zun-all's child when it forked into a session of its own."""
        pid = self.proc.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return int(children[0]) if children else pid

    def weight(self) -> str:
        """The serving process's nice value and autogroup, as the kernel has them."""
        pid = self.server_pid()
        nice = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16]
        group = Path(f"/proc/{pid}/autogroup").read_text().strip()
        own = "own session" if os.getsid(pid) == pid else f"session of pid {os.getsid(pid)}"
        return f"pid {pid}, nice {nice}, {own}, {group}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


# docker create / start times of the last raw_once per thread (for the step table).
_RAW_STEPS = threading.local()


def raw_once(api: docker.APIClient, network: str | None, zun_args: bool) -> tuple[float, str]:
    name = f"bench-raw-{uuid.uuid4().hex[:12]}"
    if zun_args:
        row = {
            "uuid": str(uuid.uuid4()),
            "image": IMAGE,
            "command": COMMAND,
            "cpu": CPU,
            "memory": str(MEMORY_MB),
            "labels": {"bench": "raw"},
        }
        spec = build_create_spec(row, IMAGE, {"network_mode": network, "endpoints": {network: {}}})
        spec.create["name"] = name
        spec.create["labels"]["zun.managed"] = "false"  # not Zun's: no reaper may take it
        start = time.perf_counter()
        created = api.create_container(
            host_config=api.create_host_config(**spec.host_config), **spec.create
        )
    else:
        start = time.perf_counter()
        created = api.create_container(
            IMAGE, COMMAND, name=name, labels={"bench": "raw"}, host_config=api.create_host_config()
        )
    made = time.perf_counter()
    api.start(created["Id"])
    end = time.perf_counter()
    _RAW_STEPS.last = (made - start, end - made)
    return end - start, created["Id"]


def engine_clients(count: int) -> list[docker.APIClient]:
    """``count`` docker-py clients, each with its API version negotiated and its connection
    open, to hand out one per thread: made inside the timed creates, their ``/version`` calls
    ran on the engine while the other threads' creates were timed (and Zun's node has its
    client ready). The caller closes them."""
    return [docker.from_env(timeout=300).api for _ in range(count)]


def raw_parallel(network: str, count: int) -> list[tuple[float, str]]:
    """``count`` raw creates (Zun's arguments) at once, each on a client of its own."""
    apis = engine_clients(count)
    handed = iter(apis)
    try:
        return parallel(lambda: raw_once(next(handed), network, True), count)
    finally:
        for api in apis:
            api.close()


def resident_network(client: docker.DockerClient) -> tuple[str, Any]:
    """The raw side's network: a user-defined bridge with a resident container on it, as a
    project network with a container already running has. Its name and the container; the
    caller removes both."""
    net = f"bench-raw-{uuid.uuid4().hex[:8]}"
    client.networks.create(net, driver="bridge", labels={"bench": "raw"})
    resident = client.containers.run(
        IMAGE, COMMAND, detach=True, network=net, labels={"bench": "raw"}
    )
    return net, resident


def parallel(fn: Any, count: int) -> list[Any]:
    results: list[Any] = [None] * count
    barrier = threading.Barrier(count)

    def run(i: int) -> None:
        barrier.wait()
        results[i] = fn()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def step_table(steps_file: Path, runs: list[dict[str, Any]]) -> dict[str, float]:
    by_uuid: dict[str, dict[str, tuple[float, float]]] = defaultdict(dict)
    for line in steps_file.read_text().splitlines():
        rec = json.loads(line)
        by_uuid[rec["uuid"]].setdefault(rec["step"], (rec["start"], rec["end"]))
    table: dict[str, list[float]] = defaultdict(list)
    for run in runs:
        steps = by_uuid.get(run["uuid"], {})
        for name, (start, end) in steps.items():
            if name not in ("node: whole create", "node: network + docker create"):
                table[name].append(end - start)
        if "node: network + docker create" in steps and "node: docker create" in steps:
            both, create = steps["node: network + docker create"], steps["node: docker create"]
            table["node: network"].append((both[1] - both[0]) - (create[1] - create[0]))
        if "api: cast" in steps and "node: whole create" in steps:
            table["node: queue"].append(steps["node: whole create"][0] - steps["api: cast"][1])
        if "node: status write" in steps:
            table["client: write -> seen"].append(run["seen"] - steps["node: status write"][1])
    return {name: statistics.median(v) * 1000 for name, v in table.items()}


def _cpu_seconds(pid: int) -> float:
    """utime + stime of a process (and its reaped children: none here)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int) -> float:
    """utime + stime of a process and of its live descendants (zun-all's forked service,
    zun-api's workers)."""
    try:
        total = _cpu_seconds(pid)
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return 0.0
    for task in tasks:
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        total += sum(tree_cpu(int(child)) for child in children)
    return total


class Phase:
    """Wall time and CPU seconds of zun-all and of this process over a phase."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.server = self.client = self.wall = 0.0

    def __enter__(self) -> Phase:
        self._s, self._c, self._w = (tree_cpu(self.pid), time.process_time(), time.monotonic())
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server += tree_cpu(self.pid) - self._s
        self.client += time.process_time() - self._c
        self.wall += time.monotonic() - self._w

    def line(self) -> str:
        return (
            f"zun-all {self.server / self.wall * 100:5.1f}% of a CPU, "
            f"this client {self.client / self.wall * 100:5.1f}%"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--parallel", type=int, default=10)
    parser.add_argument(
        "--parallel-rounds",
        type=int,
        default=3,
        help="rounds of the parallel phases (fast poll, slow poll, raw), in an "
        "order that turns each round",
    )
    parser.add_argument("--poll", type=float, default=0.02)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="GROUP.OPTION=VALUE",
        help="a zun-all setting, e.g. api.workers=4 (repeatable)",
    )
    parser.add_argument(
        "--cpu-nice",
        type=int,
        default=None,
        metavar="N",
        help="zun-all's --cpu-nice: its CPU weight against Docker's, as the nice "
        "value of a session of its own (default: zun-all's, 10; 0: as started)",
    )
    args = parser.parse_args()

    client = docker.from_env(timeout=300)
    client.images.get(IMAGE)  # scripts/test-images.sh builds it
    base = Path(tempfile.mkdtemp(prefix="zun-bench-steps-"))
    raw_net = f"bench-raw-{uuid.uuid4().hex[:8]}"
    client.networks.create(raw_net, driver="bridge", labels={"bench": "raw"})
    try:
        zun = Zun(base, args.set, args.cpu_nice)
    except BaseException:
        client.networks.get(raw_net).remove()
        shutil.rmtree(base, ignore_errors=True)
        raise
    raw_ids: list[str] = []
    api_ids: list[str] = []
    load0 = os.getloadavg()[0]

    def clean_between_phases() -> None:
        # Removed between phases, untimed, so that each phase starts from the same engine.
        for ident in api_ids[2:]:
            zun.delete(ident)
        del api_ids[2:]
        for ident in raw_ids[1:]:
            client.api.remove_container(ident, force=True)
        del raw_ids[1:]

    try:
        keeper = zun.create_and_wait(0.1)  # the project network exists from here on
        api_ids.append(keeper["uuid"])
        api_ids.append(zun.create_and_wait(args.poll)["uuid"])  # warm-up
        raw_ids.append(
            client.containers.run(
                IMAGE, COMMAND, detach=True, network=raw_net, labels={"bench": "raw"}
            ).id
        )
        for zun_args, net in ((True, raw_net), (False, None)):
            raw_ids.append(raw_once(client.api, net, zun_args)[1])

        idle: list[dict[str, Any]] = []
        quiet: list[dict[str, Any]] = []
        raw_t: list[float] = []
        raw_steps: list[tuple[float, float]] = []
        plain_t: list[float] = []
        args_default_t: list[float] = []
        fast_phase, quiet_phase = Phase(zun.proc.pid), Phase(zun.proc.pid)
        # Each container is removed (untimed) before the next is made, so every create finds
        # its network as the first one did: the resident container only.
        for _ in range(args.runs):
            with fast_phase:
                run = zun.create_and_wait(args.poll)
            idle.append(run)
            zun.delete(run["uuid"])
            for times, net, zun_args in (
                (raw_t, raw_net, True),
                (plain_t, None, False),
                (args_default_t, "bridge", True),
            ):
                elapsed, ident = raw_once(client.api, net, zun_args)
                times.append(elapsed)
                if times is raw_t:
                    raw_steps.append(_RAW_STEPS.last)
                client.api.remove_container(ident, force=True)
            with quiet_phase:
                run = zun.create_and_wait(0.5)
            quiet.append(run)
            zun.delete(run["uuid"])

        loaded: list[dict[str, Any]] = []
        loaded_quiet: list[dict[str, Any]] = []
        raw_loaded: list[tuple[float, str]] = []
        load_fast_phase, load_quiet_phase = Phase(zun.proc.pid), Phase(zun.proc.pid)

        def fast_round() -> None:
            with load_fast_phase:
                loaded.extend(parallel(lambda: zun.create_and_wait(args.poll), args.parallel))
            api_ids.extend(r["uuid"] for r in loaded[-args.parallel :])

        def slow_round() -> None:
            with load_quiet_phase:
                loaded_quiet.extend(parallel(lambda: zun.create_and_wait(0.5), args.parallel))
            api_ids.extend(r["uuid"] for r in loaded_quiet[-args.parallel :])

        def raw_round() -> None:
            raw_loaded.extend(raw_parallel(raw_net, args.parallel))
            raw_ids.extend(ident for _, ident in raw_loaded[-args.parallel :])

        # The order turns each round, so that no phase always follows the same clean-up.
        rounds = [fast_round, slow_round, raw_round]
        for i in range(args.parallel_rounds):
            for phase in rounds[i % 3 :] + rounds[: i % 3]:
                phase()
                clean_between_phases()
        load1 = os.getloadavg()[0]

        med = statistics.median
        client_idle = med(r["seen"] - r["sent"] for r in idle)
        stamped_idle = med(r["finished"] - r["sent"] for r in idle)
        stamped_quiet = med(r["finished"] - r["sent"] for r in quiet)
        raw_idle, plain_idle = med(raw_t), med(plain_t)
        client_load = med(r["seen"] - r["sent"] for r in loaded)
        stamped_load = med(r["finished"] - r["sent"] for r in loaded)
        stamped_load_quiet = med(r["finished"] - r["sent"] for r in loaded_quiet)
        raw_load = med(t for t, _ in raw_loaded)
        print(
            f"load average {load0:.1f} at start, {load1:.1f} at the end, on "
            f"{os.cpu_count()} CPUs; {args.runs} idle rounds, {args.parallel_rounds} x "
            f"{args.parallel} parallel; settings: {' '.join(args.set) or 'defaults'}"
            + f"; zun-all: {zun.weight()}"
        )
        print("\nidle (medians):")
        print(
            f"  API, client polling show every {args.poll * 1000:.0f} ms   "
            f"{client_idle * 1000:8.1f} ms"
        )
        print(f"  API, Running written (action finish)      {stamped_idle * 1000:8.1f} ms")
        print(f"  API, polled every 500 ms, Running written  {stamped_quiet * 1000:8.1f} ms")
        print(f"  raw docker-py, Zun's arguments + network  {raw_idle * 1000:8.1f} ms")
        print(f"  plain docker-py create+start, default bridge {plain_idle * 1000:5.1f} ms")
        args_default = med(args_default_t)
        print(f"  raw docker-py, Zun's arguments, default bridge {args_default * 1000:4.1f} ms")
        print(
            f"  client / raw (Zun's args)                 {client_idle / raw_idle:8.2f} "
            "(target <= 1.15)"
        )
        print(f"  client / plain (default bridge)           {client_idle / plain_idle:8.2f}")
        print(f"  raw (Zun's args) / plain                  {raw_idle / plain_idle:8.2f}")
        print(f"  of which the project bridge (vs default)  {raw_idle / args_default:8.2f}")
        print(
            f"  fast poll / slow poll (Running written)   {stamped_idle / stamped_quiet:8.2f}"
            " (1.0: polling does not slow the create)"
        )
        print(f"  CPU while polled every {args.poll * 1000:.0f} ms: {fast_phase.line()}")
        print(f"  CPU while polled every 500 ms: {quiet_phase.line()}")
        print(f"\n{args.parallel} parallel (p50):")
        print(f"  API, client-visible                       {client_load * 1000:8.1f} ms")
        print(f"  API, Running written                      {stamped_load * 1000:8.1f} ms")
        print(f"  API, polled every 500 ms, Running written  {stamped_load_quiet * 1000:8.1f} ms")
        print(f"  raw docker-py, Zun's arguments + network  {raw_load * 1000:8.1f} ms")
        print(
            f"  client / raw                              {client_load / raw_load:8.2f} "
            "(target <= 1.3)"
        )
        print(
            f"  fast poll / slow poll (Running written)   {stamped_load / stamped_load_quiet:8.2f}"
        )
        print(f"  CPU while polled every {args.poll * 1000:.0f} ms: {load_fast_phase.line()}")
        print(f"  CPU while polled every 500 ms: {load_quiet_phase.line()}")
        columns = [
            ("idle", idle),
            ("idle/500", quiet),
            ("parallel", loaded),
            ("par/500", loaded_quiet),
        ]
        tables = [step_table(zun.steps, runs) for _, runs in columns]
        print("\nsteps of an API create (median ms; /500: polled every 500 ms)")
        print(f"  {'':<40}" + "".join(f"{name:>10}" for name, _ in columns))
        posts = [med(r["answered"] - r["sent"] for r in runs) * 1000 for _, runs in columns]
        print(f"  {'client: POST -> 202':<40}" + "".join(f"{v:10.1f}" for v in posts))
        for name in STEP_ORDER:
            print(
                f"  {name:<40}"
                + "".join(f"{table.get(name, float('nan')):10.1f}" for table in tables)
            )
        print(
            f"  {'raw (Zun args + network): docker create':<40}"
            f"{med(c for c, _ in raw_steps) * 1000:10.1f}"
        )
        print(
            f"  {'raw (Zun args + network): docker start':<40}"
            f"{med(s for _, s in raw_steps) * 1000:10.1f}"
        )
    finally:
        for ident in api_ids:
            try:
                zun.delete(ident)
            except Exception:  # noqa: BLE001 - best effort, the reaper below catches the rest
                pass
        zun.stop()
        for container in client.containers.list(
            all=True, filters={"label": f"zun.host={zun.host}"}
        ):
            container.remove(force=True)
        for ident in raw_ids:
            try:
                client.api.remove_container(ident, force=True)
            except docker.errors.NotFound:
                pass
        client.networks.get(raw_net).remove()
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
