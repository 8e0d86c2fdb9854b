"""The console across machines, simulated with separate processes: zun-api, a zun-compute
with its own host name, and a zun-wsproxy with another one; RabbitMQ between them, MariaDB
for all. The proxy reaches the container through the node's relay (ticket over RPC), never
through a Docker API of its own."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e.support import wait_for
from functional.console.support import PtyProgram, free_port

pytestmark = [pytest.mark.e2e, pytest.mark.docker, pytest.mark.mariadb, pytest.mark.rabbitmq]

BIN = Path(sys.executable).parent
CLIENT = Path(__file__).resolve().parents[1] / "functional" / "console" / "zunclient_console.py"


class Cluster:
    def __init__(self, base: Path, db_url: str, rabbit_url: str) -> None:
        tag = uuid.uuid4().hex[:8]
        self.base = base
        self.node = f"node-{tag}"
        self.proxy_host = f"proxy-{tag}"
        self.api_port, self.ws_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.api_port}"
        self.common = (
            f"[DEFAULT]\ntransport_url = {rabbit_url}\nmy_ip = 127.0.0.1\n"
            f"[database]\nconnection = {db_url}\n"
            # A topic of its own: other tests may share the broker.
            f"[compute]\ntopic = zun-compute-{tag}\n"
            f"[api]\nauth_strategy = noauth\nhost_ip = 127.0.0.1\nport = {self.api_port}\n"
            f"[network]\ndriver = docker\n"
            f"[websocket_proxy]\nwsproxy_host = 127.0.0.1\nwsproxy_port = {self.ws_port}\n"
            f"base_url = ws://127.0.0.1:{self.ws_port}/\n"
        )
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def config(self, name: str, host: str) -> Path:
        path = self.base / f"{name}.conf"
        path.write_text(self.common.replace("[DEFAULT]\n", f"[DEFAULT]\nhost = {host}\n", 1))
        return path

    def log(self, name: str) -> Path:
        return self.base / f"{name}.log"

    def start(self) -> None:
        subprocess.run(
            [str(BIN / "zun-db-manage"), "--config-file", str(self.config("db", "db")), "upgrade"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        for name, host in (
            ("zun-compute", self.node),
            ("zun-api", "api-host"),
            ("zun-wsproxy", self.proxy_host),
        ):
            self.procs[name] = subprocess.Popen(
                [str(BIN / name), "--config-file", str(self.config(name, host))],
                stdout=subprocess.DEVNULL,
                stderr=self.log(name).open("wb"),
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise AssertionError(f"{name} exited: {self.log(name).read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(self.url + "/", timeout=2):
                    pass
                if self.node in {h.hostname for h in self.client().hosts.list()}:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError("the cluster did not come up: " + self.log("zun-api").read_text())

    def client(self) -> Any:
        from zunclient import client

        return client.Client("1.40", endpoint_override=self.url + "/v1", auth_token="notused")

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def cluster(
    tmp_path: Path,
    mariadb_url: Callable[[], str],
    rabbit_url: str,
    docker_client: Any,
    busybox_image: str,
) -> Iterator[Cluster]:
    nodes = Cluster(tmp_path, mariadb_url(), rabbit_url)
    try:
        nodes.start()
        yield nodes
    finally:
        nodes.stop()
        for container in docker_client.containers.list(
            ignore_removed=True, all=True, filters={"label": f"zun.host={nodes.node}"}
        ):
            container.remove(force=True)


def test_exec_and_attach_through_the_node_relay(cluster: Cluster, docker_client: Any) -> None:
    zun = cluster.client()
    created = zun.containers.run(
        image="busybox",
        command=["sh"],
        interactive=True,
        tty=True,
        image_pull_policy="ifnotpresent",
    )
    ct = wait_for(zun, created.uuid, "Running")
    assert ct.host == cluster.node
    term = PtyProgram(
        [sys.executable, str(CLIENT), cluster.url + "/v1", "exec", ct.uuid], rows=31, cols=101
    )
    try:
        exec_id = term.expect(r"exec-id: ([0-9a-f]{64})").group(1).decode()
        term.expect(f"connected to {ct.uuid}")
        term.prompt()
        mark = len(term.output)
        term.send(b"stty size\r")
        term.expect(r"\n31 101\r", start=mark)
        term.prompt()
        mark = len(term.output)
        term.resize(35, 110)
        time.sleep(1)
        term.send(b"stty size; echo far-$((8*8))\r")
        term.expect(r"\n35 110\r\nfar-64\r", start=mark)
        term.send(b"exit\r")
        term.expect("console-client-done")
        assert term.wait() == 0
    finally:
        term.close()
    info = docker_client.api.exec_inspect(exec_id)
    assert (info["Running"], info["ExitCode"]) == (False, 0)

    attach = PtyProgram([sys.executable, str(CLIENT), cluster.url + "/v1", "attach", ct.uuid])
    try:
        attach.expect(f"connected to {ct.uuid}")
        attach.send(b"\r")
        attach.prompt()
        attach.send(b"echo attached-far\r")
        attach.expect(r"\nattached-far\r")
        attach.send(b"exit\r")  # ends the container's shell: the console ends with it
        attach.expect("console-client-done")
    finally:
        attach.close()
    wait_for(zun, ct.uuid, "Stopped", timeout=30)

    # The node's relay carried both consoles; the proxy never opened the engine itself.
    compute_log = cluster.log("zun-compute").read_text()
    assert compute_log.count("Console relay: 127.0.0.1 opened") == 2
    assert "Console relay listening on 127.0.0.1:" in compute_log
    proxy_log = cluster.log("zun-wsproxy").read_text()
    assert proxy_log.count(f"Console exec of {ct.uuid} opened") == 1
    assert proxy_log.count(f"Console attach of {ct.uuid} opened") == 1
    assert [a.action for a in zun.actions.list(ct.uuid)].count("console") == 2
