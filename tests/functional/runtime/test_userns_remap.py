"""User-namespace remapping: Zun's containers on an engine started with ``--userns-remap``.

userns-remap is an option of dockerd, not of a container, so this test starts a dockerd of
its own (never the machine's): in a network namespace it creates (``ip netns add``, entered
with ``nsenter --net`` so dockerd keeps the host's /sys and cgroup mounts), with its own data
root, exec root and socket, and ``--userns-remap=default`` (dockerd makes the ``dockremap``
user and its /etc/subuid range on first use). The busybox test image is copied in with
``docker save | docker load``. Everything is removed afterwards.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import docker
import pytest
from conftest import service_unavailable

from zun.common import consts
from zun.runtime.docker import spec
from zun.runtime.docker.driver import DockerDriver

pytestmark = pytest.mark.docker

TAG = uuid.uuid4().hex[:8]
NETNS = f"zun-userns-{TAG}"
BASE = Path("/var/lib/zun-userns-test") / TAG
RUN_DIR = Path("/run") / NETNS


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=120, check=check)


@pytest.fixture(scope="module")
def remapped_engine(docker_client: Any, busybox_image: str) -> Iterator[str]:
    """The unix socket URL of a dockerd with --userns-remap=default in its own netns."""
    if os.geteuid() != 0 or not shutil.which("dockerd") or not shutil.which("nsenter"):
        service_unavailable("needs root, dockerd and nsenter for a dedicated engine")
    socket = RUN_DIR / "docker.sock"
    url = f"unix://{socket}"
    log_path = BASE / "dockerd.log"
    BASE.mkdir(parents=True, exist_ok=True)
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    _run("ip", "netns", "add", NETNS)
    proc: subprocess.Popen[bytes] | None = None
    try:
        _run("ip", "-n", NETNS, "link", "set", "lo", "up")
        with log_path.open("ab") as log:
            proc = subprocess.Popen(
                ["nsenter", f"--net=/var/run/netns/{NETNS}", "dockerd",
                 "--userns-remap=default", "--data-root", str(BASE / "docker"),
                 "--exec-root", str(RUN_DIR / "exec"), "--pidfile", str(RUN_DIR / "dockerd.pid"),
                 "-H", url],
                stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"dockerd exited: {log_path.read_text()[-3000:]}")
            try:
                client = docker.DockerClient(base_url=url, timeout=60)
                if client.ping():
                    break
            except docker.errors.DockerException:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"dockerd did not answer: {log_path.read_text()[-3000:]}")
            time.sleep(0.3)
        image = docker_client.images.get(busybox_image)
        client.images.load(b"".join(image.save(named=True)))
        client.close()
        yield url
    finally:
        if proc is not None:
            try:
                client = docker.DockerClient(base_url=url, timeout=30)
                for container in client.containers.list(all=True):
                    container.remove(force=True, v=True)
                client.close()
            except Exception:
                pass
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        _run("ip", "netns", "del", NETNS, check=False)
        # dockerd leaves its layer mounts behind only if it died; unmount before removing.
        mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()
                  if line.split()[1].startswith(str(BASE))]
        for mount in sorted(mounts, reverse=True):
            _run("umount", "-l", mount, check=False)
        shutil.rmtree(BASE, ignore_errors=True)
        shutil.rmtree(RUN_DIR, ignore_errors=True)


def _row(busybox_image: str, **overrides: Any) -> SimpleNamespace:
    values: dict[str, Any] = {
        "uuid": str(uuid.uuid4()), "name": "zun-userns", "image": busybox_image,
        "command": ["sleep", "300"], "entrypoint": None, "cpu": None, "memory": None,
        "workdir": None, "labels": {}, "environment": {}, "restart_policy": None,
        "interactive": False, "tty": False, "hostname": None, "runtime": None,
        "auto_remove": False, "privileged": False, "healthcheck": None, "exposed_ports": None,
        "cpu_policy": None, "cpuset": None, "container_id": None, "status": consts.CREATING,
        "status_reason": None, "status_detail": None, "task_state": None,
    }
    values.update(overrides)
    return SimpleNamespace(**values)


def _uid_map(driver: DockerDriver, row: SimpleNamespace) -> list[list[int]]:
    pid = driver.client.inspect_container(row.container_id)["State"]["Pid"]
    text = Path(f"/proc/{pid}/uid_map").read_text()
    return [[int(x) for x in line.split()] for line in text.splitlines()]


def test_containers_run_remapped_and_privileged_ones_still_start(
        remapped_engine: str, busybox_image: str) -> None:
    driver = DockerDriver(api_url=remapped_engine)
    try:
        plain = _row(busybox_image)
        driver.create(plain, busybox_image, networking={"network_mode": "none"})
        driver.start(plain)
        # Root in the container is an unprivileged uid range on the node.
        mapping = _uid_map(driver, plain)
        assert mapping[0][0] == 0 and mapping[0][1] >= 65536, mapping
        assert driver.execute(plain, ["id", "-u"], timeout=30)["output"].strip() == "0"

        # An engine with userns-remap refuses to create a privileged container in the
        # remapped namespace ("privileged mode is incompatible with user namespaces");
        # Zun creates privileged containers in the host's (userns_mode=host). Not started:
        # this machine's root lacks CAP_SYS_RESOURCE, so no engine here can start a
        # privileged container at all.
        privileged = _row(busybox_image, privileged=True)
        driver.create(privileged, busybox_image, networking={"network_mode": "none"})
        assert driver.client.inspect_container(privileged.container_id)["HostConfig"][
            "UsernsMode"] == "host"
    finally:
        for row in locals().get("plain"), locals().get("privileged"):
            if row is not None and row.container_id:
                try:
                    driver.client.remove_container(spec.engine_name(row.uuid), force=True)
                except docker.errors.NotFound:
                    pass
        driver.close()
