"""Fixtures of the DockerDriver tests on the real engine.

Every engine container made through ``rows`` is named ``zun-<uuid>`` and labelled
``zun.test.run=<run>``; the fixture force-removes them even when a test fails.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import docker
import pytest
from functional.runtime.support import RUN_ID, RUN_LABEL

from zun.common import consts
from zun.runtime.docker import spec
from zun.runtime.docker.driver import DockerDriver


@pytest.fixture(scope="module")
def driver(docker_client: Any) -> Iterator[DockerDriver]:
    drv = DockerDriver()
    yield drv
    drv.close()


@pytest.fixture
def rows(driver: DockerDriver, busybox_image: str) -> Iterator[Callable[..., SimpleNamespace]]:
    """Factory of container rows (not yet made in the engine); their engine containers are
    removed after the test."""
    made: list[SimpleNamespace] = []

    def make(**overrides: Any) -> SimpleNamespace:
        values: dict[str, Any] = {
            "uuid": str(uuid.uuid4()),
            "name": "zun-test-" + uuid.uuid4().hex[:8],
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
        values["labels"] = {**(values["labels"] or {}), RUN_LABEL: RUN_ID}
        row = SimpleNamespace(**values)
        made.append(row)
        return row

    yield make
    client = driver.client
    for row in made:
        try:
            client.remove_container(spec.engine_name(row.uuid), force=True, v=True)
        except docker.errors.NotFound:
            pass
    # Anything of this run that escaped (e.g. a row object was lost).
    for leftover in client.containers(all=True, filters={"label": f"{RUN_LABEL}={RUN_ID}"}):
        client.remove_container(leftover["Id"], force=True, v=True)
