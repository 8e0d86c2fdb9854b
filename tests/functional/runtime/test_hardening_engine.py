"""Container hardening as the real engine applies it: capabilities, published address,
read-only root filesystem, capabilities an admin adds.

The capability sets are read from inside the container (``/proc/1/status``, the bounding set
any process of the container is limited to), not from the arguments Zun passed.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from unit.api.apptesting import config_overrides

from zun.common import consts
from zun.runtime.docker import spec
from zun.runtime.docker.driver import DockerDriver

pytestmark = pytest.mark.docker

# Linux capability numbers (linux/capability.h).
CAP_NUMBERS = {
    "CHOWN": 0,
    "DAC_OVERRIDE": 1,
    "DAC_READ_SEARCH": 2,
    "FOWNER": 3,
    "FSETID": 4,
    "KILL": 5,
    "SETGID": 6,
    "SETUID": 7,
    "SETPCAP": 8,
    "LINUX_IMMUTABLE": 9,
    "NET_BIND_SERVICE": 10,
    "NET_BROADCAST": 11,
    "NET_ADMIN": 12,
    "NET_RAW": 13,
    "IPC_LOCK": 14,
    "IPC_OWNER": 15,
    "SYS_MODULE": 16,
    "SYS_RAWIO": 17,
    "SYS_CHROOT": 18,
    "SYS_PTRACE": 19,
    "SYS_PACCT": 20,
    "SYS_ADMIN": 21,
    "SYS_BOOT": 22,
    "SYS_NICE": 23,
    "SYS_RESOURCE": 24,
    "SYS_TIME": 25,
    "SYS_TTY_CONFIG": 26,
    "MKNOD": 27,
    "LEASE": 28,
    "AUDIT_WRITE": 29,
    "AUDIT_CONTROL": 30,
    "SETFCAP": 31,
}
# The documented set (docs/configuration.md, "Why these capabilities").
DOCUMENTED_KEPT = {
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "KILL",
    "NET_BIND_SERVICE",
    "SETGID",
    "SETUID",
}


@pytest.fixture
def running(
    driver: DockerDriver, rows: Callable[..., SimpleNamespace], busybox_image: str
) -> Callable[..., SimpleNamespace]:
    """Factory of rows whose engine containers are made and started (removed by ``rows``)."""

    def make(**overrides: Any) -> SimpleNamespace:
        row = rows(**overrides)
        driver.create(row, busybox_image)
        driver.start(row)
        return row

    return make


def _run(driver: DockerDriver, row: SimpleNamespace, *argv: str) -> dict[str, Any]:
    return driver.execute(row, list(argv), timeout=30)


def bounding_set(driver: DockerDriver, row: SimpleNamespace) -> set[str]:
    status = _run(driver, row, "cat", "/proc/1/status")["output"]
    line = next(x for x in status.splitlines() if x.startswith("CapBnd:"))
    mask = int(line.split()[1], 16)
    return {name for name, bit in CAP_NUMBERS.items() if mask & (1 << bit)}


def test_default_container_keeps_only_the_documented_capabilities(
    driver: DockerDriver, running: Any
) -> None:
    row = running()
    assert bounding_set(driver, row) == DOCUMENTED_KEPT
    # What the dropped ones would allow, refused for real: a device node (MKNOD).
    assert _run(driver, row, "mknod", "/tmp/dev0", "c", "1", "3")["exit_code"] != 0
    # What ordinary images need still works: chown, stepping down to another user.
    assert _run(driver, row, "sh", "-c", "touch /tmp/f && chown 1000:1000 /tmp/f")["exit_code"] == 0
    assert (
        _run(driver, row, "su", "-s", "/bin/sh", "nobody", "-c", "id -u")["output"].strip()
        == "65534"
    )


def test_an_admin_granted_capability_reaches_the_container(
    driver: DockerDriver, running: Any
) -> None:
    row = running(labels={consts.LABEL_CAP_ADD: "SYS_PTRACE"})
    assert bounding_set(driver, row) == DOCUMENTED_KEPT | {"SYS_PTRACE"}


def test_exposed_ports_are_published_on_the_configured_address(
    driver: DockerDriver, running: Any
) -> None:
    row = running(exposed_ports={"80/tcp": {}, "53/udp": {}})
    ports = driver.client.inspect_container(row.container_id)["NetworkSettings"]["Ports"]
    bound = [b["HostIp"] for key in ("80/tcp", "53/udp") for b in ports[key]]
    assert bound and set(bound) == {spec.publish_host_ip()}
    assert "0.0.0.0" not in bound and "::" not in bound
    with config_overrides({"docker": {"publish_host_ip": "127.0.0.1"}}):
        row = running(exposed_ports={"80/tcp": {}})
    ports = driver.client.inspect_container(row.container_id)["NetworkSettings"]["Ports"]
    assert [b["HostIp"] for b in ports["80/tcp"]] == ["127.0.0.1"]


def test_read_only_root_filesystem_option(driver: DockerDriver, running: Any) -> None:
    with config_overrides({"docker": {"read_only_root_filesystem": True}}):
        row = running()
    assert driver.client.inspect_container(row.container_id)["HostConfig"]["ReadonlyRootfs"]
    assert _run(driver, row, "touch", "/etc/zun-was-here")["exit_code"] != 0
    # Scratch space stays writable.
    assert _run(driver, row, "sh", "-c", "echo x > /tmp/a && echo y > /run/b")["exit_code"] == 0
    # Off by default.
    plain = running()
    assert _run(driver, plain, "touch", "/etc/zun-was-here")["exit_code"] == 0
