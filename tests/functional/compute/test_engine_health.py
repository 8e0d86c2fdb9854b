"""The heartbeat's view of the engine: a real engine behind a socket we can cut.

``EngineRelay`` is socat forwarding a unix socket to the local Docker engine's: the node sees
a real engine, and killing socat is, from the node's side, a stopped dockerd (the socket
refuses connections).
"""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from zun.db import engine as db_engine
from zun.db import models
from zun.db.queries import service_heartbeat
from zun.runtime.docker import health

pytestmark = pytest.mark.docker


class EngineRelay:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.path}"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "socat",
                f"UNIX-LISTEN:{self.path},fork,unlink-early",
                "UNIX-CONNECT:/var/run/docker.sock",
            ],
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while not self.path.exists():
            assert time.monotonic() < deadline, "socat did not listen"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
        # A dead dockerd's socket refuses connections; so does a file nobody listens on.
        # Gone, it lets start() wait for the new listener.
        self.path.unlink(missing_ok=True)


@pytest.fixture
def relay(tmp_path: Path, docker_client: object) -> Iterator[EngineRelay]:
    if shutil.which("socat") is None:
        pytest.fail("socat is needed to cut a node from its engine")
    engine_relay = EngineRelay(tmp_path / "docker.sock")
    engine_relay.start()
    yield engine_relay
    engine_relay.stop()


def _service(host: str) -> models.ZunService:
    with db_engine.transaction(readonly=True) as session:
        return session.scalars(
            sa.select(models.ZunService).where(models.ZunService.host == host)
        ).one()


def test_probe_answers_none_then_why(relay: EngineRelay) -> None:
    assert health.probe(relay.url, timeout=3) is None
    relay.stop()
    why = health.probe(relay.url, timeout=3)
    assert why is not None and relay.url in why and "does not answer" in why
    relay.start()
    assert health.probe(relay.url, timeout=3) is None


def test_probe_of_an_engine_that_never_answers_is_bounded(tmp_path: Path) -> None:
    # A socket that accepts and never replies: a hung engine.
    path = tmp_path / "hung.sock"
    hung = subprocess.Popen(
        ["socat", f"UNIX-LISTEN:{path},fork", "EXEC:sleep 30"], stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 10
        while not path.exists():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        started = time.monotonic()
        why = health.probe(f"unix://{path}", timeout=1)
        assert why is not None and "did not answer within 1 s" in why
        assert time.monotonic() - started < 5
    finally:
        hung.kill()
        hung.wait()


def test_heartbeat_disables_and_enables_the_service_by_itself(node_db: str) -> None:
    host = f"hb-{uuid.uuid4().hex[:8]}"
    service_heartbeat.report_up(host, "zun-compute", engine_checked=True, engine_error=None)
    assert (_service(host).disabled, _service(host).disabled_reason) == (False, None)
    service_heartbeat.report_up(
        host,
        "zun-compute",
        engine_checked=True,
        engine_error="the container engine at x does not answer",
    )
    row = _service(host)
    assert row.disabled is True
    assert row.disabled_reason == "AUTO: the container engine at x does not answer"
    service_heartbeat.report_up(host, "zun-compute", engine_checked=True, engine_error=None)
    assert (_service(host).disabled, _service(host).disabled_reason) == (False, None)


def test_heartbeat_never_overrides_an_operator(node_db: str) -> None:
    host = f"hb-{uuid.uuid4().hex[:8]}"
    service_heartbeat.report_up(host, "zun-compute")
    with db_engine.transaction() as session:
        session.execute(
            sa.update(models.ZunService)
            .where(models.ZunService.host == host)
            .values(disabled=True, disabled_reason="maintenance")
        )
    service_heartbeat.report_up(
        host, "zun-compute", engine_checked=True, engine_error="engine gone"
    )
    assert _service(host).disabled_reason == "maintenance"
    service_heartbeat.report_up(host, "zun-compute", engine_checked=True, engine_error=None)
    assert (_service(host).disabled, _service(host).disabled_reason) == (True, "maintenance")


def test_first_report_of_a_node_without_engine_is_disabled(node_db: str) -> None:
    host = f"hb-{uuid.uuid4().hex[:8]}"
    service_heartbeat.report_up(
        host, "zun-compute", engine_checked=True, engine_error="engine gone"
    )
    assert _service(host).disabled is True
    assert _service(host).disabled_reason == "AUTO: engine gone"
