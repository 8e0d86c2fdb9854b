"""Fixtures of the node-side tests: a real database, the real engine, one manager per test.

  node_db     URL of a migrated database installed as the process engine; SQLite by
              default, MariaDB when a test is parametrized with ``node_db="mariadb"``
  node        a Node: the ContainerEndpoint of a host unique to the test (its inventory
              written), a project unique to the test, helpers to add rows and wait
Everything a test leaves on the engine (containers labelled with the test's host, the
project's network, volumes of its containers) is removed afterwards, even on failure.
"""

from __future__ import annotations

import contextlib
import datetime
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import docker
import pytest
import sqlalchemy as sa

from zun.common import consts
from zun.common.context import RequestContext
from zun.compute import periodic_tasks
from zun.compute.container_base import LABEL_HOST
from zun.compute.container_endpoint import ContainerEndpoint
from zun.db import engine as db_engine
from zun.db import migration, models
from zun.db.queries import actions as action_q
from zun.scheduler import claims

RUN_ID = uuid.uuid4().hex[:8]


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("node-db") / "zun.sqlite"
    migration.upgrade(url=f"sqlite:///{path}")
    return path


@pytest.fixture(params=["sqlite"])
def node_db(request: pytest.FixtureRequest, tmp_path: Path, sqlite_template: Path) -> Iterator[str]:
    if request.param == "mariadb":
        url = request.getfixturevalue("mariadb_url")()
        migration.upgrade(url=url)
    else:
        target = tmp_path / "zun.sqlite"
        target.write_bytes(sqlite_template.read_bytes())
        url = f"sqlite:///{target}"
    db_engine.set_engine(db_engine.create_engine(url))
    try:
        yield url
    finally:
        db_engine.dispose()


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


class Node:
    """A compute node under test and the helpers its tests share."""

    def __init__(self, manager: ContainerEndpoint, project_id: str, image: str) -> None:
        self.manager = manager
        self.host = manager.host
        self.project_id = project_id
        self.image = image
        self.docker: docker.DockerClient = manager.driver.engine

    def context(self, request_id: str | None = None) -> RequestContext:
        return RequestContext(
            request_id=request_id or f"req-{uuid.uuid4()}",
            project_id=self.project_id,
            user_id="tester",
            is_admin=True,
            roles=["admin"],
            overwrite=False,
        )

    def add(
        self, action: str | None = "create", claim: bool = True, **values: Any
    ) -> tuple[str, RequestContext]:
        """Insert a container row as the API does before its cast (claim + action)."""
        row_values: dict[str, Any] = {
            "uuid": str(uuid.uuid4()),
            "name": f"c-{uuid.uuid4().hex[:6]}",
            "image": self.image,
            "command": ["sleep", "300"],
            "cpu": 0.1,
            "memory": "32",
            "status": consts.CREATING,
            "task_state": consts.CONTAINER_CREATING,
            "host": self.host,
            "project_id": self.project_id,
            "user_id": "tester",
            "image_pull_policy": "ifnotpresent",
            "image_driver": "docker",
            "container_type": consts.TYPE_CONTAINER,
        }
        row_values.update(values)
        ctx = self.context()
        with db_engine.transaction() as session:
            session.add(models.Container(**row_values))
            session.flush()
            if claim and row_values["host"]:
                cpu, mem, disk = claims.container_resources(
                    row_values["cpu"], row_values["memory"], row_values.get("disk")
                )
                assert claims.claim(session, row_values["host"], cpu, mem, disk)
            if action:
                action_q.start_action(session, ctx, row_values["uuid"], action)
        return row_values["uuid"], ctx

    def begin(
        self, uuid_: str, action: str, task_state: str | None, **extra: Any
    ) -> RequestContext:
        """What the API does before an action's cast: task state (CAS) and action row."""
        ctx = self.context()
        with db_engine.transaction() as session:
            values = {"task_state": task_state, **extra}
            session.execute(
                sa.update(models.Container).where(models.Container.uuid == uuid_).values(**values)
            )
            action_q.start_action(session, ctx, uuid_, action)
        return ctx

    def row(self, uuid_: str) -> models.Container | None:
        with db_engine.transaction(readonly=True) as session:
            return session.scalars(
                sa.select(models.Container).where(models.Container.uuid == uuid_)
            ).first()

    def compute_node(self) -> models.ComputeNode:
        with db_engine.transaction(readonly=True) as session:
            return session.scalars(
                sa.select(models.ComputeNode).where(models.ComputeNode.hostname == self.host)
            ).one()

    def events(self, uuid_: str) -> list[tuple[str, str | None]]:
        E, A = models.ContainerActionEvent, models.ContainerAction
        with db_engine.transaction(readonly=True) as session:
            return [
                (r.event, r.result)
                for r in session.execute(
                    sa.select(E.event, E.result)
                    .join(A, A.id == E.action_id)
                    .where(A.container_uuid == uuid_)
                    .order_by(E.id)
                )
            ]

    def wait(self, timeout: float = 60) -> None:
        assert self.manager.workers.wait_idle(timeout), "node work did not finish in time"

    def engine_containers(self) -> list[Any]:
        return self.docker.containers.list(
            ignore_removed=True, all=True, filters={"label": f"{LABEL_HOST}={self.host}"}
        )

    def engine_container(self, uuid_: str) -> Any | None:
        try:
            return self.docker.containers.get(f"zun-{uuid_}")
        except docker.errors.NotFound:
            return None

    def run(self, **values: Any) -> str:
        """A created and running container (through the manager)."""
        uuid_, ctx = self.add(**values)
        self.manager.container_create(ctx, uuid_, run=True)
        self.wait()
        row = self.row(uuid_)
        assert row is not None and row.status == consts.RUNNING, (row.status, row.status_reason)
        return uuid_

    def sweep(self) -> None:
        for container in self.engine_containers():
            # An auto_remove container may be going away on its own at this very moment.
            with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
                container.remove(force=True, v=True)
        for net in self.docker.networks.list(names=[f"zun-{self.project_id}"]):
            with contextlib.suppress(docker.errors.APIError):
                net.remove()


@pytest.fixture
def node(
    node_db: str, docker_client: docker.DockerClient, busybox_image: str, tmp_path: Path
) -> Iterator[Node]:
    host = f"node-{RUN_ID}-{uuid.uuid4().hex[:6]}"
    manager = ContainerEndpoint(host, state_dir=tmp_path / "state", max_workers=8)
    periodic_tasks.update_inventory(manager, None)  # type: ignore[arg-type]
    test_node = Node(manager, f"p{RUN_ID}{uuid.uuid4().hex[:6]}", busybox_image)
    try:
        yield test_node
    finally:
        manager.workers.wait_idle(60)
        test_node.sweep()
        manager.cleanup_host()


@pytest.fixture
def fresh_uuid() -> Callable[[], str]:
    return lambda: str(uuid.uuid4())
