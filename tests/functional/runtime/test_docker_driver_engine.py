"""DockerDriver against the real engine, with the busybox test image.

Every engine container made here is named ``zun-<uuid>`` and labelled ``zun.test.run=<run>``;
the ``rows`` fixture force-removes them (and any network or image made) even when a test fails.
"""

from __future__ import annotations

import io
import tarfile
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import docker
import pytest
from functional.runtime.support import RUN_ID, RUN_LABEL

from zun.common import consts, exception
from zun.runtime.docker.driver import DockerDriver, is_not_found
from zun.runtime.docker.status import map_docker_state

pytestmark = pytest.mark.docker


def _created(
    driver: DockerDriver, make: Callable[..., SimpleNamespace], busybox_image: str, **overrides: Any
) -> SimpleNamespace:
    row = make(**overrides)
    driver.create(row, busybox_image)
    return row


def _running(
    driver: DockerDriver, make: Callable[..., SimpleNamespace], busybox_image: str, **overrides: Any
) -> SimpleNamespace:
    row = _created(driver, make, busybox_image, **overrides)
    driver.start(row)
    return row


def _wait_status(
    driver: DockerDriver, row: SimpleNamespace, status: str, timeout: float = 15
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        driver.show(row)
        if row.status == status or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert row.status == status, (row.status, row.status_reason, row.status_detail)


def test_lifecycle_and_status_after_each_step(
    driver: DockerDriver, rows: Any, busybox_image: str
) -> None:
    row = _created(driver, rows, busybox_image)
    assert row.container_id
    driver.show(row)
    assert (row.status, row.status_detail) == (consts.CREATED, "Created")

    driver.start(row)
    driver.show(row)
    assert row.status == consts.RUNNING
    time.sleep(1.1)
    driver.show(row)
    assert row.status_detail.startswith("Up ")

    driver.pause(row)
    driver.show(row)
    assert row.status == consts.PAUSED
    assert row.status_detail.endswith("(paused)")

    driver.unpause(row)
    driver.show(row)
    assert row.status == consts.RUNNING

    # sleep as PID 1 ignores SIGTERM: the engine kills it after the 1 s grace period.
    started = time.monotonic()
    driver.stop(row, timeout=1)
    assert time.monotonic() - started < 10
    driver.show(row)
    assert row.status == consts.STOPPED
    assert row.status_detail.startswith("Exited(137)")

    driver.reboot(row, timeout=1)
    driver.show(row)
    assert row.status == consts.RUNNING

    driver.kill(row)
    _wait_status(driver, row, consts.STOPPED)
    assert row.status_detail.startswith("Exited(137)")

    driver.start(row)
    driver.kill(row, signal=None)  # no signal: Docker's SIGKILL
    _wait_status(driver, row, consts.STOPPED)

    assert driver.delete(row) is True
    with pytest.raises(exception.DockerError) as info:
        driver.inspect(row)
    assert is_not_found(info.value)
    assert driver.delete(row) is False

    driver.show(row)
    assert row.status == consts.ERROR
    assert row.status_reason == "container is missing in the Docker engine"


def test_kill_with_a_signal_name(driver: DockerDriver, rows: Any, busybox_image: str) -> None:
    script = "trap 'echo got-term; exit 7' TERM; echo ready; while true; do sleep 0.1; done"
    row = _running(driver, rows, busybox_image, command=["sh", "-c", script])
    deadline = time.monotonic() + 10
    while "ready" not in driver.logs(row) and time.monotonic() < deadline:
        time.sleep(0.1)
    driver.kill(row, signal="term")
    _wait_status(driver, row, consts.STOPPED)
    assert row.status_detail.startswith("Exited(7)")
    assert "got-term" in driver.logs(row)


def test_delete_of_a_running_container_needs_force(
    driver: DockerDriver, rows: Any, busybox_image: str
) -> None:
    row = _running(driver, rows, busybox_image)
    with pytest.raises(exception.Conflict) as info:
        driver.delete(row)
    assert "running" in str(info.value).lower()
    assert driver.delete(row, force=True) is True


def test_show_of_an_auto_removed_container_is_deleted(
    driver: DockerDriver, rows: Any, busybox_image: str
) -> None:
    row = _running(driver, rows, busybox_image, command=["true"], auto_remove=True)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        driver.show(row)
        if row.status == consts.DELETED:
            break
        time.sleep(0.2)
    assert row.status == consts.DELETED


def test_task_state_protects_the_status_unless_forced(
    driver: DockerDriver, rows: Any, busybox_image: str
) -> None:
    row = _running(
        driver, rows, busybox_image, status=consts.CREATING, task_state=consts.CONTAINER_STARTING
    )
    driver.show(row)
    assert row.status == consts.CREATING
    driver.show(row, force=True)
    assert row.status == consts.RUNNING


def test_engine_name_labels_and_settings(
    driver: DockerDriver, rows: Any, busybox_image: str
) -> None:
    row = _created(
        driver,
        rows,
        busybox_image,
        labels={"team": "a", "zun.managed": "false"},
        environment={"GREETING": "hello"},
        workdir="/tmp",
        hostname="box1",
        cpu=0.5,
        memory="64",
        restart_policy={"Name": "on-failure", "MaximumRetryCount": "2"},
        exposed_ports={"8080/tcp": {}},
        tty=True,
        interactive=True,
        healthcheck={"cmd": "true", "interval": 10, "retries": 2, "timeout": 3},
        entrypoint=["/bin/sh", "-c"],
        command=["sleep 300"],
    )
    info = driver.inspect(row)
    config, host = info["Config"], info["HostConfig"]
    assert info["Name"] == f"/zun-{row.uuid}"
    assert config["Labels"]["zun.container.uuid"] == row.uuid
    assert config["Labels"]["zun.managed"] == "true"
    assert config["Labels"]["team"] == "a"
    assert "GREETING=hello" in config["Env"]
    assert config["WorkingDir"] == "/tmp"
    assert config["Hostname"] == "box1"
    assert config["Tty"] is True and config["OpenStdin"] is True
    assert config["Entrypoint"] == ["/bin/sh", "-c"] and config["Cmd"] == ["sleep 300"]
    assert "8080/tcp" in config["ExposedPorts"]
    assert config["Healthcheck"]["Test"] == ["CMD-SHELL", "true"]
    assert config["Healthcheck"]["Interval"] == 10 * 10**9
    assert host["NanoCpus"] == 500_000_000
    assert host["Memory"] == 64 << 20
    assert host["RestartPolicy"] == {"Name": "on-failure", "MaximumRetryCount": 2}


def test_hardening_is_applied_and_effective(
    driver: DockerDriver, rows: Any, busybox_image: str
) -> None:
    row = _running(driver, rows, busybox_image)
    host = driver.inspect(row)["HostConfig"]
    assert host["SecurityOpt"] == ["no-new-privileges:true"]
    assert host["CapDrop"] == ["ALL"]
    assert sorted(host["CapAdd"]) == [
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "KILL",
        "NET_BIND_SERVICE",
        "SETGID",
        "SETUID",
    ]
    assert host["PidsLimit"] == 4096
    result = driver.execute(row, ["grep", "NoNewPrivs", "/proc/self/status"])
    assert result["exit_code"] == 0
    assert result["output"].split() == ["NoNewPrivs:", "1"]
    # MKNOD is gone: creating a device node fails.
    result = driver.execute(row, ["mknod", "/tmp/null2", "c", "1", "3"])
    assert result["exit_code"] != 0


def test_privileged_container_is_not_hardened(
    driver: DockerDriver, rows: Any, busybox_image: str
) -> None:
    row = _created(driver, rows, busybox_image, privileged=True)
    host = driver.inspect(row)["HostConfig"]
    assert host["Privileged"] is True
    # (Docker itself adds label=disable for a privileged container.)
    assert "no-new-privileges:true" not in (host["SecurityOpt"] or [])
    assert not host["CapDrop"]
    assert not host["PidsLimit"]


def test_execute_output_exit_code_and_timeout(
    driver: DockerDriver, rows: Any, busybox_image: str
) -> None:
    row = _running(driver, rows, busybox_image)
    result = driver.execute(row, ["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert result["exit_code"] == 3
    assert sorted(result["output"].split()) == ["err", "out"]
    assert len(result["exec_id"]) == 64

    # The string form python-zunclient sends (each argument double-quoted).
    result = driver.execute(row, '"sh" "-c" "echo $((6*7))"')
    assert (result["output"], result["exit_code"]) == ("42\n", 0)

    started = time.monotonic()
    with pytest.raises(exception.Conflict) as info:
        driver.execute(row, ["sleep", "30"], timeout=1)
    assert time.monotonic() - started < 5
    assert str(info.value) == "Timeout on executing command: sleep 30"


def test_interactive_exec_and_resizes(driver: DockerDriver, rows: Any, busybox_image: str) -> None:
    row = _running(driver, rows, busybox_image, tty=True, interactive=True)
    result = driver.execute(row, ["/bin/sh"], interactive=True)
    assert result["output"] is None and result["exit_code"] is None
    details = driver.execute_inspect(result["exec_id"])
    assert details["ProcessConfig"]["tty"] is True
    assert details["OpenStdin"] is True
    driver.resize(row, height="40", width="120")
    with pytest.raises(exception.DockerError) as info:
        driver.execute_resize("f" * 64, 40, 120)
    assert is_not_found(info.value)


def test_logs(driver: DockerDriver, rows: Any, busybox_image: str) -> None:
    row = _running(
        driver, rows, busybox_image, command=["sh", "-c", "echo one; echo two; echo oops >&2"]
    )
    _wait_status(driver, row, consts.STOPPED)
    assert sorted(driver.logs(row).split()) == ["one", "oops", "two"]
    assert driver.logs(row, stderr=False).split() == ["one", "two"]
    assert driver.logs(row, stdout=False).split() == ["oops"]
    assert len(driver.logs(row, tail="1").splitlines()) == 1
    stamped = driver.logs(row, stderr=False, timestamps=True).splitlines()
    assert stamped[0].endswith(" one") and stamped[0][:4].isdigit()
    assert driver.logs(row, since=str(int(time.time()) + 3600)) == ""
    assert driver.logs(row, tail=None, since=None).split()


def test_top(driver: DockerDriver, rows: Any, busybox_image: str) -> None:
    row = _running(driver, rows, busybox_image)
    top = driver.top(row)
    assert "PID" in top["Titles"]
    cmd = top["Titles"].index("CMD")
    assert any(p[cmd] == "sleep 300" for p in top["Processes"])
    assert driver.top(row, ps_args=None)["Processes"]


def test_archive_round_trip(driver: DockerDriver, rows: Any, busybox_image: str) -> None:
    row = _running(driver, rows, busybox_image)
    payload = b"hello from zun\n" * 100
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("greeting.txt")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    driver.put_archive(row, "/tmp", buf.getvalue())

    assert driver.execute(row, ["wc", "-c", "/tmp/greeting.txt"])["output"].split()[0] == str(
        len(payload)
    )
    data, stat = driver.get_archive(row, "/tmp/greeting.txt")
    assert stat["name"] == "greeting.txt"
    assert stat["size"] == len(payload)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        extracted = tar.extractfile("greeting.txt")
        assert extracted is not None and extracted.read() == payload

    with pytest.raises(exception.DockerError) as info:
        driver.get_archive(row, "/no/such/file")
    assert is_not_found(info.value)
    with pytest.raises(exception.ZunException):
        driver.put_archive(row, "/no/such/dir", buf.getvalue())


def test_stats(driver: DockerDriver, rows: Any, busybox_image: str) -> None:
    row = _running(driver, rows, busybox_image, memory="64")
    result = driver.stats(row)
    assert set(result) == {
        "CONTAINER",
        "CPU %",
        "MEM USAGE(MiB)",
        "MEM LIMIT(MiB)",
        "MEM %",
        "BLOCK I/O(B)",
        "NET I/O(B)",
    }
    assert result["CONTAINER"] == row.name
    assert result["MEM LIMIT(MiB)"] == 64.0
    assert 0 < result["MEM USAGE(MiB)"] < 64
    assert 0 <= result["CPU %"] <= 200
    read, write = result["BLOCK I/O(B)"].split("/")
    assert read.isdigit() and write.isdigit()


def test_commit(driver: DockerDriver, rows: Any, busybox_image: str) -> None:
    row = _running(driver, rows, busybox_image)
    driver.execute(row, ["sh", "-c", "echo committed > /marker"])
    repository = f"zun-test-commit-{RUN_ID}"
    image_id = driver.commit(row, repository, tag="v1")
    try:
        assert image_id.startswith("sha256:")
        assert f"{repository}:v1" in driver.client.inspect_image(image_id)["RepoTags"]
        copy = _running(driver, rows, f"{repository}:v1")
        assert driver.execute(copy, ["cat", "/marker"])["output"] == "committed\n"
        driver.delete(copy, force=True)
    finally:
        driver.client.remove_image(image_id, force=True)


def test_update_is_applied_live(driver: DockerDriver, rows: Any, busybox_image: str) -> None:
    row = _running(driver, rows, busybox_image, cpu=0.5, memory="64")
    driver.update(row, cpu=1.5, memory="256")
    host = driver.inspect(row)["HostConfig"]
    assert host["NanoCpus"] == 1_500_000_000
    assert host["Memory"] == 256 << 20
    driver.show(row)
    assert row.status == consts.RUNNING
    # The cgroup itself changed, not only the stored config (cgroup v1 path as root).
    limit = driver.execute(row, ["cat", "/sys/fs/cgroup/memory/memory.limit_in_bytes"])
    if limit["exit_code"] == 0:
        assert int(limit["output"]) == 256 << 20
    driver.update(row, memory="32")
    assert driver.inspect(row)["HostConfig"]["Memory"] == 32 << 20
    driver.update(row)  # nothing to change is not an error


def test_list_zun_containers_maps_with_the_list_state(
    driver: DockerDriver, rows: Any, busybox_image: str
) -> None:
    running = _running(driver, rows, busybox_image)
    created = _created(driver, rows, busybox_image)
    listed = {r["Labels"]["zun.container.uuid"]: r for r in driver.list_zun_containers()}
    assert {running.uuid, created.uuid} <= set(listed)
    assert (
        map_docker_state(listed[running.uuid]["State"], status=consts.CREATED).status
        == consts.RUNNING
    )
    assert (
        map_docker_state(listed[created.uuid]["State"], status=consts.CREATING).status
        == consts.CREATED
    )
    # Containers that are not Zun's are not listed.
    other = driver.client.create_container(busybox_image, ["true"], labels={RUN_LABEL: RUN_ID})
    try:
        ids = {r["Id"] for r in driver.list_zun_containers()}
        assert other["Id"] not in ids
    finally:
        driver.client.remove_container(other["Id"], force=True)


def test_networks_attached_at_create(driver: DockerDriver, rows: Any, busybox_image: str) -> None:
    client = driver.client
    names = [f"zun-test-net-{RUN_ID}-{i}" for i in (1, 2)]
    for name in names:
        client.create_network(name, driver="bridge", labels={RUN_LABEL: RUN_ID})
    try:
        row = rows()
        driver.create(
            row,
            busybox_image,
            networking={"endpoints": {names[0]: {"aliases": ["web"]}, names[1]: {}}},
        )
        driver.start(row)
        networks = driver.inspect(row)["NetworkSettings"]["Networks"]
        assert set(networks) == set(names)
        assert "web" in networks[names[0]]["Aliases"]
        driver.disconnect_network(row, names[1])
        assert set(driver.inspect(row)["NetworkSettings"]["Networks"]) == {names[0]}
        driver.delete(row, force=True)
    finally:
        for name in names:
            try:
                client.remove_network(name)
            except docker.errors.NotFound:
                pass


def test_unknown_network_fails_at_start_with_the_engine_reason(
    driver: DockerDriver, rows: Any, busybox_image: str
) -> None:
    # Docker accepts the connection of a created container and checks the network at start.
    row = rows()
    missing = f"zun-test-missing-{RUN_ID}"
    driver.create(
        row,
        busybox_image,
        networking={"network_mode": "bridge", "endpoints": {"bridge": {}, missing: {}}},
    )
    with pytest.raises(exception.DockerError) as info:
        driver.start(row)
    assert is_not_found(info.value)
    assert f"network {missing} not found" in str(info.value)


def test_bad_cpuset_is_a_clear_error(driver: DockerDriver, rows: Any, busybox_image: str) -> None:
    row = rows(cpu=1.0, cpu_policy="dedicated", cpuset={"cpuset_cpus": [99], "cpuset_mems": [0]})
    # The engine checks the CPU list at create and says what is available.
    with pytest.raises(exception.DockerError) as info:
        driver.create(row, busybox_image)
    assert "Requested CPUs are not available - requested 99" in str(info.value)
    assert not driver.client.containers(all=True, filters={"name": f"zun-{row.uuid}"})


def test_create_from_an_absent_image_is_not_found(driver: DockerDriver, rows: Any) -> None:
    row = rows()
    with pytest.raises(exception.DockerError) as info:
        driver.create(row, f"zun-test-absent-{RUN_ID}:latest")
    assert is_not_found(info.value)


def test_same_uuid_twice_is_a_conflict(driver: DockerDriver, rows: Any, busybox_image: str) -> None:
    row = _created(driver, rows, busybox_image)
    twin = rows(uuid=row.uuid)
    with pytest.raises(exception.Conflict) as info:
        driver.create(twin, busybox_image)
    assert "already in use" in str(info.value)


def test_inventory(driver: DockerDriver) -> None:
    info = driver.host_info()
    assert info["cpus"] >= 1
    assert info["mem_total"] > 0
    assert "runc" in info["runtimes"]
    assert info["os_type"] == "linux"
    assert info["kernel_version"]
    assert info["docker_root_dir"]
    disk = driver.disk_usage()
    assert disk["disk_total"] > 0
    assert 0 <= disk["disk_used"] <= disk["disk_total"]
