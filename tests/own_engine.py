"""A Docker engine of a test's own, never the machine's: for daemon options and engine outages.

``OwnEngine(extra_args).start()`` runs ``dockerd`` in a network namespace it creates
(``ip netns add zun-own-<tag>``, entered with ``nsenter --net`` so dockerd keeps the host's /sys
and cgroup mounts), with its own data root (``/var/lib/zun-own-engine/<tag>``), exec root,
pidfile and socket (``/run/zun-own-<tag>/docker.sock``); it starts its own containerd. The
busybox test image is copied in with ``docker save | docker load``. ``stop()`` stops the daemon
(an outage); ``destroy()`` removes its containers, the daemon, the namespace and every file.
Imported as ``own_engine`` (tests/ is on sys.path).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import docker

DATA_ROOT = Path("/var/lib/zun-own-engine")


def available() -> str | None:
    """Why an own engine cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, dockerd)"
    for tool in ("dockerd", "nsenter", "ip"):
        if not shutil.which(tool):
            return f"needs {tool}"
    return None


def require() -> None:
    """Skip the test when no own engine can run here; fail instead under CI=true."""
    import pytest

    why = available()
    if why is None:
        return
    reason = f"a dedicated Docker engine {why}"
    if os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}:
        pytest.fail(f"{reason} (CI=true: required, not skipped)", pytrace=False)
    pytest.skip(reason)


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=120, check=check)


class OwnEngine:
    def __init__(self, extra_args: list[str] | None = None) -> None:
        self.tag = uuid.uuid4().hex[:8]
        self.netns = f"zun-own-{self.tag}"
        self.base = DATA_ROOT / self.tag
        self.run_dir = Path("/run") / self.netns
        self.socket = self.run_dir / "docker.sock"
        self.url = f"unix://{self.socket}"
        self.log = self.base / "dockerd.log"
        self.extra_args = list(extra_args or [])
        self._proc: subprocess.Popen[bytes] | None = None
        self._netns_made = False

    def start(self, timeout: float = 120) -> OwnEngine:
        self.base.mkdir(parents=True, exist_ok=True)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if not self._netns_made:
            _run("ip", "netns", "add", self.netns)
            self._netns_made = True
            _run("ip", "-n", self.netns, "link", "set", "lo", "up")
        with self.log.open("ab") as log:
            self._proc = subprocess.Popen(
                [
                    "nsenter",
                    f"--net=/var/run/netns/{self.netns}",
                    "dockerd",
                    *self.extra_args,
                    "--data-root",
                    str(self.base / "docker"),
                    "--exec-root",
                    str(self.run_dir / "exec"),
                    "--pidfile",
                    str(self.run_dir / "dockerd.pid"),
                    "-H",
                    self.url,
                ],
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while True:
            if self._proc.poll() is not None:
                raise RuntimeError(f"dockerd exited: {self.log.read_text()[-3000:]}")
            if self.answers():
                return self
            if time.monotonic() > deadline:
                raise RuntimeError(f"dockerd did not answer: {self.log.read_text()[-3000:]}")
            time.sleep(0.3)

    def answers(self) -> bool:
        try:
            client = docker.DockerClient(base_url=self.url, timeout=10)
        except docker.errors.DockerException:
            return False
        try:
            return bool(client.ping())
        except Exception:
            return False
        finally:
            client.close()

    def client(self) -> docker.DockerClient:
        return docker.DockerClient(base_url=self.url, timeout=60)

    def load_image(self, source: Any, name: str) -> None:
        """Copy image ``name`` from the engine ``source`` (a DockerClient)."""
        target = self.client()
        try:
            target.images.load(b"".join(source.images.get(name).save(named=name)))
        finally:
            target.close()

    def stop(self, timeout: float = 60) -> None:
        """Stop the daemon (SIGTERM, as an operator or a crash of the service would)."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            os.killpg(self._proc.pid, signal.SIGTERM)
            try:
                self._proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait(timeout=10)
        self._proc = None

    def destroy(self) -> None:
        if self._proc is not None and self.answers():
            client = self.client()
            try:
                for container in client.containers.list(ignore_removed=True, all=True):
                    container.remove(force=True, v=True)
            except Exception:
                pass
            finally:
                client.close()
        self.stop()
        if self._netns_made:
            _run("ip", "netns", "del", self.netns, check=False)
        # dockerd leaves layer mounts behind only if it died; unmount before removing.
        mounts = [
            line.split()[1]
            for line in Path("/proc/mounts").read_text().splitlines()
            if line.split()[1].startswith((str(self.base), str(self.run_dir)))
        ]
        for mount in sorted(mounts, reverse=True):
            _run("umount", "-l", mount, check=False)
        shutil.rmtree(self.base, ignore_errors=True)
        shutil.rmtree(self.run_dir, ignore_errors=True)
