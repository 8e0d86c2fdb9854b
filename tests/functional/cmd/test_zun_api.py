"""zun-api as a real process: [api] workers are processes sharing one port; stop is graceful;
one worker at a time runs the node monitor's passes (the lease)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _children(pid: int) -> set[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return {int(p) for p in text.split()}


def _get_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status == 200
    except OSError:
        return False


class ZunApi:
    def __init__(self, base: Path, workers: int, extra: str = "") -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = base / "zun-api.conf"
        config.write_text(
            "[DEFAULT]\ntransport_url = fake://\n"
            f"[database]\nconnection = sqlite:///{base / 'zun.sqlite'}\n"
            f"[api]\nauth_strategy = noauth\nhost_ip = 127.0.0.1\nport = {self.port}\n"
            f"workers = {workers}\n{extra}"
        )
        subprocess.run(
            [str(BIN / "zun-db-manage"), "--config-file", str(config), "upgrade"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        self.log = base / "zun-api.log"
        self.proc = subprocess.Popen(
            [str(BIN / "zun-api"), "--config-file", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("wb"),
        )

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"zun-api exited: {self.log.read_text()[-3000:]}")
            if _get_ok(self.url + "/v1/services"):
                return
            time.sleep(0.2)
        raise AssertionError("zun-api did not answer in time")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("zun-api did not stop within 60 s of SIGTERM") from None
        return self.proc.returncode


@pytest.fixture
def zun_api(tmp_path: Path):
    server = ZunApi(tmp_path, workers=2)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def _wait_for(predicate, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def test_workers_are_processes_on_one_port(zun_api: ZunApi) -> None:
    children = _children(zun_api.proc.pid)
    assert len(children) == 2
    # Each child listens on the inherited socket: both hold the port open.
    for child in children:
        links = {os.readlink(f"/proc/{child}/fd/{fd}") for fd in os.listdir(f"/proc/{child}/fd")}
        assert any(link.startswith("socket:") for link in links)
    assert all(_get_ok(zun_api.url + "/v1/services") for _ in range(10))


def test_a_worker_that_dies_is_replaced(zun_api: ZunApi) -> None:
    before = _children(zun_api.proc.pid)
    victim = min(before)
    os.kill(victim, signal.SIGKILL)
    assert _wait_for(lambda: len(_children(zun_api.proc.pid) - {victim}) == 2)
    assert victim not in _children(zun_api.proc.pid)
    assert _wait_for(lambda: _get_ok(zun_api.url + "/v1/services"))


def test_sigterm_stops_every_worker_and_exits_zero(zun_api: ZunApi) -> None:
    children = _children(zun_api.proc.pid)
    assert zun_api.stop() == 0
    for child in children:
        assert (
            not Path(f"/proc/{child}").exists()
            or "zombie" in Path(f"/proc/{child}/status").read_text()
        )
    assert "Traceback" not in zun_api.log.read_text()


def test_workers_stop_when_the_parent_is_killed(zun_api: ZunApi) -> None:
    children = _children(zun_api.proc.pid)
    zun_api.proc.kill()
    zun_api.proc.wait()

    def alive(pid: int) -> bool:
        try:
            return "zombie" not in Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            return False

    def all_gone() -> bool:
        return not any(alive(pid) for pid in children)

    assert _wait_for(all_gone, timeout=60), "orphan workers kept running"


def _lease_holder(db: Path) -> str | None:
    import sqlite3

    with contextlib.closing(sqlite3.connect(db)) as conn:
        row = conn.execute("SELECT holder FROM zun_lease WHERE name = 'node-monitor'").fetchone()
    return row[0] if row else None


def test_one_worker_at_a_time_runs_the_node_monitor(tmp_path: Path) -> None:
    server = ZunApi(tmp_path, workers=2, extra="[compute]\nnode_monitor_interval = 1\n")
    try:
        server.wait_ready()
        children = _children(server.proc.pid)
        assert _wait_for(lambda: _lease_holder(tmp_path / "zun.sqlite") is not None)
        time.sleep(3)  # three passes of each worker: the lease stays where it is
        leading = [
            line
            for line in server.log.read_text().splitlines()
            if "holds the lease and runs the passes" in line
        ]
        assert len(leading) == 1, leading
        holder = _lease_holder(tmp_path / "zun.sqlite")
        leader = int(holder.split(":")[1])
        assert leader in children
        # The leader dies without giving the lease up: another worker takes over once it
        # expires (max(15 s, 3 x interval)).
        os.kill(leader, signal.SIGKILL)
        assert _wait_for(
            lambda: (
                (_lease_holder(tmp_path / "zun.sqlite") or "").split(":")[1]
                not in ("", str(leader))
            ),
            timeout=40,
        )
        leading = [
            line
            for line in server.log.read_text().splitlines()
            if "holds the lease and runs the passes" in line
        ]
        assert len(leading) == 2, leading
    finally:
        server.stop()
    assert "Traceback" not in server.log.read_text()
