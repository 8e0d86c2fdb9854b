"""Create-to-Running in the distributed mode, with the API at a lower CPU priority or not.

    python benchmarks/create_distributed.py [--runs 4] [--parallel-rounds 8] [--parallel 10]
        [--poll 0.02] [--api-nice N] [--api-workers 1]

``create_steps.py`` measures ``zun-all``, where the API and the node share a process: ten
clients polling every 20 ms cost it about a third of a CPU that Docker's parallel starts
need, and the process cannot be lowered without lowering the node's own steps too. Here the
API is a process of its own, as in a distributed deployment, on this machine:

* a MariaDB database created and migrated for the run (``zun_bench_<tag>``) and a RabbitMQ
  virtual host of its own (``zun-bench-<tag>``), both removed at the end;
* ``zun-api`` (noauth, ``[api] workers`` = ``--api-workers``) and one ``zun-compute`` on the
  local Docker engine, each with its own configuration file and ``[DEFAULT] host``, each in
  a session (so a scheduling autogroup) of its own: zun-compute at nice 0, zun-api at
  ``--api-nice`` (the autogroup's nice, what a service manager's priority amounts to).
  Both run through ``benchmarks/_distributed_probe.py``, which times each step of a create
  from the outside as ``_create_probe.py`` does for zun-all.

Then, as ``create_steps.py`` does:

1. **Idle**, ``--runs`` rounds (the order turns each round; each container removed, untimed,
   before the next) of one API create polled with ``GET /v1/containers/<uuid>`` every
   ``--poll`` seconds (client-visible create-to-Running), one raw docker-py create + start
   with Zun's arguments on a user-defined bridge with a resident container
   (``create_steps.raw_once``), and one API create polled every 500 ms.
2. **Under load**, ``--parallel-rounds`` rounds (the order turns each round; the containers
   of a phase removed before the next) of ``--parallel`` API creates at once polled every
   ``--poll``, the same polled every 500 ms, and ``--parallel`` raw creates at once
   (``create_steps.raw_parallel``).

"Running written" is the moment zun-compute's status write (the create action's finish,
in the same transaction) returned, from the probe: the action's ``finish_time`` is stored
to the second on MariaDB. Printed: client / raw, fast / slow polling (Running written),
POST -> 202, the CPU zun-api and zun-compute used in each phase (utime + stime over wall
time, zun-api's worker processes included; MariaDB's, RabbitMQ's and dockerd's beside them,
which the machine's other users share) and the steps of the creates (medians). A create
that fails or is not Running within 60 s is printed and left out of the figures. Every
container, the database and the virtual host are removed afterwards, also on a failure or
Ctrl-C. Ratios, not absolute times, are the result: the machine is shared.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
import pymysql
from create_steps import (
    STEP_ORDER,
    ZunClient,
    _free_port,
    parallel,
    raw_once,
    raw_parallel,
    resident_network,
    step_table,
    tree_cpu,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from multinode.cluster import (  # noqa: E402
    AGENT_READY,
    MARIADB,
    MARIADB_URL,
    RABBIT,
    drop_database,
    drop_vhost,
    merge,
    render,
)

from zun.db import migration  # noqa: E402

PROBE = Path(__file__).with_name("_distributed_probe.py")
SLOW_POLL = 0.5
# A create not Running by then is counted as failed (a parallel create takes a few seconds).
CREATE_TIMEOUT = 60


def _own_session(nice: int) -> Callable[[], None]:
    """What a service manager does (a service alone in its session, so in its own scheduling
    autogroup), with that autogroup's nice value set to ``nice``: runs in the child."""

    def lower() -> None:
        Path("/proc/self/autogroup").write_text(str(nice))

    return lower


# Shared daemons whose CPU is shown beside the services' (each phase's polls and creates also
# cost MariaDB and RabbitMQ, and the machine's other users share them): name -> process names.
DAEMONS = {"mariadb": ("mariadbd", "mysqld"), "rabbitmq": ("beam.smp",), "dockerd": ("dockerd",)}


def daemon_pids() -> dict[str, int]:
    """The pids of the DAEMONS that run (the first process of each name)."""
    found: dict[str, int] = {}
    for proc in sorted(Path("/proc").iterdir(), key=lambda p: p.name):
        if not proc.name.isdigit():
            continue
        try:
            comm = (proc / "comm").read_text().strip()
        except OSError:
            continue
        for name, comms in DAEMONS.items():
            if comm in comms and name not in found:
                found[name] = int(proc.name)
    return {name: found[name] for name in DAEMONS if name in found}


class Phase:
    """Wall time and CPU seconds of each service over the times it was entered."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.cpu = dict.fromkeys(pids, 0.0)
        self.client = self.wall = 0.0

    def __enter__(self) -> Phase:
        self._s = {name: tree_cpu(pid) for name, pid in self.pids.items()}
        self._c, self._w = time.process_time(), time.monotonic()
        return self

    def __exit__(self, *_exc: object) -> None:
        for name, pid in self.pids.items():
            self.cpu[name] += tree_cpu(pid) - self._s[name]
        self.client += time.process_time() - self._c
        self.wall += time.monotonic() - self._w

    def line(self) -> str:
        if not self.wall:
            return "not measured"
        return ", ".join(
            [f"{name} {cpu / self.wall * 100:5.1f}%" for name, cpu in self.cpu.items()]
            + [f"this client {self.client / self.wall * 100:5.1f}% of a CPU"]
        )


class Distributed(ZunClient):
    """zun-api and one zun-compute on a database and a virtual host of their own."""

    def __init__(self, base: Path, api_workers: int, api_nice: int) -> None:
        self.base = base
        self.tag = uuid.uuid4().hex[:8]
        self.db_name = f"zun_bench_{self.tag}"
        self.vhost = f"zun-bench-{self.tag}"
        self.host = f"bench-{self.tag}"  # the node's; the engine containers carry it
        self.port = _free_port()
        self.api_workers, self.api_nice = api_workers, api_nice
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.logs: dict[str, Path] = {}
        self.steps: dict[str, Path] = {}
        self._db_made = self._vhost_made = False

    def common_conf(self) -> dict[str, dict[str, Any]]:
        return {
            "DEFAULT": {
                "transport_url": f"{RABBIT}/{self.vhost}",
                "my_ip": "127.0.0.1",
                "state_path": str(self.base / "state"),
            },
            "database": {"connection": f"{MARIADB_URL}/{self.db_name}"},
            "api": {"auth_strategy": "noauth", "host_ip": "127.0.0.1", "port": self.port},
            "network": {"driver": "docker"},
        }

    def start(self) -> None:
        conn = pymysql.connect(**MARIADB, autocommit=True)
        try:
            with conn.cursor() as cur:
                cur.execute(f"CREATE DATABASE `{self.db_name}` CHARACTER SET utf8mb4")
        finally:
            conn.close()
        self._db_made = True
        migration.upgrade("head", url=f"{MARIADB_URL}/{self.db_name}")
        for args in (
            ["add_vhost", self.vhost],
            ["set_permissions", "-p", self.vhost, "guest", ".*", ".*", ".*"],
        ):
            subprocess.run(
                ["rabbitmqctl", "-q", *args], check=True, capture_output=True, timeout=60
            )
            self._vhost_made = True
        self._spawn("compute", merge(self.common_conf(), {"DEFAULT": {"host": self.host}}), 0)
        self._spawn(
            "api",
            merge(
                self.common_conf(),
                {"DEFAULT": {"host": f"{self.host}-api"}, "api": {"workers": self.api_workers}},
            ),
            self.api_nice,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise SystemExit(f"zun-{name} exited; see {self.logs[name]}")
            try:
                status, body = self.request("GET", "/v1/hosts")
                if (
                    status == 200
                    and any(h["hostname"] == self.host for h in body["hosts"])
                    and (AGENT_READY + self.host).encode() in self.logs["compute"].read_bytes()
                ):
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise SystemExit("zun-api and zun-compute did not become ready")

    def _spawn(self, name: str, conf: dict[str, dict[str, Any]], nice: int) -> None:
        config = self.base / f"zun-{name}.conf"
        config.write_text(render(conf))
        self.logs[name] = self.base / f"zun-{name}.log"
        self.steps[name] = self.base / f"steps-{name}.jsonl"
        with self.logs[name].open("wb") as log:
            self.procs[name] = subprocess.Popen(
                [sys.executable, str(PROBE), name, "--config-file", str(config)],
                stdout=subprocess.DEVNULL,
                stderr=log,
                env={**os.environ, "ZUN_BENCH_STEPS": str(self.steps[name])},
                start_new_session=True,
                preexec_fn=_own_session(nice),
            )

    def pids(self) -> dict[str, int]:
        return {f"zun-{name}": self.procs[name].pid for name in ("api", "compute")}

    def nice_of(self, name: str) -> str:
        return Path(f"/proc/{self.procs[name].pid}/autogroup").read_text().strip()

    def steps_file(self) -> Path:
        """Both services' step records in one file (create_steps.step_table reads one)."""
        both = self.base / "steps.jsonl"
        both.write_text("".join(p.read_text() for p in self.steps.values() if p.exists()))
        return both

    def delete_all(self, idents: list[str]) -> None:
        """Forced deletes of ``idents``, sent together, then waited for (404)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            for ident in idents:
                self.request("DELETE", f"/v1/containers/{ident}?force=true", conn=conn)
            deadline = time.monotonic() + 120
            pending = list(idents)
            while pending and time.monotonic() < deadline:
                pending = [
                    i
                    for i in pending
                    if self.request("GET", f"/v1/containers/{i}", conn=conn)[0] != 404
                ]
                if pending:
                    time.sleep(0.1)
        finally:
            conn.close()

    def sweep(self, keep: list[str]) -> None:
        """Delete every container the API lists but ``keep`` (those of failed creates)."""
        _, body = self.request("GET", "/v1/containers?all_projects=1")
        self.delete_all([c["uuid"] for c in body["containers"] if c["uuid"] not in keep])

    def stop(self) -> None:
        """Stop the services, drop the virtual host and the database; each step runs."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        errors = []
        if self._vhost_made:
            try:
                drop_vhost(self.vhost)
            except Exception as exc:  # noqa: BLE001 - keep tearing down; reported below
                errors.append(f"vhost {self.vhost}: {exc}")
        if self._db_made:
            try:
                drop_database(self.db_name)
            except Exception as exc:  # noqa: BLE001
                errors.append(f"database {self.db_name}: {exc}")
        if errors:
            print("teardown: " + "; ".join(errors), file=sys.stderr)


def _p50_ms(values: Any) -> float:
    return statistics.median(values) * 1000


def _interrupted(_signum: int, _frame: Any) -> None:
    """SIGTERM: tear down as on Ctrl-C."""
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4, help="idle rounds")
    parser.add_argument("--parallel", type=int, default=10)
    parser.add_argument(
        "--parallel-rounds",
        type=int,
        default=8,
        help="rounds of the parallel phases (fast poll, slow poll, raw), in an "
        "order that turns each round",
    )
    parser.add_argument("--poll", type=float, default=0.02)
    parser.add_argument(
        "--api-nice",
        type=int,
        default=0,
        metavar="N",
        help="nice value of zun-api's session autogroup (zun-compute: 0)",
    )
    parser.add_argument("--api-workers", type=int, default=1)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _interrupted)

    client = docker.from_env(timeout=300)
    client.images.get("busybox:latest")  # scripts/test-images.sh builds it
    base = Path(tempfile.mkdtemp(prefix="zun-bench-dist-"))
    zun = Distributed(base, args.api_workers, args.api_nice)
    raw_net: str | None = None
    resident = None
    raw_ids: list[str] = []
    api_ids: list[str] = []
    load0 = os.getloadavg()
    try:
        raw_net, resident = resident_network(client)
        zun.start()
        nices = {name: zun.nice_of(name) for name in ("api", "compute")}
        pids = {**zun.pids(), **daemon_pids()}

        keeper = zun.create_and_wait(0.1)  # the project network exists from here on
        api_ids.append(keeper["uuid"])
        api_ids.append(zun.create_and_wait(args.poll)["uuid"])  # warm-up
        raw_ids.append(raw_once(client.api, raw_net, True)[1])

        idle: list[dict[str, Any]] = []
        quiet: list[dict[str, Any]] = []
        raw_t: list[float] = []
        idle_fast, idle_slow, idle_raw = Phase(pids), Phase(pids), Phase(pids)

        failed: list[str] = []

        def create(poll: float) -> dict[str, Any] | None:
            """One API create; None (and the reason in ``failed``) when it failed."""
            try:
                return zun.create_and_wait(poll, CREATE_TIMEOUT)
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - counted and printed
                failed.append(f"{type(exc).__name__}: {exc}")
                return None

        def idle_api(poll: float, runs: list[dict[str, Any]], phase: Phase) -> None:
            with phase:
                run = create(poll)
            if run is None:
                zun.sweep(api_ids[:2])
                return
            runs.append(run)
            zun.delete_all([run["uuid"]])

        def idle_raw_once() -> None:
            with idle_raw:
                elapsed, ident = raw_once(client.api, raw_net, True)
            raw_t.append(elapsed)
            client.api.remove_container(ident, force=True)

        idle_steps = [
            lambda: idle_api(args.poll, idle, idle_fast),
            idle_raw_once,
            lambda: idle_api(SLOW_POLL, quiet, idle_slow),
        ]
        for i in range(args.runs):
            for step in idle_steps[i % 3 :] + idle_steps[: i % 3]:
                step()

        loaded: list[list[dict[str, Any]]] = []
        loaded_quiet: list[list[dict[str, Any]]] = []
        raw_loaded: list[list[float]] = []
        par_fast, par_slow, par_raw = Phase(pids), Phase(pids), Phase(pids)

        def api_round(poll: float, rounds: list[list[dict[str, Any]]], phase: Phase) -> None:
            with phase:
                made = [r for r in parallel(lambda: create(poll), args.parallel) if r]
            rounds.append(made)
            # Untimed, before the next phase; the containers of failed creates too.
            if len(made) < args.parallel:
                zun.sweep(api_ids[:2])
            else:
                zun.delete_all([r["uuid"] for r in made])

        def raw_round() -> None:
            with par_raw:
                made = raw_parallel(raw_net, args.parallel)
            raw_loaded.append([t for t, _ in made])
            raw_ids.extend(ident for _, ident in made)
            for _, ident in made:
                client.api.remove_container(ident, force=True)
            del raw_ids[-len(made) :]

        rounds = [
            lambda: api_round(args.poll, loaded, par_fast),
            lambda: api_round(SLOW_POLL, loaded_quiet, par_slow),
            raw_round,
        ]
        for i in range(args.parallel_rounds):
            for phase in rounds[i % 3 :] + rounds[: i % 3]:
                phase()
        load1 = os.getloadavg()

        # Running written: the end of the node's status write (probe), not the action's
        # finish_time (whole seconds on MariaDB).
        written: dict[str, float] = {}
        for line in zun.steps["compute"].read_text().splitlines():
            rec = json.loads(line)
            if rec["step"] == "node: status write":
                written.setdefault(rec["uuid"], rec["end"])
        for run in [*idle, *quiet, *(r for rs in loaded + loaded_quiet for r in rs)]:
            run["finished"] = written[run["uuid"]]

        def flat(rounds_: list[list[Any]]) -> list[Any]:
            return [x for r in rounds_ for x in r]

        client_idle = _p50_ms(r["seen"] - r["sent"] for r in idle)
        written_idle = _p50_ms(r["finished"] - r["sent"] for r in idle)
        written_quiet = _p50_ms(r["finished"] - r["sent"] for r in quiet)
        raw_idle = _p50_ms(raw_t)
        client_load = _p50_ms(r["seen"] - r["sent"] for r in flat(loaded))
        written_load = _p50_ms(r["finished"] - r["sent"] for r in flat(loaded))
        written_load_quiet = _p50_ms(r["finished"] - r["sent"] for r in flat(loaded_quiet))
        raw_load = _p50_ms(flat(raw_loaded))
        post = {
            name: _p50_ms(r["answered"] - r["sent"] for r in runs)
            for name, runs in (
                ("idle", idle),
                ("idle/500", quiet),
                ("parallel", flat(loaded)),
                ("par/500", flat(loaded_quiet)),
            )
        }

        def per_round(rounds_: list[list[Any]], key: Any) -> str:
            return ", ".join(f"{_p50_ms(key(x) for x in r):.0f}" if r else "-" for r in rounds_)

        poll_ms = f"{args.poll * 1000:.0f} ms"
        print(
            f"load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} at start, "
            f"{load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} at the end, on "
            f"{os.cpu_count()} CPUs; {args.runs} idle rounds, {args.parallel_rounds} x "
            f"{args.parallel} parallel; zun-api workers {args.api_workers}, autogroup "
            f"{nices['api']}; zun-compute autogroup {nices['compute']}"
        )
        if failed:
            print(f"FAILED creates (left out of the figures): {len(failed)}")
            for reason in failed:
                print(f"  {reason[:300]}")
        print("\nidle (medians):")
        print(f"  API, client polling every {poll_ms:<8}        {client_idle:8.1f} ms")
        print(f"  API, Running written                      {written_idle:8.1f} ms")
        print(f"  API, polled every 500 ms, Running written  {written_quiet:8.1f} ms")
        print(f"  raw docker-py, Zun's arguments + network  {raw_idle:8.1f} ms")
        print(
            f"  POST -> 202 (fast / slow poll)            {post['idle']:8.1f} / "
            f"{post['idle/500']:.1f} ms"
        )
        print(
            f"  client / raw                              {client_idle / raw_idle:8.2f} "
            "(target <= 1.15)"
        )
        print(
            f"  fast poll / slow poll (Running written)   {written_idle / written_quiet:8.2f}"
            " (1.0: polling does not slow the create)"
        )
        print(f"  CPU, polled every {poll_ms}: {idle_fast.line()}")
        print(f"  CPU, polled every 500 ms: {idle_slow.line()}")
        print(f"  CPU, raw creates: {idle_raw.line()}")
        print(f"\n{args.parallel} parallel (p50 over all rounds; per round in brackets):")
        print(
            f"  API, client-visible                       {client_load:8.1f} ms  "
            f"({per_round(loaded, lambda r: r['seen'] - r['sent'])})"
        )
        print(
            f"  API, Running written                      {written_load:8.1f} ms  "
            f"({per_round(loaded, lambda r: r['finished'] - r['sent'])})"
        )
        print(
            f"  API, polled every 500 ms, Running written  {written_load_quiet:8.1f} ms  "
            f"({per_round(loaded_quiet, lambda r: r['finished'] - r['sent'])})"
        )
        print(
            f"  raw docker-py, Zun's arguments + network  {raw_load:8.1f} ms  "
            f"({per_round(raw_loaded, lambda t: t)})"
        )
        print(
            f"  POST -> 202 (fast / slow poll)            {post['parallel']:8.1f} / "
            f"{post['par/500']:.1f} ms"
        )
        print(
            f"  client / raw                              {client_load / raw_load:8.2f} "
            "(target <= 1.3)"
        )
        print(
            f"  fast poll / slow poll (Running written)   {written_load / written_load_quiet:8.2f}"
        )
        print(f"  CPU, polled every {poll_ms}: {par_fast.line()}")
        print(f"  CPU, polled every 500 ms: {par_slow.line()}")
        print(f"  CPU, raw creates: {par_raw.line()}")
        columns = [
            ("idle", idle),
            ("idle/500", quiet),
            ("parallel", flat(loaded)),
            ("par/500", flat(loaded_quiet)),
        ]
        steps_file = zun.steps_file()
        tables = [step_table(steps_file, runs) for _, runs in columns]
        print("\nsteps of an API create (median ms; /500: polled every 500 ms)")
        print(f"  {'':<40}" + "".join(f"{name:>10}" for name, _ in columns))
        print(f"  {'client: POST -> 202':<40}" + "".join(f"{post[n]:10.1f}" for n, _ in columns))
        for name in STEP_ORDER:
            print(
                f"  {name:<40}"
                + "".join(f"{table.get(name, float('nan')):10.1f}" for table in tables)
            )
    finally:
        if zun.procs.get("api") is not None and zun.procs["api"].poll() is None:
            try:
                zun.delete_all(api_ids)
            except Exception:  # noqa: BLE001 - best effort; the sweep below follows
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
        if resident is not None:
            resident.remove(force=True)
        if raw_net is not None:
            client.networks.get(raw_net).remove()
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
