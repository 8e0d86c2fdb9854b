"""Fixtures of the console tests: a migrated database, real containers, a running proxy.

console_db      URL of a migrated SQLite database installed as the process engine
make_container  factory: a running busybox container on the engine plus its DB row
proxy           a ConsoleProxy on 127.0.0.1 whose own host is "node-a"
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

_TESTS_DIR = str(Path(__file__).resolve().parents[2])
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

from functional.console.support import free_port  # noqa: E402

LOCAL_HOST = "node-a"


@pytest.fixture
def console_db(tmp_path: Path) -> Iterator[str]:
    from zun.db import engine, migration

    url = f"sqlite:///{tmp_path / 'zun.sqlite'}"
    engine.set_engine(engine.create_engine(url))
    migration.upgrade("head", engine=engine.get_engine())
    yield url
    engine.dispose()


class Containers:
    """Creates busybox containers on the engine and their rows; removes them afterwards."""

    def __init__(self, docker_client: Any, image: str) -> None:
        self.docker = docker_client
        self.image = image
        self.created: list[Any] = []

    def __call__(
        self,
        *,
        tty: bool = True,
        command: list[str] | None = None,
        host: str = LOCAL_HOST,
        running: bool = True,
    ) -> dict[str, str]:
        from zun.db import engine, models

        container_uuid = str(uuid.uuid4())
        engine_container = self.docker.containers.create(
            self.image,
            command or ["sh"],
            stdin_open=True,
            tty=tty,
            name=f"zun-console-test-{container_uuid[:8]}",
            labels={"zun.console.test": "true"},
        )
        self.created.append(engine_container)
        if running:
            engine_container.start()
        with engine.transaction() as session:
            session.add(
                models.Container(
                    uuid=container_uuid,
                    name=f"console-{container_uuid[:8]}",
                    host=host,
                    container_id=engine_container.id,
                    status="Running" if running else "Created",
                    interactive=True,
                    project_id="p1",
                    user_id="u1",
                    image=self.image,
                )
            )
        return {"uuid": container_uuid, "engine_id": engine_container.id}

    def exec_shell(self, engine_id: str, command: list[str] | None = None) -> str:
        """An interactive exec, created but not started: what the node does for the API."""
        return self.docker.api.exec_create(engine_id, command or ["sh"], stdin=True, tty=True)["Id"]

    def cleanup(self) -> None:
        for item in self.created:
            try:
                item.remove(force=True)
            except Exception:
                pass


@pytest.fixture
def make_container(console_db: str, docker_client: Any, busybox_image: str) -> Iterator[Containers]:
    containers = Containers(docker_client, busybox_image)
    yield containers
    containers.cleanup()


@pytest.fixture
def proxy_factory(console_db: str) -> Iterator[Callable[..., Any]]:
    from zun.console.server import ConsoleProxy

    started: list[Any] = []

    def make(**kwargs: Any) -> Any:
        port = free_port()
        kwargs.setdefault("local_host", LOCAL_HOST)
        kwargs.setdefault("base_url", f"ws://127.0.0.1:{port}/")
        proxy = ConsoleProxy("127.0.0.1", port, **kwargs)
        proxy.start()
        started.append(proxy)
        return proxy

    yield make
    for proxy in started:
        proxy.stop()


@pytest.fixture
def proxy(proxy_factory: Callable[..., Any]) -> Any:
    return proxy_factory()
