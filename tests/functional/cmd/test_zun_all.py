"""zun-all as a real process: versions, identity, single instance per state dir, clean stop."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from zun.service import cpu_weight

ZUN_ALL = Path(sys.executable).parent / "zun-all"

pytestmark = pytest.mark.docker


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict, dict]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), json.loads(err.read() or b"null")


class Running:
    def __init__(self, state_dir: Path, port: int, args: list[str] | None = None) -> None:
        self.state_dir, self.port = state_dir, port
        self.log = state_dir.parent / f"zun-all-{port}.log"
        if args is None:
            args = [
                "--state-dir",
                str(state_dir),
                "--port",
                str(port),
                "--wsproxy-port",
                str(_free_port()),
            ]
        self.proc = subprocess.Popen(
            [str(ZUN_ALL), *args], stdout=subprocess.DEVNULL, stderr=self.log.open("wb")
        )
        self.url = f"http://127.0.0.1:{port}"

    @classmethod
    def from_config(cls, base: Path, name: str) -> Running:
        """A zun-all given only a configuration file, which sets its state_path and ports."""
        state, port = base / f"state-{name}", _free_port()
        config = base / f"{name}.conf"
        config.write_text(
            f"[DEFAULT]\nstate_path = {state}\nhost = zun-all-test-{name}-{port}\n"
            f"[api]\nport = {port}\n"
            f"[websocket_proxy]\nwsproxy_port = {_free_port()}\n"
        )
        return cls(state, port, ["--config-file", str(config)])

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"zun-all exited: {self.log.read_text()[-3000:]}")
            try:
                if _get(self.url + "/")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError("zun-all did not answer in time")

    def server_pid(self) -> int:
        """The process that serves: zun-all forks into a session of its own (``--cpu-nice``)
        and what it started as stays behind to pass signals on."""
        pid = self.proc.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return int(children[0]) if children else pid

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("zun-all did not stop within 30 s of SIGTERM") from None
        return self.proc.returncode


@pytest.fixture
def zun_all(tmp_path: Path):
    server = Running(tmp_path / "state", _free_port())
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def test_versions_document(zun_all: Running) -> None:
    status, headers, body = _get(zun_all.url + "/")
    assert status == 200
    assert body["versions"][0]["max_version"] == "1.41"
    assert body["versions"][0]["min_version"] == "1.1"
    assert body["versions"][0]["status"] == "CURRENT"
    assert headers["X-Openstack-Request-Id"].startswith("req-")


def test_v1_document_echoes_version(zun_all: Running) -> None:
    status, headers, body = _get(
        zun_all.url + "/v1/", {"OpenStack-API-Version": "container latest"}
    )
    assert status == 200
    assert headers["Openstack-Api-Version"] == "container 1.41"
    assert body["containers"][0]["href"] == zun_all.url + "/v1/containers/"


def test_second_instance_on_same_state_dir_is_refused(zun_all: Running) -> None:
    result = subprocess.run(
        [
            str(ZUN_ALL),
            "--state-dir",
            str(zun_all.state_dir),
            "--port",
            str(_free_port()),
            "--wsproxy-port",
            str(_free_port()),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert "already running on state directory" in result.stderr
    assert f"pid {zun_all.server_pid()}" in result.stderr


def test_two_instances_with_their_own_config_files_run_side_by_side(tmp_path: Path) -> None:
    """Without --state-dir, [DEFAULT]/state_path is the state directory: database and lock."""
    first = Running.from_config(tmp_path, "one")
    second = Running.from_config(tmp_path, "two")
    try:
        first.wait_ready()
        second.wait_ready()
        for server in (first, second):
            assert (server.state_dir / "zun.sqlite").exists()
            assert (server.state_dir / "zun-all.lock").read_text() == str(server.server_pid())
    finally:
        assert first.stop() == 0
        assert second.stop() == 0


def test_state_dir_option_wins_over_the_config_file(tmp_path: Path) -> None:
    port = _free_port()
    config = tmp_path / "zun.conf"
    config.write_text(f"[DEFAULT]\nstate_path = {tmp_path / 'from-file'}\n")
    server = Running(
        tmp_path / "from-option",
        port,
        [
            "--config-file",
            str(config),
            "--state-dir",
            str(tmp_path / "from-option"),
            "--port",
            str(port),
            "--wsproxy-port",
            str(_free_port()),
        ],
    )
    try:
        server.wait_ready()
        assert (tmp_path / "from-option" / "zun.sqlite").exists()
        assert not (tmp_path / "from-file").exists()
    finally:
        assert server.stop() == 0


def test_logs_carry_request_ids(zun_all: Running) -> None:
    _, headers, _ = _get(zun_all.url + "/v1")
    request_id = headers["X-Openstack-Request-Id"]
    deadline = time.monotonic() + 5
    while request_id not in zun_all.log.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert f"[{request_id}]" in zun_all.log.read_text()


def test_sigterm_stops_cleanly_and_frees_the_state_dir(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = Running(state, _free_port())
    first.wait_ready()
    assert first.stop() == 0
    log = first.log.read_text()
    assert "Stopped" in log
    assert "Threads still alive" not in log
    assert "Traceback" not in log
    second = Running(state, _free_port())
    try:
        second.wait_ready()
    finally:
        assert second.stop() == 0
    assert (state / "zun.sqlite").exists()


def test_heartbeat_registers_the_compute_service(zun_all: Running) -> None:
    import sqlite3

    deadline = time.monotonic() + 10
    rows: list = []
    while time.monotonic() < deadline and not rows:
        with sqlite3.connect(zun_all.state_dir / "zun.sqlite") as conn:
            rows = conn.execute("SELECT host, `binary`, report_count FROM zun_service").fetchall()
        time.sleep(0.2)
    assert rows and rows[0][1] == "zun-compute" and rows[0][2] >= 1
    assert os.environ.get("ZUN_TEST_SENTINEL") is None


def test_openstack_cli_lists_services_without_keystone(zun_all: Running) -> None:
    openstack = Path(sys.executable).parent / "openstack"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    deadline = time.monotonic() + 15
    while True:
        result = subprocess.run(
            [
                str(openstack),
                "--os-auth-type",
                "none",
                "--os-endpoint",
                zun_all.url + "/v1",
                "appcontainer",
                "service",
                "list",
                "-f",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert result.returncode == 0, result.stderr
        services = json.loads(result.stdout)
        if services or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert [s["Binary"] for s in services] == ["zun-compute"]
    assert services[0]["State"] == "up"


def test_log_file_option(tmp_path: Path) -> None:
    log_file = tmp_path / "zun.log"
    state = tmp_path / "state"
    port = _free_port()
    proc = subprocess.Popen(
        [
            str(ZUN_ALL),
            "--state-dir",
            str(state),
            "--port",
            str(port),
            "--wsproxy-port",
            str(_free_port()),
            "--log-file",
            str(log_file),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if _get(f"http://127.0.0.1:{port}/")[0] == 200:
                    break
            except OSError:
                time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0
    text = log_file.read_text()
    assert "zun-all ready on" in text and "Stopped" in text
    assert b"zun-all ready on" not in stderr


def _nice_and_group(pid: int) -> tuple[int, str]:
    """The nice value and the autogroup's nice ("" in the kernel's default autogroup, which a
    process started outside any session of its own, such as a CI runner's, is in)."""
    nice = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])
    group = Path(f"/proc/{pid}/autogroup").read_text().split()
    return nice, group[-1] if group else ""


def test_serves_from_a_session_of_its_own_at_cpu_nice_10(zun_all: Running) -> None:
    """Started from a shell, zun-all's service yields the CPU to Docker and the containers: its
    own session (so its own scheduling autogroup) at nice 10. The process started stays in the
    caller's session, at the caller's priority, and its SIGTERM stops the service (the fixture's
    stop, and the lock and stderr tests above, go through it)."""
    server = zun_all.server_pid()
    callers = _nice_and_group(os.getpid())
    if cpu_weight.cpu_cgroup() is not None or not cpu_weight.autogroups_enabled():
        # a nice value alone then weighs against the other tasks (of the cgroup)
        assert server == zun_all.proc.pid and _nice_and_group(server)[0] == 10
        return
    assert server != zun_all.proc.pid
    assert os.getsid(server) == server
    assert os.getsid(zun_all.proc.pid) == os.getsid(0)
    assert _nice_and_group(server) == (10, "10")
    assert _nice_and_group(zun_all.proc.pid) == callers
    assert "CPU weight: nice 10, own session's autogroup at nice 10, forked from pid " in (
        zun_all.log.read_text()
    )


def test_cpu_nice_0_runs_as_started(tmp_path: Path) -> None:
    port = _free_port()
    state = tmp_path / "state"
    args = ["--state-dir", str(state), "--port", str(port), "--wsproxy-port", str(_free_port())]
    server = Running(state, port, [*args, "--cpu-nice", "0"])
    try:
        server.wait_ready()
        assert server.server_pid() == server.proc.pid
        assert _nice_and_group(server.proc.pid) == _nice_and_group(os.getpid())
        assert (state / "zun-all.lock").read_text() == str(server.proc.pid)
        assert "CPU weight" not in server.log.read_text()
    finally:
        assert server.stop() == 0
