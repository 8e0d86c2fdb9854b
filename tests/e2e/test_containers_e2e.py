"""Every container route through python-zunclient against a real zun-all on the real engine."""

from __future__ import annotations

import io
import tarfile
import time
import uuid
from typing import Any

import pytest
from e2e.support import engine_uuids, wait_for, wait_gone
from zunclient import exceptions

pytestmark = [pytest.mark.e2e, pytest.mark.docker]


def _run(zun: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("image", "busybox")
    kwargs.setdefault("command", ["sleep", "300"])
    kwargs.setdefault("image_pull_policy", "ifnotpresent")
    kwargs.setdefault("cpu", 0.1)
    kwargs.setdefault("memory", 32)
    return zun.containers.run(**kwargs)


@pytest.fixture
def running(zun: Any, docker_client: Any) -> Any:
    created = _run(zun, name=f"e2e-{uuid.uuid4().hex[:8]}")
    shown = wait_for(zun, created.uuid, "Running")
    yield shown
    try:
        zun.containers.delete(created.uuid, force=True)
        wait_gone(zun, created.uuid, docker_client)
    except exceptions.NotFound:
        pass


def _request_ids(zun: Any, uuid_: str) -> dict[str, Any]:
    return {a.action: a for a in zun.actions.list(uuid_)}


def test_run_list_show_agree(zun: Any, running: Any, zun_all: Any, docker_client: Any) -> None:
    assert running.status == "Running"
    assert running.addresses and "zun-default" in running.addresses
    listed = {c.uuid: c for c in zun.containers.list()}
    assert listed[running.uuid].status == "Running"
    assert running.uuid in engine_uuids(docker_client, zun_all.host)
    host = zun.hosts.get(zun_all.host)
    assert float(host.cpu_used) >= 0.1


def test_create_then_start(zun: Any, docker_client: Any) -> None:
    created = zun.containers.create(
        image="busybox",
        command=["sleep", "300"],
        image_pull_policy="ifnotpresent",
        cpu=0.1,
        memory=32,
    )
    try:
        assert created.status == "Creating"
        wait_for(zun, created.uuid, "Created")
        zun.containers.start(created.uuid)
        wait_for(zun, created.uuid, "Running")
    finally:
        zun.containers.delete(created.uuid, force=True)
        wait_gone(zun, created.uuid, docker_client)


def test_update_and_rename(zun: Any, running: Any, docker_client: Any, zun_all: Any) -> None:
    updated = zun.containers.update(running.uuid, cpu=0.2, memory=48)
    assert updated.memory == "48"
    engine = docker_client.containers.get(f"zun-{running.uuid}")
    assert engine.attrs["HostConfig"]["Memory"] == 48 << 20
    assert engine.attrs["HostConfig"]["NanoCpus"] == 200_000_000
    renamed = zun.containers.update(running.uuid, name=f"renamed-{uuid.uuid4().hex[:6]}")
    assert renamed.name.startswith("renamed-")
    old = zun_all.client("1.13")
    old.containers.rename(running.uuid, f"again-{uuid.uuid4().hex[:6]}")
    assert zun.containers.get(running.uuid).name.startswith("again-")


def test_lifecycle_actions(zun: Any, running: Any) -> None:
    uuid_ = running.uuid
    zun.containers.stop(uuid_, 0)
    wait_for(zun, uuid_, "Stopped")
    zun.containers.start(uuid_)
    wait_for(zun, uuid_, "Running")
    zun.containers.pause(uuid_)
    wait_for(zun, uuid_, "Paused")
    zun.containers.unpause(uuid_)
    wait_for(zun, uuid_, "Running")
    zun.containers.restart(uuid_, 0)
    wait_for(zun, uuid_, "Running")
    zun.containers.kill(uuid_, None)
    wait_for(zun, uuid_, "Stopped")
    actions = _request_ids(zun, uuid_)
    assert {"create", "stop", "start", "pause", "unpause", "reboot", "kill"} <= set(actions)
    kill = zun.actions.get(uuid_, actions["kill"].request_id)
    assert kill.finish_time is not None and kill.message is None
    assert [e["event"] for e in kill.events] == ["compute__do_container_kill"]
    assert kill.events[0]["result"] == "Success"


def test_logs_exec_top_stats(zun: Any, docker_client: Any) -> None:
    created = _run(zun, command=["sh", "-c", "echo hello-logs; sleep 300"])
    try:
        wait_for(zun, created.uuid, "Running")
        assert "hello-logs" in zun.containers.logs(created.uuid, stdout=True, stderr=True)
        result = zun.containers.execute(
            created.uuid, command='"sh" "-c" "echo out; exit 3"', run=True
        )
        assert result == {"output": "out\n", "exit_code": 3, "exec_id": None, "proxy_url": None}
        interactive = zun.containers.execute(
            created.uuid, command='"sh"', run=False, interactive=True
        )
        assert interactive["output"] is None and len(interactive["exec_id"]) == 64
        assert "token=" in interactive["proxy_url"]
        top = zun.containers.top(created.uuid)
        assert "PID" in top["Titles"]
        stats = zun.containers.stats(created.uuid)
        assert "CPU %" in stats and stats["MEM LIMIT(MiB)"] == pytest.approx(32, abs=1)
    finally:
        zun.containers.delete(created.uuid, force=True)
        wait_gone(zun, created.uuid, docker_client)


def test_archives(zun: Any, running: Any) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("e2e.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"abc"))
    zun.containers.put_archive(running.uuid, "/tmp", buffer.getvalue())
    got = zun.containers.get_archive(running.uuid, "/tmp/e2e.txt")
    assert got["stat"]["size"] == 3
    with tarfile.open(fileobj=io.BytesIO(got["data"])) as tar:
        assert tar.extractfile("e2e.txt").read() == b"abc"


def test_commit(zun: Any, running: Any, docker_client: Any) -> None:
    repo = f"e2e-commit-{uuid.uuid4().hex[:8]}"
    reply = zun.containers.commit(running.uuid, repo, "v1")
    assert uuid.UUID(reply["uuid"])
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if docker_client.images.list(name=f"{repo}:v1"):
                break
            time.sleep(0.1)
        assert docker_client.images.list(name=f"{repo}:v1")
        wait_for(zun, running.uuid, "Running")
    finally:
        docker_client.images.remove(f"{repo}:v1", force=True)


def test_networks(zun: Any, running: Any, docker_client: Any) -> None:
    name = f"e2e-net-{uuid.uuid4().hex[:8]}"
    net = docker_client.networks.create(name, labels={"zun.managed": "true"})
    try:
        zun.containers.network_attach(running.uuid, network=name)
        shown = wait_for(zun, running.uuid, "Running")
        assert name in shown.addresses
        listed = zun.containers.network_list(running.uuid)
        assert {n.net_id for n in listed} == {name, "zun-default"}
        zun.containers.network_detach(running.uuid, network=name)
        shown = wait_for(zun, running.uuid, "Running")
        assert name not in shown.addresses
    finally:
        net.remove()


def test_rebuild(zun: Any, running: Any, docker_client: Any) -> None:
    before = docker_client.containers.get(f"zun-{running.uuid}").id
    zun.containers.rebuild(running.uuid, image="busybox")
    wait_for(zun, running.uuid, "Running")
    assert docker_client.containers.get(f"zun-{running.uuid}").id != before


def test_delete_variants(zun: Any, zun_all: Any, docker_client: Any) -> None:
    stopped = _run(zun)
    wait_for(zun, stopped.uuid, "Running")
    zun.containers.stop(stopped.uuid, 0)
    wait_for(zun, stopped.uuid, "Stopped")
    zun.containers.delete(stopped.uuid)
    wait_gone(zun, stopped.uuid, docker_client)

    # PID 1 ignores SIGTERM unless it traps it: this one does, so the stop is quick.
    stop_first = _run(zun, command=["sh", "-c", "trap 'exit 0' TERM; sleep 300 & wait"])
    wait_for(zun, stop_first.uuid, "Running")
    with pytest.raises(exceptions.Conflict):
        zun.containers.delete(stop_first.uuid)
    zun.containers.delete(stop_first.uuid, stop=True)
    wait_gone(zun, stop_first.uuid, docker_client)

    forced = _run(zun)
    wait_for(zun, forced.uuid, "Running")
    zun.containers.delete(forced.uuid, force=True)
    wait_gone(zun, forced.uuid, docker_client)
    remaining = engine_uuids(docker_client, zun_all.host)
    assert not {stopped.uuid, stop_first.uuid, forced.uuid} & remaining


def test_exposed_port_is_published_on_the_node(zun: Any, docker_client: Any) -> None:
    import socket

    created = _run(
        zun,
        name=f"e2e-{uuid.uuid4().hex[:8]}",
        exposed_ports={"8080/tcp": {}},
        command=["sh", "-c", "while true; do echo zun-port | nc -l -p 8080; done"],
    )
    try:
        wait_for(zun, created.uuid, "Running")
        engine = docker_client.containers.get(f"zun-{created.uuid}")
        bindings = engine.attrs["NetworkSettings"]["Ports"]["8080/tcp"]
        host_port = int(bindings[0]["HostPort"])
        # Published on the node's configured address ([docker]/publish_host_ip = $my_ip).
        host_ip = bindings[0]["HostIp"]
        assert host_ip not in ("", "0.0.0.0")
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection((host_ip, host_port), timeout=2) as sock:
                    assert sock.recv(64).startswith(b"zun-port")
                break
            except (OSError, AssertionError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    finally:
        zun.containers.delete(created.uuid, force=True)
        wait_gone(zun, created.uuid, docker_client)
