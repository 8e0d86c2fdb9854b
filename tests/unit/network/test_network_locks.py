"""The project network lock: creates on a known network share it, ensure/remove hold it alone.

Real threads and real ``flock`` files (in a temporary LOCK_DIR); the engine client is only
read for its address, which names the lock.
"""

from __future__ import annotations

import fcntl
import os
import threading
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from zun.network import docker_network as dn


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(dn, "LOCK_DIR", tmp_path / "locks")
    return SimpleNamespace(api=SimpleNamespace(base_url=f"unix://{uuid.uuid4().hex}"))


def _hold(
    client: Any, project: str, shared: bool, entered: threading.Event, leave: threading.Event
) -> threading.Thread:
    def run() -> None:
        with dn.project_network_lock(client, project, shared=shared):
            entered.set()
            leave.wait(10)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_shared_holders_run_side_by_side(client: Any) -> None:
    leave = threading.Event()
    entered = [threading.Event() for _ in range(3)]
    threads = [_hold(client, "p", True, e, leave) for e in entered]
    try:
        assert all(e.wait(5) for e in entered)  # all three inside at once
    finally:
        leave.set()
        for t in threads:
            t.join(10)


def test_exclusive_waits_for_shared_and_blocks_new_shared(client: Any) -> None:
    leave_shared, leave_exclusive = threading.Event(), threading.Event()
    in_shared, in_exclusive, in_late = threading.Event(), threading.Event(), threading.Event()
    first = _hold(client, "p", True, in_shared, leave_shared)
    assert in_shared.wait(5)
    remover = _hold(client, "p", False, in_exclusive, leave_exclusive)
    assert not in_exclusive.wait(0.3)  # a create is on the network: removal waits
    late = _hold(client, "p", True, in_late, leave_exclusive)
    assert not in_late.wait(0.3)  # and a waiting removal goes before new creates
    leave_shared.set()
    assert in_exclusive.wait(5)
    assert not in_late.wait(0.3)
    leave_exclusive.set()
    assert in_late.wait(5)
    for t in (first, remover, late):
        t.join(10)


def test_other_projects_do_not_wait(client: Any) -> None:
    leave = threading.Event()
    in_a, in_b = threading.Event(), threading.Event()
    a = _hold(client, "a", False, in_a, leave)
    b = _hold(client, "b", False, in_b, leave)
    try:
        assert in_a.wait(5) and in_b.wait(5)
    finally:
        leave.set()
        a.join(10)
        b.join(10)


def test_the_file_lock_is_shared_or_exclusive_for_other_processes(client: Any) -> None:
    def other_process_can(flag: int) -> bool:
        files = list(dn.LOCK_DIR.glob("*.lock"))
        assert len(files) == 1
        fd = os.open(files[0], os.O_RDWR)  # another open file description: as a process
        try:
            fcntl.flock(fd, flag | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
        finally:
            os.close(fd)

    with dn.project_network_lock(client, "p", shared=True):
        assert other_process_can(fcntl.LOCK_SH)
        assert not other_process_can(fcntl.LOCK_EX)
    with dn.project_network_lock(client, "p"):
        assert not other_process_can(fcntl.LOCK_SH)
