"""End-to-end helpers (imported as ``e2e.support``; tests/ is on sys.path).

ZunAll        one zun-all process on its own state dir, API port, console port and host
              name, so that several runs on one machine share nothing but the engine;
              restartable, and killable with SIGKILL like a crash
wait_for      poll the API until a container settles (no task, wanted status)
wait_gone     poll until the API answers 404 for a container and the engine has none of it
delete_container / delete_capsule
              a clean-up delete with rights that allow it, its answer checked, then
              :func:`wait_gone`'s bounded wait
require_nothing_left
              the fixtures' guard: fail listing the engine containers a test left on a host
engine_uuids  UUIDs of the engine containers of a host (label ``zun.host``)
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from engine_support import describe, engine_containers, sweep_host, wait_deleted

ZUN_ALL = Path(sys.executable).parent / "zun-all"
SETTLED_TASK = None


def http(
    server: ZunAll, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    """One JSON request at microversion 1.40 (headers may override); the status and body."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        server.url + path,
        data=data,
        method=method,
        headers={
            "Content-Type": "application/json",
            "OpenStack-API-Version": "container 1.40",
            **(headers or {}),
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            raw = resp.read()
            return resp.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as err:
        raw = err.read()
        return err.code, json.loads(raw) if raw else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ZunAll:
    """One zun-all process on a state directory; restartable on the same directory."""

    def __init__(self, base: Path, host: str | None = None) -> None:
        self.base = base
        self.state_dir = base / "state"
        self.port = free_port()
        self.host = host or f"e2e-{uuid.uuid4().hex[:10]}"
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = base / "zun.conf"
        self.config.write_text(
            f"[DEFAULT]\nhost = {self.host}\n"
            f"[websocket_proxy]\nwsproxy_host = 127.0.0.1\nwsproxy_port = {free_port()}\n"
        )
        self.log = base / "zun-all.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._clients: list[Any] = []

    def start(self, timeout: float = 60) -> ZunAll:
        log = self.log.open("ab")
        self.proc = subprocess.Popen(
            [
                str(ZUN_ALL),
                "--state-dir",
                str(self.state_dir),
                "--port",
                str(self.port),
                "--config-file",
                str(self.config),
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"zun-all exited: {self.log.read_text()[-4000:]}")
            try:
                with urllib.request.urlopen(self.url + "/", timeout=2):
                    pass
                if self._host_registered():
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"zun-all did not become ready: {self.log.read_text()[-4000:]}")

    def _host_registered(self) -> bool:
        # The node must have written its inventory (and heartbeat) before it can be chosen.
        return self.host in {h.hostname for h in self.client().hosts.list()}

    def client(self, version: str = "1.40") -> Any:
        from zunclient import client

        # With an endpoint and a token, zunclient uses keystoneauth's admin_token plugin:
        # X-Auth-Token only, which the noauth server takes as an admin of 'default'.
        zun = client.Client(version, endpoint_override=self.url + "/v1", auth_token="notused")
        self._clients.append(zun)
        return zun

    def close_clients(self) -> None:
        """Drop the clients' keep-alive connections (they would hold API threads)."""
        for zun in self._clients:
            zun.http_client.session.session.close()
        self._clients.clear()

    def stop(self) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.close_clients()
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def kill(self) -> None:
        """SIGKILL: no clean-up of any kind, as a crash. zun-all serves from a forked child
        (``--cpu-nice``) that the kernel kills with it; wait until that one is gone too, or a
        restart would find the state directory still locked."""
        assert self.proc is not None
        pid = self.proc.pid
        served_by = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        deadline = time.monotonic() + 30
        for child in served_by:
            while Path(f"/proc/{child}").exists() and _state(int(child)) != "Z":
                if time.monotonic() > deadline:
                    raise AssertionError(f"zun-all's service (pid {child}) outlived it")
                time.sleep(0.05)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def engine_uuids(docker_client: Any, host: str) -> set[str]:
    return {
        c.labels["zun.container.uuid"]
        for c in docker_client.containers.list(
            ignore_removed=True, all=True, filters={"label": f"zun.host={host}"}
        )
    }


def wait_for(
    zun: Any, uuid_: str, statuses: tuple[str, ...] | str | None = None, timeout: float = 60
) -> Any:
    """Poll until the container has no task and (if given) is in one of ``statuses``."""
    if isinstance(statuses, str):
        statuses = (statuses,)
    deadline = time.monotonic() + timeout
    shown = None
    while time.monotonic() < deadline:
        shown = zun.containers.get(uuid_)
        if (
            shown.task_state is None
            and shown.status not in ("Creating",)
            and (statuses is None or shown.status in statuses)
        ):
            return shown
        time.sleep(0.1)
    raise AssertionError(
        f"container {uuid_} did not reach {statuses}: "
        f"{getattr(shown, 'status', None)} {getattr(shown, 'task_state', None)}"
        f" {getattr(shown, 'status_reason', None)}"
    )


def wait_gone(zun: Any, uuid_: str, docker_client: Any, timeout: float = 60) -> None:
    """Poll (zunclient ``zun``) until the API answers 404 and no engine container carries the
    UUID: the node answers 204 to a delete before it has done anything."""
    from zunclient import exceptions

    def answers_404() -> bool:
        try:
            zun.containers.get(uuid_)
        except exceptions.NotFound:
            return True
        return False

    wait_deleted(
        docker_client,
        f"zun.container.uuid={uuid_}",
        answers_404,
        what=f"container {uuid_}",
        timeout=timeout,
    )


def admin_of(member: dict[str, str] | None) -> dict[str, str]:
    """The noauth headers of an admin of ``member``'s project (none: zun-all's default
    admin, project 'default'). A forced delete is admin-only: a member's is a 403."""
    return {**member, "X-Roles": "admin"} if member else {}


def _delete_and_wait(
    server: ZunAll,
    docker_client: Any,
    kind: str,
    uuid_: str,
    headers: dict[str, str] | None,
    query: str,
    expect: tuple[int, ...],
    timeout: float,
) -> None:
    """DELETE ``/v1/<kind>s/<uuid>`` with ``headers``, require an ``expect``ed answer, and
    wait until the API answers 404 and no engine container labelled with the UUID is left."""
    status, body = http(server, "DELETE", f"/v1/{kind}s/{uuid_}{query}", headers=headers)
    assert status in expect, (status, body)

    def answers_404() -> bool:
        status, body = http(server, "GET", f"/v1/{kind}s/{uuid_}", headers=headers)
        assert status in (200, 404), (status, body)
        return status == 404

    wait_deleted(
        docker_client,
        f"zun.{kind}.uuid={uuid_}",
        answers_404,
        what=f"{kind} {uuid_}",
        timeout=timeout,
    )


def delete_container(
    server: ZunAll,
    docker_client: Any,
    uuid_: str,
    member: dict[str, str] | None = None,
    timeout: float = 60,
    expect: tuple[int, ...] = (204, 404),
) -> None:
    """Force-delete a container of ``member``'s project (default: project 'default') as an
    admin of that project at 1.40, require an ``expect``ed answer (a clean-up accepts a 404:
    gone already), and wait until it is gone."""
    _delete_and_wait(
        server, docker_client, "container", uuid_, admin_of(member), "?force=true", expect, timeout
    )


def delete_capsule(
    server: ZunAll,
    docker_client: Any,
    uuid_: str,
    member: dict[str, str] | None = None,
    timeout: float = 90,
) -> None:
    """Delete a capsule as its member (the capsule API has no force), require 204 or 404,
    and wait until the API answers 404 and no engine container (sandbox, members) is left."""
    _delete_and_wait(server, docker_client, "capsule", uuid_, member, "", (204, 404), timeout)


def require_nothing_left(server: ZunAll, docker_client: Any) -> None:
    """Fail listing the engine containers of ``server``'s host that are still there (a test
    left them: a clean-up delete refused, or not waited for). They are deleted first: through
    the API while the server runs (admin, all projects), so that their rows go too, then
    from the engine whatever remains."""
    left = engine_containers(docker_client, f"zun.host={server.host}")
    if not left:
        return
    found = [describe(c) for c in left]
    running = server.proc is not None and server.proc.poll() is None
    for container in left if running else ():
        uuid_ = container.labels.get("zun.container.uuid")
        if uuid_ and "zun.capsule.uuid" not in container.labels:
            # Best effort: the sweep below removes what the node does not.
            with contextlib.suppress(AssertionError, OSError):
                http(server, "DELETE", f"/v1/containers/{uuid_}?force=true&all_projects=true")
                wait_deleted(
                    docker_client,
                    f"zun.container.uuid={uuid_}",
                    lambda u=uuid_: (
                        http(server, "GET", f"/v1/containers/{u}?all_projects=true")[0] == 404
                    ),
                    what=f"container {uuid_}",
                    timeout=30,
                )
    sweep_host(docker_client, server.host)
    pytest.fail(
        f"engine containers of zun-all host {server.host} were left behind (now "
        f"deleted): {'; '.join(found)}",
        pytrace=False,
    )


def sweep(docker_client: Any, host: str, project_ids: tuple[str, ...] = ("default",)) -> None:
    for container in docker_client.containers.list(
        ignore_removed=True, all=True, filters={"label": f"zun.host={host}"}
    ):
        container.remove(force=True, v=True)
