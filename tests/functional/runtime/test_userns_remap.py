"""User-namespace remapping: Zun's containers on an engine started with ``--userns-remap``.

userns-remap is an option of dockerd, not of a container, so this test starts a dockerd of
its own (``tests/own_engine.py``: its own network namespace, data root and socket, never the
machine's dockerd) with ``--userns-remap=default`` (dockerd makes the ``dockremap`` user and
its /etc/subuid range on first use). Everything is removed afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import docker
import own_engine
import pytest

from zun.common import consts
from zun.runtime.docker import spec
from zun.runtime.docker.driver import DockerDriver

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def remapped_engine(docker_client: Any, busybox_image: str) -> Iterator[str]:
    """The unix socket URL of a dockerd with --userns-remap=default in its own netns."""
    own_engine.require()
    engine = own_engine.OwnEngine(["--userns-remap=default"])
    try:
        engine.start()
        engine.load_image(docker_client, busybox_image)
        yield engine.url
    finally:
        engine.destroy()


def _row(busybox_image: str, **overrides: Any) -> SimpleNamespace:
    values: dict[str, Any] = {
        "uuid": str(uuid.uuid4()),
        "name": "zun-userns",
        "image": busybox_image,
        "command": ["sleep", "300"],
        "entrypoint": None,
        "cpu": None,
        "memory": None,
        "workdir": None,
        "labels": {},
        "environment": {},
        "restart_policy": None,
        "interactive": False,
        "tty": False,
        "hostname": None,
        "runtime": None,
        "auto_remove": False,
        "privileged": False,
        "healthcheck": None,
        "exposed_ports": None,
        "cpu_policy": None,
        "cpuset": None,
        "container_id": None,
        "status": consts.CREATING,
        "status_reason": None,
        "status_detail": None,
        "task_state": None,
    }
    values.update(overrides)
    return SimpleNamespace(**values)


def _uid_map(driver: DockerDriver, row: SimpleNamespace) -> list[list[int]]:
    pid = driver.client.inspect_container(row.container_id)["State"]["Pid"]
    text = Path(f"/proc/{pid}/uid_map").read_text()
    return [[int(x) for x in line.split()] for line in text.splitlines()]


def test_containers_run_remapped_and_privileged_ones_still_start(
    remapped_engine: str, busybox_image: str
) -> None:
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
        assert (
            driver.client.inspect_container(privileged.container_id)["HostConfig"]["UsernsMode"]
            == "host"
        )
    finally:
        for row in locals().get("plain"), locals().get("privileged"):
            if row is not None and row.container_id:
                try:
                    driver.client.remove_container(spec.engine_name(row.uuid), force=True)
                except docker.errors.NotFound:
                    pass
        driver.close()
