"""Failure injection through the API. Each case must end with: no engine container without a
row, no row stuck in Creating, no claim left for a container that holds nothing."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e.support import ZunAll, engine_uuids, wait_for, wait_gone

pytestmark = [pytest.mark.e2e, pytest.mark.docker]


def assert_consistent(zun: Any, server: ZunAll, docker_client: Any) -> list[Any]:
    rows = zun.containers.list(all_projects=True)
    seen = [(r.uuid, r.status, r.task_state, r.host, r.cpu, r.memory) for r in rows]
    assert not [r.uuid for r in rows if r.status == "Creating"], seen
    orphans = engine_uuids(docker_client, server.host) - {r.uuid for r in rows}
    assert not orphans, (orphans, seen)
    on_host = [r for r in rows if r.host == server.host]
    host = zun.hosts.get(server.host)
    assert float(host.cpu_used) == pytest.approx(sum(float(r.cpu) for r in on_host), abs=1e-3), (
        host.cpu_used,
        seen,
    )
    assert int(host.mem_used) == sum(int(r.memory) for r in on_host), (host.mem_used, seen)
    return rows


def _failed(zun: Any, server: ZunAll, docker_client: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("command", ["sleep", "300"])
    kwargs.setdefault("cpu", 0.1)
    kwargs.setdefault("memory", 32)
    created = zun.containers.run(**kwargs)
    try:
        shown = wait_for(zun, created.uuid, "Error")
        assert shown.host is None
        assert created.uuid not in engine_uuids(docker_client, server.host)
        assert_consistent(zun, server, docker_client)
        actions = zun.actions.list(created.uuid)
        create = zun.actions.get(created.uuid, actions[0].request_id)
        assert create.message == "Error"
        assert create.events[0]["result"] == "Error"
        return shown
    finally:
        zun.containers.delete(created.uuid)
        wait_gone(zun, created.uuid, docker_client)


def test_image_that_does_not_exist(
    zun: Any, zun_all: ZunAll, docker_client: Any, registry: dict[str, str]
) -> None:
    shown = _failed(
        zun,
        zun_all,
        docker_client,
        image=f"{registry['url']}/nosuch/image:1",
        image_pull_policy="always",
    )
    assert "nosuch/image" in shown.status_reason
    assert "could not be found" in shown.status_reason


def test_private_registry_refusing_credentials(
    zun: Any, zun_all: ZunAll, docker_client: Any, private_registry: dict[str, str]
) -> None:
    name = f"bad-{uuid.uuid4().hex[:8]}"
    zun.registries.create(
        name=name,
        domain=private_registry["url"],
        username=private_registry["username"],
        password="not-the-password",
    )
    shown = _failed(
        zun,
        zun_all,
        docker_client,
        image="private/busybox:latest",
        registry=name,
        image_pull_policy="always",
    )
    assert (
        "unauthorized" in shown.status_reason.lower()
        or "authentication" in shown.status_reason.lower()
    ), shown.status_reason
    assert "not-the-password" not in shown.status_reason
    assert "not-the-password" not in zun_all.log.read_text()


def test_private_registry_accepting_credentials(
    zun: Any, zun_all: ZunAll, docker_client: Any, private_registry: dict[str, str]
) -> None:
    name = f"good-{uuid.uuid4().hex[:8]}"
    zun.registries.create(
        name=name,
        domain=private_registry["url"],
        username=private_registry["username"],
        password=private_registry["password"],
    )
    created = zun.containers.run(
        image="private/busybox:latest",
        registry=name,
        image_pull_policy="always",
        command=["sleep", "300"],
        cpu=0.1,
        memory=32,
    )
    try:
        wait_for(zun, created.uuid, "Running")
    finally:
        zun.containers.delete(created.uuid, force=True)
        wait_gone(zun, created.uuid, docker_client)
        docker_client.images.remove(private_registry["image"], force=True)
    assert private_registry["password"] not in zun_all.log.read_text()


def test_command_that_fails_to_start(zun: Any, zun_all: ZunAll, docker_client: Any) -> None:
    shown = _failed(
        zun,
        zun_all,
        docker_client,
        image="busybox",
        image_pull_policy="ifnotpresent",
        command=["/no/such/program"],
    )
    assert "/no/such/program" in shown.status_reason


def test_docker_refusing_create(zun: Any, zun_all: ZunAll, docker_client: Any) -> None:
    # The API accepts 4 MiB (Zun's minimum); the engine's minimum is 6 MB.
    shown = _failed(
        zun, zun_all, docker_client, image="busybox", image_pull_policy="ifnotpresent", memory=4
    )
    assert "memory" in shown.status_reason.lower(), shown.status_reason


class SilentRegistry:
    """A TCP listener that accepts and never answers: a registry hanging mid-pull."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.accepted:
            conn.close()


@pytest.fixture
def silent_registry() -> Iterator[SilentRegistry]:
    registry = SilentRegistry()
    yield registry
    registry.close()


def test_killed_mid_create_then_restarted(
    tmp_path: Path, docker_client: Any, busybox_image: str, silent_registry: SilentRegistry
) -> None:
    server = ZunAll(tmp_path).start()
    try:
        zun = server.client()
        created = zun.containers.run(
            image=f"127.0.0.1:{silent_registry.port}/busybox:latest",
            image_pull_policy="always",
            command=["sleep", "300"],
            cpu=0.1,
            memory=32,
        )
        deadline = time.monotonic() + 30
        while not silent_registry.accepted and time.monotonic() < deadline:
            time.sleep(0.05)
        assert silent_registry.accepted, "the engine never started pulling"
        assert zun.containers.get(created.uuid).task_state == "image_pulling"
        server.kill()

        server.start()
        zun = server.client()
        shown = zun.containers.get(created.uuid)
        assert shown.status == "Error"
        assert shown.status_reason == "Container failed to create correctly"
        assert shown.host is None and shown.task_state is None
        assert_consistent(zun, server, docker_client)

        # The node works normally after its recovery.
        fine = zun.containers.run(
            image="busybox",
            image_pull_policy="ifnotpresent",
            command=["sleep", "300"],
            cpu=0.1,
            memory=32,
        )
        wait_for(zun, fine.uuid, "Running")
        assert_consistent(zun, server, docker_client)
        zun.containers.delete(fine.uuid, force=True)
        zun.containers.delete(created.uuid)
        wait_gone(zun, fine.uuid, docker_client)
        wait_gone(zun, created.uuid, docker_client)
    finally:
        server.stop()
        for container in docker_client.containers.list(
            ignore_removed=True, all=True, filters={"label": f"zun.host={server.host}"}
        ):
            container.remove(force=True)


def test_killed_after_create_was_accepted(
    tmp_path: Path, docker_client: Any, busybox_image: str
) -> None:
    """A crash at any moment of a create leaves the same guarantees after the restart."""
    server = ZunAll(tmp_path).start()
    try:
        zun = server.client()
        uuids = [
            zun.containers.run(
                image="busybox",
                image_pull_policy="ifnotpresent",
                command=["sleep", "300"],
                cpu=0.1,
                memory=32,
            ).uuid
            for _ in range(3)
        ]
        server.kill()
        server.start()
        zun = server.client()
        # A create the node had not finished is done again at start-up from its stored
        # request (docs/operations.md, node loss): let those settle first.
        for uuid_ in uuids:
            wait_for(zun, uuid_, ("Running", "Error"))
        rows = assert_consistent(zun, server, docker_client)
        by_uuid = {r.uuid: r for r in rows}
        for uuid_ in uuids:
            assert by_uuid[uuid_].status in ("Running", "Error")
            zun.containers.delete(uuid_, force=True)
            wait_gone(zun, uuid_, docker_client)
        assert not engine_uuids(docker_client, server.host)
    finally:
        server.stop()
        for container in docker_client.containers.list(
            ignore_removed=True, all=True, filters={"label": f"zun.host={server.host}"}
        ):
            container.remove(force=True)
